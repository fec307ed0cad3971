use glam::Vec3;

use super::*;
use crate::bounds::Bounds;
use crate::crowd::frame_fast::{fast_blocks, FastFrame, BLOCK};
use crate::crowd::frame_fast_lanes::fast_block_lanes;
use crate::crowd::frame_input::{Plane, Projection};
use crate::crowd::records::{pack_actor_record, pack_model_instance, yaw_basis, ActorState};
use crate::half::SoftHalf;
use crate::lod_distance::{actor_diameter, screen_constant, LodCurve, DEFAULT_SWITCH_DISTANCES};

/// The generated soldier's size: 0.8 x 1.8 x 0.6 m, feet at 0.
pub(super) fn soldier() -> Bounds {
    Bounds {
        min: Vec3::new(-0.4, 0.0, -0.3),
        max: Vec3::new(0.4, 1.8, 0.3),
    }
}

/// A shape of one clip per entry of `clips`, with `levels` levels on one model and the soldier's
/// LOD curve.
pub(super) fn shape(clips: &[Bounds], levels: &[u8]) -> CrowdShape {
    let d = actor_diameter(&soldier(), 1.0);
    CrowdShape {
        clip_bounds: clips.to_vec(),
        lod: Some((LodCurve::calibrate(d, DEFAULT_SWITCH_DISTANCES).unwrap(), d)),
        model_levels: levels.to_vec(),
    }
}

/// A view of the box [-10, 10]^3 (six outward planes), camera at `camera`, 30 degrees.
fn box_view(camera: Vec3) -> View {
    let axes = [Vec3::X, Vec3::Y, Vec3::Z];
    let planes = axes
        .iter()
        .flat_map(|&a| [a, -a])
        .map(|normal| Plane { normal, d: 10.0 })
        .collect();
    View {
        planes,
        camera,
        projection: Projection::Perspective {
            screen_constant: screen_constant(30f32.to_radians()),
        },
        shadow_sweeps: Vec::new(),
        shadow_spheres: Vec::new(),
        shadow_reach: Vec::new(),
    }
}

/// Interleaved records of `states` (8 floats, or 16 with `bases`).
pub(super) fn records(states: &[ActorState], bases: Option<&[[Vec3; 3]]>) -> (Vec<f32>, usize) {
    let stride = if bases.is_some() { 16 } else { 8 };
    let mut out = vec![0.0; states.len() * stride];
    for (i, s) in states.iter().enumerate() {
        let basis = bases.map(|b| b[i]);
        pack_actor_record(s, basis, &mut out[i * stride..(i + 1) * stride]);
    }
    (out, stride)
}

fn at(position: Vec3) -> ActorState {
    ActorState {
        position,
        ..ActorState::default()
    }
}

/// Runs one frame over `states` carrying one model and returns the lists' actor ids per view
/// level, then per shadow level.
fn run(
    frame: &mut CrowdFrame,
    states: &[ActorState],
    bases: Option<&[[Vec3; 3]]>,
    shape: &CrowdShape,
    view: Option<&View>,
    settings: &FrameSettings,
) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let (recs, stride) = records(states, bases);
    let actors = Actors::interleaved(&recs, stride, states.len());
    let texels: Vec<u32> = (0..states.len() as u32)
        .map(|i| u32::from_le_bytes(pack_model_instance(i, 7)))
        .collect();
    frame.run(&actors, &[&texels], shape, view, settings);
    let ids = |l: &[u32]| {
        assert!(l.iter().all(|t| t >> 24 == 7), "the look byte is kept");
        l.iter().map(|t| t & 0xff_ffff).collect::<Vec<_>>()
    };
    let levels = shape.levels();
    (
        (0..levels).map(|l| ids(frame.view_list(0, l))).collect(),
        (0..levels).map(|l| ids(frame.shadow_list(0, l))).collect(),
    )
}

fn drawn(lists: &(Vec<Vec<u32>>, Vec<Vec<u32>>)) -> Vec<u32> {
    let mut all: Vec<u32> = lists.0.iter().flatten().copied().collect();
    all.sort();
    all
}

#[test]
fn actors_just_inside_each_plane_are_drawn_and_just_outside_are_not() {
    let shape = shape(&[soldier()], &[1]);
    let view = box_view(Vec3::new(0.0, 5.0, 0.0));
    // The soldier's box reaches 0.4 in x, 1.8 up, 0.3 in z: place it 0.05 inside and 0.05
    // outside of each plane.
    let reach = [
        (Vec3::X, 0.4),
        (-Vec3::X, 0.4),
        (Vec3::Y, 0.0),
        (-Vec3::Y, 1.8),
        (Vec3::Z, 0.3),
        (-Vec3::Z, 0.3),
    ];
    let mut states = Vec::new();
    for (axis, r) in reach {
        states.push(at(axis * (10.0 + r - 0.05)));
        states.push(at(axis * (10.0 + r + 0.05)));
    }
    let mut frame = CrowdFrame::new();
    let lists = run(
        &mut frame,
        &states,
        None,
        &shape,
        Some(&view),
        &FrameSettings::default(),
    );
    assert_eq!(drawn(&lists), vec![0, 2, 4, 6, 8, 10]);
    assert_eq!(frame.lod_counts(), &[6]);
    // Culling off draws every one.
    let off = FrameSettings {
        culling: false,
        ..FrameSettings::default()
    };
    let lists = run(&mut frame, &states, None, &shape, Some(&view), &off);
    assert_eq!(drawn(&lists).len(), 12);
    // No camera: nothing culled, level 0.
    let lists = run(
        &mut frame,
        &states,
        None,
        &shape,
        None,
        &FrameSettings::default(),
    );
    assert_eq!(lists.0[0].len(), 12);
}

#[test]
fn scale_grows_the_placed_volume() {
    let shape = shape(&[soldier()], &[1]);
    let view = box_view(Vec3::ZERO);
    // At x = 11.5 the box reaches 11.1 at scale 1 (out) and 9.9 at scale 4 (in).
    let small = at(Vec3::new(11.5, 0.0, 0.0));
    let big = ActorState {
        scale: 4.0,
        ..small
    };
    let mut frame = CrowdFrame::new();
    let lists = run(
        &mut frame,
        &[small, big],
        None,
        &shape,
        Some(&view),
        &FrameSettings::default(),
    );
    assert_eq!(drawn(&lists), vec![1]);
}

#[test]
fn yaw_and_full_transforms_turn_the_volume() {
    // A spear along z: 6 m long, 0.2 m thick.
    let spear = Bounds {
        min: Vec3::new(-0.1, 0.0, -3.0),
        max: Vec3::new(0.1, 1.0, 3.0),
    };
    let shape = shape(&[spear], &[1]);
    let view = box_view(Vec3::ZERO);
    let p = Vec3::new(12.0, 0.0, 0.0);
    let quarter = std::f32::consts::FRAC_PI_2;
    let states = [
        at(p),
        ActorState {
            yaw: quarter,
            ..at(p)
        },
        ActorState { yaw: 0.3, ..at(p) },
    ];
    let mut frame = CrowdFrame::new();
    let settings = FrameSettings::default();
    let lists = run(&mut frame, &states, None, &shape, Some(&view), &settings);
    // Turned a quarter, the spear reaches 9 m in x; turned 0.3 rad, 12 - 3 sin 0.3 - 0.1 > 10.
    assert_eq!(drawn(&lists), vec![1]);
    // The same turns as full transforms, plus a roll that lays a 1 m tall box along -x.
    let roll = glam::Mat3::from_rotation_z(quarter);
    let tall = Bounds {
        min: Vec3::new(-0.1, 0.0, -0.1),
        max: Vec3::new(0.1, 3.0, 0.1),
    };
    let bases = [
        yaw_basis(0.0),
        yaw_basis(quarter),
        [roll.x_axis, roll.y_axis, roll.z_axis],
    ];
    let lists = run(
        &mut frame,
        &states,
        Some(&bases),
        &shape,
        Some(&view),
        &settings,
    );
    assert_eq!(drawn(&lists), vec![1]);
    let shape = self::shape(&[tall], &[1]);
    let lists = run(
        &mut frame,
        &states,
        Some(&bases),
        &shape,
        Some(&view),
        &settings,
    );
    // Rolled, the 3 m tall box lies from x = 9 to 12: drawn; upright, it stays at x = 12.
    assert_eq!(drawn(&lists), vec![2]);
    // Billboard actors are bounded for any yaw: the spear reaches 9 m in x whatever its yaw.
    let any = FrameSettings {
        any_yaw: true,
        ..settings
    };
    let shape = self::shape(&[spear], &[1]);
    let lists = run(&mut frame, &states[..1], None, &shape, Some(&view), &any);
    assert_eq!(drawn(&lists), vec![0]);
}

#[test]
fn a_cross_fade_keeps_the_previous_clips_volume() {
    // Clip 0 is small; clip 1 reaches 5 m forward (a lunge).
    let lunge = Bounds {
        min: Vec3::new(-0.4, 0.0, -0.3),
        max: Vec3::new(5.0, 1.8, 0.3),
    };
    let shape = shape(&[soldier(), lunge], &[1]);
    let view = box_view(Vec3::ZERO);
    // At x = -13 only the lunge's box reaches into the view (-8): fading from the lunge (clip 1)
    // into clip 0 since t = 1 over 0.5 s.
    let fading = ActorState {
        position: Vec3::new(-13.0, 0.0, 0.0),
        clip: 0,
        prev_clip: 1,
        start_time: 1.0,
        blend_time: 0.5,
        ..ActorState::default()
    };
    let mut frame = CrowdFrame::new();
    for (time, visible) in [
        (0.5, true),
        (1.2, true),
        (1.49, true),
        (1.51, false),
        (9.0, false),
    ] {
        let settings = FrameSettings {
            time,
            ..FrameSettings::default()
        };
        let lists = run(&mut frame, &[fading], None, &shape, Some(&view), &settings);
        assert_eq!(!drawn(&lists).is_empty(), visible, "at time {time}");
    }
    // Playing the lunge itself, it is drawn.
    let lunging = ActorState {
        clip: 1,
        prev_clip: 1,
        ..fading
    };
    let lists = run(
        &mut frame,
        &[lunging],
        None,
        &shape,
        Some(&view),
        &FrameSettings::default(),
    );
    assert_eq!(drawn(&lists), vec![0]);
}

#[test]
fn shadows_falling_into_the_view_keep_an_actor_for_its_shadow() {
    let shape = shape(&[soldier()], &[2]);
    let mut view = box_view(Vec3::ZERO);
    // Outside beyond +x; a light travelling toward -x with 5 m of shadow reaches back in.
    let outside = at(Vec3::new(13.0, 0.0, 0.0));
    let inside = at(Vec3::new(0.0, 0.0, 0.0));
    let far = at(Vec3::new(30.0, 0.0, 0.0));
    view.shadow_sweeps = vec![Vec3::new(-5.0, 0.0, 0.0)];
    let mut frame = CrowdFrame::new();
    let settings = FrameSettings::default();
    let lists = run(
        &mut frame,
        &[inside, outside, far],
        None,
        &shape,
        Some(&view),
        &settings,
    );
    assert_eq!(lists.0[0], vec![0], "only the actor inside is drawn");
    assert_eq!(lists.1[0], vec![1], "the one just outside casts its shadow");
    assert_eq!(frame.shadow_only_count(), 1);
    // A light travelling the other way, or a crowd casting no shadows: culled.
    view.shadow_sweeps = vec![Vec3::new(5.0, -1.0, 0.0)];
    let lists = run(
        &mut frame,
        &[inside, outside, far],
        None,
        &shape,
        Some(&view),
        &settings,
    );
    assert!(lists.1.iter().all(|l| l.is_empty()));
    view.shadow_sweeps = vec![Vec3::new(-5.0, 0.0, 0.0)];
    let no_shadows = FrameSettings {
        cast_shadows: false,
        ..settings
    };
    let lists = run(
        &mut frame,
        &[inside, outside, far],
        None,
        &shape,
        Some(&view),
        &no_shadows,
    );
    assert!(lists.1.iter().all(|l| l.is_empty()));
    // shadow_lod: every caster goes to the shadow list of that level, drawn or not.
    let shadow_lod = FrameSettings {
        shadow_lod: Some(1),
        ..settings
    };
    let lists = run(
        &mut frame,
        &[inside, outside, far],
        None,
        &shape,
        Some(&view),
        &shadow_lod,
    );
    assert_eq!(lists.0[0], vec![0]);
    assert_eq!(lists.1[0], Vec::<u32>::new());
    assert_eq!(lists.1[1], vec![0, 1]);
    // An actor at a coarser level than shadow_lod keeps its own level for its shadow.
    let coarse = FrameSettings {
        force_lod: Some(2),
        ..shadow_lod
    };
    let lists = run(
        &mut frame,
        &[inside, outside, far],
        None,
        &self::shape(&[soldier()], &[3]),
        Some(&view),
        &coarse,
    );
    assert_eq!(lists.0[2], vec![0]);
    assert_eq!(lists.1[1], Vec::<u32>::new());
    assert_eq!(lists.1[2], vec![0, 1]);
}

#[test]
fn actors_in_view_beyond_the_shadow_reach_cast_none() {
    let shape = shape(&[soldier()], &[2]);
    // A view of [-10, 10]^3 seen from +z; the sun travels toward -y (straight down).
    let mut view = box_view(Vec3::new(0.0, 0.0, 40.0));
    view.shadow_sweeps = vec![Vec3::new(0.0, -100.0, 0.0)];
    view.shadow_reach = vec![35.0];
    // Actor 0 is 35 m from the camera (its shadow lands within reach); actor 1 is 48 m away
    // (beyond 35 m plus its radius); actor 2 is outside the view but casts into it.
    let near = at(Vec3::new(0.0, 0.0, 5.0));
    let far = at(Vec3::new(0.0, 0.0, -8.0));
    let outside = at(Vec3::new(5.0, 12.0, 5.0));
    let actors = [near, far, outside];
    let mut frame = CrowdFrame::new();
    let settings = FrameSettings::default();
    let lists = run(&mut frame, &actors, None, &shape, Some(&view), &settings);
    assert_eq!(drawn(&lists), vec![0, 1], "both in view are drawn");
    assert_eq!(frame.no_cast_count(), 1);
    assert!(frame.splits_shadows(), "the view lists then cast nothing");
    let shadows: Vec<u32> = lists.1.iter().flatten().copied().collect();
    assert!(
        shadows.contains(&0),
        "the near one casts, from the shadow list: {lists:?}"
    );
    assert!(
        !shadows.contains(&1),
        "the far one casts no shadow: {lists:?}"
    );
    assert!(
        shadows.contains(&2),
        "the one outside still casts into the view: {lists:?}"
    );
    // A light travelling toward the camera carries the far one's shadow into reach.
    view.shadow_sweeps = vec![Vec3::new(0.0, -10.0, 100.0)];
    let lists = run(&mut frame, &actors, None, &shape, Some(&view), &settings);
    assert_eq!(frame.no_cast_count(), 0);
    assert!(
        !frame.splits_shadows(),
        "everyone casts: the view lists cast their own"
    );
    assert!(
        lists.1.iter().flatten().all(|&a| a == 2),
        "only the actor outside is in a shadow list: {lists:?}"
    );
    // No known reach, an omni light, no culling or no shadows at all: every actor casts.
    view.shadow_sweeps = vec![Vec3::new(0.0, -100.0, 0.0)];
    for (reach, spheres, culling, casts) in [
        (vec![], vec![], true, true),
        (
            vec![35.0],
            vec![(Vec3::new(0.0, 0.0, -8.0), 3.0)],
            true,
            true,
        ),
        (vec![35.0], vec![], false, true),
        (vec![35.0], vec![], true, false),
    ] {
        view.shadow_reach = reach;
        view.shadow_spheres = spheres;
        let s = FrameSettings {
            culling,
            cast_shadows: casts,
            ..settings
        };
        run(&mut frame, &actors, None, &shape, Some(&view), &s);
        assert_eq!(frame.no_cast_count(), 0);
        assert!(!frame.splits_shadows());
    }
}

#[test]
fn omni_and_spot_shadows_keep_actors_inside_their_reach() {
    let shape = shape(&[soldier()], &[1]);
    let mut view = box_view(Vec3::ZERO);
    // Just outside +x; a light 2 m inside the view reaching 4 m covers it, one reaching 1 m not.
    let near = at(Vec3::new(11.0, 0.0, 0.0));
    let far = at(Vec3::new(30.0, 0.0, 0.0));
    let inside = at(Vec3::ZERO);
    let states = [inside, near, far];
    let mut frame = CrowdFrame::new();
    let settings = FrameSettings::default();
    view.shadow_spheres = vec![(Vec3::new(8.0, 1.0, 0.0), 4.0)];
    let lists = run(&mut frame, &states, None, &shape, Some(&view), &settings);
    assert_eq!(lists.0[0], vec![0]);
    assert_eq!(
        lists.1[0],
        vec![1],
        "the actor in the light's reach casts its shadow"
    );
    view.shadow_spheres = vec![(Vec3::new(8.0, 1.0, 0.0), 1.0)];
    let lists = run(&mut frame, &states, None, &shape, Some(&view), &settings);
    assert!(lists.1[0].is_empty(), "out of the light's reach: culled");
    // A light whose reach misses the view lights nothing in it, however close the actor.
    view.shadow_spheres = vec![(Vec3::new(16.0, 1.0, 0.0), 5.5)];
    let lists = run(&mut frame, &states, None, &shape, Some(&view), &settings);
    assert!(lists.1[0].is_empty(), "a light outside the view: culled");
    // No shadows cast at all: culled.
    view.shadow_spheres = vec![(Vec3::new(8.0, 1.0, 0.0), 4.0)];
    let no_shadows = FrameSettings {
        cast_shadows: false,
        ..settings
    };
    let lists = run(&mut frame, &states, None, &shape, Some(&view), &no_shadows);
    assert!(lists.1[0].is_empty());
}

#[test]
fn levels_follow_the_shared_formula_and_scale() {
    let shape = shape(&[soldier()], &[3]);
    let view = View {
        planes: Vec::new(),
        ..box_view(Vec3::ZERO)
    };
    // Level 1 starts at 93.3 m and level 2 at 167.9 m at scale 1; twice as far at scale 2.
    let states = [
        at(Vec3::new(0.0, 0.0, 80.0)),
        at(Vec3::new(0.0, 0.0, -100.0)),
        at(Vec3::new(170.0, 0.0, 0.0)),
        ActorState {
            scale: 2.0,
            ..at(Vec3::new(0.0, 0.0, 190.0))
        },
        at(Vec3::new(0.0, 0.0, 1000.0)),
    ];
    let mut frame = CrowdFrame::new();
    let lists = run(
        &mut frame,
        &states,
        None,
        &shape,
        Some(&view),
        &FrameSettings::default(),
    );
    assert_eq!(lists.0, vec![vec![0], vec![1, 3], vec![2, 4]]);
    assert_eq!(frame.lod_counts(), &[1, 2, 2]);
    // A full transform scaled by 2 in every axis switches like scale 2.
    let scaled = [yaw_basis(0.0).map(|c| c * 2.0)];
    let mut frame = CrowdFrame::new();
    let lists = run(
        &mut frame,
        &states[3..4],
        Some(&scaled),
        &shape,
        Some(&view),
        &FrameSettings::default(),
    );
    assert_eq!(lists.0[1], vec![0]);
    // An orthographic camera showing 2 tan(15 deg) * 100 m: level 1 wherever the actor stands.
    let ortho = View {
        projection: Projection::Orthographic {
            height: 2.0 * 15f32.to_radians().tan() * 100.0,
        },
        ..view.clone()
    };
    let mut frame = CrowdFrame::new();
    let lists = run(
        &mut frame,
        &states[..3],
        None,
        &shape,
        Some(&ortho),
        &FrameSettings::default(),
    );
    assert_eq!(lists.0[1], vec![0, 1, 2]);
}

#[test]
fn hysteresis_holds_a_level_near_its_boundary() {
    let shape = shape(&[soldier()], &[3]);
    let view = box_view(Vec3::ZERO);
    let view = View {
        planes: Vec::new(),
        ..view
    };
    let mut frame = CrowdFrame::new();
    let settings = FrameSettings::default();
    let level_at = |frame: &mut CrowdFrame, z: f32| {
        let lists = run(
            frame,
            &[at(Vec3::new(0.0, 0.0, z))],
            None,
            &shape,
            Some(&view),
            &settings,
        );
        lists.0.iter().position(|l| !l.is_empty()).unwrap()
    };
    // Walking out past 93.3 m: still level 0 just past it (within the hysteresis), then 1.
    assert_eq!(level_at(&mut frame, 90.0), 0);
    assert_eq!(level_at(&mut frame, 95.0), 0);
    assert_eq!(level_at(&mut frame, 105.0), 1);
    // Walking back in: level 1 holds just inside the boundary, then drops to 0.
    assert_eq!(level_at(&mut frame, 91.0), 1);
    assert_eq!(level_at(&mut frame, 80.0), 0);
    // A fresh frame has no history: 95 m is level 1 at once.
    let mut fresh = CrowdFrame::new();
    assert_eq!(level_at(&mut fresh, 95.0), 1);
    fresh.reset();
    assert_eq!(level_at(&mut fresh, 92.0), 0);
}

#[test]
fn bias_max_and_forced_levels() {
    let shape = shape(&[soldier()], &[4]);
    let view = View {
        planes: Vec::new(),
        ..box_view(Vec3::ZERO)
    };
    let states = [
        at(Vec3::new(0.0, 0.0, 50.0)),
        at(Vec3::new(0.0, 0.0, 400.0)),
    ];
    let levels = |settings: FrameSettings| {
        let mut frame = CrowdFrame::new();
        let lists = run(&mut frame, &states, None, &shape, Some(&view), &settings);
        states
            .iter()
            .enumerate()
            .map(|(i, _)| {
                lists
                    .0
                    .iter()
                    .position(|l| l.contains(&(i as u32)))
                    .unwrap()
            })
            .collect::<Vec<_>>()
    };
    let base = FrameSettings::default();
    assert_eq!(levels(base), vec![0, 3]);
    assert_eq!(
        levels(FrameSettings {
            lod_bias: 1.5,
            ..base
        }),
        vec![1, 3]
    );
    assert_eq!(
        levels(FrameSettings {
            lod_bias: -2.0,
            ..base
        }),
        vec![0, 1]
    );
    assert_eq!(levels(FrameSettings { max_lod: 1, ..base }), vec![0, 1]);
    assert_eq!(
        levels(FrameSettings {
            force_lod: Some(2),
            ..base
        }),
        vec![2, 2]
    );
    assert_eq!(
        levels(FrameSettings {
            force_lod: Some(9),
            ..base
        }),
        vec![3, 3]
    );
    assert_eq!(
        levels(FrameSettings {
            force_lod: Some(3),
            max_lod: 2,
            ..base
        }),
        vec![2, 2]
    );
}

#[test]
fn each_model_draws_at_most_its_last_level_and_culled_instances_are_dropped() {
    // Model 0 has 3 levels, model 1 (a sword without LOD meshes) 1.
    let shape = shape(&[soldier()], &[3, 1]);
    let view = box_view(Vec3::ZERO);
    let view = View {
        planes: vec![Plane {
            normal: Vec3::X,
            d: 0.0,
        }],
        ..view
    };
    let states = [
        at(Vec3::new(-10.0, 0.0, 0.0)),
        at(Vec3::new(-300.0, 0.0, 0.0)),
        at(Vec3::new(50.0, 0.0, 0.0)),
    ];
    let (recs, stride) = records(&states, None);
    let actors = Actors::interleaved(&recs, stride, states.len());
    let t = |actor: u32, look: u8| u32::from_le_bytes(pack_model_instance(actor, look));
    let body = [t(0, 1), t(1, 2), t(2, 3)];
    let sword = [t(1, 4), t(2, 5), t(0, 6), t(9, 0)];
    let mut frame = CrowdFrame::new();
    frame.run(
        &actors,
        &[&body, &sword],
        &shape,
        Some(&view),
        &FrameSettings::default(),
    );
    assert_eq!(frame.view_list(0, 0), &[t(0, 1)]);
    assert_eq!(frame.view_list(0, 2), &[t(1, 2)]);
    assert_eq!(
        frame.view_list(1, 0),
        &[t(1, 4), t(0, 6)],
        "in list order, actor 9 dropped"
    );
    assert!(frame.view_list(1, 1).is_empty());
    assert_eq!(frame.lod_counts(), &[1, 0, 1]);
}

#[test]
fn a_large_crowd_splits_into_tasks_with_the_same_answer() {
    let (shape, view, states) = large_crowd();
    let n = states.len();
    let mut big = CrowdFrame::new();
    let settings = FrameSettings::default();
    let all = run(&mut big, &states, None, &shape, Some(&view), &settings);
    let mut small = CrowdFrame::new();
    let some = run(
        &mut small,
        &states[..5000],
        None,
        &shape,
        Some(&view),
        &settings,
    );
    for l in 0..3 {
        let head: Vec<u32> = all.0[l].iter().copied().filter(|&a| a < 5000).collect();
        assert_eq!(head, some.0[l], "level {l}");
    }
    let total: u32 = big.lod_counts().iter().sum();
    assert_eq!(total as usize, all.0.iter().map(Vec::len).sum::<usize>());
    assert!(total > 0 && (total as usize) < n, "some culled, some drawn");
}

/// A crowd past the parallel threshold, a third of it in a box view.
fn large_crowd() -> (CrowdShape, View, Vec<ActorState>) {
    let shape = shape(&[soldier()], &[3]);
    let mut view = box_view(Vec3::new(0.0, 2.0, -150.0));
    for p in &mut view.planes {
        p.d = 120.0;
    }
    let n = FRAME_PARALLEL_MIN * 4 + 1000;
    let states: Vec<ActorState> = (0..n)
        .map(|i| {
            let f = i as f32;
            at(Vec3::new(
                (f * 0.37) % 300.0 - 150.0,
                0.0,
                (f * 0.11) % 300.0 - 150.0,
            ))
        })
        .collect();
    (shape, view, states)
}

/// Helpers that are asked for but never start (a pool held off the cores all frame).
struct NeverStart;

impl crate::helped::Helpers for NeverStart {
    fn threads(&self) -> usize {
        3
    }

    fn spawn(&self, _job: Box<dyn FnOnce() + Send + 'static>) {}
}

/// Helpers on threads of their own, started at once.
struct OwnThreads;

impl crate::helped::Helpers for OwnThreads {
    fn threads(&self) -> usize {
        3
    }

    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) {
        std::thread::spawn(job);
    }
}

#[test]
fn helpers_that_never_start_or_start_at_once_give_the_same_frames() {
    let (_, view, states) = large_crowd();
    // Three models of 3, 2 and 1 levels; the third on two actors in three.
    let shape = shape(&[soldier()], &[3, 2, 1]);
    let (recs, stride) = records(&states, None);
    let actors = Actors::interleaved(&recs, stride, states.len());
    let texels = |keep: &dyn Fn(u32) -> bool, look: u8| -> Vec<u32> {
        (0..states.len() as u32)
            .filter(|&i| keep(i))
            .map(|i| u32::from_le_bytes(pack_model_instance(i, look)))
            .collect()
    };
    let models = [
        texels(&|_| true, 1),
        texels(&|_| true, 2),
        texels(&|i| i % 3 != 2, 3),
    ];
    let models: Vec<&[u32]> = models.iter().map(Vec::as_slice).collect();
    // Two frames each (the second keeps the first's levels), nearer the second time.
    let mut nearer = view.clone();
    nearer.camera.z += 40.0;
    let frames = |helpers: Option<std::sync::Arc<dyn crate::helped::Helpers>>| {
        let mut frame = CrowdFrame::new();
        if let Some(h) = helpers {
            frame.set_helpers(h);
        }
        let mut out = Vec::new();
        for v in [&view, &nearer] {
            frame.run(&actors, &models, &shape, Some(v), &FrameSettings::default());
            let lists: Vec<Vec<u32>> = (0..3)
                .flat_map(|m| (0..3).map(move |l| (m, l)))
                .map(|(m, l)| frame.view_list(m, l).to_vec())
                .collect();
            out.push((lists, frame.lod_counts().to_vec()));
        }
        out
    };
    let default = frames(None);
    assert_ne!(
        default[0].1, default[1].1,
        "the second frame's levels differ"
    );
    // Each model's lists follow from model 0's: every list of every model was written.
    let ids = |lists: &[&Vec<u32>], look: u32| -> Vec<u32> {
        let mut ids: Vec<u32> = lists
            .iter()
            .flat_map(|l| l.iter())
            .map(|t| t & 0xff_ffff)
            .collect();
        assert!(lists.iter().flat_map(|l| l.iter()).all(|t| t >> 24 == look));
        ids.sort_unstable();
        ids
    };
    for (lists, counts) in &default {
        let l = |m: usize, level: usize| &lists[m * 3 + level];
        let all = ids(&[l(0, 0), l(0, 1), l(0, 2)], 1);
        assert_eq!(all.len() as u32, counts.iter().sum::<u32>());
        assert!(!all.is_empty(), "some actors drawn");
        assert_eq!(ids(&[l(1, 0)], 2), ids(&[l(0, 0)], 1), "model 1, level 0");
        assert_eq!(
            ids(&[l(1, 1)], 2),
            ids(&[l(0, 1), l(0, 2)], 1),
            "model 1, level 1"
        );
        let third: Vec<u32> = all.iter().copied().filter(|i| i % 3 != 2).collect();
        assert_eq!(ids(&[l(2, 0)], 3), third, "model 2");
    }
    assert_eq!(frames(Some(std::sync::Arc::new(NeverStart))), default);
    assert_eq!(frames(Some(std::sync::Arc::new(OwnThreads))), default);
}

/// A perspective frustum of six outward planes: camera at `eye` looking along `forward` (unit,
/// not vertical), 30 degrees vertical field of view, 16:9, from 0.05 m to `far` m.
pub(super) fn camera_view(eye: Vec3, forward: Vec3, far: f32) -> View {
    let right = forward.cross(Vec3::Y).normalize();
    let up = right.cross(forward);
    let (ty, tx) = (
        15f32.to_radians().tan(),
        15f32.to_radians().tan() * 16.0 / 9.0,
    );
    let plane = |normal: Vec3, through: Vec3| Plane {
        normal,
        d: normal.dot(through),
    };
    let planes = vec![
        plane(-forward, eye + forward * 0.05),
        plane(forward, eye + forward * far),
        plane((right - forward * tx).normalize(), eye),
        plane((-right - forward * tx).normalize(), eye),
        plane((up - forward * ty).normalize(), eye),
        plane((-up - forward * ty).normalize(), eye),
    ];
    View {
        planes,
        camera: eye,
        projection: Projection::Perspective {
            screen_constant: screen_constant(30f32.to_radians()),
        },
        shadow_sweeps: Vec::new(),
        shadow_spheres: Vec::new(),
        shadow_reach: Vec::new(),
    }
}

#[test]
fn the_fast_path_decides_as_the_exact_tests_do() {
    let mut rng = crate::bake::skin_tests::Lcg(5);
    let clips = [
        soldier(),
        Bounds {
            min: Vec3::new(-1.5, -0.2, -0.4),
            max: Vec3::new(0.2, 1.1, 2.5),
        },
        Bounds {
            min: Vec3::new(0.5, 0.0, 0.5),
            max: Vec3::new(1.0, 0.3, 1.0),
        },
    ];
    // The third clip's bounds leave the vertical axis: no core, so the shadow-only actors go to
    // the exact test in the rounds that have it.
    let with_off_axis = shape(&clips, &[3, 2]);
    let on_axis = shape(&clips[..2], &[3, 2]);
    // Clip tables of 13 and 21 rows (with the union row) and 12 levels: the vector path reads
    // the first with two permutes per field, the second with gathers, and the bands of more than
    // 8 levels level by level.
    let many = |n: usize| -> Vec<Bounds> {
        (0..n)
            .map(|k| {
                let k = k as f32;
                Bounds {
                    min: Vec3::new(-0.3 - 0.1 * k, -0.1 * k, -0.2 - 0.05 * k),
                    max: Vec3::new(0.3 + 0.07 * k, 1.0 + 0.2 * k, 0.25 + 0.1 * k),
                }
            })
            .collect()
    };
    let twelve = shape(&many(12), &[12, 4]);
    let twenty = shape(&many(20), &[3, 2]);
    let (mut compared, mut no_cast, mut fading, mut shadow_only) = (0, 0, 0, 0);
    for round in 0..16 {
        let shape = match round % 4 {
            _ if round == 5 => &with_off_axis,
            0 => &twenty,
            2 => &twelve,
            _ => &on_axis,
        };
        // Clip indices up to one past the table (the union of all clips).
        let clips = shape.clip_bounds.len() as f32 + 1.0;
        let eye = Vec3::new(
            rng.next() * 40.0 - 20.0,
            2.0 + rng.next() * 60.0,
            rng.next() * 40.0,
        );
        let yaw = rng.next() * std::f32::consts::TAU;
        let forward = Vec3::new(yaw.sin(), -0.2 - rng.next(), yaw.cos()).normalize();
        let mut view = camera_view(eye, forward, 150.0 + rng.next() * 300.0);
        if round % 2 == 1 {
            view.shadow_sweeps = vec![Vec3::new(-20.0, -30.0, 5.0), Vec3::new(3.0, -8.0, -9.0)];
            // Some actors in the view lie beyond both lights' reach.
            view.shadow_reach = vec![60.0, 120.0];
        }
        if round % 3 == 1 {
            view.shadow_spheres = vec![(eye + forward * 30.0, 25.0), (eye - forward * 80.0, 10.0)];
        }
        if round % 5 == 4 {
            view.projection = Projection::Orthographic {
                height: 5.0 + rng.next() * 200.0,
            };
        }
        // Half the rounds place each block's actors in a squad a few metres wide, as a game
        // spawns them, so whole blocks lie beyond a plane or inside planes; the others scatter
        // every actor over the ground.
        let squads = round % 2 == 0;
        let mut squad = Vec3::ZERO;
        let states: Vec<ActorState> = (0..4000)
            .map(|i| {
                let blending = i % 7 == 0;
                let ground = |rng: &mut crate::bake::skin_tests::Lcg, size: f32| {
                    Vec3::new(rng.next() - 0.5, 0.0, rng.next() - 0.5) * size
                };
                let position = if squads {
                    if i % BLOCK == 0 {
                        squad = eye + ground(&mut rng, 700.0) - Vec3::Y * eye.y;
                    }
                    squad + ground(&mut rng, 6.0)
                } else {
                    eye + ground(&mut rng, 700.0) - Vec3::Y * eye.y
                };
                ActorState {
                    position,
                    yaw: rng.next() * 20.0 - 10.0,
                    scale: if i % 11 == 0 {
                        0.3 + rng.next() * 4.0
                    } else {
                        1.0
                    },
                    clip: (rng.next() * clips) as u32,
                    prev_clip: (rng.next() * clips) as u32,
                    start_time: 9.0 + rng.next(),
                    blend_time: if blending { 0.5 } else { 0.0 },
                    ..ActorState::default()
                }
            })
            .collect();
        let (recs, stride) = records(&states, None);
        let actors = Actors::interleaved(&recs, stride, states.len());
        let settings = FrameSettings {
            culling: round % 6 != 5,
            lod_bias: if round % 3 == 2 { 0.7 } else { 0.0 },
            cast_shadows: round % 4 != 3,
            time: 9.6,
            ..FrameSettings::default()
        };
        let top = (shape.levels() - 1) as u8;
        let reach = view
            .reach_limits()
            .filter(|_| settings.culling && settings.cast_shadows);
        let mut fast = FastFrame::default();
        assert!(fast.prepare(&view, &shape.clip_bounds, shape.lod, settings.lod_bias, top));
        let classify = Classifier {
            actors: &actors,
            shape,
            view: Some(&view),
            settings: &settings,
            top,
            fast: Some(&fast),
            spheres: &view.spheres_in_view(),
            reach: reach.as_deref(),
        };
        let previous: Vec<u8> = (0..states.len())
            .map(|i| [CULLED, 0, 1, 2, SHADOW_ONLY | 1, NO_CAST | 2][i % 6])
            .collect();
        let mut all_got = previous.clone();
        let mut left = vec![false; previous.len()];
        fast_blocks(&classify, &fast, 0, &mut all_got, |i, last| {
            left[i] = true;
            last
        });
        for (b, prev) in previous.chunks(BLOCK).enumerate() {
            let got = &all_got[b * BLOCK..b * BLOCK + prev.len()];
            let undecided = (0..prev.len())
                .filter(|&j| left[b * BLOCK + j])
                .fold(0u64, |m, j| m | 1 << j);
            // The portable build of the block (no AVX2 or F16C) answers the same.
            let mut soft = prev.to_vec();
            let soft_undecided =
                fast_block_lanes::<SoftHalf>(&classify, &fast, b * BLOCK, &mut soft);
            assert_eq!(soft_undecided, undecided, "round {round}, block {b}");
            assert_eq!(soft, got, "round {round}, block {b}");
            for (j, &p) in prev.iter().enumerate() {
                let i = b * BLOCK + j;
                if undecided & (1 << j) == 0 {
                    let want = classify.classify_exact(i, p);
                    assert_eq!(got[j], want, "round {round}, actor {i}: {:?}", states[i]);
                    compared += 1;
                    no_cast += usize::from(want != CULLED && want & NO_CAST != 0);
                    fading += usize::from(states[i].blend_time > 0.0);
                    shadow_only += usize::from(want != CULLED && want & SHADOW_ONLY != 0);
                } else {
                    assert_eq!(got[j], p, "an undecided actor keeps last frame's class");
                }
            }
        }
    }
    assert!(
        compared > 40_000,
        "the fast path decided {compared} of 64000 actors"
    );
    assert!(
        no_cast > 100,
        "{no_cast} actors in view beyond the shadow reach"
    );
    assert!(
        fading > 3000,
        "the fast path decided {fading} cross-fading actors"
    );
    assert!(
        shadow_only > 200,
        "the fast path decided {shadow_only} shadow-only actors"
    );
}

#[test]
fn actors_past_their_records_are_culled_and_the_rest_keep_their_answers() {
    // 70 actors counted (one whole block of the fast path and a part of one), records for 67.
    let shape = shape(&[soldier()], &[3]);
    let view = box_view(Vec3::new(0.0, 2.0, -40.0));
    let states: Vec<ActorState> = (0..70)
        .map(|i| at(Vec3::new(i as f32 * 0.5 - 17.0, 0.0, i as f32 - 35.0)))
        .collect();
    let (recs, stride) = records(&states, None);
    let settings = FrameSettings::default();
    let mut frame = CrowdFrame::new();
    let short = Actors::interleaved(&recs[..67 * stride], stride, 70);
    let texels: Vec<u32> = (0..70)
        .map(|i| u32::from_le_bytes(pack_model_instance(i, 0)))
        .collect();
    frame.run(&short, &[&texels], &shape, Some(&view), &settings);
    let lists: Vec<Vec<u32>> = (0..3).map(|l| frame.view_list(0, l).to_vec()).collect();
    let mut whole = CrowdFrame::new();
    let want = run(
        &mut whole,
        &states[..67],
        None,
        &shape,
        Some(&view),
        &settings,
    );
    for (l, (list, want)) in lists.iter().zip(&want.0).enumerate() {
        let got: Vec<u32> = list.iter().map(|t| t & 0xff_ffff).collect();
        assert_eq!(&got, want, "level {l}");
    }
    assert!(
        want.0.iter().map(Vec::len).sum::<usize>() > 10,
        "some drawn"
    );
}

#[test]
fn a_block_beyond_a_plane_is_culled_and_planes_it_is_inside_are_spared() {
    use crate::crowd::frame_fast::{BlockPlanes, BlockSpan};
    let shape = shape(&[soldier()], &[3]);
    let settings = FrameSettings::default();
    let span = |at: Vec3, scale: f32| BlockSpan {
        min: at - Vec3::new(1.0, 0.0, 1.0),
        max: at + Vec3::new(1.0, 0.0, 1.0),
        scale: [1.0, scale],
    };
    let planes = |view: &View, span: &BlockSpan| {
        let mut fast = FastFrame::default();
        assert!(fast.prepare(view, &shape.clip_bounds, shape.lod, 0.0, 2));
        let spheres = view.spheres_in_view();
        let classify = Classifier {
            actors: &Actors::interleaved(&[], 8, 0),
            shape: &shape,
            view: Some(view),
            settings: &settings,
            top: 2,
            fast: Some(&fast),
            spheres: &spheres,
            reach: None,
        };
        match fast.block_planes(&fast.sweep_policy(&classify), span) {
            BlockPlanes::Culled => None,
            BlockPlanes::Test { planes, count } => Some(planes[..count].to_vec()),
        }
    };
    // The box [-10, 10]^3: planes +X, -X, +Y, -Y, +Z, -Z in that order.
    let view = box_view(Vec3::new(0.0, 5.0, 30.0));
    assert_eq!(
        planes(&view, &span(Vec3::ZERO, 1.0)),
        Some(vec![]),
        "inside all six"
    );
    assert_eq!(planes(&view, &span(Vec3::new(30.0, 0.0, 0.0), 1.0)), None);
    // Feet at y = 0 touch no plane; x from 8 to 10 plus the soldier's 0.5 m reach crosses +X.
    assert_eq!(
        planes(&view, &span(Vec3::new(9.0, 0.0, 0.0), 1.0)),
        Some(vec![0])
    );
    // At up to 4x scale the soldier reaches 7.2 m up and 2 m across: +Y and +X too.
    assert_eq!(
        planes(&view, &span(Vec3::new(7.0, 4.0, 0.0), 4.0)),
        Some(vec![0, 2])
    );
    // 30 m beyond +X, but a light whose sweep carries shadows 40 m toward -X keeps it.
    let mut lit = box_view(Vec3::new(0.0, 5.0, 30.0));
    lit.shadow_sweeps = vec![Vec3::new(-40.0, -5.0, 0.0)];
    assert_eq!(
        planes(&lit, &span(Vec3::new(30.0, 0.0, 0.0), 1.0)),
        Some(vec![0])
    );
    lit.shadow_sweeps = vec![Vec3::new(-10.0, -5.0, 0.0)];
    assert_eq!(planes(&lit, &span(Vec3::new(30.0, 0.0, 0.0), 1.0)), None);
    // An omni light's shadow reaching the view: only the exact test tells.
    let mut omni = box_view(Vec3::new(0.0, 5.0, 30.0));
    omni.shadow_spheres = vec![(Vec3::new(5.0, 5.0, 0.0), 30.0)];
    assert_eq!(
        planes(&omni, &span(Vec3::new(30.0, 0.0, 0.0), 1.0)),
        Some(vec![0])
    );
}
