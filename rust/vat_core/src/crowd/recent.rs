//! Recent states: a frame where a few actors change clip uploads their new states, not the whole
//! state texture.
//!
//! `ImageTexture.update()` sends a whole texture, so with one state texture a single actor
//! starting a new clip re-sent 16 bytes for every actor. Instead, an actor whose state changed
//! gets a fresh *slot* in a small layered texture of recent states, and its placement says which:
//! the placement's `w` packs the yaw in 14 bits and the slot above it (see [`pack_yaw_slot`]). The placement is re-sent anyway when actors move, so the slot costs no
//! bytes there. Slots are handed out in order and never rewritten, so a frame writes only the
//! one or two layers at the end of the used range (64 KiB each). When the slots run out, or when
//! re-sending the state texture would cost less than the layers, the state texture is sent whole
//! with every current state and all slots are freed (a *fold*).
//!
//! Invariant: an actor with slot 0 has its current state in the state texture as last sent; an
//! actor with slot `s > 0` has it in recent texel `s`. Only the yaw-and-scale layout (8-float
//! records) uses slots: full transforms keep `basis.z.z` in that `w`, and their state texture is
//! re-sent whole when a state changes ([`crate::crowd::split::split_records`]).

use std::f32::consts::TAU;

use rayon::prelude::*;

use crate::crowd::bulk::PARALLEL_MIN_ITEMS;
use crate::crowd::split::STATE_FLOATS;
use crate::layout::{
    DATA_TEXTURE_WIDTH, RECENT_SLOT_BIAS, RECENT_STATE_LAYERS, RECENT_STATE_SLOTS, YAW_BITS,
    YAW_STEPS,
};

/// Recent-state texels per layer (one row of the data texture width).
pub const LAYER_TEXELS: usize = DATA_TEXTURE_WIDTH as usize;
/// Bytes of one recent-state layer, as uploaded.
pub const LAYER_BYTES: usize = LAYER_TEXELS * STATE_FLOATS * 4;
/// Floats per 8-float record's placement.
const PF: usize = 4;
/// Floats per record (placement, then state).
const STRIDE: usize = 8;
/// Actors per rayon task.
const CHUNK: usize = 1 << 15;
/// Actors per block of the copy loop (see `split_chunk`).
const BLOCK: usize = 64;

/// The placement's `w` for a yaw (radians, any value) and a recent-state slot (0: none, at most
/// [`RECENT_STATE_SLOTS`]): the yaw in whole turns quantised to [`YAW_STEPS`] steps in the low
/// [`YAW_BITS`] bits, the slot plus [`RECENT_SLOT_BIAS`] above them, read as an f32 (always a
/// normal finite number). The shader decodes it with `floatBitsToUint`. One step is 0.022
/// degrees (0.8 mm at 2 m from the actor's axis); beyond about 3,000 radians the f32 yaw itself
/// is coarser than that, and beyond 2.6e7 radians the angle is not kept.
#[inline]
pub fn pack_yaw_slot(yaw: f32, slot: u32) -> f32 {
    debug_assert!(slot <= RECENT_STATE_SLOTS);
    // Float adds and bit masks only (no casts or rounding calls), so the split's loop
    // vectorises. Adding 1.5 * 2^23 rounds a float below 2^22 in magnitude to the nearest
    // integer, which then sits in the low mantissa bits: first the yaw is brought within half a
    // turn (whole turns rounded away), then its step is read modulo a turn.
    const ROUND: f32 = 12_582_912.0;
    let steps_f = YAW_STEPS as f32;
    let t = yaw * (steps_f / TAU);
    let turns = (t * (1.0 / steps_f) + ROUND) - ROUND;
    let t = t - turns * steps_f;
    let steps = (t + ROUND).to_bits() & (YAW_STEPS - 1);
    f32::from_bits(((slot + RECENT_SLOT_BIAS) << YAW_BITS) | steps)
}

/// A packed placement `w` ([`pack_yaw_slot`]) with its slot replaced by `slot`: the same as
/// packing its yaw again with `slot`.
#[inline]
fn with_slot(w: f32, slot: u32) -> f32 {
    f32::from_bits(((slot + RECENT_SLOT_BIAS) << YAW_BITS) | (w.to_bits() & (YAW_STEPS - 1)))
}

/// The yaw (in `[0, TAU)`) and slot of a packed placement `w` (the shader's decoding).
pub fn unpack_yaw_slot(w: f32) -> (f32, u32) {
    let bits = w.to_bits();
    let yaw = (bits & (YAW_STEPS - 1)) as f32 * (TAU / YAW_STEPS as f32);
    (yaw, (bits >> YAW_BITS) - RECENT_SLOT_BIAS)
}

/// What one [`RecentStates::split`] changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecentChanges {
    /// Some placement float changed (a move, a turn, or a slot).
    pub placements: bool,
    /// The state texture must be sent whole (a fold).
    pub states: bool,
    /// Bit `l` set: recent layer `l` was written.
    pub layers: u32,
    /// Layers the recent-state texture needs for this crowd ([`layers_for`]).
    pub layer_count: usize,
    /// Actors whose state changed in this split.
    pub changed: usize,
}

/// Layers of recent states a crowd of `n` actors uses: no more bytes than its state texture
/// (at least one, at most `RECENT_STATE_LAYERS`), so a mid-size crowd's recent texture stays
/// small; its slots are the texels of those layers.
pub fn layers_for(n: usize) -> usize {
    (n * STATE_FLOATS * 4)
        .div_ceil(LAYER_BYTES)
        .clamp(1, RECENT_STATE_LAYERS as usize)
}

/// The recent-state slots of one crowd and the texels of its recent-state texture.
#[derive(Debug, Clone)]
pub struct RecentStates {
    /// Each actor's slot (0: its state is in the state texture).
    slot_of: Vec<u32>,
    /// The next slot to hand out (1-based).
    next: u32,
    /// `RECENT_STATE_LAYERS * LAYER_TEXELS` states; texel `s` is slot `s`'s.
    texels: Vec<f32>,
    /// Scratch: actors whose state changed, per task.
    changed: Vec<Vec<u32>>,
}

impl Default for RecentStates {
    fn default() -> Self {
        Self::new()
    }
}

impl RecentStates {
    /// No slots in use.
    pub fn new() -> Self {
        Self {
            slot_of: Vec::new(),
            next: 1,
            texels: vec![0.0; RECENT_STATE_LAYERS as usize * LAYER_TEXELS * STATE_FLOATS],
            changed: Vec::new(),
        }
    }

    /// Layer `layer`'s texels (`LAYER_TEXELS` RGBA32F states), for upload.
    pub fn layer(&self, layer: usize) -> &[f32] {
        let len = LAYER_TEXELS * STATE_FLOATS;
        &self.texels[layer * len..(layer + 1) * len]
    }

    /// Slots in use.
    pub fn used(&self) -> u32 {
        self.next - 1
    }

    /// Actor `i`'s slot (0: none).
    pub fn slot_of(&self, i: usize) -> u32 {
        self.slot_of.get(i).copied().unwrap_or(0)
    }

    /// Copies `n` 8-float records into `placements` (x, y, z and the packed yaw and slot) and
    /// `states` (every actor's current state), comparing as it writes. Actors whose state changed
    /// get fresh slots holding it, unless no placement moved (a slot would re-send the
    /// placements just for itself), the slots would run out (those of [`layers_for`]`(n)`
    /// layers), the layers would cost as many bytes
    /// as `states` whole, or `resend_states` says the state texture is sent anyway (it was
    /// re-created): then all slots are freed and [`RecentChanges::states`] is set. Parallel from
    /// [`PARALLEL_MIN_ITEMS`] actors. Panics if a buffer holds fewer than `n` items.
    pub fn split(
        &mut self,
        records: &[f32],
        n: usize,
        placements: &mut [f32],
        states: &mut [f32],
        resend_states: bool,
    ) -> RecentChanges {
        let records = &records[..n * STRIDE];
        let placements = &mut placements[..n * PF];
        let states = &mut states[..n * STATE_FLOATS];
        self.slot_of.resize(n, 0);
        let tasks = if n >= PARALLEL_MIN_ITEMS {
            n.div_ceil(CHUNK)
        } else {
            1
        };
        self.changed.resize_with(tasks, Vec::new);
        let slot_of = &self.slot_of;
        let moved = if tasks > 1 {
            records
                .par_chunks(CHUNK * STRIDE)
                .zip(placements.par_chunks_mut(CHUNK * PF))
                .zip(states.par_chunks_mut(CHUNK * STATE_FLOATS))
                .zip(self.changed.par_iter_mut())
                .enumerate()
                .map(|(t, (((r, p), s), c))| {
                    let first = t * CHUNK;
                    split_chunk(r, p, s, &slot_of[first..], first, c)
                })
                .reduce(|| false, |a, b| a | b)
        } else {
            split_chunk(
                records,
                placements,
                states,
                slot_of,
                0,
                &mut self.changed[0],
            )
        };
        let changed: usize = self.changed.iter().map(Vec::len).sum();
        self.settle(n, placements, states, moved, resend_states, changed)
    }

    /// The end of a split (or of [`RecentStates::apply_listed`]): gives the `changed` actors
    /// listed in `self.changed` (whose states are already in `states`) fresh slots, or folds.
    /// Slots are written into the placements' packed yaws in place.
    fn settle(
        &mut self,
        n: usize,
        placements: &mut [f32],
        states: &[f32],
        moved: bool,
        resend_states: bool,
        changed: usize,
    ) -> RecentChanges {
        let layer_count = layers_for(n);
        let mut out = RecentChanges {
            placements: moved,
            layer_count,
            changed,
            ..RecentChanges::default()
        };
        if changed == 0 && !resend_states {
            return out;
        }
        let last = self.next as usize + changed - 1;
        let first_layer = self.next as usize / LAYER_TEXELS;
        let layer_bytes = (last / LAYER_TEXELS + 1 - first_layer) * LAYER_BYTES;
        let whole = n * STATE_FLOATS * 4;
        let slots = (layer_count * LAYER_TEXELS - 1).min(RECENT_STATE_SLOTS as usize);
        // A slot changes the actor's placement: worth it only when placements go up anyway.
        if resend_states || !moved || last > slots || layer_bytes >= whole {
            out.states = true;
            out.placements |= self.fold(placements);
            return out;
        }
        for i in self.changed.iter().flatten().map(|&i| i as usize) {
            let s = self.next as usize;
            self.next += 1;
            self.slot_of[i] = s as u32;
            self.texels[s * STATE_FLOATS..(s + 1) * STATE_FLOATS]
                .copy_from_slice(&states[i * STATE_FLOATS..(i + 1) * STATE_FLOATS]);
            out.layers |= 1 << (s / LAYER_TEXELS);
            placements[i * PF + 3] = with_slot(placements[i * PF + 3], s as u32);
        }
        out.placements = true;
        out
    }

    /// Frees every slot (the state texture is about to be sent whole) and rewrites the placements
    /// that named one. Returns true if a placement changed.
    fn fold(&mut self, placements: &mut [f32]) -> bool {
        let mut any = false;
        for (i, slot) in self.slot_of.iter_mut().enumerate() {
            if *slot != 0 {
                *slot = 0;
                placements[i * PF + 3] = with_slot(placements[i * PF + 3], 0);
                any = true;
            }
        }
        self.next = 1;
        any
    }
}

/// One task's run of [`RecentStates::split`]: copies placements (with each actor's current slot)
/// and states, and lists in `changed` the actors (numbered from `first`) whose state changed.
/// Returns true if a placement changed. Works in blocks of [`BLOCK`] actors whose copy loop
/// has no branch (so it vectorises); a block is searched for changed actors only if one did.
fn split_chunk(
    records: &[f32],
    placements: &mut [f32],
    states: &mut [f32],
    slot_of: &[u32],
    first: usize,
    changed: &mut Vec<u32>,
) -> bool {
    changed.clear();
    let mut diff_p = 0u32;
    let mut diffs = [0u32; BLOCK];
    for (b, (((r, p), s), slots)) in records
        .chunks(BLOCK * STRIDE)
        .zip(placements.chunks_mut(BLOCK * PF))
        .zip(states.chunks_mut(BLOCK * STATE_FLOATS))
        .zip(slot_of.chunks(BLOCK))
        .enumerate()
    {
        let mut any_s = 0u32;
        for ((((r, p), s), &slot), d) in r
            .chunks_exact(STRIDE)
            .zip(p.chunks_exact_mut(PF))
            .zip(s.chunks_exact_mut(STATE_FLOATS))
            .zip(slots)
            .zip(diffs.iter_mut())
        {
            let w = pack_yaw_slot(r[3], slot);
            let mut diff_s = 0u32;
            for j in 0..3 {
                diff_p |= p[j].to_bits() ^ r[j].to_bits();
                p[j] = r[j];
            }
            diff_p |= p[3].to_bits() ^ w.to_bits();
            p[3] = w;
            for j in 0..4 {
                diff_s |= s[j].to_bits() ^ r[4 + j].to_bits();
                s[j] = r[4 + j];
            }
            *d = diff_s;
            any_s |= diff_s;
        }
        if any_s != 0 {
            let n = r.len() / STRIDE;
            let base = first + b * BLOCK;
            changed.extend((0..n).filter(|&k| diffs[k] != 0).map(|k| (base + k) as u32));
        }
    }
    diff_p != 0
}

mod direct;
pub use direct::catch_up_placements;
#[cfg(test)]
mod tests;
