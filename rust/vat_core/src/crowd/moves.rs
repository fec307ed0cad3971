//! Bulk calls that change part of the actors a crowd already holds, for the frame a game
//! actually has: every actor moves ([`move_actors_bulk`], the caller's `(x, y, z, yaw)` array
//! copied as it is, since that is the placement's layout), and a few switch clips
//! ([`set_clips_bulk`]). What a call does not name keeps its value, so a frame whose states did
//! not change uploads none (see `split`).
//!
//! Each validates all of its input first and writes only if all of it is good, so a rejected call
//! leaves the actors as they were. Errors name the lowest offending entry.

use std::sync::Mutex;

use glam::Vec3;

use crate::bounds::Bounds;
use crate::crowd::bulk::PARALLEL_MIN_ITEMS;
use crate::crowd::prefetch::{prefetch, AHEAD};
use crate::crowd::records::{clip_code, ACTOR_FLOATS};
use crate::crowd::validate;
use crate::error::{check_len, Result, VatError};
use crate::half::unpack_half2;
use crate::helped::{for_each_helped, Helpers, RayonHelpers};
use crate::layout::MAX_CLIPS;

/// Writes `placements[i]` (`x, y, z, yaw`) as actor `i`'s placement in `records` (yaw records of
/// [`ACTOR_FLOATS`] floats, one per placement), keeping every state. Returns the bounds of the
/// positions.
///
/// Errors: [`VatError::BadLength`] unless `records` holds exactly one record per placement;
/// [`VatError::NonFinite`] for a position or yaw.
pub fn move_actors_bulk(records: &mut [f32], placements: &[[f32; 4]]) -> Result<Bounds> {
    let (min, max) = check_placements(records.len() / ACTOR_FLOATS, placements)?;
    for (record, p) in records.chunks_exact_mut(ACTOR_FLOATS).zip(placements) {
        record[..4].copy_from_slice(p);
    }
    Ok(bounds_of(min, max, placements.is_empty()))
}

/// Checks placements for [`move_actors_bulk`]: exactly one per actor of `actors`, every value
/// finite (the same errors). Returns the per-lane minima and maxima of the placements (`x, y,
/// z, yaw`), found in the same pass (parallel from [`PARALLEL_MIN_ITEMS`] placements).
pub(crate) fn check_placements(
    actors: usize,
    placements: &[[f32; 4]],
) -> Result<([f32; 4], [f32; 4])> {
    check_placements_helped(
        actors,
        placements,
        &RayonHelpers,
        PARALLEL_MIN_ITEMS,
        1 << 15,
    )
}

/// [`check_placements`] with the pass split into tasks of `chunk` placements that `helpers`
/// take while they are free ([`for_each_helped`]), from `parallel_min` placements.
pub(crate) fn check_placements_helped(
    actors: usize,
    placements: &[[f32; 4]],
    helpers: &dyn Helpers,
    parallel_min: usize,
    chunk: usize,
) -> Result<([f32; 4], [f32; 4])> {
    check_len(
        "placements (one per actor this frame)",
        actors,
        placements.len(),
    )?;
    let bounds = if placements.len() >= parallel_min {
        let chunks: Vec<&[[f32; 4]]> = placements.chunks(chunk).collect();
        let found: Vec<Mutex<LaneBounds>> =
            chunks.iter().map(|_| Mutex::new(NO_LANE_BOUNDS)).collect();
        for_each_helped(helpers, chunks.len(), &|c| {
            *found[c].lock().unwrap_or_else(|e| e.into_inner()) =
                lane_bounds(chunks[c].as_flattened());
        });
        found
            .into_iter()
            .map(|f| f.into_inner().unwrap_or_else(|e| e.into_inner()))
            .fold(NO_LANE_BOUNDS, join_lane_bounds)
    } else {
        lane_bounds(placements.as_flattened())
    };
    lane_bounds_checked(placements, bounds)
}

/// Per-lane minima and maxima of placements, and whether every value was finite.
type LaneBounds = ([f32; 4], [f32; 4], bool);

/// The lane bounds of no placements.
const NO_LANE_BOUNDS: LaneBounds = ([f32::INFINITY; 4], [f32::NEG_INFINITY; 4], true);

/// The lane bounds of two parts together.
fn join_lane_bounds(a: LaneBounds, b: LaneBounds) -> LaneBounds {
    let min = std::array::from_fn(|k| a.0[k].min(b.0[k]));
    let max = std::array::from_fn(|k| a.1[k].max(b.1[k]));
    (min, max, a.2 & b.2)
}

/// The minima and maxima of `placements` from their lane bounds, or the error naming the first
/// value that is not finite.
fn lane_bounds_checked(
    placements: &[[f32; 4]],
    (min, max, finite): LaneBounds,
) -> Result<([f32; 4], [f32; 4])> {
    if !finite {
        // The search for the culprit only on a failure.
        let i = placements
            .iter()
            .position(|p| !p.iter().all(|v| v.is_finite()))
            .unwrap_or(0);
        let what = if placements[i][..3].iter().all(|v| v.is_finite()) {
            "yaw"
        } else {
            "position"
        };
        return Err(VatError::NonFinite {
            what: format!("{what} of actor {i}"),
        });
    }
    Ok((min, max))
}

/// Per-lane minima and maxima of `x, y, z, w` quadruples, and whether every value is finite,
/// in one branch-free pass (it vectorises: eight lanes, sixteen where the CPU has AVX). The
/// bounds mean nothing when a value is not finite.
fn lane_bounds(flat: &[f32]) -> ([f32; 4], [f32; 4], bool) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX.
        return unsafe { lane_bounds_avx(flat) };
    }
    lane_bounds_in::<8>(flat)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn lane_bounds_avx(flat: &[f32]) -> ([f32; 4], [f32; 4], bool) {
    lane_bounds_in::<16>(flat)
}

/// [`lane_bounds`] over `L` lanes (a multiple of 4).
#[inline(always)]
fn lane_bounds_in<const L: usize>(flat: &[f32]) -> ([f32; 4], [f32; 4], bool) {
    let mut min = [f32::INFINITY; L];
    let mut max = [f32::NEG_INFINITY; L];
    // `v * 0` is 0 for a finite v and NaN otherwise, and a NaN stays in the sum.
    let mut zero = [0.0f32; L];
    let chunks = flat.chunks_exact(L);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..L {
            let v = c[k];
            min[k] = if v < min[k] { v } else { min[k] };
            max[k] = if v > max[k] { v } else { max[k] };
            zero[k] += v * 0.0;
        }
    }
    for (k, &v) in rest.iter().enumerate() {
        min[k] = min[k].min(v);
        max[k] = max[k].max(v);
        zero[k] += v * 0.0;
    }
    let lanes = |k: usize| (k..L).step_by(4);
    let min = std::array::from_fn(|k| lanes(k).map(|j| min[j]).fold(f32::INFINITY, f32::min));
    let max = std::array::from_fn(|k| lanes(k).map(|j| max[j]).fold(f32::NEG_INFINITY, f32::max));
    (min, max, zero.iter().all(|&z| z == 0.0))
}

/// The bounds of points whose per-axis minima and maxima are `min` and `max` (empty when
/// there were none).
pub(crate) fn bounds_of(min: [f32; 4], max: [f32; 4], empty: bool) -> Bounds {
    if empty {
        Bounds::empty()
    } else {
        Bounds {
            min: Vec3::new(min[0], min[1], min[2]),
            max: Vec3::new(max[0], max[1], max[2]),
        }
    }
}

/// One actor whose clip [`set_clips_bulk`] changed: what the clip-end tracker needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipChange {
    /// The actor's index.
    pub actor: usize,
    /// Its new clip.
    pub clip: u32,
    /// Its start time, as given (crowd seconds).
    pub start_time: f32,
    /// Its speed as stored.
    pub speed: f32,
}

/// Makes actor `actor_ids[i]` of the `records` (of `stride` floats each) play `clips[i]` from
/// `start_times[i]` (crowd seconds, stored less `time_origin`), with no cross-fade (as
/// `set_actors` does; `set_actor_blends` adds one), keeping its placement, speed and scale.
/// Returns the changes in input order, writing only records whose state differs.
///
/// Errors: [`VatError::BadLength`] if the arrays differ in length;
/// [`VatError::IndexOutOfRange`] for an actor outside the records or a clip outside
/// `0..n_clips`; [`VatError::BadValue`] for a start time outside [`validate::crowd_time`]'s rule.
pub fn set_clips_bulk(
    records: &mut [f32],
    stride: usize,
    actor_ids: &[i32],
    clips: &[i32],
    start_times: &[f32],
    n_clips: u32,
    time_origin: f32,
) -> Result<Vec<ClipChange>> {
    check_len("clips (one per actor id)", actor_ids.len(), clips.len())?;
    check_len(
        "start times (one per actor id)",
        actor_ids.len(),
        start_times.len(),
    )?;
    let actors = records.len() / stride.max(1);
    let n_clips = n_clips.min(MAX_CLIPS);
    for (i, ((&a, &c), &t)) in actor_ids.iter().zip(clips).zip(start_times).enumerate() {
        if a < 0 || a as usize >= actors {
            return Err(VatError::IndexOutOfRange {
                what: "actor id",
                index: i64::from(a),
                len: actors,
            });
        }
        if c < 0 || c as u32 >= n_clips {
            return Err(VatError::IndexOutOfRange {
                what: "clip index",
                index: i64::from(c),
                len: n_clips as usize,
            });
        }
        validate::crowd_time_named(f64::from(t), || format!("start time of entry {i}"))?;
    }
    let no_blend = crate::crowd::records::no_blend_tail();
    let mut changes = Vec::with_capacity(actor_ids.len());
    for (i, ((&a, &c), &t)) in actor_ids.iter().zip(clips).zip(start_times).enumerate() {
        if let Some(&ahead) = actor_ids.get(i + AHEAD) {
            prefetch(records, ahead as usize * stride + 4);
        }
        let state = &mut records[a as usize * stride + 4..a as usize * stride + 8];
        let new = [
            t - time_origin,
            clip_code(c as u32, c as u32),
            state[2],
            no_blend,
        ];
        if new
            .iter()
            .zip(state.iter())
            .any(|(x, y)| x.to_bits() != y.to_bits())
        {
            state.copy_from_slice(&new);
        }
        changes.push(ClipChange {
            actor: a as usize,
            clip: c as u32,
            start_time: t,
            speed: unpack_half2(state[2]).0,
        });
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crowd::records::{pack_actor, unpack_actor, ActorState};

    fn crowd(n: usize) -> Vec<f32> {
        let mut out = vec![0.0; n * ACTOR_FLOATS];
        for i in 0..n {
            let a = ActorState {
                position: Vec3::new(i as f32, 0.0, 0.0),
                yaw: 0.25,
                scale: 2.0,
                speed: 1.5,
                clip: 1,
                prev_clip: 1,
                start_time: 3.0,
                ..ActorState::default()
            };
            pack_actor(&a, &mut out[i * ACTOR_FLOATS..(i + 1) * ACTOR_FLOATS]);
        }
        out
    }

    #[test]
    fn moving_writes_placements_as_given_and_keeps_states() {
        let mut records = crowd(3);
        let placements = [
            [1.0, 2.0, 3.0, 0.5],
            [-4.0, 0.0, 9.0, -1.0],
            [0.0, 7.0, 0.0, 3.0],
        ];
        let b = move_actors_bulk(&mut records, &placements).unwrap();
        assert_eq!(b.min, Vec3::new(-4.0, 0.0, 0.0));
        assert_eq!(b.max, Vec3::new(1.0, 7.0, 9.0));
        for (i, p) in placements.iter().enumerate() {
            let a = unpack_actor(&records[i * 8..i * 8 + 8]);
            assert_eq!(a.position, Vec3::new(p[0], p[1], p[2]));
            assert_eq!(a.yaw, p[3]);
            assert_eq!((a.clip, a.scale, a.speed, a.start_time), (1, 2.0, 1.5, 3.0));
        }
    }

    #[test]
    fn bad_placements_change_nothing_and_name_the_actor() {
        let mut records = crowd(3);
        let before = records.clone();
        let mut placements = [[0.0f32; 4]; 3];
        placements[2][3] = f32::NAN;
        placements[1][1] = f32::INFINITY;
        let e = move_actors_bulk(&mut records, &placements).unwrap_err();
        assert!(e.to_string().contains("position of actor 1"), "{e}");
        placements[1][1] = 0.0;
        let e = move_actors_bulk(&mut records, &placements).unwrap_err();
        assert!(e.to_string().contains("yaw of actor 2"), "{e}");
        let e = move_actors_bulk(&mut records, &placements[..2]).unwrap_err();
        assert!(matches!(e, VatError::BadLength { .. }), "{e}");
        assert_eq!(records, before);
    }

    #[test]
    fn a_large_crowd_is_checked_in_tasks_with_the_same_answers() {
        let n = PARALLEL_MIN_ITEMS + 5;
        let mut placements: Vec<[f32; 4]> =
            (0..n).map(|i| [i as f32, -(i as f32), 1.0, 0.5]).collect();
        let (min, max) = check_placements(n, &placements).unwrap();
        assert_eq!(
            (min, max),
            (
                [0.0, -(n as f32 - 1.0), 1.0, 0.5],
                [n as f32 - 1.0, 0.0, 1.0, 0.5]
            )
        );
        placements[n - 2][3] = f32::INFINITY;
        placements[n - 1][0] = f32::NAN;
        let e = check_placements(n, &placements).unwrap_err();
        assert!(
            e.to_string().contains(&format!("yaw of actor {}", n - 2)),
            "{e}"
        );
    }

    #[test]
    fn clips_change_only_the_named_actors_and_keep_speed_scale_and_placement() {
        let mut records = crowd(4);
        let before = records.clone();
        let changes =
            set_clips_bulk(&mut records, 8, &[2, 0], &[3, 1], &[10.0, 3.0], 5, 2.0).unwrap();
        let a = unpack_actor(&records[16..24]);
        assert_eq!((a.clip, a.prev_clip, a.start_time), (3, 3, 8.0));
        assert_eq!(
            (a.scale, a.speed, a.position.x, a.yaw),
            (2.0, 1.5, 2.0, 0.25)
        );
        assert_eq!(a.blend_time, 0.0);
        // Actor 0 gets clip 1 from 3.0 (origin 2.0: stored 1.0), not what it had (3.0).
        assert_eq!(unpack_actor(&records[..8]).start_time, 1.0);
        assert_eq!(records[8..16], before[8..16]);
        assert_eq!(records[24..], before[24..]);
        assert_eq!(changes.len(), 2);
        assert_eq!(
            changes[0],
            ClipChange {
                actor: 2,
                clip: 3,
                start_time: 10.0,
                speed: 1.5
            }
        );
    }

    /// Actor ids, clips, start times, and what the error must name.
    type BadCase<'a> = (&'a [i32], &'a [i32], &'a [f32], &'a str);

    #[test]
    fn bad_clip_changes_change_nothing() {
        let mut records = crowd(4);
        let before = records.clone();
        let cases: [BadCase; 4] = [
            (&[0, 4], &[0, 0], &[0.0, 0.0], "actor id 4"),
            (&[0, 1], &[0, 5], &[0.0, 0.0], "clip index 5"),
            (&[0, 1], &[0, 0], &[0.0, f32::NAN], "start time of entry 1"),
            (&[0, 1], &[0], &[0.0, 0.0], "clips"),
        ];
        for (ids, clips, starts, want) in cases {
            let e = set_clips_bulk(&mut records, 8, ids, clips, starts, 5, 0.0).unwrap_err();
            assert!(e.to_string().contains(want), "{e} should name {want}");
            assert_eq!(records, before);
        }
    }
}
