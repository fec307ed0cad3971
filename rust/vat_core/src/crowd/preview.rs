//! The editor preview of the crowd nodes: which clip it plays and where its instances stand.
//!
//! A preview is a square grid of identical instances centred on the node, one character width
//! and a quarter apart, all playing one clip; the node draws it only in the editor.

use crate::clip::{find_clip, Clip};
use crate::error::{Result, VatError};

/// The most instances a preview draws; more is refused (a preview shows what was baked, and a
/// typo such as 1000000 must not stall the editor).
pub const MAX_PREVIEW_COUNT: i64 = 10_000;

/// Gap between neighbouring instances, as a fraction of the character's width.
const GAP: f32 = 0.25;

/// Checks a `preview_count`: 0 (off) to [`MAX_PREVIEW_COUNT`].
pub fn check_count(count: i64) -> Result<usize> {
    if (0..=MAX_PREVIEW_COUNT).contains(&count) {
        Ok(count as usize)
    } else {
        Err(VatError::BadValue {
            what: "preview_count".into(),
            value: count as f64,
            allowed: "0 (no preview) to 10000",
        })
    }
}

/// The clip a `preview_clip` names among `clips`: empty means the first clip, a clip's name that
/// clip, and a whole number that no clip is named (`"2"`) the clip at that index.
pub fn clip_index(spec: &str, clips: &[Clip]) -> Result<usize> {
    let spec = spec.trim();
    if clips.is_empty() {
        return Err(VatError::NoClips);
    }
    if spec.is_empty() {
        return Ok(0);
    }
    if let Ok(i) = find_clip(clips, spec) {
        return Ok(i);
    }
    match spec.parse::<i64>() {
        Ok(index) if (0..clips.len() as i64).contains(&index) => Ok(index as usize),
        Ok(index) => Err(VatError::IndexOutOfRange {
            what: "preview_clip index",
            index,
            len: clips.len(),
        }),
        Err(_) => Err(VatError::UnknownClip {
            name: spec.to_owned(),
        }),
    }
}

/// Distance between neighbouring preview instances for a character whose bounds measure `size`
/// (x, y, z): its wider horizontal side plus `GAP` of it; 1 for empty or broken bounds.
pub fn spacing(size: [f32; 3]) -> f32 {
    let width = size[0].max(size[2]);
    if width.is_finite() && width > 0.0 {
        width * (1.0 + GAP)
    } else {
        1.0
    }
}

/// Positions (x, 0, z) of `count` instances on a square grid `spacing` apart, centred on the
/// origin: `ceil(sqrt(count))` columns along +X, filled row by row along +Z.
pub fn grid(count: usize, spacing: f32) -> Vec<[f32; 3]> {
    if count == 0 {
        return Vec::new();
    }
    let columns = (count as f64).sqrt().ceil() as usize;
    let rows = count.div_ceil(columns);
    let centre = |n: usize, i: usize| (i as f32 - (n - 1) as f32 / 2.0) * spacing;
    (0..count)
        .map(|i| [centre(columns, i % columns), 0.0, centre(rows, i / columns)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip(name: &str) -> Clip {
        Clip {
            name: name.into(),
            first_frame: 0,
            frame_count: 2,
            fps: 10.0,
            looped: true,
            duration: 0.2,
        }
    }

    #[test]
    fn names_indices_and_the_default() {
        let clips = [clip("idle"), clip("walk"), clip("3")];
        assert_eq!(clip_index("", &clips), Ok(0));
        assert_eq!(clip_index(" walk ", &clips), Ok(1));
        assert_eq!(clip_index("1", &clips), Ok(1));
        // A clip named like a number wins over the index.
        assert_eq!(clip_index("3", &clips), Ok(2));
        assert_eq!(
            clip_index("run", &clips),
            Err(VatError::UnknownClip { name: "run".into() })
        );
        let e = clip_index("5", &clips).unwrap_err().to_string();
        assert_eq!(
            e,
            "preview_clip index 5 is out of range; valid values are 0 to 3 (exclusive)"
        );
        assert!(clip_index("-1", &clips).is_err());
        assert_eq!(clip_index("", &[]), Err(VatError::NoClips));
    }

    #[test]
    fn counts() {
        assert_eq!(check_count(0), Ok(0));
        assert_eq!(check_count(10_000), Ok(10_000));
        assert!(check_count(-1).is_err());
        assert!(check_count(10_001).is_err());
    }

    #[test]
    fn spacing_follows_the_wider_side() {
        assert_eq!(spacing([2.0, 9.0, 1.0]), 2.5);
        assert_eq!(spacing([1.0, 9.0, 4.0]), 5.0);
        assert_eq!(spacing([0.0, 1.0, 0.0]), 1.0);
        assert_eq!(spacing([f32::NAN, 1.0, 0.0]), 1.0);
    }

    #[test]
    fn grids_are_square_and_centred() {
        assert!(grid(0, 1.0).is_empty());
        assert_eq!(grid(1, 3.0), vec![[0.0, 0.0, 0.0]]);
        let g = grid(4, 2.0);
        assert_eq!(
            g,
            vec![
                [-1.0, 0.0, -1.0],
                [1.0, 0.0, -1.0],
                [-1.0, 0.0, 1.0],
                [1.0, 0.0, 1.0]
            ]
        );
        // 5 instances: 3 columns, 2 rows, the second row partly filled.
        let g = grid(5, 1.0);
        assert_eq!(g.len(), 5);
        assert_eq!(g[0], [-1.0, 0.0, -0.5]);
        assert_eq!(g[4], [0.0, 0.0, 0.5]);
        // Every position distinct and at least `spacing` from every other.
        let g = grid(37, 1.5);
        for (i, a) in g.iter().enumerate() {
            for b in &g[i + 1..] {
                let d = ((a[0] - b[0]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
                assert!(d >= 1.5 - 1e-5, "{a:?} {b:?}");
            }
        }
    }
}
