//! The actor records split for upload: placements and states go to two textures, so a frame
//! where actors move but keep their clips uploads 16 bytes per actor (48 with full transforms),
//! and one where clips change but nobody moves uploads 16.
//!
//! The crowd nodes keep each actor's whole record (see [`crate::crowd`]) in one CPU buffer, which
//! every writer (single and bulk calls, blends, clock rebases) fills as before; [`split_records`]
//! then copies it into the two upload buffers, comparing as it writes, and says which changed.
//! A record of `S` floats is `T0, T1[, T2, T3]`: the placement is `T0[, T2, T3]`, the state `T1`.

use rayon::prelude::*;

use crate::crowd::bulk::PARALLEL_MIN_ITEMS;
use crate::layout::{PLACEMENT_TEXELS, PLACEMENT_TEXELS_FULL, STATE_TEXELS};

/// Floats per placement: 4, or 12 with full transforms.
pub fn placement_floats(full_transform: bool) -> usize {
    4 * if full_transform {
        PLACEMENT_TEXELS_FULL
    } else {
        PLACEMENT_TEXELS
    } as usize
}

/// Floats per state.
pub const STATE_FLOATS: usize = 4 * STATE_TEXELS as usize;

/// Actors per rayon task.
const SPLIT_CHUNK: usize = 1 << 15;

/// Which upload buffers [`split_records`] changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SplitChanges {
    /// Some placement float changed (compared as bits).
    pub placements: bool,
    /// Some state float changed (compared as bits).
    pub states: bool,
}

impl SplitChanges {
    fn or(self, o: SplitChanges) -> SplitChanges {
        SplitChanges {
            placements: self.placements | o.placements,
            states: self.states | o.states,
        }
    }
}

/// Copies `n` records of `stride` floats (8, or 16 with full transforms) from `records` into
/// `placements` and `states`, comparing each float with what was there. Parallel from
/// [`PARALLEL_MIN_ITEMS`] actors. Panics if a buffer holds fewer than `n` items.
pub fn split_records(
    records: &[f32],
    stride: usize,
    n: usize,
    placements: &mut [f32],
    states: &mut [f32],
) -> SplitChanges {
    let full = stride > 8;
    let pf = placement_floats(full);
    let records = &records[..n * stride];
    let placements = &mut placements[..n * pf];
    let states = &mut states[..n * STATE_FLOATS];
    // The strides are constants in each arm, so the copy-and-compare loop vectorises.
    let run = |(rec, (pl, st)): (&[f32], (&mut [f32], &mut [f32]))| {
        if full {
            split_chunk::<16, 12>(rec, pl, st)
        } else {
            split_chunk::<8, 4>(rec, pl, st)
        }
    };
    if n >= PARALLEL_MIN_ITEMS {
        records
            .par_chunks(SPLIT_CHUNK * stride)
            .zip(
                placements
                    .par_chunks_mut(SPLIT_CHUNK * pf)
                    .zip(states.par_chunks_mut(SPLIT_CHUNK * STATE_FLOATS)),
            )
            .map(run)
            .reduce(SplitChanges::default, SplitChanges::or)
    } else {
        run((records, (placements, states)))
    }
}

/// [`split_records`] over one run of records of `STRIDE` floats into placements of `PF` floats.
fn split_chunk<const STRIDE: usize, const PF: usize>(
    records: &[f32],
    placements: &mut [f32],
    states: &mut [f32],
) -> SplitChanges {
    let mut diff_p = 0u32;
    let mut diff_s = 0u32;
    for ((r, p), s) in records
        .chunks_exact(STRIDE)
        .zip(placements.chunks_exact_mut(PF))
        .zip(states.chunks_exact_mut(STATE_FLOATS))
    {
        for k in 0..4 {
            diff_p |= p[k].to_bits() ^ r[k].to_bits();
            p[k] = r[k];
            diff_s |= s[k].to_bits() ^ r[4 + k].to_bits();
            s[k] = r[4 + k];
        }
        for k in 4..PF {
            diff_p |= p[k].to_bits() ^ r[4 + k].to_bits();
            p[k] = r[4 + k];
        }
    }
    SplitChanges {
        placements: diff_p != 0,
        states: diff_s != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crowd::records::{pack_actor_record, yaw_basis, ActorState};
    use glam::Vec3;

    fn records(n: usize, full: bool, moved: f32, clip: u32) -> Vec<f32> {
        let stride = if full { 16 } else { 8 };
        let mut out = vec![0.0; n * stride];
        for i in 0..n {
            let a = ActorState {
                position: Vec3::new(i as f32 + moved, 0.0, 1.0),
                yaw: 0.5,
                clip,
                prev_clip: clip,
                ..ActorState::default()
            };
            let basis = full.then(|| yaw_basis(0.5));
            pack_actor_record(&a, basis, &mut out[i * stride..(i + 1) * stride]);
        }
        out
    }

    #[test]
    fn placements_and_states_are_split_and_compared() {
        for full in [false, true] {
            let (stride, pf) = (if full { 16 } else { 8 }, placement_floats(full));
            let n = 5;
            let mut p = vec![0.0; n * pf];
            let mut s = vec![0.0; n * STATE_FLOATS];
            let r = records(n, full, 0.0, 1);
            let c = split_records(&r, stride, n, &mut p, &mut s);
            assert_eq!((c.placements, c.states), (true, true), "first split");
            for i in 0..n {
                assert_eq!(p[i * pf..i * pf + 4], r[i * stride..i * stride + 4]);
                assert_eq!(s[i * 4..i * 4 + 4], r[i * stride + 4..i * stride + 8]);
                if full {
                    assert_eq!(
                        p[i * pf + 4..i * pf + 12],
                        r[i * stride + 8..i * stride + 16]
                    );
                }
            }
            assert_eq!(
                split_records(&r, stride, n, &mut p, &mut s),
                SplitChanges::default()
            );
            let moved = records(n, full, 0.25, 1);
            let c = split_records(&moved, stride, n, &mut p, &mut s);
            assert_eq!((c.placements, c.states), (true, false), "moved, same clips");
            let replayed = records(n, full, 0.25, 2);
            let c = split_records(&replayed, stride, n, &mut p, &mut s);
            assert_eq!(
                (c.placements, c.states),
                (false, true),
                "new clips, no move"
            );
        }
    }

    #[test]
    fn a_large_crowd_splits_in_tasks_with_the_same_bytes() {
        let n = PARALLEL_MIN_ITEMS + 77;
        let r = records(n, false, 0.0, 3);
        let mut p = vec![0.0; n * 4];
        let mut s = vec![0.0; n * 4];
        split_records(&r, 8, n, &mut p, &mut s);
        let mut last = r.clone();
        last[(n - 1) * 8 + 5] = 9.0;
        let c = split_records(&last, 8, n, &mut p, &mut s);
        assert_eq!(
            (c.placements, c.states),
            (false, true),
            "one state in the last task"
        );
        assert_eq!(s[(n - 1) * 4 + 1], 9.0);
        assert_eq!(p[(n - 1) * 4], r[(n - 1) * 8]);
    }
}
