//! Times the engine-free CPU work of one battle frame, 100,000 actors carrying three models with
//! a third of them in view: moving every actor (`crowd_move`), switching the clips of 2% of them
//! with a cross-fade, splitting the records into the placement and state textures
//! (`crowd_recent`) and the crowd frame (culling and levels; the classification also with the
//! records in a scattered order, where no block of them is a squad):
//! `cargo run --release -p vat_core --example crowd_frame_timing [ACTORS]`.
//! A development aid, not a benchmark of a game frame (see `cargo xtask bench update`): it prints
//! the fastest of many runs, which filters out other processes on a shared machine, on one
//! thread (the frame splits large crowds over rayon's threads; per thread is what it costs).

use std::time::{Duration, Instant};

use glam::Vec3;
use vat_core::bounds::Bounds;
use vat_core::crowd::RecentStates;
use vat_core::crowd::{apply_blends_bulk, move_actors_bulk, set_clips_bulk, BulkBlends};
use vat_core::crowd::{pack_actor_record, pack_model_instance, ActorState};
use vat_core::crowd::{Actors, CrowdFrame, CrowdShape, FrameSettings, Plane, Projection, View};
use vat_core::helped::{Helpers, RayonHelpers};
use vat_core::lod_distance::{actor_diameter, screen_constant, LodCurve, DEFAULT_SWITCH_DISTANCES};

fn main() {
    // One thread, so the figures are per thread (the frame splits large crowds over rayon's).
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool")
        .install(time_frame);
}

fn time_frame() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000usize);
    let soldier = Bounds {
        min: Vec3::new(-0.4, 0.0, -0.3),
        max: Vec3::new(0.4, 1.8, 0.3),
    };
    let d = actor_diameter(&soldier, 1.0);
    let shape = CrowdShape {
        clip_bounds: vec![soldier; 5],
        lod: Some((LodCurve::calibrate(d, DEFAULT_SWITCH_DISTANCES).unwrap(), d)),
        model_levels: vec![3, 1, 1],
    };
    // A square grid 1.5 m apart; the camera looks straight down on the middle third.
    let side = (n as f32).sqrt().ceil() as usize;
    let mut records = vec![0.0f32; n * 8];
    for i in 0..n {
        let s = ActorState {
            position: Vec3::new((i % side) as f32 * 1.5, 0.0, (i / side) as f32 * 1.5),
            yaw: i as f32 * 0.37,
            clip: (i % 5) as u32,
            ..ActorState::default()
        };
        pack_actor_record(&s, None, &mut records[i * 8..i * 8 + 8]);
    }
    let extent = side as f32 * 1.5;
    let half = extent * 0.5 / 3f32.sqrt();
    let centre = Vec3::new(extent * 0.5, 0.0, extent * 0.5);
    let planes = [Vec3::X, -Vec3::X, Vec3::Z, -Vec3::Z]
        .iter()
        .map(|&normal| Plane {
            normal,
            d: normal.dot(centre) + half,
        })
        .chain([
            Plane {
                normal: Vec3::Y,
                d: 500.0,
            },
            Plane {
                normal: -Vec3::Y,
                d: 10.0,
            },
        ])
        .collect();
    let view = View {
        planes,
        camera: centre + Vec3::Y * 200.0,
        projection: Projection::Perspective {
            screen_constant: screen_constant(30f32.to_radians()),
        },
        shadow_sweeps: vec![Vec3::new(-10.0, -40.0, 5.0)],
        shadow_spheres: Vec::new(),
        shadow_reach: Vec::new(),
    };
    let all: Vec<u32> = (0..n as u32)
        .map(|i| u32::from_le_bytes(pack_model_instance(i, 0)))
        .collect();
    let shields: Vec<u32> = all
        .iter()
        .copied()
        .filter(|t| (t & 0xff_ffff) % 3 != 2)
        .collect();
    let models: [&[u32]; 3] = [&all, &all, &shields];
    let fastest = |f: &mut dyn FnMut()| {
        let mut best = Duration::MAX;
        for _ in 0..100 {
            let t = Instant::now();
            f();
            best = best.min(t.elapsed());
        }
        best.as_secs_f64() * 1e3
    };
    let moves: Vec<[f32; 4]> = records
        .chunks_exact(8)
        .map(|r| [r[0] + 0.25, r[1], r[2] + 0.25, r[3] + 0.5])
        .collect();
    let move_ms = fastest(&mut || {
        move_actors_bulk(&mut records, &moves).unwrap();
    });
    // 2% of the actors switch clips and cross-fade from the last one, as in a battle frame.
    let changers: Vec<i32> = (0..n as i32).step_by(50).collect();
    let new_clips: Vec<i32> = changers.iter().map(|&i| (i + 1) % 5).collect();
    let old_clips: Vec<i32> = changers.iter().map(|&i| i % 5).collect();
    let starts = vec![1.0f32; changers.len()];
    let fades = vec![0.25f32; changers.len()];
    let change_ms = fastest(&mut || {
        set_clips_bulk(&mut records, 8, &changers, &new_clips, &starts, 5, 0.0).unwrap();
        let blends = BulkBlends {
            actor_ids: &changers,
            prev_clips: &old_clips,
            prev_start_times: &starts,
            blend_times: &fades,
        };
        apply_blends_bulk(&mut records, 8, &blends, 5, 0.0).unwrap();
    });
    let (mut placements, mut states) = (vec![0.0f32; n * 4], vec![0.0f32; n * 4]);
    // Each run 2% of the actors start their clip again (a new start time), as in a battle, and
    // one actor moves (so placements go up, as they do when the crowd moves).
    let mut recent = RecentStates::new();
    let mut run = 0.0f32;
    let split_ms = fastest(&mut || {
        run += 1.0;
        records[0] += 0.001;
        for i in (0..n).step_by(50) {
            records[i * 8 + 4] = run;
        }
        recent.split(&records, n, &mut placements, &mut states, false);
    });
    // The battle frame's move: straight into the placement texture (the slots track the crowd
    // after the split).
    let texel_move_ms = fastest(&mut || {
        recent
            .move_actors(n, &moves, &mut placements, &RayonHelpers)
            .unwrap();
    });
    // The same with the machine's other cores free to help (a pool of its own, outside this
    // one-thread pool), as the crowd nodes run it.
    let others = OtherCores::new();
    let helped_move_ms = fastest(&mut || {
        recent
            .move_actors(n, &moves, &mut placements, &others)
            .unwrap();
    });
    let actors = Actors::interleaved(&records, 8, n);
    let settings = FrameSettings::default();
    let mut frame = CrowdFrame::new();
    let classify_ms = fastest(&mut || frame.run(&actors, &[], &shape, Some(&view), &settings));
    let frame_ms = fastest(&mut || frame.run(&actors, &models, &shape, Some(&view), &settings));
    println!(
        "{n} actors, fastest of 100 (ms): move {move_ms:.3} (into the texture {texel_move_ms:.3}; {helped_move_ms:.3} with {} helpers), 2% change clips {change_ms:.3}, split {split_ms:.3}, frame {frame_ms:.3} \
         (classification alone {classify_ms:.3}, {:.1} ns per actor); \
         in view per level {:?}, shadow only {}",
        others.threads(),
        classify_ms * 1e6 / n as f64,
        frame.lod_counts(),
        frame.shadow_only_count()
    );
    // The same actors in a scattered record order (actor i takes record 7919 i mod n, a
    // permutation for any n 7919 does not divide): no block of records is a squad.
    let mut scattered = vec![0.0f32; n * 8];
    for (i, record) in records.chunks_exact(8).enumerate() {
        let to = (i * 7919) % n;
        scattered[to * 8..to * 8 + 8].copy_from_slice(record);
    }
    let actors = Actors::interleaved(&scattered, 8, n);
    let mut frame = CrowdFrame::new();
    let scattered_ms = fastest(&mut || frame.run(&actors, &[], &shape, Some(&view), &settings));
    println!(
        "  in a scattered record order: classification {scattered_ms:.3} ms, {:.1} ns per actor",
        scattered_ms * 1e6 / n as f64
    );
}

/// Helpers on a pool of every core but the caller's.
struct OtherCores(rayon::ThreadPool);

impl OtherCores {
    fn new() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(cores.saturating_sub(1).max(1))
            .build()
            .expect("a helper pool");
        Self(pool)
    }
}

impl Helpers for OtherCores {
    fn threads(&self) -> usize {
        self.0.current_num_threads()
    }

    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) {
        self.0.spawn(job);
    }
}
