//! Which clips a bake samples and how (part of `VertexAnimation`): the clip list from the
//! settings and the AnimationPlayer, each clip's rate, and the notes a bake summary carries
//! (zero-length poses, root motion, clips too fast for their rate).

use godot::classes::animation::LoopMode;
use godot::prelude::*;
use vat_core::bake::EncodedVat;
use vat_core::clip::{Clip, ClipSpec};

use super::{VertexAnimation, MIN_CLIP_LENGTH};
use crate::bake::output::GodotBytes;
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

/// A clip whose estimated half-way sag passes this share of the bounds' diagonal is named in the
/// bake summary: about 1 px where the character is 100 px tall. KayKit's knight's sword chop at
/// 30 fps sags 2.5% and draws 3.5% fewer pixels half-way than the skeleton does.
const SAG_NOTE_SHARE: f32 = 0.01;
/// Clips named in the note at most (the worst first); `clip_sag` in the stats has them all.
const SAG_NOTE_CLIPS: usize = 6;

/// Per clip, `vat_core::bake::interpolation_sag` as a share of the bounds' diagonal (0 for a
/// clip of fewer than three frames).
pub(super) fn clip_sags(vat: &EncodedVat<GodotBytes>, clips: &[Clip]) -> Vec<f32> {
    let diagonal = vat.bounds.size().length().max(f32::MIN_POSITIVE);
    let vat = vat.borrowed();
    clips
        .iter()
        .map(|c| vat_core::bake::interpolation_sag(&vat, c).map_or(0.0, |(s, _)| s / diagonal))
        .collect()
}

/// One note naming the clips whose sag (share of the diagonal, see [`clip_sags`]) passes
/// [`SAG_NOTE_SHARE`], the worst first, each with its sag and the rate that brings it under (the
/// sag falls with the rate squared); empty when none does.
pub(super) fn sag_notes(clips: &[Clip], sags: &[f32]) -> String {
    let mut fast: Vec<(&Clip, f32)> = clips
        .iter()
        .zip(sags.iter().copied())
        .filter(|(c, s)| *s > SAG_NOTE_SHARE && c.fps > 0.0)
        .collect();
    if fast.is_empty() {
        return String::new();
    }
    fast.sort_by(|a, b| b.1.total_cmp(&a.1));
    let named: Vec<String> = fast
        .iter()
        .take(SAG_NOTE_CLIPS)
        .map(|(c, s)| {
            // The square law holds for small steps; 10% more covers larger ones.
            let fps = (1.1 * c.fps * (s / SAG_NOTE_SHARE).sqrt() / 10.0).ceil() * 10.0;
            format!("'{}' {:.1}% ({fps:.0} fps)", c.name, s * 100.0)
        })
        .collect();
    let more = fast.len().saturating_sub(SAG_NOTE_CLIPS);
    format!(
        "; {} clip(s) move fast for their rate, drawn half-way between baked frames up to this share of the bounds' diagonal off their motion (the clip_fps that keeps them under {:.0}%): {}{}",
        fast.len(),
        SAG_NOTE_SHARE * 100.0,
        named.join(", "),
        if more > 0 {
            format!(" and {more} more (get_bake_stats()[\"clip_sag\"])")
        } else {
            String::new()
        }
    )
}
