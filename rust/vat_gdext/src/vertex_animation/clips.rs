//! A baked `VertexAnimation`'s clip table as scripts read it: clip counts, frames, rates,
//! durations, loops, frame times, root velocities and bounds.

use godot::prelude::*;
use vat_core::clip::Clip;

use super::{VertexAnimation, CLIP_STRIDE};

#[godot_api(secondary)]
impl VertexAnimation {
    /// Number of baked clips.
    #[func]
    pub fn get_clip_count(&self) -> i32 {
        self.clip_names.len() as i32
    }

    /// Index of the clip called `name`, or -1 if there is none.
    #[func]
    pub fn find_clip(&self, name: GString) -> i32 {
        self.clip_names
            .as_slice()
            .iter()
            .position(|n| *n == name)
            .map_or(-1, |i| i as i32)
    }

    /// Number of baked frames of `clip` (0 and an error if out of range).
    #[func]
    pub fn get_clip_frame_count(&self, clip: i32) -> i32 {
        self.clip_checked(clip).map_or(0, |c| c.frame_count as i32)
    }

    /// First frame of `clip` in the textures.
    #[func]
    pub fn get_clip_first_frame(&self, clip: i32) -> i32 {
        self.clip_checked(clip).map_or(0, |c| c.first_frame as i32)
    }

    /// Duration of `clip` in seconds.
    #[func]
    pub fn get_clip_duration(&self, clip: i32) -> f64 {
        self.clip_checked(clip)
            .map_or(0.0, |c| f64::from(c.duration))
    }

    /// Effective sampling rate of `clip` (frames land exactly on the clip's start and end).
    #[func]
    pub fn get_clip_frame_rate(&self, clip: i32) -> f64 {
        self.clip_checked(clip).map_or(0.0, |c| f64::from(c.fps))
    }

    /// Whether `clip` loops (from the source Animation's loop mode).
    #[func]
    pub fn is_clip_looped(&self, clip: i32) -> bool {
        self.clip_checked(clip).is_some_and(|c| c.looped)
    }

    /// The animation time (seconds) at which `frame` of `clip` was sampled.
    #[func]
    pub fn get_frame_time(&self, clip: i32, frame: i32) -> f64 {
        match self.clip_checked(clip) {
            Some(c) if frame >= 0 && (frame as u32) < c.frame_count => {
                f64::from(c.frame_time(frame as u32))
            }
            Some(c) => {
                godot_error!(
                    "vat_crowd: frame {frame} out of range for clip '{}' ({} frames)",
                    c.name,
                    c.frame_count
                );
                0.0
            }
            None => 0.0,
        }
    }

    /// The average velocity of the root bone over `clip` (units per second, in the character root's
    /// space, measured before any in-place removal): move an actor playing an in-place walk at
    /// this speed and its feet stay on the ground. Zero for clips without root motion.
    #[func]
    pub fn get_clip_root_velocity(&self, clip: i32) -> Vector3 {
        if self.clip_checked(clip).is_none() {
            return Vector3::ZERO;
        }
        self.clip_root_velocities
            .get(clip as usize)
            .unwrap_or(Vector3::ZERO)
    }

    /// Bounds of `clip` over its frames.
    #[func]
    pub fn get_clip_bounds(&self, clip: i32) -> Aabb {
        if self.clip_checked(clip).is_none()
            || self.clip_bounds_table.len() < (clip as usize + 1) * 6
        {
            return Aabb::default();
        }
        let b = &self.clip_bounds_table.as_slice()[clip as usize * 6..clip as usize * 6 + 6];
        Aabb::new(
            Vector3::new(b[0], b[1], b[2]),
            Vector3::new(b[3] - b[0], b[4] - b[1], b[5] - b[2]),
        )
    }
}

impl VertexAnimation {
    pub(super) fn clips_vec(&self) -> Vec<Clip> {
        let t = self.clip_table.as_slice();
        self.clip_names
            .as_slice()
            .iter()
            .enumerate()
            .filter(|(i, _)| t.len() >= (i + 1) * CLIP_STRIDE)
            .map(|(i, name)| {
                let r = &t[i * CLIP_STRIDE..(i + 1) * CLIP_STRIDE];
                Clip {
                    name: name.to_string(),
                    first_frame: r[0] as u32,
                    frame_count: r[1] as u32,
                    fps: r[2],
                    duration: r[3],
                    looped: r[4] > 0.5,
                }
            })
            .collect()
    }

    /// The baked clips as the core sees them.
    pub fn clips(&self) -> Vec<Clip> {
        self.clips_vec()
    }

    pub(super) fn clip_checked(&self, clip: i32) -> Option<Clip> {
        let clips = self.clips_vec();
        if clip < 0 || clip as usize >= clips.len() {
            godot_error!(
                "vat_crowd: clip index {clip} out of range: '{}' has {} clips",
                self.name_for_messages(),
                clips.len()
            );
            return None;
        }
        Some(clips[clip as usize].clone())
    }
}
