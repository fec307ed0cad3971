//! Clip planning and the frame sampling convention shared with the shader.
//!
//! # Sampling convention
//!
//! A clip of `duration` seconds baked at `fps` is split into `n = max(1, round(duration * fps))`
//! equal intervals; frame `k` is the pose at `t_k = k * duration / n`.
//!
//! * **Non-looped** clips store `n + 1` frames, `k = 0..=n`, so the last frame is exactly the
//!   clip's end pose and playback clamps there.
//! * **Looped** clips store `n` frames, `k = 0..n`; the pose at `t = duration` equals frame 0, so
//!   playback interpolates frame `n - 1` -> frame 0 across the wrap and no frame is duplicated.
//! * **Poses** (`duration == 0`, e.g. a `TPose` or `Death_A_Pose` clip) store one frame, the pose
//!   at `t = 0`, are never looped and have `fps == 0`; playback holds that frame.
//!
//! The stored `fps` is the effective rate `n / duration` (it differs from the requested rate when
//! `duration * fps` is not an integer). Clips are laid out one after another in the texture:
//! `first_frame` is the sum of the previous clips' `frame_count`. [`sample`] is the exact frame
//! selection the shader performs, so tests can predict what the GPU draws.

use serde::{Deserialize, Serialize};

use crate::error::{Result, VatError};
use crate::layout::{MAX_CLIPS, MAX_TEXTURE_SIZE, VAT_MAX_WIDTH};

/// A clip as requested: what to bake and at which rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClipSpec {
    /// The clip's name (the animation's name in Godot).
    pub name: String,
    /// Length in seconds; must be finite and not negative. Zero makes the clip a one-frame pose.
    pub duration: f32,
    /// Requested sampling rate in frames per second; must be positive and finite.
    pub fps: f32,
    /// Whether playback wraps around.
    pub looped: bool,
}

/// A clip as baked: where its frames lie in the texture and how to play them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clip {
    /// The clip's name.
    pub name: String,
    /// Index of the clip's first frame in the texture.
    pub first_frame: u32,
    /// Frames stored for this clip (`n + 1` non-looped, `n` looped).
    pub frame_count: u32,
    /// Effective sampling rate `n / duration` (0 for a pose).
    pub fps: f32,
    /// Whether playback wraps around.
    pub looped: bool,
    /// Length in seconds.
    pub duration: f32,
}

impl Clip {
    /// Number of sampling intervals `n` the clip's duration is split into.
    pub fn intervals(&self) -> u32 {
        if self.looped {
            self.frame_count
        } else {
            self.frame_count.saturating_sub(1)
        }
    }

    /// Whether the clip is a single pose (zero duration, one frame).
    pub fn is_pose(&self) -> bool {
        self.duration == 0.0
    }

    /// Clip-local time in seconds at which frame `k` (0-based within the clip) is sampled:
    /// `k * duration / n`, computed in f64 so the last non-looped frame is exactly `duration`.
    pub fn frame_time(&self, k: u32) -> f32 {
        let n = self.intervals().max(1);
        (f64::from(k) * f64::from(self.duration) / f64::from(n)) as f32
    }
}

/// Lays out `specs` consecutively and fixes each clip's frame count per the module's convention.
///
/// Errors: [`VatError::NoClips`] for an empty list, [`VatError::TooManyClips`] above
/// [`MAX_CLIPS`], [`VatError::BadDuration`] for a negative or non-finite duration,
/// [`VatError::BadFps`] for a rate that is not positive and finite, and [`VatError::TooLarge`] when the frames alone (one vertex)
/// could not fit one texture.
pub fn plan_clips(specs: &[ClipSpec]) -> Result<Vec<Clip>> {
    if specs.is_empty() {
        return Err(VatError::NoClips);
    }
    if specs.len() > MAX_CLIPS as usize {
        return Err(VatError::TooManyClips {
            count: specs.len(),
            max: MAX_CLIPS,
        });
    }
    let max_frames = u64::from(VAT_MAX_WIDTH) * u64::from(MAX_TEXTURE_SIZE);
    let mut first_frame: u64 = 0;
    let mut clips = Vec::with_capacity(specs.len());
    for spec in specs {
        let n = intervals_of(spec)?;
        let pose = spec.duration == 0.0;
        let looped = spec.looped && !pose;
        let frame_count = if pose {
            1
        } else if looped {
            n
        } else {
            n + 1
        };
        let end = first_frame + frame_count;
        if end > max_frames {
            return Err(VatError::TooLarge {
                vertices: 1,
                frames: end as usize,
                texels: end,
                max_texels: max_frames,
            });
        }
        clips.push(Clip {
            name: spec.name.clone(),
            first_frame: first_frame as u32,
            frame_count: frame_count as u32,
            fps: if pose {
                0.0
            } else {
                (n as f64 / f64::from(spec.duration)) as f32
            },
            looped,
            duration: spec.duration,
        });
        first_frame = end;
    }
    Ok(clips)
}

/// `max(1, round(duration * fps))` after validating both; saturates instead of overflowing so the
/// caller's size check reports absurd rates as [`VatError::TooLarge`].
fn intervals_of(spec: &ClipSpec) -> Result<u64> {
    if !(spec.duration.is_finite() && spec.duration >= 0.0) {
        return Err(VatError::BadDuration {
            clip: spec.name.clone(),
        });
    }
    if !(spec.fps.is_finite() && spec.fps > 0.0) {
        return Err(VatError::BadFps {
            clip: spec.name.clone(),
            fps: spec.fps,
        });
    }
    let n = (f64::from(spec.duration) * f64::from(spec.fps)).round();
    Ok((n as u64).max(1))
}

/// Total frames over all clips (the texture's frame count).
pub fn total_frames(clips: &[Clip]) -> u32 {
    clips.iter().map(|c| c.frame_count).sum()
}

/// Index of the clip called `name`; [`VatError::UnknownClip`] if none is.
pub fn find_clip(clips: &[Clip], name: &str) -> Result<usize> {
    clips
        .iter()
        .position(|c| c.name == name)
        .ok_or_else(|| VatError::UnknownClip {
            name: name.to_owned(),
        })
}

/// The exact frame selection the shader does for a clip-local time `t` (seconds, already
/// multiplied by the playback speed). Returns `(frame_a, frame_b, mix)` with absolute frame
/// indices; the pose is `mix(frame_a, frame_b, mix)`.
///
/// * looped: `u = fract(t / duration) * frame_count` (GLSL `fract`, so negative `t` plays
///   backwards into the clip); `f0 = min(floor(u), frame_count - 1)` (the clamp catches `fract`
///   rounding up to 1.0 for tiny negative `t`), `f1 = (f0 + 1) % frame_count`.
/// * non-looped: `u = clamp(t / duration, 0, 1) * (frame_count - 1)`;
///   `f0 = min(floor(u), frame_count - 1)`, `f1 = min(f0 + 1, frame_count - 1)`.
///
/// `mix = u - floor(u)` lies in `[0, 1)`. A non-finite `t` samples as `t = 0`.
pub fn sample(clip: &Clip, t: f32) -> (u32, u32, f32) {
    let t = if t.is_finite() { t } else { 0.0 };
    let count = clip.frame_count.max(1);
    // The shader's guard: a pose's zero duration must not divide.
    let duration = clip.duration.max(MIN_SAMPLED_DURATION);
    let (f0, f1, frac) = if clip.looped {
        let x = t / duration;
        let u = (x - x.floor()) * count as f32;
        let f0 = (u.floor() as u32).min(count - 1);
        (f0, (f0 + 1) % count, u - u.floor())
    } else {
        let last = count - 1;
        let u = (t / duration).clamp(0.0, 1.0) * last as f32;
        let f0 = (u.floor() as u32).min(last);
        (f0, (f0 + 1).min(last), u - u.floor())
    };
    (clip.first_frame + f0, clip.first_frame + f1, frac)
}

/// The smallest duration [`sample`] and the shader divide by (`max(duration, 1e-6)` in GLSL).
pub const MIN_SAMPLED_DURATION: f32 = 1e-6;

/// Floats per clip in [`pack_clip_table`]'s output.
pub const CLIP_TABLE_STRIDE: usize = 4;

/// The clip table the shader reads: per clip `(first_frame, frame_count, duration, looped)`
/// with `looped` as 1.0 / 0.0. Frame numbers below 2^24 are exact in f32.
pub fn pack_clip_table(clips: &[Clip]) -> Vec<f32> {
    clips
        .iter()
        .flat_map(|c| {
            [
                c.first_frame as f32,
                c.frame_count as f32,
                c.duration,
                if c.looped { 1.0 } else { 0.0 },
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, duration: f32, fps: f32, looped: bool) -> ClipSpec {
        ClipSpec {
            name: name.into(),
            duration,
            fps,
            looped,
        }
    }

    fn walk_and_jump() -> Vec<Clip> {
        // walk: 1 s at 30 fps looped -> 30 frames; jump: 0.5 s at 30 fps -> 15 intervals, 16 frames.
        plan_clips(&[
            spec("walk", 1.0, 30.0, true),
            spec("jump", 0.5, 30.0, false),
        ])
        .unwrap()
    }

    #[test]
    fn plans_frame_counts_and_offsets() {
        let clips = walk_and_jump();
        assert_eq!((clips[0].first_frame, clips[0].frame_count), (0, 30));
        assert_eq!((clips[1].first_frame, clips[1].frame_count), (30, 16));
        assert_eq!(total_frames(&clips), 46);
        assert_eq!(clips[1].intervals(), 15);
        assert_eq!(clips[0].intervals(), 30);
    }

    #[test]
    fn effective_fps_and_rounding() {
        // 1.01 s * 30 fps = 30.3 -> 30 intervals -> effective 29.70297 fps.
        let c = &plan_clips(&[spec("a", 1.01, 30.0, false)]).unwrap()[0];
        assert_eq!(c.frame_count, 31);
        assert!((c.fps - 30.0 / 1.01).abs() < 1e-4);
        // A very short clip still gets one interval.
        let c = &plan_clips(&[spec("b", 0.001, 30.0, false)]).unwrap()[0];
        assert_eq!((c.intervals(), c.frame_count), (1, 2));
        assert!((c.fps - 1000.0).abs() < 1e-2);
    }

    #[test]
    fn zero_length_clips_are_one_frame_poses() {
        let clips = plan_clips(&[
            spec("walk", 1.0, 30.0, true),
            spec("TPose", 0.0, 30.0, true),
            spec("jump", 0.5, 30.0, false),
        ])
        .unwrap();
        let pose = &clips[1];
        assert!(pose.is_pose() && !clips[0].is_pose());
        assert_eq!((pose.first_frame, pose.frame_count), (30, 1));
        assert!(!pose.looped, "a pose never loops");
        assert_eq!(pose.fps, 0.0);
        assert_eq!(pose.frame_time(0), 0.0);
        assert_eq!(
            clips[2].first_frame, 31,
            "the next clip follows the pose's one frame"
        );
        // Playback holds the one frame whatever the time (the shader guards the zero duration).
        for t in [0.0, 0.5, 7.0, -1.0] {
            assert_eq!(sample(pose, t), (30, 30, 0.0));
        }
    }

    #[test]
    fn frame_times() {
        let clips = walk_and_jump();
        assert_eq!(clips[1].frame_time(0), 0.0);
        assert_eq!(clips[1].frame_time(15), 0.5);
        assert!((clips[1].frame_time(3) - 0.1).abs() < 1e-7);
        assert!((clips[0].frame_time(29) - 29.0 / 30.0).abs() < 1e-7);
    }

    #[test]
    fn rejects_bad_specs() {
        assert_eq!(plan_clips(&[]), Err(VatError::NoClips));
        assert_eq!(
            plan_clips(&[spec("z", -1.0, 30.0, true)]),
            Err(VatError::BadDuration { clip: "z".into() })
        );
        assert!(matches!(
            plan_clips(&[spec("z", f32::NAN, 30.0, true)]),
            Err(VatError::BadDuration { .. })
        ));
        assert_eq!(
            plan_clips(&[spec("f", 1.0, -5.0, true)]),
            Err(VatError::BadFps {
                clip: "f".into(),
                fps: -5.0
            })
        );
        assert!(matches!(
            plan_clips(&[spec("f", 1.0, f32::INFINITY, true)]),
            Err(VatError::BadFps { .. })
        ));
        let many = vec![spec("c", 1.0, 1.0, true); MAX_CLIPS as usize + 1];
        assert_eq!(
            plan_clips(&many),
            Err(VatError::TooManyClips {
                count: 4096,
                max: MAX_CLIPS
            })
        );
        assert!(matches!(
            plan_clips(&[spec("huge", 1.0e6, 1.0e6, true)]),
            Err(VatError::TooLarge { .. })
        ));
    }

    #[test]
    fn find_clip_by_name() {
        let clips = walk_and_jump();
        assert_eq!(find_clip(&clips, "jump"), Ok(1));
        assert_eq!(
            find_clip(&clips, "run"),
            Err(VatError::UnknownClip { name: "run".into() })
        );
    }

    #[test]
    fn sample_looped() {
        let clips = walk_and_jump();
        let walk = &clips[0];
        // t = 0.5 s -> u = 15 exactly.
        assert_eq!(sample(walk, 0.5), (15, 16, 0.0));
        // t = 0.99 s -> u = 29.7: interpolates the last frame into frame 0 across the wrap.
        let (a, b, m) = sample(walk, 0.99);
        assert_eq!((a, b), (29, 0));
        assert!((m - 0.7).abs() < 1e-4);
        // t = 1.25 s wraps to 0.25 -> u = 7.5.
        let (a, b, m) = sample(walk, 1.25);
        assert_eq!((a, b), (7, 8));
        assert!((m - 0.5).abs() < 1e-4);
        // t = -0.25 s -> fract = 0.75 -> u = 22.5.
        let (a, b, m) = sample(walk, -0.25);
        assert_eq!((a, b), (22, 23));
        assert!((m - 0.5).abs() < 1e-4);
        // fract(-1e-9) rounds to 1.0 in f32: u = 30, clamped to the last frame, as the shader does.
        assert_eq!(sample(walk, -1e-9), (29, 0, 0.0));
    }

    #[test]
    fn sample_clamped() {
        let clips = walk_and_jump();
        let jump = &clips[1];
        assert_eq!(sample(jump, -3.0), (30, 31, 0.0));
        assert_eq!(sample(jump, 0.5), (45, 45, 0.0));
        assert_eq!(sample(jump, 100.0), (45, 45, 0.0));
        // t = 0.25 -> u = 7.5 -> frames 37/38 (first_frame 30).
        let (a, b, m) = sample(jump, 0.25);
        assert_eq!((a, b), (37, 38));
        assert!((m - 0.5).abs() < 1e-5);
        assert_eq!(sample(jump, f32::NAN), (30, 31, 0.0));
    }

    #[test]
    fn sample_hits_each_frame_time() {
        // Sampling at a frame's own time must select exactly that frame (the bake/playback contract).
        for c in &walk_and_jump() {
            for k in 0..c.frame_count {
                let (a, _, m) = sample(c, c.frame_time(k));
                let hit = (a == c.first_frame + k && m < 1e-3)
                    || (a + 1 == c.first_frame + k && m > 0.999);
                assert!(hit, "clip {} frame {k}: got {a} mix {m}", c.name);
            }
        }
    }

    #[test]
    fn clip_table() {
        let t = pack_clip_table(&walk_and_jump());
        assert_eq!(t, vec![0.0, 30.0, 1.0, 1.0, 30.0, 16.0, 0.5, 0.0]);
        assert_eq!(t.len(), 2 * CLIP_TABLE_STRIDE);
    }
}
