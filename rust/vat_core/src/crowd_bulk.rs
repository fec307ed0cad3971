//! Rayon-parallel bulk packers for the GDScript-facing bulk calls (hot: a million actors a frame).
//!
//! Each writes into a caller-provided slice, one chunk per task, without allocating per item.
//! Errors name the lowest offending item, whichever thread finds it.

use glam::Vec3;
use rayon::prelude::*;

use crate::crowd::{clip_code, pack_actor, pack_model_instance, ActorState, ACTOR_FLOATS};
use crate::error::{Result, VatError};
use crate::half::pack_half2;
use crate::layout::{BLEND_BIAS, MAX_ACTORS, MAX_CLIPS, MODEL_INSTANCE_BYTES};

/// Items per rayon task.
const BULK_CHUNK: usize = 8192;

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(VatError::BadLength {
            what,
            expected,
            got,
        })
    }
}

/// Packs `positions.len()` actors into `out` (8 floats each) with speed 1, scale 1, no blend,
/// `prev_clip = clip`; `clips` / `start_times` default to 0. Rayon-parallel over chunks.
///
/// Errors: [`VatError::BadLength`] if `out` or an array does not match the actor count;
/// [`VatError::IndexOutOfRange`] for a clip outside `0..n_clips`; [`VatError::NonFinite`] for a
/// position, yaw or start time. The lowest offending actor is reported; on error `out` may be
/// partly written.
pub fn pack_actors_bulk(
    out: &mut [f32],
    positions: &[Vec3],
    yaws: &[f32],
    clips: Option<&[i32]>,
    start_times: Option<&[f32]>,
    n_clips: u32,
) -> Result<()> {
    let n = positions.len();
    check_len("actor data floats", n * ACTOR_FLOATS, out.len())?;
    check_len("yaws", n, yaws.len())?;
    if let Some(c) = clips {
        check_len("clips", n, c.len())?;
    }
    if let Some(s) = start_times {
        check_len("start times", n, s.len())?;
    }
    let input = BulkActors {
        positions,
        yaws,
        clips,
        start_times,
        n_clips: n_clips.min(MAX_CLIPS),
    };
    first_error(
        out.par_chunks_mut(BULK_CHUNK * ACTOR_FLOATS)
            .enumerate()
            .map(|(c, out)| {
                let start = c * BULK_CHUNK;
                input.pack_range(start, start + out.len() / ACTOR_FLOATS, out)
            }),
    )
}

/// The lowest-indexed error of a parallel run, so failures are reported deterministically.
fn first_error(results: impl ParallelIterator<Item = Option<(usize, VatError)>>) -> Result<()> {
    match results.flatten().min_by_key(|(i, _)| *i) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Borrowed inputs of [`pack_actors_bulk`], shared by its chunk tasks.
struct BulkActors<'a> {
    positions: &'a [Vec3],
    yaws: &'a [f32],
    clips: Option<&'a [i32]>,
    start_times: Option<&'a [f32]>,
    n_clips: u32,
}

impl BulkActors<'_> {
    /// Validates actors `start..end`, then writes them; returns the first bad actor's error.
    fn pack_range(&self, start: usize, end: usize, out: &mut [f32]) -> Option<(usize, VatError)> {
        if let Some(bad) = (start..end).find_map(|i| self.check(i).err().map(|e| (i, e))) {
            return Some(bad);
        }
        let tail = [pack_half2(1.0, 1.0), pack_half2(0.0, BLEND_BIAS)];
        for (i, rec) in (start..end).zip(out.chunks_exact_mut(ACTOR_FLOATS)) {
            let p = self.positions[i];
            let clip = self.clips.map_or(0, |c| c[i] as u32);
            let t = self.start_times.map_or(0.0, |s| s[i]);
            let code = clip_code(clip, clip);
            rec.copy_from_slice(&[p.x, p.y, p.z, self.yaws[i], t, code, tail[0], tail[1]]);
        }
        None
    }

    fn check(&self, i: usize) -> Result<()> {
        let non_finite = |what: &str| {
            Err(VatError::NonFinite {
                what: format!("{what} of actor {i}"),
            })
        };
        if !self.positions[i].is_finite() {
            return non_finite("position");
        }
        if !self.yaws[i].is_finite() {
            return non_finite("yaw");
        }
        if self.start_times.is_some_and(|s| !s[i].is_finite()) {
            return non_finite("start time");
        }
        match self.clips.map(|c| c[i]) {
            Some(c) if c < 0 || c as u32 >= self.n_clips => Err(VatError::IndexOutOfRange {
                what: "clip index",
                index: i64::from(c),
                len: self.n_clips as usize,
            }),
            _ => Ok(()),
        }
    }
}

/// Packs full actor states into `out` (8 floats each) with [`pack_actor`], rayon-parallel.
/// [`VatError::BadLength`] if `out.len() != states.len() * 8`.
pub fn pack_actor_states_bulk(out: &mut [f32], states: &[ActorState]) -> Result<()> {
    check_len("actor data floats", states.len() * ACTOR_FLOATS, out.len())?;
    out.par_chunks_mut(BULK_CHUNK * ACTOR_FLOATS)
        .zip(states.par_chunks(BULK_CHUNK))
        .for_each(|(out, states)| {
            for (rec, a) in out.chunks_exact_mut(ACTOR_FLOATS).zip(states) {
                pack_actor(a, rec);
            }
        });
    Ok(())
}

/// Packs one model instance per actor id, all with `look`, into `out` (4 bytes each),
/// rayon-parallel. Errors: [`VatError::BadLength`] if `out.len() != actor_ids.len() * 4`;
/// [`VatError::IndexOutOfRange`] for an id outside `0..actor_count` (the lowest such is
/// reported; `out` may then be partly written).
pub fn pack_model_instances_bulk(
    out: &mut [u8],
    actor_ids: &[i32],
    look: u8,
    actor_count: u32,
) -> Result<()> {
    let stride = MODEL_INSTANCE_BYTES as usize;
    check_len("model instance bytes", actor_ids.len() * stride, out.len())?;
    let count = actor_count.min(MAX_ACTORS);
    first_error(
        out.par_chunks_mut(BULK_CHUNK * stride)
            .zip(actor_ids.par_chunks(BULK_CHUNK))
            .enumerate()
            .map(|(c, (out, ids))| {
                let bad = ids.iter().position(|&id| id < 0 || id as u32 >= count);
                if let Some(j) = bad {
                    let e = VatError::IndexOutOfRange {
                        what: "actor id",
                        index: i64::from(ids[j]),
                        len: count as usize,
                    };
                    return Some((c * BULK_CHUNK + j, e));
                }
                for (dst, &id) in out.chunks_exact_mut(stride).zip(ids) {
                    dst.copy_from_slice(&pack_model_instance(id as u32, look));
                }
                None
            }),
    )
}
