use super::super::tests::record;
use super::*;
use crate::crowd::recent::catch_up_placements;
use crate::crowd::recent::{unpack_yaw_slot, LAYER_TEXELS};
use crate::error::VatError;
use crate::helped::RayonHelpers;
use crate::layout::{RECENT_SLOT_BIAS, RECENT_STATE_LAYERS, YAW_BITS, YAW_STEPS};

/// One crowd's CPU-side textures and slots.
struct Side {
    rs: RecentStates,
    placements: Vec<f32>,
    states: Vec<f32>,
}

impl Side {
    fn new(n: usize) -> Self {
        Self {
            rs: RecentStates::new(),
            placements: vec![0.0; n * PF],
            states: vec![0.0; n * STATE_FLOATS],
        }
    }

    fn split(&mut self, records: &[f32], n: usize) -> RecentChanges {
        let (p, s) = (&mut self.placements, &mut self.states);
        self.rs.split(records, n, p, s, false)
    }

    /// Everything a later split or upload could see.
    fn assert_same(&self, other: &Side, what: &str) {
        same(
            &self.placements,
            &other.placements,
            &format!("{what}: placement texels"),
        );
        same(
            &self.states,
            &other.states,
            &format!("{what}: state texels"),
        );
        same(
            &self.rs.slot_of,
            &other.rs.slot_of,
            &format!("{what}: slots"),
        );
        assert_eq!(self.rs.next, other.rs.next, "{what}: next slot");
        for l in 0..RECENT_STATE_LAYERS as usize {
            same(
                self.rs.layer(l),
                other.rs.layer(l),
                &format!("{what}: layer {l}"),
            );
        }
    }
}

/// Fails naming the first place where `a` and `b` differ (bit for bit).
fn same<T: Copy + PartialEq + std::fmt::Debug>(a: &[T], b: &[T], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        panic!("{what}: first difference at {i}: {:?} vs {:?}", a[i], b[i]);
    }
}

/// Fails unless `caught` (records caught up from the placement texture) equals `records` but for
/// the yaw, which must be the same step of the texture's quantisation.
fn same_records(caught: &[f32], records: &[f32], what: &str) {
    let strip = |r: &[f32]| -> Vec<u32> {
        r.chunks_exact(8)
            .flat_map(|a| {
                let mut a: [f32; 8] = a.try_into().unwrap();
                a[3] = pack_yaw_slot(a[3], 0);
                a.map(f32::to_bits)
            })
            .collect()
    };
    same(&strip(caught), &strip(records), what);
}

/// A crowd of `n` whose every actor moves each frame and whose `changers(f)` switch clips,
/// written one way into `direct` (the move pass, then the listed states, its records caught up
/// after) and the other into `split` (records, then a split); after every frame both sides must
/// hold the same textures, slots, recent layers and records, and report the same changes. Every
/// `whole_every`-th frame both split instead (another writer), so the two paths also follow
/// each other.
fn compare(n: usize, frames: u32, whole_every: u32, changers: impl Fn(u32) -> Vec<usize>) {
    let mut records: Vec<f32> = (0..n).flat_map(|i| record(i, 0, 0, 0.0)).collect();
    let mut mine = records.clone();
    let (mut direct, mut split) = (Side::new(n), Side::new(n));
    direct.split(&mine, n);
    split.split(&records, n);
    let mut saw_slots = false;
    for f in 1..frames {
        let listed: Vec<u32> = changers(f).into_iter().map(|i| i as u32).collect();
        let placements: Vec<[f32; 4]> = (0..n)
            .map(|i| record(i, f, 0, 0.0)[..4].try_into().unwrap())
            .collect();
        for &i in &listed {
            let r = record(i as usize, f, f % 7, f as f32);
            let i = i as usize;
            records[i * 8 + 4..i * 8 + 8].copy_from_slice(&r[4..]);
            mine[i * 8 + 4..i * 8 + 8].copy_from_slice(&r[4..]);
        }
        for (r, p) in records.chunks_exact_mut(8).zip(&placements) {
            r[..4].copy_from_slice(p);
        }
        let b = split.split(&records, n);
        let a = if f % whole_every == 0 {
            for (r, p) in mine.chunks_exact_mut(8).zip(&placements) {
                r[..4].copy_from_slice(p);
            }
            direct.split(&mine, n)
        } else {
            let (bounds, moved) = direct
                .rs
                .move_actors(n, &placements, &mut direct.placements, &RayonHelpers)
                .unwrap();
            assert!(moved, "frame {f}: every actor moved");
            assert_eq!(bounds.min.x, 0.0);
            assert_eq!(bounds.max.x, (n - 1) as f32);
            let (p, s) = (&mut direct.placements, &mut direct.states);
            let a = direct.rs.apply_listed(&mine, n, p, s, &listed, moved);
            catch_up_placements(&mut mine, &direct.placements);
            a
        };
        same_records(&mine, &records, &format!("frame {f}: records"));
        assert_eq!(a, b, "frame {f}");
        saw_slots |= a.layers != 0;
        direct.assert_same(&split, &format!("frame {f}"));
    }
    assert!(saw_slots, "some frame gave slots, not only folds");
}

#[test]
fn moving_and_listing_leave_the_textures_a_split_would() {
    // 2% changers with repeats and ids beyond the crowd, a split every 5th frame.
    let n = 5000;
    compare(n, 40, 5, |f| {
        let mut ids: Vec<usize> = (0..n / 50).map(|k| (k * 50 + f as usize) % n).collect();
        ids.push(ids[0]);
        ids
    });
}

#[test]
fn running_out_of_slots_folds_as_a_split_does() {
    // A layer's worth of changers each frame runs out of a small crowd's slots.
    let n = 3 * LAYER_TEXELS;
    compare(n, 12, 1000, |f| {
        (0..LAYER_TEXELS / 2)
            .map(|k| (k * 3 + f as usize) % n)
            .collect()
    });
}

#[test]
fn a_large_crowd_moves_in_tasks_with_the_same_result() {
    let n = MOVE_PARALLEL_MIN + 77;
    compare(n, 3, 1000, |f| vec![n - 1, n - 1 - f as usize, 3]);
}

#[test]
fn a_large_crowd_in_tasks_reports_the_first_bad_placement_and_writes_nothing() {
    // Bad values in two late tasks: the first one is named, no task writes.
    let n = MOVE_PARALLEL_MIN + 5 * CHUNK + 3;
    let records: Vec<f32> = (0..n).flat_map(|i| record(i, 0, 0, 0.0)).collect();
    let mut side = Side::new(n);
    side.split(&records, n);
    let before = side.placements.clone();
    let mut placements: Vec<[f32; 4]> = (0..n).map(|i| [i as f32, 1.0, 2.0, 0.5]).collect();
    placements[n - 2][0] = f32::INFINITY;
    placements[3 * CHUNK + 1][3] = f32::NAN;
    let e = side
        .rs
        .move_actors(n, &placements, &mut side.placements, &RayonHelpers)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("yaw of actor {}", 3 * CHUNK + 1)),
        "{e}"
    );
    assert_eq!(side.placements, before);
    // Only the last task's actors move: a change anywhere is a move.
    let mut placements: Vec<[f32; 4]> = (0..n)
        .map(|i| {
            side.placements[i * PF..i * PF + 3]
                .try_into()
                .map(|p: [f32; 3]| [p[0], p[1], p[2], 0.0])
                .unwrap()
        })
        .collect();
    let (_, moved) = side
        .rs
        .move_actors(n, &placements, &mut side.placements, &RayonHelpers)
        .unwrap();
    assert!(moved, "the yaws changed from the split's");
    placements[n - 1][1] += 1.0;
    let (bounds, moved) = side
        .rs
        .move_actors(n, &placements, &mut side.placements, &RayonHelpers)
        .unwrap();
    assert!(moved, "actor {} moved", n - 1);
    assert_eq!(bounds.max.y, placements[n - 1][1]);
    let (_, moved) = side
        .rs
        .move_actors(n, &placements, &mut side.placements, &RayonHelpers)
        .unwrap();
    assert!(!moved);
}

#[test]
fn bad_placements_write_nothing() {
    let n = 8;
    let records: Vec<f32> = (0..n).flat_map(|i| record(i, 0, 0, 0.0)).collect();
    let mut side = Side::new(n);
    side.split(&records, n);
    let before = side.placements.clone();
    let mut placements = vec![[1.0f32; 4]; n];
    placements[6][3] = f32::NAN;
    let e = side
        .rs
        .move_actors(n, &placements, &mut side.placements, &RayonHelpers)
        .unwrap_err();
    assert!(e.to_string().contains("yaw of actor 6"), "{e}");
    let e = side
        .rs
        .move_actors(n, &placements[..3], &mut side.placements, &RayonHelpers)
        .unwrap_err();
    assert!(matches!(e, VatError::BadLength { .. }), "{e}");
    assert_eq!(side.placements, before);
}

#[test]
fn moving_keeps_each_actors_slot_in_its_placement() {
    let n = 5000;
    let mut records: Vec<f32> = (0..n).flat_map(|i| record(i, 0, 0, 0.0)).collect();
    let mut side = Side::new(n);
    side.split(&records, n);
    records[7 * 8 + 4..7 * 8 + 8].copy_from_slice(&record(7, 1, 3, 1.0)[4..]);
    let (p, s) = (&mut side.placements, &mut side.states);
    let c = side.rs.apply_listed(&records, n, p, s, &[7], true);
    assert_eq!((c.changed, c.layers), (1, 1), "{c:?}");
    let slot = side.rs.slot_of(7);
    assert!(slot > 0);
    let placements: Vec<[f32; 4]> = (0..n).map(|i| [i as f32, 1.0, 2.0, 0.5]).collect();
    side.rs
        .move_actors(n, &placements, &mut side.placements, &RayonHelpers)
        .unwrap();
    assert_eq!(unpack_yaw_slot(side.placements[7 * PF + 3]).1, slot);
    assert_eq!(unpack_yaw_slot(side.placements[8 * PF + 3]).1, 0);
    // Unchanged placements are no move.
    let (_, moved) = side
        .rs
        .move_actors(n, &placements, &mut side.placements, &RayonHelpers)
        .unwrap();
    assert!(!moved);
}

#[test]
fn a_caught_up_yaw_packs_to_the_same_step() {
    // Every step, and yaws around it: unpacking then packing again keeps the step, so records
    // caught up from the texture split into the same texels.
    for step in 0..YAW_STEPS {
        let w = f32::from_bits(((3 + RECENT_SLOT_BIAS) << YAW_BITS) | step);
        let (yaw, slot) = unpack_yaw_slot(w);
        assert_eq!(slot, 3);
        assert_eq!(pack_yaw_slot(yaw, 3).to_bits(), w.to_bits(), "step {step}");
        for turns in [-3.0f32, 1.0, 40.0] {
            let again = pack_yaw_slot(yaw + turns * std::f32::consts::TAU, 3);
            let off = (again.to_bits() & (YAW_STEPS - 1)).abs_diff(step);
            assert!(
                off <= 1 || off == YAW_STEPS - 1,
                "step {step} {turns} turns"
            );
        }
    }
}
