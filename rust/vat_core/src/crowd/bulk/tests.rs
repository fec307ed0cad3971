//! The public functions run on one thread at test sizes; these run the same inputs through
//! the rayon split as well and require identical results.
use glam::Vec3;

use super::*;
use crate::bounds::Bounds;
use crate::crowd::bulk_actors::{pack_actors_split, BulkActors, Placement};
use crate::crowd::records::tests::bulk_inputs as inputs;
use crate::crowd::records::ACTOR_FLOATS_FULL;

const SPLIT: usize = 1; // any item count goes parallel

/// Yaw-placed actors of a 3-clip crowd with all arrays given.
fn yaw_input<'a>(
    positions: &'a [Vec3],
    yaws: &'a [f32],
    clips: &'a [i32],
    starts: &'a [f32],
    time_origin: f32,
) -> BulkActors<'a> {
    BulkActors {
        placement: Placement::Yaw { positions, yaws },
        clips: Some(clips),
        start_times: Some(starts),
        n_clips: 3,
        time_origin,
        stride: ACTOR_FLOATS,
    }
}

#[test]
fn split_and_single_thread_agree() {
    let n = 2 * BULK_CHUNK + 17;
    let (positions, yaws, clips, starts) = inputs(n);
    let input = yaw_input(&positions, &yaws, &clips, &starts, 2.0);
    let mut a = vec![0.0; n * ACTOR_FLOATS];
    let mut b = vec![1.0; n * ACTOR_FLOATS];
    let sa = pack_actors_split(&mut a, &input, usize::MAX).unwrap();
    let sb = pack_actors_split(&mut b, &input, SPLIT).unwrap();
    assert_eq!(a, b);
    assert_eq!(sa, sb);
    assert_eq!(sa.origins(), Bounds::from_points(&positions));
    assert_eq!(a[ACTOR_FLOATS * (n - 1) + 4], starts[n - 1] - 2.0);

    let ids: Vec<i32> = (0..n as i32).rev().collect();
    let mut ma = vec![0u8; n * 4];
    let mut mb = vec![1u8; n * 4];
    let first = pack_models_split(&mut ma, &ids, 7, n as u32, usize::MAX).unwrap();
    assert_eq!(
        first,
        pack_models_split(&mut mb, &ids, 7, n as u32, SPLIT).unwrap()
    );
    assert_eq!((first.changed, first.reach), (true, n));
    assert_eq!(ma, mb);
    // Packing the same list again changes nothing; one different id in the last task does.
    assert!(
        !pack_models_split(&mut ma, &ids, 7, n as u32, usize::MAX)
            .unwrap()
            .changed
    );
    assert!(
        !pack_models_split(&mut mb, &ids, 7, n as u32, SPLIT)
            .unwrap()
            .changed
    );
    let mut moved = ids.clone();
    moved[n - 1] = 1;
    assert!(
        pack_models_split(&mut mb, &moved, 7, n as u32, SPLIT)
            .unwrap()
            .changed
    );
    assert!(
        pack_models_split(&mut ma, &moved, 7, n as u32, usize::MAX)
            .unwrap()
            .changed
    );
    assert_eq!(ma, mb);

    let states: Vec<ActorState> = positions
        .iter()
        .map(|&position| ActorState {
            position,
            ..ActorState::default()
        })
        .collect();
    pack_states_split(&mut a, &states, usize::MAX).unwrap();
    pack_states_split(&mut b, &states, SPLIT).unwrap();
    assert_eq!(a, b);

    let (flat, _) = crate::crowd::records::tests::bulk_transforms(n);
    let matrices = BulkActors {
        placement: Placement::Matrix(&flat),
        stride: ACTOR_FLOATS_FULL,
        ..input
    };
    let mut fa = vec![0.0; n * ACTOR_FLOATS_FULL];
    let mut fb = vec![1.0; n * ACTOR_FLOATS_FULL];
    let sa = pack_actors_split(&mut fa, &matrices, usize::MAX).unwrap();
    let sb = pack_actors_split(&mut fb, &matrices, SPLIT).unwrap();
    assert_eq!(fa, fb);
    assert_eq!(sa, sb);
}

#[test]
fn split_reports_the_lowest_error_and_writes_nothing() {
    let n = 3 * BULK_CHUNK;
    let (mut positions, yaws, clips, starts) = inputs(n);
    positions[2 * BULK_CHUNK + 5].x = f32::NAN; // found by a later task
    positions[BULK_CHUNK + 9].z = f32::INFINITY;
    let input = yaw_input(&positions, &yaws, &clips, &starts, 0.0);
    let mut out = vec![-7.0; n * ACTOR_FLOATS];
    assert_eq!(
        pack_actors_split(&mut out, &input, SPLIT),
        Err(VatError::NonFinite {
            what: format!("position of actor {}", BULK_CHUNK + 9)
        })
    );
    assert!(out.iter().all(|&v| v == -7.0), "a rejected call wrote data");

    let mut ids: Vec<i32> = (0..n as i32).collect();
    ids[2 * BULK_CHUNK] = -1;
    ids[BULK_CHUNK + 1] = n as i32;
    let mut bytes = vec![3u8; n * 4];
    assert_eq!(
        pack_models_split(&mut bytes, &ids, 0, n as u32, SPLIT),
        Err(VatError::IndexOutOfRange {
            what: "actor id",
            index: n as i64,
            len: n
        })
    );
    assert!(bytes.iter().all(|&v| v == 3));
}
