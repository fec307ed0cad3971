use super::*;
use crate::clip::{plan_clips, sample, ClipSpec};

const WALK: u32 = 0;
const DEATH: u32 = 1;
const POSE: u32 = 2;

/// walk: 1 s looped; death: 2 s, 30 fps, not looped; pose: 0 s.
fn clips() -> Vec<Clip> {
    let spec = |name: &str, duration: f32, looped: bool| ClipSpec {
        name: name.into(),
        duration,
        fps: 30.0,
        looped,
    };
    plan_clips(&[
        spec("walk", 1.0, true),
        spec("death", 2.0, false),
        spec("pose", 0.0, false),
    ])
    .unwrap()
}

#[test]
fn clip_time_wraps_clamps_and_holds() {
    let c = clips();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(close(clip_time(&c[0], 2.25, 1.0), 0.25));
    assert!(
        close(clip_time(&c[0], -0.25, 1.0), 0.75),
        "negative times play backwards"
    );
    assert!(
        close(clip_time(&c[0], 1.0, 0.5), 0.5),
        "speed scales elapsed time"
    );
    assert!(close(clip_time(&c[1], 1.5, 1.0), 1.5));
    assert!(close(clip_time(&c[1], 7.0, 1.0), 2.0), "clamped at the end");
    assert!(
        close(clip_time(&c[1], 1.0, -1.0), 0.0),
        "clamped at the start"
    );
    assert!(
        close(clip_time(&c[1], -1.0, -1.5), 1.5),
        "backwards before its start"
    );
    assert_eq!(clip_time(&c[2], 5.0, 1.0), 0.0);
    assert_eq!(clip_time(&c[1], f64::NAN, 1.0), 0.0);
}

#[test]
fn clip_time_selects_the_frames_the_shader_samples() {
    // The shader's sample at raw time t and at the clip time agree (same frames, same mix).
    let c = clips();
    for clip in &c {
        for i in -200..200 {
            let elapsed = f64::from(i) * 0.037;
            for speed in [1.0f32, 0.5, -2.0] {
                let raw = (elapsed * f64::from(speed)) as f32;
                let (a, b, m) = sample(clip, raw);
                let (a2, b2, m2) = sample(clip, clip_time(clip, elapsed, speed) as f32);
                let same = (a, b) == (a2, b2) && (m - m2).abs() < 1e-3;
                // At an exact wrap the two may sit on either side of one frame boundary.
                let wrapped = clip.looped && (m - m2).abs() > 0.999;
                assert!(
                    same || wrapped,
                    "{} t {raw}: {:?} vs {:?}",
                    clip.name,
                    (a, b, m),
                    (a2, b2, m2)
                );
            }
        }
    }
}

#[test]
fn end_times() {
    let c = clips();
    assert_eq!(end_time(&c[0], 3.0, 1.0), None, "looped clips never end");
    assert_eq!(end_time(&c[1], 3.0, 1.0), Some(5.0));
    assert_eq!(end_time(&c[1], 3.0, 2.0), Some(4.0));
    assert_eq!(end_time(&c[1], 3.0, 0.0), None, "standing still");
    assert_eq!(
        end_time(&c[1], 3.0, -1.0),
        Some(3.0),
        "backwards: ends at its first frame"
    );
    assert_eq!(end_time(&c[2], 3.0, 1.0), Some(3.0), "a pose ends at once");
}

#[test]
fn a_death_is_listed_once_at_the_submit_that_passes_its_end() {
    let mut t = FinishTracker::new(clips());
    t.set(0, WALK, 0.0, 1.0);
    t.set(1, DEATH, 1.0, 1.0); // ends at 3.0
    t.set(2, WALK, 0.0, 1.0);
    assert!(t.finish(3, 1.0).is_empty());
    assert!(t.finish(3, 2.9).is_empty(), "before its end");
    // The caller writes the same states again every frame (immediate mode).
    t.set(1, DEATH, 1.0, 1.0);
    assert_eq!(t.finish(3, 3.0), &[1], "at its end");
    t.set(1, DEATH, 1.0, 1.0);
    assert!(t.finish(3, 3.1).is_empty(), "not twice");
    assert!(t.finish(3, 10.0).is_empty(), "not later either");
    assert_eq!(t.finished(), &[] as &[i32]);
}

#[test]
fn ends_between_submits_are_listed_together_and_sorted() {
    let mut t = FinishTracker::new(clips());
    assert!(t.finish(0, 0.0).is_empty());
    for actor in (0..10).rev() {
        t.set(actor, DEATH, actor as f64 * 0.1, 1.0); // ends at 2.0 + 0.1 * actor
    }
    assert!(t.finish(10, 1.99).is_empty());
    assert_eq!(t.finish(10, 2.25), &[0, 1, 2]);
    assert_eq!(t.finish(10, 2.5), &[3, 4, 5]);
    assert_eq!(t.finish(10, 100.0), &[6, 7, 8, 9]);
}

#[test]
fn a_new_clip_before_the_end_cancels_it() {
    let mut t = FinishTracker::new(clips());
    t.set(0, DEATH, 0.0, 1.0); // would end at 2.0
    assert!(t.finish(1, 1.0).is_empty());
    t.set(0, WALK, 1.0, 1.0);
    assert!(
        t.finish(1, 5.0).is_empty(),
        "given a looped clip: never listed"
    );
    t.set(0, DEATH, 5.0, 1.0); // ends at 7.0
    assert!(t.finish(1, 6.0).is_empty());
    t.set(0, DEATH, 6.5, 1.0); // restarted: ends at 8.5 instead
    assert!(t.finish(1, 7.5).is_empty(), "the old end is gone");
    assert_eq!(t.finish(1, 8.5), &[0]);
}

#[test]
fn speed_changes_move_the_end() {
    let mut t = FinishTracker::new(clips());
    t.set(0, DEATH, 0.0, 1.0); // ends at 2.0
    t.set(1, DEATH, 0.0, 1.0);
    assert!(t.finish(2, 0.5).is_empty());
    t.set(0, DEATH, 0.0, 2.0); // now ends at 1.0
    t.set(1, DEATH, 0.0, 0.0); // stands still: never ends
    assert_eq!(t.finish(2, 1.0), &[0]);
    assert!(t.finish(2, 50.0).is_empty());
    // Backwards: a clip started in the future plays down to its first frame, reached at start.
    t.set(1, DEATH, 60.0, -1.0);
    assert!(t.finish(2, 59.0).is_empty());
    assert_eq!(t.finish(2, 60.0), &[1]);
}

#[test]
fn speeds_round_as_the_record_stores_them() {
    // 1/3 is not an f16: the end follows the stored speed, as the shader plays it.
    let mut t = FinishTracker::new(clips());
    let speed = 1.0 / 3.0;
    let stored = stored_speed(speed);
    assert_ne!(stored, speed);
    t.set(0, DEATH, 0.0, speed);
    let end = 2.0 / f64::from(stored);
    assert!(t.finish(1, end - 1e-9).is_empty());
    assert_eq!(t.finish(1, end), &[0]);
    let c = clips();
    let expected = clip_time(&c[1], 1.0, stored);
    assert_eq!(t.clip_time(0, 1.0), Some(expected));
}

#[test]
fn pauses_and_rewinds_never_list_twice() {
    let mut t = FinishTracker::new(clips());
    t.set(0, DEATH, 0.0, 1.0);
    assert!(t.finish(1, 1.0).is_empty());
    assert!(t.finish(1, 1.0).is_empty(), "paused");
    assert_eq!(t.finish(1, 2.0), &[0]);
    assert!(t.finish(1, 2.0).is_empty(), "paused after the end");
    assert!(t.finish(1, 0.5).is_empty(), "moved back");
    assert!(
        t.finish(1, 3.0).is_empty(),
        "and forward again past the end"
    );
    // After the rewind, a new death ending before the old time counts.
    t.set(0, DEATH, -1.0, 1.0); // ends at 1.0 < 3.0: already over
    assert!(
        t.finish(1, 3.0).is_empty(),
        "ended before the previous submit"
    );
    assert!(t.finish(1, 0.0).is_empty());
    t.set(0, DEATH, -1.5, 1.0); // ends at 0.5, after the rewound time 0.0
    assert_eq!(t.finish(1, 0.6), &[0]);
}

#[test]
fn the_first_finish_lists_ends_already_past() {
    let mut t = FinishTracker::new(clips());
    t.set(0, DEATH, -10.0, 1.0);
    t.set(1, POSE, 5.0, 1.0);
    assert_eq!(t.finish(2, 1.0), &[0]);
    assert_eq!(t.finish(2, 5.0), &[1], "a pose ends at its start");
}

#[test]
fn an_ended_actor_moved_to_another_index_is_not_listed_again() {
    // The caller removes actor 0 and shifts actor 1, which already ended, down to index 0.
    let mut t = FinishTracker::new(clips());
    t.set(0, DEATH, 0.0, 1.0); // ends at 2.0
    t.set(1, DEATH, 0.5, 1.0); // ends at 2.5
    t.set(2, DEATH, 3.0, 1.0); // ends at 5.0
    assert_eq!(t.finish(3, 3.0), &[0, 1]);
    t.set(0, DEATH, 0.5, 1.0);
    t.set(1, DEATH, 3.0, 1.0);
    assert!(t.finish(2, 3.5).is_empty());
    assert_eq!(
        t.finish(2, 5.0),
        &[1],
        "the moved actor's end, at its new index"
    );
}

#[test]
fn dropped_actors_are_forgotten() {
    let mut t = FinishTracker::new(clips());
    t.set(0, WALK, 0.0, 1.0);
    t.set(1, DEATH, 0.0, 1.0);
    assert!(t.finish(2, 1.0).is_empty());
    assert!(
        t.finish(1, 5.0).is_empty(),
        "actor 1 left the crowd before its end"
    );
    assert_eq!(t.clip_time(1, 5.0), None);
    assert!(t
        .clip_time(0, 5.25)
        .is_some_and(|c| (c - 0.25).abs() < 1e-9));
    // A new actor at that index starts afresh.
    t.set(1, DEATH, 5.0, 1.0);
    assert_eq!(t.finish(2, 7.0), &[1]);
}

#[test]
fn unknown_clips_never_end() {
    let mut t = FinishTracker::new(clips());
    t.set(0, 99, 0.0, 1.0);
    assert!(t.finish(1, 100.0).is_empty());
    assert_eq!(t.clip_time(0, 1.0), None);
    t.reset(Vec::new());
    assert_eq!(t.clip_time(0, 1.0), None);
}

#[test]
fn restarting_clips_every_frame_keeps_the_heap_small() {
    // A caller that restarts a non-looped clip on every actor every frame (start = now).
    let mut t = FinishTracker::new(clips());
    let n = 1000;
    for frame in 0..200 {
        let now = f64::from(frame) / 60.0;
        for actor in 0..n {
            t.set(actor, DEATH, now, 1.0);
        }
        assert!(t.finish(n, now).is_empty());
        assert!(
            t.heap_len() <= 3 * n + 1024,
            "frame {frame}: {}",
            t.heap_len()
        );
    }
    // The live entries survived the compactions.
    assert_eq!(t.finish(n, 200.0).len(), n);
}

#[test]
fn bulk_frames_match_actor_by_actor_and_skip_unchanged_chunks() {
    // Two trackers fed the same frames, one in bulk, one actor by actor, list the same actors.
    let n = 1000;
    let mut bulk = FinishTracker::new(clips());
    let mut one = FinishTracker::new(clips());
    let mut frame_clips: Vec<i32> = (0..n).map(|i| (i % 2) as i32 * WALK as i32).collect();
    let mut frame_starts: Vec<f32> = vec![0.0; n];
    for frame in 0..40 {
        let now = f64::from(frame) * 0.1;
        if frame % 7 == 3 {
            // A few actors start dying now, one of them twice in a row (restarted).
            for i in [5, 300, 301, 999, 5] {
                frame_clips[i] = DEATH as i32;
                frame_starts[i] = now as f32;
            }
        }
        bulk.set_bulk(n, Some(&frame_clips), Some(&frame_starts));
        for i in 0..n {
            one.set(i, frame_clips[i] as u32, f64::from(frame_starts[i]), 1.0);
        }
        assert_eq!(bulk.finish(n, now), one.finish(n, now), "frame {frame}");
    }
    // Empty arrays mean clip 0 (walk, looped) since 0: nothing ends.
    bulk.set_bulk(n, None, None);
    assert!(bulk.finish(n, 100.0).is_empty());
    assert_eq!(bulk.clip_time(3, 100.25), Some(0.25));
}

#[test]
fn a_single_set_after_a_bulk_frame_is_not_lost() {
    let mut t = FinishTracker::new(clips());
    let walk = vec![WALK as i32; 10];
    let zero = vec![0.0f32; 10];
    t.set_bulk(10, Some(&walk), Some(&zero));
    t.set(4, DEATH, 0.0, 1.0); // ends at 2.0
    assert!(t.finish(10, 1.0).is_empty());
    // The same bulk input again puts actor 4 back on the walk: the cache must not skip it.
    t.set_bulk(10, Some(&walk), Some(&zero));
    assert!(
        t.finish(10, 3.0).is_empty(),
        "actor 4 walks again, its death is gone"
    );
}

#[test]
fn a_list_of_changes_is_recorded_as_one_set_each() {
    // Scattered actors, more than the prefetch looks ahead, a repeat and a bulk frame before.
    let changes: Vec<ClipChange> = (0..40)
        .map(|k| ClipChange {
            actor: (k * 37) % 300,
            clip: if k % 3 == 0 { DEATH } else { WALK },
            start_time: 0.1 * k as f32,
            speed: 1.0 + (k % 4) as f32 * 0.5,
        })
        .chain(std::iter::once(ClipChange {
            actor: 0,
            clip: DEATH,
            start_time: 0.5,
            speed: 2.0,
        }))
        .collect();
    let mut listed = FinishTracker::new(clips());
    let mut one_by_one = FinishTracker::new(clips());
    for t in [&mut listed, &mut one_by_one] {
        t.set_bulk(300, None, None);
        t.finish(300, 0.0);
    }
    listed.set_changes(&changes);
    for c in &changes {
        one_by_one.set(c.actor, c.clip, f64::from(c.start_time), c.speed);
    }
    let mut deaths = 0;
    for now in [0.5, 1.0, 1.6, 2.5, 4.0, 9.0] {
        let a = listed.finish(300, now).to_vec();
        assert_eq!(a, one_by_one.finish(300, now), "at {now} s");
        deaths += a.len();
    }
    // Actors 0, 111, 222, 33, ... (every third change) play the death; actor 0 twice, listed
    // once for its last playback.
    assert_eq!(
        deaths,
        changes.iter().filter(|c| c.clip == DEATH).count() - 1
    );
}
