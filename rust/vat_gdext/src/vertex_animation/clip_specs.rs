//! Which clips a bake samples and how (part of `VertexAnimation`): the clip list from the
//! settings and the AnimationPlayer, each clip's rate, and the notes a bake summary carries.

use godot::classes::animation::LoopMode;
use godot::prelude::*;
use vat_core::clip::{Clip, ClipSpec};

use super::{VertexAnimation, MIN_CLIP_LENGTH};
use crate::bake::root_motion;

impl VertexAnimation {
    pub(super) fn clip_specs(
        &self,
        player: &Gd<godot::classes::AnimationPlayer>,
        scene_name: &str,
    ) -> Result<Vec<ClipSpec>, String> {
        let available: Vec<String> = player
            .get_animation_list()
            .as_slice()
            .iter()
            .map(|s| s.to_string())
            .filter(|s| s != "RESET" && !s.ends_with("/RESET"))
            .collect();
        let names: Vec<String> = if self.clips.is_empty() {
            available.clone()
        } else {
            self.clips
                .as_slice()
                .iter()
                .map(|s| s.to_string())
                .collect()
        };
        if names.is_empty() {
            return Err(format!(
                "the AnimationPlayer in '{scene_name}' has no animations: there is nothing to bake"
            ));
        }
        let mut seen = std::collections::HashSet::new();
        names
            .iter()
            .map(|name| {
                if !available.contains(name) {
                    return Err(format!(
                        "clip '{name}' is not an animation of '{scene_name}' (it has: {})",
                        available.join(", ")
                    ));
                }
                if !seen.insert(name.as_str()) {
                    return Err(format!(
                        "clip '{name}' is listed twice in clips; each clip bakes once"
                    ));
                }
                let anim = player.get_animation(name.as_str()).ok_or_else(|| {
                    format!("clip '{name}' of '{scene_name}' could not be loaded")
                })?;
                let fps = self.clip_rate(name)?;
                // Godot clamps Animation.length to 0.001 s, so that is what a zero-length pose
                // clip (a TPose, a death pose) looks like: it bakes as one frame.
                let pose = anim.get_length() <= MIN_CLIP_LENGTH;
                Ok(ClipSpec {
                    name: name.clone(),
                    duration: if pose { 0.0 } else { anim.get_length() },
                    fps: fps as f32,
                    looped: anim.get_loop_mode() != LoopMode::NONE,
                })
            })
            .collect()
    }

    /// The sampling rate of clip `name`: its `clip_fps` entry when it has one, else `fps`.
    fn clip_rate(&self, name: &str) -> Result<f64, String> {
        let fps = match self.clip_fps.get(name) {
            None => self.fps,
            Some(v) => v.try_to::<f64>().map_err(|_| {
                format!(
                    "clip_fps['{name}'] is {v} ({:?}); it must be a number",
                    v.get_type()
                )
            })?,
        };
        if !(fps.is_finite() && fps > 0.0) {
            return Err(format!(
                "the sampling rate of clip '{name}' is {fps} fps; it must be a positive finite number"
            ));
        }
        Ok(fps)
    }
}

/// What a user should know about a bake beyond its sizes: poses baked as one frame, and the root
/// bone with the clips it carries (kept or removed).
pub(super) fn bake_notes(
    clips: &[Clip],
    root_bone: Option<&root_motion::RootBone>,
    in_place: bool,
    velocities: &[glam::Vec3],
) -> String {
    let mut notes = String::new();
    let poses: Vec<&str> = clips
        .iter()
        .filter(|c| c.is_pose())
        .map(|c| c.name.as_str())
        .collect();
    if !poses.is_empty() {
        notes += &format!(
            "; {} zero-length clip(s) baked as one-frame poses: {}",
            poses.len(),
            poses.join(", ")
        );
    }
    let moving = velocities
        .iter()
        .filter(|v| vat_core::bake::horizontal(**v).length() > 0.0)
        .count();
    match root_bone {
        Some(bone) if moving > 0 => {
            notes += &format!(
                "; root bone {} travels in {moving} clip(s), {}",
                bone.describe(),
                if in_place {
                    "removed (in place)"
                } else {
                    "kept"
                }
            )
        }
        _ if in_place => notes += "; root_motion is In Place but no bone travels: nothing removed",
        _ => {}
    }
    notes
}

/// "clip 'walk' frame 3" for every global frame index, for error messages.
pub(super) fn frame_labels(clips: &[Clip]) -> Vec<String> {
    clips
        .iter()
        .flat_map(|c| (0..c.frame_count).map(move |k| format!("clip '{}' frame {k}", c.name)))
        .collect()
}
