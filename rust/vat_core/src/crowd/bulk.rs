//! Bulk packers for the GDScript-facing bulk calls (hot: up to a million actors a frame).
//!
//! Each validates all of its input first and only then writes into a caller-provided slice, so a
//! rejected call leaves the previous frame's data whole. Below [`PARALLEL_MIN_ITEMS`] items both
//! passes run on the calling thread: handing a few hundred microseconds of streaming writes to a
//! thread pool costs more than it saves, and its wake-up latency grows to milliseconds when the
//! cores are busy (the renderer's threads, or a software rasteriser). Errors name the lowest
//! offending item, whichever thread finds it.
//!
//! This file holds the split over rayon tasks that every bulk call shares, the cross-fades
//! ([`apply_blends_bulk`]), full states ([`pack_actor_states_bulk`]) and model instances
//! ([`pack_model_instances_bulk`]); the packers that place actors from positions and yaws or from
//! transforms ([`pack_actors_bulk`](crate::crowd::pack_actors_bulk),
//! [`pack_actor_transforms_bulk`](crate::crowd::pack_actor_transforms_bulk)) are in
//! `bulk_actors`.

use rayon::prelude::*;

use crate::crowd::prefetch::{prefetch, AHEAD};
use crate::crowd::records::{
    pack_actor, pack_model_instance, unpack_actor, ActorState, ACTOR_FLOATS,
};
use crate::crowd::validate;
use crate::error::{check_len, Result, VatError};
use crate::layout::{MAX_ACTORS, MAX_CLIPS, MODEL_INSTANCE_BYTES};

/// Items from which a bulk call splits its work over rayon tasks.
pub const PARALLEL_MIN_ITEMS: usize = 1 << 18;
/// Items per rayon task once the work is split.
const BULK_CHUNK: usize = 1 << 16;

/// How a bulk call splits its items: `None` runs them all on the calling thread.
#[derive(Clone, Copy)]
pub(super) struct Split(Option<usize>);

impl Split {
    pub(super) fn for_items(n: usize, parallel_min: usize) -> Self {
        Split((n >= parallel_min).then_some(BULK_CHUNK))
    }

    /// Runs `f(first_item, items)` over `0..n` in chunks and returns the lowest-indexed error.
    pub(super) fn check(
        self,
        n: usize,
        f: impl Fn(usize, usize) -> Option<(usize, VatError)> + Sync,
    ) -> Result<()> {
        let found = match self.0 {
            None => f(0, n),
            Some(chunk) => (0..n.div_ceil(chunk))
                .into_par_iter()
                .filter_map(|c| f(c * chunk, ((c + 1) * chunk).min(n)))
                .min_by_key(|(i, _)| *i),
        };
        found.map_or(Ok(()), |(_, e)| Err(e))
    }

    /// Runs `f(first_item, out_chunk)` over `out` (`stride` elements per item) in chunks and
    /// combines what the chunks return (what they saw or changed) with `combine`.
    pub(super) fn write<T: Send, R: Send>(
        self,
        out: &mut [T],
        stride: usize,
        f: impl Fn(usize, &mut [T]) -> R + Sync,
        combine: impl Fn(R, R) -> R + Sync + Send,
    ) -> R {
        match self.0 {
            None => f(0, out),
            Some(chunk) => out
                .par_chunks_mut(chunk * stride)
                .enumerate()
                .map(|(c, o)| f(c * chunk, o))
                .reduce_with(combine)
                .unwrap_or_else(|| f(0, &mut [])),
        }
    }
}

/// True unless `bits` is an infinity or NaN (all exponent bits set).
#[inline]
fn finite_bits(bits: u32) -> bool {
    bits & 0x7f80_0000 != 0x7f80_0000
}

/// True if every value is finite; branch-free so it vectorises.
pub(crate) fn all_finite(values: &[f32]) -> bool {
    values
        .iter()
        .fold(true, |ok, v| ok & finite_bits(v.to_bits()))
}

/// Cross-fades for some of a frame's actors, for [`apply_blends_bulk`]: entry `i` makes actor
/// `actor_ids[i]` fade from `prev_clips[i]`, which it had played since `prev_start_times[i]`
/// (crowd seconds), into its own clip over `blend_times[i]` seconds from its start time.
#[derive(Debug, Clone, Copy)]
pub struct BulkBlends<'a> {
    /// Indices into the frame's actors.
    pub actor_ids: &'a [i32],
    /// The clip each fades from.
    pub prev_clips: &'a [i32],
    /// When each started its previous clip, in crowd seconds.
    pub prev_start_times: &'a [f32],
    /// Fade durations in seconds (0: no fade).
    pub blend_times: &'a [f32],
}

/// Applies `blends` to the actor records in `records` (`stride` floats each, as packed by the
/// bulk packers; start times stored less `time_origin`). The previous clip's elapsed time at the
/// switch is `(start - prev_start) * speed`, using the actor's current speed.
///
/// Errors, reported for the lowest offending entry with `records` untouched:
/// [`VatError::BadLength`] if the arrays differ in length or `records` is not whole records;
/// [`VatError::IndexOutOfRange`] for an actor id or previous clip out of range;
/// [`VatError::BadValue`] for a previous start time outside
/// [`validate::crowd_time`]'s rule or a blend time outside [`validate::blend_time`]'s.
pub fn apply_blends_bulk(
    records: &mut [f32],
    stride: usize,
    blends: &BulkBlends,
    n_clips: u32,
    time_origin: f64,
) -> Result<()> {
    let n = blends.actor_ids.len();
    check_len("previous clips", n, blends.prev_clips.len())?;
    check_len("previous start times", n, blends.prev_start_times.len())?;
    check_len("blend times", n, blends.blend_times.len())?;
    check_len(
        "actor data floats",
        records.len().next_multiple_of(stride),
        records.len(),
    )?;
    let actors = records.len() / stride;
    let n_clips = n_clips.min(MAX_CLIPS);
    for i in 0..n {
        let id = blends.actor_ids[i];
        if id < 0 || id as usize >= actors {
            return Err(VatError::IndexOutOfRange {
                what: "actor id",
                index: i64::from(id),
                len: actors,
            });
        }
        let clip = blends.prev_clips[i];
        if clip < 0 || clip as u32 >= n_clips {
            return Err(VatError::IndexOutOfRange {
                what: "previous clip",
                index: i64::from(clip),
                len: n_clips as usize,
            });
        }
        validate::crowd_time_named(f64::from(blends.prev_start_times[i]), || {
            format!("previous start time of entry {i}")
        })?;
        validate::blend_time_named(f64::from(blends.blend_times[i]), || {
            format!("blend time of entry {i}")
        })?;
    }
    for i in 0..n {
        if let Some(&ahead) = blends.actor_ids.get(i + AHEAD) {
            prefetch(records, ahead as usize * stride);
        }
        let at = blends.actor_ids[i] as usize * stride;
        let rec = &mut records[at..at + ACTOR_FLOATS];
        let mut state = unpack_actor(rec);
        let start = f64::from(state.start_time) + time_origin;
        let prev_start = f64::from(blends.prev_start_times[i]);
        state.prev_clip = blends.prev_clips[i] as u32;
        state.prev_elapsed = ((start - prev_start) * f64::from(state.speed)).max(0.0) as f32;
        state.blend_time = blends.blend_times[i].max(0.0);
        // T0.w (the yaw, or a full record's z.z) and the f16 fields round-trip exactly.
        pack_actor(&state, rec);
    }
    Ok(())
}

/// Packs full actor states into `out` (8 floats each) with [`pack_actor`], parallel from
/// [`PARALLEL_MIN_ITEMS`] actors. [`VatError::BadLength`] if `out.len() != states.len() * 8`.
pub fn pack_actor_states_bulk(out: &mut [f32], states: &[ActorState]) -> Result<()> {
    pack_states_split(out, states, PARALLEL_MIN_ITEMS)
}

fn pack_states_split(out: &mut [f32], states: &[ActorState], parallel_min: usize) -> Result<()> {
    check_len("actor data floats", states.len() * ACTOR_FLOATS, out.len())?;
    let split = Split::for_items(states.len(), parallel_min);
    split.write(
        out,
        ACTOR_FLOATS,
        |start, out| {
            for (rec, a) in out.chunks_exact_mut(ACTOR_FLOATS).zip(&states[start..]) {
                pack_actor(a, rec);
            }
        },
        |(), ()| (),
    );
    Ok(())
}

/// What [`pack_model_instances_bulk`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedModels {
    /// Whether any byte changed, so a caller can skip re-uploading a list that is the same as
    /// last frame's (equipment rarely changes).
    pub changed: bool,
    /// One past the highest actor id listed (0 for none): the actor count the list needs.
    pub reach: usize,
}

/// Packs one model instance per actor id, all with `look`, into `out` (4 bytes each), parallel
/// from [`PARALLEL_MIN_ITEMS`] ids. Errors: [`VatError::BadLength`] if
/// `out.len() != actor_ids.len() * 4`; [`VatError::IndexOutOfRange`] for an id outside
/// `0..actor_count` (the lowest such is reported, and `out` is untouched).
pub fn pack_model_instances_bulk(
    out: &mut [u8],
    actor_ids: &[i32],
    look: u8,
    actor_count: u32,
) -> Result<PackedModels> {
    pack_models_split(out, actor_ids, look, actor_count, PARALLEL_MIN_ITEMS)
}

fn pack_models_split(
    out: &mut [u8],
    actor_ids: &[i32],
    look: u8,
    actor_count: u32,
    parallel_min: usize,
) -> Result<PackedModels> {
    let stride = MODEL_INSTANCE_BYTES as usize;
    let n = actor_ids.len();
    check_len("model instance bytes", n * stride, out.len())?;
    let count = actor_count.min(MAX_ACTORS);
    let split = Split::for_items(n, parallel_min);
    // Negative ids wrap to huge u32s, so the highest id as u32 checks both ends in one
    // branch-free pass (it vectorises), and is the list's reach; the per-item search only runs
    // if it found something.
    let highest = actor_ids.iter().fold(0u32, |m, &id| m.max(id as u32));
    if n > 0 && highest >= count {
        split.check(n, |start, end| {
            let ids = &actor_ids[start..end];
            let j = ids.iter().position(|&id| id < 0 || id as u32 >= count)?;
            let e = VatError::IndexOutOfRange {
                what: "actor id",
                index: i64::from(ids[j]),
                len: count as usize,
            };
            Some((start + j, e))
        })?;
    }
    let write = |start: usize, out: &mut [u8]| {
        let ids = &actor_ids[start..];
        // SAFETY: every bit pattern is a valid u32; align_to_mut returns only the aligned middle.
        let (head, texels, tail) = unsafe { out.align_to_mut::<u32>() };
        if !head.is_empty() || !tail.is_empty() {
            // Unaligned storage (never from Godot's allocator): byte by byte.
            let mut changed = false;
            for (dst, &id) in out.chunks_exact_mut(stride).zip(ids) {
                let texel = pack_model_instance(id as u32, look);
                changed |= *dst != texel;
                dst.copy_from_slice(&texel);
            }
            return changed;
        }
        // Whole texels as u32, so the compare-and-write loop vectorises.
        let mut diff = 0u32;
        for (dst, &id) in texels.iter_mut().zip(ids) {
            let texel = u32::from_ne_bytes(pack_model_instance(id as u32, look));
            diff |= *dst ^ texel;
            *dst = texel;
        }
        diff != 0
    };
    let changed = split.write(out, stride, write, |a, b| a | b);
    let reach = if n == 0 { 0 } else { highest as usize + 1 };
    Ok(PackedModels { changed, reach })
}

#[cfg(test)]
mod tests;
