//! The frame over the placement texture's texels and the records' states
//! ([`Actors::texels_and_records`]) against the frame over the same records caught up.

use glam::Vec3;

use super::tests::{camera_view, records, shape, soldier};
use super::*;
use crate::bake::skin_tests::Lcg;
use crate::bounds::Bounds;
use crate::crowd::recent::{catch_up_placements, pack_yaw_slot};
use crate::crowd::records::{pack_model_instance, ActorState};

/// Every class and list of `frame` (one model) after a run.
fn answer(frame: &CrowdFrame, levels: usize) -> (Vec<u32>, Vec<Vec<u32>>) {
    let lists = (0..levels)
        .flat_map(|l| {
            [
                frame.view_list(0, l).to_vec(),
                frame.shadow_list(0, l).to_vec(),
            ]
        })
        .collect();
    let mut counts = frame.lod_counts().to_vec();
    counts.push(frame.shadow_only_count());
    (counts, lists)
}

#[test]
fn texels_and_states_classify_as_the_caught_up_records_do() {
    let mut rng = Lcg(11);
    let clips = [
        soldier(),
        Bounds {
            min: Vec3::new(-1.5, -0.2, -0.4),
            max: Vec3::new(0.2, 1.1, 2.5),
        },
    ];
    let shape = shape(&clips, &[3]);
    // Both sides of the parallel threshold, neither a whole number of blocks.
    for (round, n) in [(0, 3001), (1, FRAME_PARALLEL_MIN + 777)] {
        let eye = Vec3::new(0.0, 30.0, -40.0);
        let mut view = camera_view(eye, Vec3::new(0.0, -0.5, 1.0).normalize(), 400.0);
        view.shadow_sweeps = vec![Vec3::new(-20.0, -30.0, 5.0)];
        view.shadow_reach = vec![150.0];
        let mut squad = Vec3::ZERO;
        let states: Vec<ActorState> = (0..n)
            .map(|i| {
                if i % 64 == 0 {
                    squad = Vec3::new(rng.next() - 0.5, 0.0, rng.next()) * 500.0;
                }
                ActorState {
                    position: squad + Vec3::new(rng.next(), 0.0, rng.next()) * 8.0,
                    yaw: rng.next() * 20.0 - 10.0,
                    scale: if i % 9 == 0 {
                        0.5 + rng.next() * 3.0
                    } else {
                        1.0
                    },
                    clip: (rng.next() * 3.0) as u32,
                    prev_clip: (rng.next() * 2.0) as u32,
                    start_time: 9.0 + rng.next(),
                    blend_time: if i % 5 == 0 { 0.5 } else { 0.0 },
                    ..ActorState::default()
                }
            })
            .collect();
        let (mut recs, _) = records(&states, None);
        // The placement texture: each yaw packed with a recent-state slot (any will do here).
        let texels: Vec<f32> = states
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                let p = s.position;
                [p.x, p.y, p.z, pack_yaw_slot(s.yaw, (i % 300) as u32)]
            })
            .collect();
        catch_up_placements(&mut recs, &texels);
        let list: Vec<u32> = (0..n as u32)
            .map(|i| u32::from_le_bytes(pack_model_instance(i, 1)))
            .collect();
        for any_yaw in [false, true] {
            let settings = FrameSettings {
                time: 9.6,
                cast_shadows: true,
                any_yaw,
                ..FrameSettings::default()
            };
            let mut caught_up = CrowdFrame::new();
            let actors = Actors::interleaved(&recs, 8, n);
            caught_up.run(&actors, &[&list], &shape, Some(&view), &settings);
            // The records' placements are not read: make them useless.
            let mut behind = recs.clone();
            for r in behind.chunks_exact_mut(8) {
                r[..4].copy_from_slice(&[f32::NAN; 4]);
            }
            let mut split = CrowdFrame::new();
            let actors = Actors::texels_and_records(&texels, &behind, n);
            split.run(&actors, &[&list], &shape, Some(&view), &settings);
            let (want, got) = (answer(&caught_up, 3), answer(&split, 3));
            assert_eq!(got, want, "round {round}, any_yaw {any_yaw}");
            let drawn: usize = want.0[..3].iter().map(|&c| c as usize).sum();
            assert!(
                drawn > 0 && drawn < n,
                "round {round}: some culled, some drawn"
            );
        }
    }
}
