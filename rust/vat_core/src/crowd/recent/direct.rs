//! The battle frame's changes without a split: every actor moved and a few changed states.
//!
//! A split reads every record and compares every texel, so a frame where every actor moves and
//! 2% switch clips paid for three passes over the crowd (the move into the records, the split,
//! the upload). Here the move writes each placement straight into the placement texture's
//! bytes, leaving the records' placements behind until a reader needs them
//! ([`RecentStates::move_actors`], [`catch_up_placements`]: the records then take the yaw as
//! the texture quantised it, which is what is drawn); the few actors whose states were written
//! are named by the caller and handled alone ([`RecentStates::apply_listed`]). Together they
//! leave the textures exactly as a split of the same records would (the tests hold them to
//! it), so a caller may mix them with splits freely, provided the textures were current before
//! (split or applied since the last write) and the records caught up before anything reads or
//! writes their placements.

use std::sync::Mutex;

use super::{
    pack_yaw_slot, unpack_yaw_slot, RecentChanges, RecentStates, PF, STATE_FLOATS, STRIDE,
};
use crate::bounds::Bounds;
use crate::crowd::moves::{bounds_of, check_placements_helped};
use crate::crowd::prefetch::{prefetch, AHEAD};
use crate::error::Result;
use crate::helped::{for_each_helped, Helpers};

/// Actors per task of the move.
const CHUNK: usize = 1 << 13;

/// Actors from which the move runs as tasks that free pool threads help with: a task of
/// [`CHUNK`] actors costs tens of microseconds, well above a helper's start.
const MOVE_PARALLEL_MIN: usize = 1 << 15;

impl RecentStates {
    /// True when the slots describe exactly `n` actors (the last split or apply was for `n`), so
    /// [`RecentStates::move_actors`] and [`RecentStates::apply_listed`] may run for them.
    pub fn tracks(&self, n: usize) -> bool {
        self.slot_of.len() == n
    }

    /// Writes `placements[i]` (`x, y, z, yaw`) as actor `i`'s placement into `texels` (the
    /// placement texture's floats: the yaw packed with the actor's slot, see [`pack_yaw_slot`])
    /// comparing as it writes; the records are left for [`catch_up_placements`]. Returns the
    /// positions' bounds and whether a texel changed. Validates first, as
    /// [`crate::crowd::move_actors_bulk`] does for a crowd of `n` (same errors): a rejected
    /// call writes nothing. From [`MOVE_PARALLEL_MIN`] actors both passes run as tasks that
    /// `helpers` take while they are free ([`for_each_helped`]): at worst on the caller alone.
    ///
    /// Panics unless the slots track `n` actors ([`RecentStates::tracks`]) and `texels` has
    /// room for them.
    pub fn move_actors(
        &self,
        n: usize,
        placements: &[[f32; 4]],
        texels: &mut [f32],
        helpers: &dyn Helpers,
    ) -> Result<(Bounds, bool)> {
        let (min, max) = check_placements_helped(n, placements, helpers, MOVE_PARALLEL_MIN, CHUNK)?;
        assert!(self.tracks(n), "the slots track {n} actors");
        let texels = &mut texels[..n * PF];
        let slots = &self.slot_of[..];
        let moved = if n >= MOVE_PARALLEL_MIN {
            let tasks: Vec<Mutex<(&mut [f32], bool)>> = texels
                .chunks_mut(CHUNK * PF)
                .map(|t| Mutex::new((t, false)))
                .collect();
            for_each_helped(helpers, tasks.len(), &|c| {
                let mut task = tasks[c].lock().unwrap_or_else(|e| e.into_inner());
                let (texels, moved) = &mut *task;
                let range = c * CHUNK..(c * CHUNK + CHUNK).min(n);
                *moved = write_texels(&placements[range.clone()], texels, &slots[range]);
            });
            tasks
                .into_iter()
                .any(|t| t.into_inner().unwrap_or_else(|e| e.into_inner()).1)
        } else {
            write_texels(placements, texels, slots)
        };
        Ok((bounds_of(min, max, n == 0), moved))
    }

    /// Takes the states of the actors in `listed` (any order, repeats allowed; ids of `n` or
    /// more are ignored) from `records` (8-float records; their placements are not read) into
    /// `states`, and settles them as a split does: fresh recent-state slots (their placements in
    /// `placements` rewritten), or a fold. `moved`: the placement texture goes up anyway this
    /// frame. Every actor not listed must have the same state in `records` as in `states`
    /// (nothing else wrote it since the last split or apply), and the slots must track `n`
    /// actors.
    pub fn apply_listed(
        &mut self,
        records: &[f32],
        n: usize,
        placements: &mut [f32],
        states: &mut [f32],
        listed: &[u32],
        moved: bool,
    ) -> RecentChanges {
        assert!(self.tracks(n), "the slots track {n} actors");
        let records = &records[..n * STRIDE];
        let placements = &mut placements[..n * PF];
        let states = &mut states[..n * STATE_FLOATS];
        self.changed.truncate(1);
        self.changed.resize_with(1, Vec::new);
        let changed = &mut self.changed[0];
        changed.clear();
        for (k, &i) in listed.iter().enumerate() {
            if let Some(&ahead) = listed.get(k + AHEAD) {
                prefetch(records, ahead as usize * STRIDE + PF);
                prefetch(states, ahead as usize * STATE_FLOATS);
            }
            let i = i as usize;
            if i >= n {
                continue;
            }
            let new = &records[i * STRIDE + PF..(i + 1) * STRIDE];
            let old = &mut states[i * STATE_FLOATS..(i + 1) * STATE_FLOATS];
            // Compared as the split compares (bits), so a repeat finds its own write and is
            // listed once.
            if new
                .iter()
                .zip(old.iter())
                .any(|(a, b)| a.to_bits() != b.to_bits())
            {
                old.copy_from_slice(new);
                changed.push(i as u32);
            }
        }
        // Slots in actor order, as a split hands them out.
        changed.sort_unstable();
        let count = changed.len();
        self.settle(n, placements, states, moved, false, count)
    }
}

/// Brings the placements of the 8-float `records` up to the moves that
/// [`RecentStates::move_actors`] wrote since into the placement texture's `texels` (one
/// placement per record): the position as it is, the yaw as the texture quantised it.
pub fn catch_up_placements(records: &mut [f32], texels: &[f32]) {
    for (r, t) in records
        .chunks_exact_mut(STRIDE)
        .zip(texels.chunks_exact(PF))
    {
        r[..3].copy_from_slice(&t[..3]);
        r[3] = unpack_yaw_slot(t[3]).0;
    }
}

/// One task of [`RecentStates::move_actors`]'s writes: true if a texel changed.
fn write_texels(placements: &[[f32; 4]], texels: &mut [f32], slots: &[u32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { write_texels_avx2(placements, texels, slots) };
    }
    write_texels_in(placements, texels, slots)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn write_texels_avx2(placements: &[[f32; 4]], texels: &mut [f32], slots: &[u32]) -> bool {
    write_texels_in(placements, texels, slots)
}

/// [`write_texels`]' loop, simple enough to vectorise for either target.
#[inline(always)]
fn write_texels_in(placements: &[[f32; 4]], texels: &mut [f32], slots: &[u32]) -> bool {
    let mut diff = 0u32;
    for ((p, t), &slot) in placements
        .iter()
        .zip(texels.chunks_exact_mut(PF))
        .zip(slots)
    {
        let new = [
            p[0].to_bits(),
            p[1].to_bits(),
            p[2].to_bits(),
            pack_yaw_slot(p[3], slot).to_bits(),
        ];
        for k in 0..PF {
            diff |= t[k].to_bits() ^ new[k];
            t[k] = f32::from_bits(new[k]);
        }
    }
    diff != 0
}

#[cfg(test)]
mod tests;
