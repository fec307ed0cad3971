//! Axis-aligned bounding boxes.

use glam::Vec3;
use serde::{Deserialize, Serialize};

/// An axis-aligned box. The empty box has `min = +inf`, `max = -inf`, so extending it by any
/// point yields exactly that point and [`Bounds::union`] needs no special case.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// Smallest corner.
    #[serde(with = "serde_vec3")]
    pub min: Vec3,
    /// Largest corner.
    #[serde(with = "serde_vec3")]
    pub max: Vec3,
}

impl Default for Bounds {
    fn default() -> Self {
        Self::empty()
    }
}

impl Bounds {
    /// The box that contains nothing.
    pub fn empty() -> Self {
        Self {
            min: Vec3::INFINITY,
            max: Vec3::NEG_INFINITY,
        }
    }

    /// The smallest box containing every point (empty for no points). NaN components are
    /// ignored by the min/max, so callers validate finiteness first.
    pub fn from_points(points: &[Vec3]) -> Self {
        // Lanes of 8 points (24 floats) with one accumulator per float, so the min/max
        // vectorise; this runs over every actor of a crowd each frame.
        const LANES: usize = 24;
        // SAFETY: glam's Vec3 is `repr(C)` of three f32.
        let coords =
            unsafe { std::slice::from_raw_parts(points.as_ptr().cast::<f32>(), points.len() * 3) };
        let mut lo = [f32::INFINITY; LANES];
        let mut hi = [f32::NEG_INFINITY; LANES];
        let mut chunks = coords.chunks_exact(LANES);
        for chunk in &mut chunks {
            for k in 0..LANES {
                let c = chunk[k];
                lo[k] = if c < lo[k] { c } else { lo[k] };
                hi[k] = if c > hi[k] { c } else { hi[k] };
            }
        }
        let mut b = Self::empty();
        for p in chunks.remainder().chunks_exact(3) {
            b.extend(Vec3::new(p[0], p[1], p[2]));
        }
        for k in (0..LANES).step_by(3) {
            b.min = b.min.min(Vec3::new(lo[k], lo[k + 1], lo[k + 2]));
            b.max = b.max.max(Vec3::new(hi[k], hi[k + 1], hi[k + 2]));
        }
        b
    }

    /// Grows the box to contain `p`.
    pub fn extend(&mut self, p: Vec3) {
        self.min = self.min.min(p);
        self.max = self.max.max(p);
    }

    /// The smallest box containing both. Exact (min/max), so any grouping gives the same answer.
    pub fn union(&self, other: &Bounds) -> Bounds {
        Bounds {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// True if the box contains no point.
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// `max - min` per axis; zero for an empty box.
    pub fn size(&self) -> Vec3 {
        if self.is_empty() {
            Vec3::ZERO
        } else {
            self.max - self.min
        }
    }

    /// The midpoint; zero for an empty box.
    pub fn center(&self) -> Vec3 {
        if self.is_empty() {
            Vec3::ZERO
        } else {
            (self.min + self.max) * 0.5
        }
    }

    /// Length of the box's diagonal; zero for an empty box.
    pub fn diagonal(&self) -> f32 {
        self.size().length()
    }

    /// True if `other` lies inside this box (an empty `other` lies inside any box).
    pub fn contains(&self, other: &Bounds) -> bool {
        other.is_empty() || (self.min.cmple(other.min).all() && self.max.cmpge(other.max).all())
    }

    /// The box grown by `margin` on every side (empty stays empty).
    pub fn grown(&self, margin: f32) -> Bounds {
        if self.is_empty() {
            return *self;
        }
        Bounds {
            min: self.min - Vec3::splat(margin),
            max: self.max + Vec3::splat(margin),
        }
    }

    /// A culling box for something whose bounds are `self` now and were held by `current` until
    /// now, that changes rarely while it moves: `current` while it contains `self` and lies
    /// within `self` grown by twice the slack, else `self` grown by the slack (an eighth of its
    /// largest side on every side). So a crowd marching or milling about keeps its box for
    /// frames at a time (each change is an engine call per MultiMesh), and the box is never
    /// more than two slacks larger than the crowd per side.
    pub fn settled(&self, current: &Bounds) -> Bounds {
        if self.is_empty() {
            return *self;
        }
        let slack = self.size().max_element() * SETTLED_SLACK;
        if current.contains(self) && self.grown(2.0 * slack).contains(current) {
            *current
        } else {
            self.grown(slack)
        }
    }
}

/// The slack of [`Bounds::settled`], as a share of the box's largest side.
const SETTLED_SLACK: f32 = 0.125;

/// Serializes a `Vec3` as `[x, y, z]` (glam's own serde feature is not enabled in this workspace).
pub(crate) mod serde_vec3 {
    use glam::Vec3;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Vec3, s: S) -> Result<S::Ok, S::Error> {
        v.to_array().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec3, D::Error> {
        <[f32; 3]>::deserialize(d).map(Vec3::from_array)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_extend() {
        let e = Bounds::empty();
        assert!(e.is_empty());
        assert_eq!(e.diagonal(), 0.0);
        assert_eq!(Bounds::from_points(&[]), e);
        let b = Bounds::from_points(&[Vec3::new(1.0, -2.0, 3.0), Vec3::new(-1.0, 2.0, 0.0)]);
        assert_eq!(b.min, Vec3::new(-1.0, -2.0, 0.0));
        assert_eq!(b.max, Vec3::new(1.0, 2.0, 3.0));
        assert!(!b.is_empty());
        // Diagonal of a 2 x 4 x 3 box: sqrt(4 + 16 + 9).
        assert!((b.diagonal() - 29f32.sqrt()).abs() < 1e-6);
        assert_eq!(b.center(), Vec3::new(0.0, 0.0, 1.5));
    }

    #[test]
    fn from_points_matches_extending_one_by_one() {
        // Long enough for the vectorised lanes plus a remainder: same box as extending one by one.
        for n in [8, 23, 24, 25, 1000] {
            let pts: Vec<Vec3> = (0..n)
                .map(|i| {
                    let f = i as f32;
                    Vec3::new((f * 0.7).sin() * f, (f * 1.3).cos() - f, 5.0 - f * 0.25)
                })
                .collect();
            let mut one_by_one = Bounds::empty();
            pts.iter().for_each(|&p| one_by_one.extend(p));
            assert_eq!(Bounds::from_points(&pts), one_by_one, "{n} points");
        }
    }

    #[test]
    fn union_with_empty_is_identity() {
        let b = Bounds::from_points(&[Vec3::ONE]);
        assert_eq!(b.union(&Bounds::empty()), b);
        assert_eq!(Bounds::empty().union(&b), b);
        let c = Bounds::from_points(&[Vec3::NEG_ONE]);
        let u = b.union(&c);
        assert_eq!((u.min, u.max), (Vec3::NEG_ONE, Vec3::ONE));
        // A single point is a valid, non-empty, zero-size box.
        assert!(!b.is_empty());
        assert_eq!(b.size(), Vec3::ZERO);
    }

    #[test]
    fn a_settled_box_holds_while_the_crowd_moves_within_its_slack() {
        let at = |x: f32| Bounds {
            min: Vec3::new(x, 0.0, 0.0),
            max: Vec3::new(x + 16.0, 2.0, 8.0),
        };
        // The first box: the bounds grown by 2 (an eighth of 16) on every side.
        let first = at(0.0).settled(&Bounds::empty());
        assert_eq!(first, at(0.0).grown(2.0));
        // Moving 1.5 along x stays inside: the box is kept, and still holds the crowd.
        let kept = at(1.5).settled(&first);
        assert_eq!(kept, first);
        assert!(kept.contains(&at(1.5)));
        // Moving past the slack takes a new box around the new bounds.
        let moved = at(2.5).settled(&kept);
        assert_eq!(moved, at(2.5).grown(2.0));
        assert!(moved.contains(&at(2.5)));
        // A crowd that gathers into a much smaller box gets a smaller culling box.
        let small = Bounds {
            min: Vec3::new(4.0, 0.0, 0.0),
            max: Vec3::new(6.0, 2.0, 2.0),
        };
        assert_eq!(small.settled(&moved), small.grown(0.25));
        // No crowd: no box.
        assert!(Bounds::empty().settled(&moved).is_empty());
    }

    #[test]
    fn a_settled_box_always_contains_the_bounds_and_stays_near_them() {
        let mut current = Bounds::empty();
        let mut changes = 0;
        for frame in 0..1000 {
            let t = frame as f32 * 0.05;
            let spread = 10.0 + 3.0 * (t * 0.3).sin();
            let b = Bounds {
                min: Vec3::new(t - spread, -1.0, 2.0 * t.cos()),
                max: Vec3::new(t + spread, 2.0, 2.0 * t.cos() + spread),
            };
            let next = b.settled(&current);
            changes += usize::from(next != current);
            current = next;
            assert!(current.contains(&b), "frame {frame}");
            let slack = b.size().max_element() * SETTLED_SLACK;
            assert!(b.grown(2.0 * slack).contains(&current), "frame {frame}");
        }
        assert!(changes < 200, "the box changed in {changes} of 1000 frames");
    }
}
