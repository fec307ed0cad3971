use super::*;
use crate::crowd::records::{pack_actor_record, ActorState};
use glam::Vec3;

/// What the GPU holds: the textures as last uploaded, only the parts each split said to send.
struct Gpu {
    placements: Vec<f32>,
    states: Vec<f32>,
    recent: Vec<f32>,
    bytes: usize,
}

impl Gpu {
    fn new() -> Self {
        Self {
            placements: Vec::new(),
            states: Vec::new(),
            recent: vec![0.0; RECENT_STATE_LAYERS as usize * LAYER_TEXELS * STATE_FLOATS],
            bytes: 0,
        }
    }

    /// Uploads what `c` says changed.
    fn upload(&mut self, c: RecentChanges, rs: &RecentStates, placements: &[f32], states: &[f32]) {
        self.bytes = 0;
        if c.placements || self.placements.len() != placements.len() {
            self.placements = placements.to_vec();
            self.bytes += placements.len() * 4;
        }
        if c.states {
            self.states = states.to_vec();
            self.bytes += states.len() * 4;
        }
        for l in 0..RECENT_STATE_LAYERS as usize {
            if c.layers & (1 << l) != 0 {
                let len = LAYER_TEXELS * STATE_FLOATS;
                self.recent[l * len..(l + 1) * len].copy_from_slice(rs.layer(l));
                self.bytes += LAYER_BYTES;
            }
        }
    }

    /// The state and yaw the shader reads for actor `i`.
    fn read(&self, i: usize) -> ([f32; 4], f32) {
        let (yaw, slot) = unpack_yaw_slot(self.placements[i * 4 + 3]);
        let s = slot as usize;
        let src = if s > 0 {
            &self.recent[s * 4..s * 4 + 4]
        } else {
            &self.states[i * 4..i * 4 + 4]
        };
        (src.try_into().unwrap(), yaw)
    }
}

pub(super) fn record(i: usize, frame: u32, clip: u32, start: f32) -> [f32; 8] {
    let a = ActorState {
        position: Vec3::new(i as f32, 0.0, frame as f32 * 0.1),
        yaw: 0.25 * (i % 100) as f32 - 10.0 + 0.01 * frame as f32,
        clip,
        prev_clip: clip,
        start_time: start,
        ..ActorState::default()
    };
    let mut out = [0.0; 8];
    pack_actor_record(&a, None, &mut out);
    out
}

/// A crowd whose `changers(frame)` actors start clip `frame % 7` at time `frame` in each frame;
/// every actor moves. Checks after every frame that the GPU reads every actor's record.
fn run(n: usize, frames: u32, changers: impl Fn(u32) -> Vec<usize>) -> Vec<(RecentChanges, usize)> {
    let mut clip = vec![(0u32, 0.0f32); n];
    let mut rs = RecentStates::new();
    let (mut p, mut s) = (vec![0.0; n * 4], vec![0.0; n * 4]);
    let mut gpu = Gpu::new();
    let mut out = Vec::new();
    for f in 0..frames {
        if f > 0 {
            for i in changers(f) {
                clip[i] = (f % 7, f as f32);
            }
        }
        let records: Vec<f32> = (0..n)
            .flat_map(|i| record(i, f, clip[i].0, clip[i].1))
            .collect();
        let c = rs.split(&records, n, &mut p, &mut s, false);
        gpu.upload(c, &rs, &p, &s);
        for i in 0..n {
            let (state, yaw) = gpu.read(i);
            assert_eq!(state, records[i * 8 + 4..i * 8 + 8], "actor {i} frame {f}");
            let want = records[i * 8 + 3].rem_euclid(TAU);
            let err = (yaw - want).abs().min(TAU - (yaw - want).abs());
            assert!(
                err <= TAU / YAW_STEPS as f32,
                "actor {i} yaw {yaw} vs {want}"
            );
            assert_eq!(gpu.placements[i * 4..i * 4 + 3], records[i * 8..i * 8 + 3]);
        }
        out.push((c, gpu.bytes));
    }
    out
}

#[test]
fn the_packed_yaw_keeps_the_angle_and_the_slot_and_is_a_normal_float() {
    for slot in [0, 1, 127, 128, 4095, 4096, RECENT_STATE_SLOTS] {
        for yaw in [
            0.0,
            1e-6,
            0.5,
            -0.5,
            3.0,
            TAU - 1e-5,
            TAU,
            -TAU,
            100.0,
            -1234.5,
        ] {
            let w = pack_yaw_slot(yaw, slot);
            assert!(w.is_normal() && w > 0.0, "yaw {yaw} slot {slot}: {w:e}");
            let (got, s) = unpack_yaw_slot(w);
            assert_eq!(s, slot);
            let want = (yaw as f64).rem_euclid(std::f64::consts::TAU) as f32;
            let err = (got - want).abs().min(TAU - (got - want).abs());
            assert!(
                err <= 0.6 * TAU / YAW_STEPS as f32,
                "yaw {yaw}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn a_few_changed_states_send_a_layer_not_the_state_texture() {
    let n = 20_000;
    // 2% of the crowd changes clip each frame, a different 2% each time.
    let results = run(n, 6, |f| {
        (0..n / 50).map(|k| (k * 50 + f as usize) % n).collect()
    });
    let (first, _) = results[0];
    assert!(
        first.states && first.layers == 0,
        "the first frame sends the states whole"
    );
    for (f, &(c, bytes)) in results.iter().enumerate().skip(1) {
        assert!(!c.states, "frame {f}: {c:?}");
        assert_eq!(c.changed, n / 50);
        assert!(
            c.layers.count_ones() <= 2,
            "frame {f}: only the newest layers"
        );
        assert!(
            bytes <= n * 16 + 2 * LAYER_BYTES && bytes < n * 32,
            "frame {f}: {bytes} bytes"
        );
    }
}

#[test]
fn running_out_of_slots_sends_the_state_texture_and_frees_them() {
    // A crowd large enough for every layer; 20,000 changes a frame: the slots last
    // RECENT_STATE_SLOTS / 20,000 frames (6).
    let n = 140_000;
    assert_eq!(layers_for(n), RECENT_STATE_LAYERS as usize);
    let per_frame = 20_000;
    let fold = RECENT_STATE_SLOTS as usize / per_frame + 1;
    let results = run(n, fold as u32 + 3, |f| {
        (0..per_frame).map(|k| (k * 7 + f as usize) % n).collect()
    });
    let folds: Vec<usize> = (1..results.len())
        .filter(|&f| results[f].0.states)
        .collect();
    assert_eq!(
        folds,
        vec![fold],
        "one fold, when a frame's slots do not fit"
    );
    assert_eq!(results[fold].0.layers, 0);
    assert_ne!(
        results[fold + 1].0.layers,
        0,
        "slots are handed out again after the fold"
    );
}

#[test]
fn a_mid_size_crowd_uses_no_more_layers_than_its_state_texture() {
    // 12,000 actors: 192,000 bytes of states, three layers, 12,287 slots.
    let n = 12_000;
    assert_eq!(layers_for(n), 3);
    let results = run(n, 8, |f| {
        (0..2000).map(|k| (k * 5 + f as usize) % n).collect()
    });
    let folds: Vec<usize> = (1..results.len())
        .filter(|&f| results[f].0.states)
        .collect();
    assert_eq!(
        folds,
        vec![7],
        "the seventh frame's 2,000 slots do not fit in three layers"
    );
    assert!(results
        .iter()
        .all(|(c, _)| c.layers < 8 && c.layer_count == 3));
    assert_eq!(layers_for(1), 1);
    assert_eq!(layers_for(100_000), 25);
    assert_eq!(layers_for(10_000_000), RECENT_STATE_LAYERS as usize);
}

#[test]
fn a_small_crowd_sends_its_states_whole_since_that_is_cheaper() {
    let results = run(3000, 3, |f| vec![f as usize, 100]);
    for &(c, _) in &results {
        assert!(c.states && c.layers == 0, "{c:?}");
    }
}

#[test]
fn nothing_changed_sends_nothing_and_a_resend_frees_every_slot() {
    let n = 10_000;
    let mut rs = RecentStates::new();
    let (mut p, mut s) = (vec![0.0; n * 4], vec![0.0; n * 4]);
    let records: Vec<f32> = (0..n).flat_map(|i| record(i, 0, 1, 0.0)).collect();
    rs.split(&records, n, &mut p, &mut s, false);
    let c = rs.split(&records, n, &mut p, &mut s, false);
    assert!(
        !c.placements && !c.states && c.layers == 0 && c.changed == 0,
        "{c:?}"
    );
    let mut changed = records.clone();
    changed[5 * 8 + 4] = 2.0;
    let c = rs.split(&changed, n, &mut p, &mut s, false);
    assert!(c.states && c.layers == 0, "nobody moved: {c:?}");
    changed[7 * 8] += 1.0;
    changed[5 * 8 + 4] = 3.0;
    let c = rs.split(&changed, n, &mut p, &mut s, false);
    assert_eq!((c.states, c.layers, c.changed), (false, 1, 1));
    assert_eq!(rs.slot_of(5), 1);
    assert_eq!(unpack_yaw_slot(p[5 * 4 + 3]).1, 1);
    let c = rs.split(&changed, n, &mut p, &mut s, true);
    assert!(c.states && c.placements, "{c:?}");
    assert_eq!((rs.slot_of(5), rs.used()), (0, 0));
    assert_eq!(unpack_yaw_slot(p[5 * 4 + 3]).1, 0);
}

#[test]
fn a_large_crowd_splits_in_tasks_with_the_same_result() {
    let n = PARALLEL_MIN_ITEMS + 77;
    let results = run(n, 3, |f| vec![n - 1, n - 1 - f as usize, 3]);
    assert!(!results[1].0.states && results[1].0.changed == 3);
    assert!(!results[2].0.states && results[2].0.changed == 3);
}
