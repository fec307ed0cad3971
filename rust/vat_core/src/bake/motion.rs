//! Motion checks and root motion: is a sampled clip frozen, how fast does its root travel, and how
//! far back must the root go to play the clip in place.
//!
//! # Root motion
//!
//! Walk and run clips usually carry the root bone (the hips) forward. A crowd is moved by game
//! code, so a bake can keep that travel (the default) or play the clip *in place*: the root's
//! horizontal drift over the clip (the straight line from its start to its end position) is taken
//! out, frame by frame, while its sway around that line and its vertical bob stay. The clip's
//! average root velocity is measured before removal, so a game can move an actor at the speed its
//! feet show. "Horizontal" is the character root's XZ plane (Godot's +Y is up).

use glam::{Affine3A, Vec3};

use crate::bake::skin::MeshFrame;

/// Largest difference between matching matrix entries, weights and translations of two poses
/// below which they count as the same pose (exact copies differ by 0).
pub const SAME_POSE_TOLERANCE: f32 = 1e-6;

/// Whether any frame of `frames` (`frames[f][m]`: mesh `m` at frame `f`) differs from the first
/// by more than [`SAME_POSE_TOLERANCE`] in a mesh transform, a skin matrix or a blend weight.
/// A clip whose source animates the character but whose sampled frames do not vary was not
/// posed (for example sampled outside a running scene tree).
pub fn frames_vary(frames: &[Vec<MeshFrame>]) -> bool {
    let Some((first, rest)) = frames.split_first() else {
        return false;
    };
    rest.iter().any(|frame| {
        frame.len() != first.len()
            || frame.iter().zip(first).any(|(a, b)| {
                affine_differs(&a.pre, &b.pre)
                    || a.bones.len() != b.bones.len()
                    || a.bones
                        .iter()
                        .zip(&b.bones)
                        .any(|(x, y)| affine_differs(x, y))
                    || a.blend_weights.len() != b.blend_weights.len()
                    || a.blend_weights
                        .iter()
                        .zip(&b.blend_weights)
                        .any(|(x, y)| (x - y).abs() > SAME_POSE_TOLERANCE)
            })
    })
}

fn affine_differs(a: &Affine3A, b: &Affine3A) -> bool {
    let (a, b) = (a.to_cols_array(), b.to_cols_array());
    a.iter()
        .zip(&b)
        .any(|(x, y)| (x - y).abs() > SAME_POSE_TOLERANCE)
}

/// A clip's average root velocity (units per second, character root space): the root's travel
/// from `start` (its position at t = 0) to `end` (at t = duration), over the duration. Zero for a
/// pose or a non-finite input.
pub fn average_velocity(start: Vec3, end: Vec3, duration: f32) -> Vec3 {
    let v = (end - start) / duration;
    if duration > 0.0 && v.is_finite() {
        v
    } else {
        Vec3::ZERO
    }
}

/// The horizontal part of `v` (its XZ components).
pub fn horizontal(v: Vec3) -> Vec3 {
    Vec3::new(v.x, 0.0, v.z)
}

/// How far the root must move back at clip time `t` to play in place: the horizontal drift
/// `horizontal(velocity) * t`, in character root space. Subtracting it from the root's position
/// at every frame leaves the root's horizontal travel over the clip at zero and its vertical
/// motion untouched.
pub fn in_place_offset(velocity: Vec3, t: f32) -> Vec3 {
    horizontal(velocity) * t
}

/// Whether a root translation `delta` (character root space) over a clip counts as travel: its
/// horizontal length exceeds `fraction` of `extent` (e.g. the skeleton's size). Used to find the
/// root bone: the first bone an animation carries across the floor.
pub fn travels(delta: Vec3, extent: f32, fraction: f32) -> bool {
    let h = horizontal(delta).length();
    h.is_finite() && h > extent * fraction
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(x: f32, bone_y: f32, weight: f32) -> Vec<MeshFrame> {
        vec![MeshFrame {
            pre: Affine3A::from_translation(Vec3::new(x, 0.0, 0.0)),
            bones: vec![Affine3A::from_translation(Vec3::new(0.0, bone_y, 0.0))],
            blend_weights: vec![weight],
        }]
    }

    #[test]
    fn frozen_frames_do_not_vary() {
        let same = vec![frame(1.0, 2.0, 0.5); 5];
        assert!(!frames_vary(&same));
        assert!(!frames_vary(&same[..1]), "one frame cannot vary");
        assert!(!frames_vary(&[]));
    }

    #[test]
    fn any_change_varies() {
        let base = frame(1.0, 2.0, 0.5);
        for changed in [
            frame(1.1, 2.0, 0.5),
            frame(1.0, 2.5, 0.5),
            frame(1.0, 2.0, 0.9),
        ] {
            let frames = vec![base.clone(), base.clone(), changed];
            assert!(frames_vary(&frames));
        }
        // Below the tolerance is the same pose.
        let frames = vec![base.clone(), frame(1.0 + 1e-8, 2.0, 0.5)];
        assert!(!frames_vary(&frames));
    }

    #[test]
    fn velocity_and_in_place_offsets() {
        let v = average_velocity(Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.5, 1.2, 2.0), 2.0);
        assert!((v - Vec3::new(0.25, 0.1, 1.0)).length() < 1e-6, "{v}");
        assert_eq!(average_velocity(Vec3::ZERO, Vec3::ONE, 0.0), Vec3::ZERO);
        assert_eq!(average_velocity(Vec3::ZERO, Vec3::NAN, 1.0), Vec3::ZERO);
        // The offset removes the horizontal drift only: after it, start and end differ in Y alone.
        let start = Vec3::new(0.0, 1.0, 0.0);
        let end = Vec3::new(0.5, 1.2, 2.0);
        let kept_end = end - in_place_offset(v, 2.0);
        assert!(
            (kept_end - Vec3::new(0.0, 1.2, 0.0)).length() < 1e-6,
            "{kept_end}"
        );
        assert_eq!(start - in_place_offset(v, 0.0), start);
    }

    #[test]
    fn travel_is_horizontal_and_relative() {
        assert!(travels(Vec3::new(0.0, 0.0, 0.5), 1.8, 0.01));
        assert!(
            !travels(Vec3::new(0.0, 5.0, 0.0), 1.8, 0.01),
            "a jump is not travel"
        );
        assert!(!travels(Vec3::new(0.001, 0.0, 0.0), 1.8, 0.01));
        assert!(!travels(Vec3::NAN, 1.8, 0.01));
    }
}
