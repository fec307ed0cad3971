//! How far playback strays from a clip's motion between its baked frames.
//!
//! The shader (in either storage) blends two neighbouring baked frames linearly, so a part that
//! turns fast is drawn along the chord of its arc, short of where the skeleton has it half-way.
//! For smooth motion sampled every `dt`, the second difference `p(t - dt) - 2 p(t) + p(t + dt)` is
//! about `p'' dt²`, and the chord's sag half-way through an interval about `p'' dt² / 8`:
//! [`interpolation_sag`] measures that at every baked frame of a clip from the decoded frames, so
//! a bake can say which clips need a higher rate. The sag falls with the square of the rate:
//! twice the frames per second, a quarter of the sag.

use glam::Vec3;
use rayon::prelude::*;

use super::encode::{decode_frame, EncodedVat};
use crate::clip::Clip;

/// The largest estimated half-way sag of `clip` over its frames and every column of `vat`, in
/// the VAT's units, with the frame (counted from the clip's first) where it is largest. A looped
/// clip wraps around; a clip of fewer than three frames (a pose, a two-frame clip) has none.
/// Panics if the clip's frames lie outside `vat`.
pub fn interpolation_sag<B: AsRef<[u8]> + Sync>(
    vat: &EncodedVat<B>,
    clip: &Clip,
) -> Option<(f32, u32)> {
    let n = clip.frame_count;
    if n < 3 {
        return None;
    }
    let frames: Vec<Vec<Vec3>> = (0..n)
        .into_par_iter()
        .map(|f| decode_frame(vat, clip.first_frame + f))
        .collect();
    let middles: Vec<u32> = if clip.looped {
        (0..n).collect()
    } else {
        (1..n - 1).collect()
    };
    middles
        .into_par_iter()
        .map(|f| {
            let (a, b, c) = (
                &frames[((f + n - 1) % n) as usize],
                &frames[f as usize],
                &frames[((f + 1) % n) as usize],
            );
            let worst = a
                .iter()
                .zip(b)
                .zip(c)
                .map(|((a, b), c)| (*a - 2.0 * *b + *c).length() / 8.0)
                .fold(0.0f32, f32::max);
            (worst, f)
        })
        .reduce_with(|x, y| if y.0 > x.0 { y } else { x })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bake::{encode, Precision, SkinnedFrames};

    /// A VAT of one column at `positions` (one per frame, float precision) and its clip.
    fn one_point(positions: Vec<Vec3>, looped: bool) -> (EncodedVat<Vec<u8>>, Clip) {
        let frames = positions.len();
        let skinned = SkinnedFrames {
            vertex_count: 1,
            frame_count: frames,
            normals: vec![Vec3::Y; frames],
            positions,
        };
        let clip = Clip {
            name: "clip".into(),
            first_frame: 0,
            frame_count: frames as u32,
            fps: 30.0,
            looped,
            duration: frames as f32 / 30.0,
        };
        let vat = encode(
            &skinned,
            std::slice::from_ref(&clip),
            Precision::Float,
            true,
        )
        .unwrap();
        (vat, clip)
    }

    /// [`one_point`] turning on a circle of `radius` by `step` radians per frame, over `frames`.
    fn turning(radius: f32, step: f32, frames: u32, looped: bool) -> (EncodedVat<Vec<u8>>, Clip) {
        let positions = (0..frames)
            .map(|f| {
                let a = step * f as f32;
                Vec3::new(radius * a.cos(), 1.0, radius * a.sin())
            })
            .collect();
        one_point(positions, looped)
    }

    #[test]
    fn the_sag_of_a_turning_point_is_the_chords() {
        let (radius, step) = (2.0f32, 0.3f32);
        let (vat, clip) = turning(radius, step, 12, false);
        let (sag, frame) = interpolation_sag(&vat, &clip).unwrap();
        // The chord between two frames misses the arc's middle by r (1 - cos(step / 2)).
        let chord = radius * (1.0 - (step / 2.0).cos());
        assert!((sag - chord).abs() < 0.02 * chord, "{sag} against {chord}");
        assert!((1..11).contains(&frame));
        // Twice the rate: a quarter of the sag.
        let (vat2, clip2) = turning(radius, step / 2.0, 24, false);
        let (sag2, _) = interpolation_sag(&vat2, &clip2).unwrap();
        assert!((sag / sag2 - 4.0).abs() < 0.1, "{sag} / {sag2}");
    }

    #[test]
    fn straight_motion_and_short_clips_have_none() {
        let (vat, clip) = one_point((0..10).map(|f| Vec3::X * f as f32).collect(), false);
        let (sag, _) = interpolation_sag(&vat, &clip).unwrap();
        assert!(sag < 1e-5, "{sag}");
        let (vat, mut clip) = turning(1.0, 0.5, 2, false);
        assert_eq!(interpolation_sag(&vat, &clip), None);
        clip.frame_count = 1;
        assert_eq!(interpolation_sag(&vat, &clip), None);
    }

    #[test]
    fn a_looped_clip_wraps_around() {
        // A full turn in 8 frames, looped: every frame has neighbours, the first and last too.
        let (vat, clip) = turning(1.0, std::f32::consts::TAU / 8.0, 8, true);
        let (sag, _) = interpolation_sag(&vat, &clip).unwrap();
        let chord = 1.0 - (std::f32::consts::TAU / 16.0).cos();
        // The estimate is the small-step one: 4% short at 45 degrees a frame.
        assert!((sag - chord).abs() < 0.05 * chord, "{sag} against {chord}");
    }
}
