use glam::{Quat, Vec3};

use super::*;
use crate::crowd::{
    apply_blends_bulk, pack_actor_states_bulk, pack_actor_transforms_bulk, pack_actors_bulk,
    pack_model_instances_bulk, BulkBlends, BulkOptions, PackedModels, TRANSFORM_FLOATS,
};
use crate::layout::MAX_ACTORS;

fn walker() -> ActorState {
    ActorState {
        position: Vec3::new(1.0, 2.0, 3.0),
        yaw: 0.5,
        scale: 2.0,
        clip: 3,
        prev_clip: 1,
        start_time: 10.5,
        speed: 1.5,
        prev_elapsed: 0.75,
        blend_time: 0.25,
    }
}

#[test]
fn default_state() {
    let d = ActorState::default();
    assert_eq!((d.scale, d.speed, d.clip, d.blend_time), (1.0, 1.0, 0, 0.0));
}

#[test]
fn pack_actor_hand_computed() {
    let mut out = [0.0; 8];
    pack_actor(&walker(), &mut out);
    assert_eq!(&out[..6], &[1.0, 2.0, 3.0, 0.5, 10.5, 4099.0]);
    // f16: 1.5 = 0x3e00, 2.0 = 0x4000, 0.75 = 0x3a00, 1.25 (0.25 + BLEND_BIAS) = 0x3d00.
    assert_eq!(out[6].to_bits(), 0x4000_3e00);
    assert_eq!(out[7].to_bits(), 0x3d00_3a00);
    assert_eq!(unpack_actor(&out), walker());
}

#[test]
fn pack_actor_clamps_and_stays_normal() {
    let mut out = [0.0; 8];
    let extremes = [(0.0, -1.0), (1e9, 1e9), (f32::NAN, f32::NAN), (1e-3, 0.0)];
    for (scale, blend) in extremes {
        let a = ActorState {
            scale,
            blend_time: blend,
            speed: 0.0,
            prev_elapsed: 0.0,
            ..walker()
        };
        pack_actor(&a, &mut out);
        assert!(
            out[6].is_normal() && out[7].is_normal(),
            "scale {scale} blend {blend}"
        );
        let back = unpack_actor(&out);
        assert!((SCALE_RANGE.0..=SCALE_RANGE.1).contains(&back.scale));
        assert!((0.0..=MAX_BLEND_TIME).contains(&back.blend_time));
    }
    let a = ActorState {
        scale: 0.0,
        blend_time: -5.0,
        ..walker()
    };
    pack_actor(&a, &mut out);
    let back = unpack_actor(&out);
    assert_eq!((back.scale, back.blend_time), (1.0 / 1024.0, 0.0));
    let a = ActorState {
        scale: 5000.0,
        blend_time: 1e9,
        ..walker()
    };
    pack_actor(&a, &mut out);
    let back = unpack_actor(&out);
    // 60000 + 1 rounds to 60000 in f16 (spacing 32), so 59999 comes back.
    assert_eq!((back.scale, back.blend_time), (1024.0, 59999.0));
}

#[test]
fn largest_clip_code_is_exact() {
    let a = ActorState {
        clip: MAX_CLIPS - 1,
        prev_clip: MAX_CLIPS - 1,
        ..ActorState::default()
    };
    let mut out = [0.0; 8];
    pack_actor(&a, &mut out);
    assert_eq!(out[5], 16_773_118.0);
    let back = unpack_actor(&out);
    assert_eq!((back.clip, back.prev_clip), (4094, 4094));
    // Out-of-range clips are clamped rather than corrupting the other field.
    let a = ActorState {
        clip: 9999,
        prev_clip: 2,
        ..ActorState::default()
    };
    pack_actor(&a, &mut out);
    assert_eq!(
        (unpack_actor(&out).clip, unpack_actor(&out).prev_clip),
        (4094, 2)
    );
}

#[test]
fn model_instance_bytes() {
    let b = pack_model_instance(0x12_3456, 7);
    assert_eq!(b, [0x56, 0x34, 0x12, 7]);
    let decoded = u32::from(b[0]) + 256 * u32::from(b[1]) + 65536 * u32::from(b[2]);
    assert_eq!(decoded, 0x12_3456);
    assert_eq!(
        pack_model_instance(MAX_ACTORS - 1, 255),
        [255, 255, 255, 255]
    );
}

#[test]
fn look_table_indices_and_limit() {
    let mut t = LookTable::new();
    assert!(t.is_empty());
    assert_eq!(t.index_of([1.0, 0.0, 0.0, 1.0], 0), Ok(0));
    assert_eq!(t.index_of([0.0, 1.0, 0.0, 1.0], 0), Ok(1));
    assert_eq!(t.index_of([1.0, 0.0, 0.0, 1.0], 3), Ok(2));
    assert_eq!(t.index_of([1.0, 0.0, 0.0, 1.0], 0), Ok(0));
    assert_eq!(t.len(), 3);
    let mut packed = Vec::new();
    t.pack(&mut packed);
    assert_eq!(packed.len(), 256 * 8);
    assert_eq!(&packed[..8], &[1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(&packed[16..24], &[1.0, 0.0, 0.0, 1.0, 3.0, 0.0, 0.0, 0.0]);
    assert!(packed[24..].iter().all(|&v| v == 0.0));
    for v in 3..256 {
        assert_eq!(t.index_of([0.5; 4], v), Ok(v as u8));
    }
    assert_eq!(
        t.index_of([0.5; 4], 999),
        Err(VatError::TooManyLooks { max: 256 })
    );
    assert_eq!(t.index_of([0.5; 4], 255), Ok(255));
    t.clear();
    assert_eq!(t.index_of([0.5; 4], 999), Ok(0));
}

#[test]
fn capacity_and_rows() {
    assert_eq!(grow_capacity(0, 0), 0);
    assert_eq!(grow_capacity(0, 1), 1024);
    assert_eq!(grow_capacity(1024, 1024), 1024);
    assert_eq!(grow_capacity(1024, 1025), 2048);
    assert_eq!(grow_capacity(1024, 5000), 8192);
    assert_eq!(grow_capacity(3000, 2000), 3000);
    assert_eq!(grow_capacity(usize::MAX / 2 + 1, usize::MAX), usize::MAX);
    assert_eq!(data_rows(0, 2), 1);
    assert_eq!(data_rows(2048, 2), 1);
    assert_eq!(data_rows(2049, 2), 2);
    assert_eq!(data_rows(MAX_ACTORS as usize, ACTOR_TEXELS), 8192);
}

#[test]
fn transform_check() {
    assert!(check_transform(Vec3::ONE, 0.1, 1.0));
    assert!(!check_transform(Vec3::new(0.0, f32::NAN, 0.0), 0.1, 1.0));
    assert!(!check_transform(Vec3::ONE, f32::INFINITY, 1.0));
    assert!(!check_transform(Vec3::ONE, 0.0, f32::NAN));
}

#[test]
fn crowd_bounds_hand_computed_and_conservative() {
    let model = Bounds {
        min: Vec3::new(-1.0, 0.0, -2.0),
        max: Vec3::new(1.0, 2.0, 1.0),
    };
    let actors = [(Vec3::ZERO, 1.0), (Vec3::new(10.0, 0.0, 0.0), 2.0)];
    let b = crowd_bounds(actors.iter().copied(), &model);
    let r = 5f32.sqrt();
    assert!(
        (b.min - Vec3::new(-r, 0.0, -2.0 * r)).abs().max_element() < 1e-5,
        "{:?}",
        b.min
    );
    assert!(
        (b.max - Vec3::new(10.0 + 2.0 * r, 4.0, 2.0 * r))
            .abs()
            .max_element()
            < 1e-5
    );
    for k in 0..64 {
        let q = Quat::from_rotation_y(k as f32 * 0.1);
        for corner in [
            model.min,
            model.max,
            Vec3::new(model.min.x, 0.0, model.max.z),
        ] {
            let p = Vec3::new(10.0, 0.0, 0.0) + q * (corner * 2.0);
            assert!(p.cmpge(b.min - 1e-4).all() && p.cmple(b.max + 1e-4).all());
        }
    }
    assert!(crowd_bounds(std::iter::empty(), &model).is_empty());
    assert!(crowd_bounds(actors.iter().copied(), &Bounds::empty()).is_empty());
}

/// Bulk options for a 3-clip crowd at clock origin 0.
fn opts(full_transform: bool) -> BulkOptions {
    BulkOptions {
        n_clips: 3,
        time_origin: 0.0,
        full_transform,
    }
}

/// Positions, yaws, clips and start times for the bulk packers.
pub(crate) type BulkInputs = (Vec<Vec3>, Vec<f32>, Vec<i32>, Vec<f32>);

/// Inputs for `n` actors of the bulk packers (also used by `bulk`'s own tests).
pub(crate) fn bulk_inputs(n: usize) -> BulkInputs {
    let positions = (0..n)
        .map(|i| Vec3::new(i as f32, 0.5, -(i as f32)))
        .collect();
    let yaws = (0..n).map(|i| i as f32 * 0.01).collect();
    let clips = (0..n).map(|i| (i % 3) as i32).collect();
    let starts = (0..n).map(|i| i as f32 * 0.5).collect();
    (positions, yaws, clips, starts)
}

/// `bulk_inputs(n)` packed by `pack_actors_bulk` with `options`, and the inputs.
fn packed_bulk(n: usize, options: BulkOptions) -> (Vec<f32>, BulkInputs) {
    let (positions, yaws, clips, starts) = bulk_inputs(n);
    let mut out = vec![0.0; n * record_floats(options.full_transform)];
    pack_actors_bulk(
        &mut out,
        &positions,
        &yaws,
        Some(&clips),
        Some(&starts),
        options,
    )
    .unwrap();
    (out, (positions, yaws, clips, starts))
}

#[test]
fn bulk_actors_match_single_packing() {
    let n = 20_000; // several chunks plus a partial one
    let (mut out, (positions, yaws, clips, starts)) = packed_bulk(n, opts(false));
    let mut one = [0.0; 8];
    for i in [0, 1, 8191, 8192, 19_999] {
        let a = ActorState {
            position: positions[i],
            yaw: yaws[i],
            clip: clips[i] as u32,
            prev_clip: clips[i] as u32,
            start_time: starts[i],
            ..ActorState::default()
        };
        pack_actor(&a, &mut one);
        assert_eq!(&out[i * 8..i * 8 + 8], &one, "actor {i}");
    }
    pack_actors_bulk(&mut out, &positions, &yaws, None, None, opts(false)).unwrap();
    let back = unpack_actor(&out[8 * 19_999..]);
    assert_eq!(
        (back.clip, back.start_time, back.scale, back.speed),
        (0, 0.0, 1.0, 1.0)
    );
}

#[test]
fn bulk_actors_report_the_first_error() {
    let n = 20_000;
    let (mut positions, yaws, mut clips, starts) = bulk_inputs(n);
    let mut out = vec![0.0; n * 8];
    assert_eq!(
        pack_actors_bulk(&mut out[8..], &positions, &yaws, None, None, opts(false)),
        Err(VatError::BadLength {
            what: "actor data floats",
            expected: n * 8,
            got: n * 8 - 8
        })
    );
    assert!(matches!(
        pack_actors_bulk(&mut out, &positions, &yaws[1..], None, None, opts(false)),
        Err(VatError::BadLength { what: "yaws", .. })
    ));
    clips[17_000] = 3;
    clips[15_000] = -1;
    assert_eq!(
        pack_actors_bulk(
            &mut out,
            &positions,
            &yaws,
            Some(&clips),
            Some(&starts),
            opts(false)
        ),
        Err(VatError::IndexOutOfRange {
            what: "clip index",
            index: -1,
            len: 3
        })
    );
    // Start times follow the one crowd-time rule of the single calls: 1e30 is finite but refused.
    let mut far = starts.clone();
    far[9_000] = 1e30;
    far[12_000] = f32::INFINITY;
    assert!(matches!(
        pack_actors_bulk(&mut out, &positions, &yaws, None, Some(&far), opts(false)),
        Err(VatError::BadValue { ref what, .. }) if what == "start time of actor 9000"
    ));
    positions[16_000].x = f32::NAN;
    positions[19_000].y = f32::INFINITY;
    assert_eq!(
        pack_actors_bulk(&mut out, &positions, &yaws, None, None, opts(false)),
        Err(VatError::NonFinite {
            what: "position of actor 16000".into()
        })
    );
}

#[test]
fn bulk_states_match_single_packing() {
    let states: Vec<ActorState> = (0..10_000)
        .map(|i| ActorState {
            clip: i % 7,
            yaw: i as f32,
            ..walker()
        })
        .collect();
    let mut out = vec![0.0; states.len() * 8];
    pack_actor_states_bulk(&mut out, &states).unwrap();
    let mut one = [0.0; 8];
    pack_actor(&states[9_999], &mut one);
    assert_eq!(&out[9_999 * 8..], &one);
    assert!(pack_actor_states_bulk(&mut out[1..], &states).is_err());
}

#[test]
fn bulk_model_instances() {
    let ids: Vec<i32> = (0..20_000).map(|i| i * 3).collect();
    let mut out = vec![0u8; ids.len() * 4];
    // The highest id is 59,997: the list needs 59,998 actors.
    let packed = |changed| PackedModels {
        changed,
        reach: 59_998,
    };
    assert_eq!(
        pack_model_instances_bulk(&mut out, &ids, 9, 60_000),
        Ok(packed(true))
    );
    assert_eq!(
        &out[4 * 12_345..4 * 12_346],
        &pack_model_instance(37_035, 9)
    );
    // The same list again: nothing changed. A new look only: changed.
    assert_eq!(
        pack_model_instances_bulk(&mut out, &ids, 9, 60_000),
        Ok(packed(false))
    );
    assert_eq!(
        pack_model_instances_bulk(&mut out, &ids, 8, 60_000),
        Ok(packed(true))
    );
    assert_eq!(&out[4 * 7..4 * 8], &pack_model_instance(21, 8));
    assert_eq!(
        pack_model_instances_bulk(&mut out, &ids, 9, 59_997),
        Err(VatError::IndexOutOfRange {
            what: "actor id",
            index: 59_997,
            len: 59_997
        })
    );
    let mut bad = ids.clone();
    bad[10_000] = -4;
    assert_eq!(
        pack_model_instances_bulk(&mut out, &bad, 9, 60_000),
        Err(VatError::IndexOutOfRange {
            what: "actor id",
            index: -4,
            len: 60_000
        })
    );
    assert!(pack_model_instances_bulk(&mut out[..4], &ids, 9, 60_000).is_err());
    assert_eq!(
        pack_model_instances_bulk(&mut [], &[], 9, 60_000),
        Ok(PackedModels {
            changed: false,
            reach: 0
        })
    );
    // Storage that is not 4-byte aligned gets the same bytes.
    let mut odd = vec![0u8; out.len() + 1];
    assert_eq!(
        pack_model_instances_bulk(&mut odd[1..], &ids, 8, 60_000),
        Ok(packed(true))
    );
    assert_eq!(&odd[1..], &out[..]);
    assert_eq!(
        pack_model_instances_bulk(&mut odd[1..], &ids, 8, 60_000),
        Ok(packed(false))
    );
}

#[test]
fn full_transform_records() {
    let (out, (positions, yaws, clips, starts)) = packed_bulk(50, opts(true));
    let rec = &out[17 * ACTOR_FLOATS_FULL..18 * ACTOR_FLOATS_FULL];
    let a = unpack_actor(rec);
    assert_eq!(
        (a.position, a.clip, a.start_time),
        (positions[17], clips[17] as u32, starts[17])
    );
    // The stored basis turns +X exactly as a yaw turn does.
    let [x, y, z] = unpack_basis(rec);
    let (s, c) = yaws[17].sin_cos();
    assert_eq!(x, Vec3::new(c, 0.0, -s));
    assert_eq!((y, z), (Vec3::Y, Vec3::new(s, 0.0, c)));

    let cols = [
        Vec3::new(1.0, 2.0, 3.0),
        Vec3::new(-4.0, 5.0, 6.0),
        Vec3::new(7.0, -8.0, 9.5),
    ];
    let mut one = [0.0; ACTOR_FLOATS_FULL];
    pack_actor(
        &ActorState {
            clip: 2,
            ..ActorState::default()
        },
        &mut one[..ACTOR_FLOATS],
    );
    pack_basis(cols, &mut one);
    assert_eq!(unpack_basis(&one), cols);
    // pack_actor_record writes the same record, with the scale left to the basis.
    let mut rec = [0.0; ACTOR_FLOATS_FULL];
    let scaled = ActorState {
        clip: 2,
        scale: 3.0,
        ..ActorState::default()
    };
    pack_actor_record(&scaled, Some(cols), &mut rec);
    assert_eq!(rec, one);
    let mut short = [0.0; ACTOR_FLOATS];
    pack_actor_record(&scaled, None, &mut short);
    assert_eq!(unpack_actor(&short).scale, 3.0);
    assert_eq!(
        (record_floats(false), record_floats(true)),
        (ACTOR_FLOATS, ACTOR_FLOATS_FULL)
    );
    assert_eq!(unpack_actor(&one).clip, 2);
    // Stretch bounds every column's effect: |B v| <= stretch * |v|.
    let v = Vec3::new(0.3, -0.7, 0.2);
    let bv = cols[0] * v.x + cols[1] * v.y + cols[2] * v.z;
    assert!(bv.length() <= basis_stretch(cols) * v.length());
    assert_eq!(basis_stretch([Vec3::X, Vec3::Y, Vec3::Z]), 3f32.sqrt());
}

/// `n` sheared, scaled, turned 3x4 transforms in MultiMesh.buffer's row layout, and their
/// basis columns and origins.
pub(crate) fn bulk_transforms(n: usize) -> (Vec<f32>, Vec<([Vec3; 3], Vec3)>) {
    let mut flat = Vec::with_capacity(n * TRANSFORM_FLOATS);
    let mut parts = Vec::with_capacity(n);
    for i in 0..n {
        let f = i as f32;
        let q = Quat::from_euler(glam::EulerRot::YXZ, f * 0.1, 0.3, -0.2);
        let [x, y, z] = [
            q * Vec3::X * 1.5,
            q * Vec3::Y + Vec3::X * 0.2,
            q * Vec3::Z * 0.5,
        ];
        let o = Vec3::new(f, -2.0, f * 0.5);
        flat.extend_from_slice(&[x.x, y.x, z.x, o.x, x.y, y.y, z.y, o.y, x.z, y.z, z.z, o.z]);
        parts.push(([x, y, z], o));
    }
    (flat, parts)
}

#[test]
fn bulk_transforms_match_single_records() {
    let n = 5_000;
    let (flat, parts) = bulk_transforms(n);
    let (_, _, clips, starts) = bulk_inputs(n);
    let mut out = vec![0.0; n * ACTOR_FLOATS_FULL];
    let placed =
        pack_actor_transforms_bulk(&mut out, &flat, Some(&clips), Some(&starts), 3, 1.5).unwrap();
    let mut one = [0.0; ACTOR_FLOATS_FULL];
    for i in [0, 1, 2_345, n - 1] {
        let (cols, origin) = parts[i];
        let a = ActorState {
            position: origin,
            clip: clips[i] as u32,
            prev_clip: clips[i] as u32,
            start_time: starts[i] - 1.5,
            ..ActorState::default()
        };
        pack_actor_record(&a, Some(cols), &mut one);
        assert_eq!(&out[i * 16..i * 16 + 16], &one, "actor {i}");
        assert_eq!(unpack_basis(&one), cols);
    }
    let origins: Vec<Vec3> = parts.iter().map(|p| p.1).collect();
    assert_eq!(placed.origins, Bounds::from_points(&origins));
    let widest = parts.iter().map(|p| basis_stretch(p.0)).fold(0.0, f32::max);
    assert!((placed.max_stretch - widest).abs() <= 1e-6 * widest);
    // No clips or start times: clip 0 from time 0 (less the origin).
    pack_actor_transforms_bulk(&mut out, &flat, None, None, 3, 0.0).unwrap();
    let back = unpack_actor(&out[16 * (n - 1)..]);
    assert_eq!((back.clip, back.start_time), (0, 0.0));
    let none = pack_actor_transforms_bulk(&mut [], &[], None, None, 3, 0.0).unwrap();
    assert!(none.origins.is_empty());
}

#[test]
fn bulk_transforms_report_the_first_error() {
    let n = 100;
    let (mut flat, _) = bulk_transforms(n);
    let (_, _, mut clips, _) = bulk_inputs(n);
    let mut out = vec![-3.0; n * ACTOR_FLOATS_FULL];
    assert_eq!(
        pack_actor_transforms_bulk(&mut out, &flat[..flat.len() - 1], None, None, 3, 0.0),
        Err(VatError::BadLength {
            what: "transform floats (12 per actor)",
            expected: n * 12,
            got: n * 12 - 1
        })
    );
    assert_eq!(
        pack_actor_transforms_bulk(&mut out[16..], &flat, None, None, 3, 0.0),
        Err(VatError::BadLength {
            what: "actor data floats",
            expected: n * 16,
            got: (n - 1) * 16
        })
    );
    flat[77 * 12 + 5] = f32::NAN; // a basis entry
    flat[90 * 12 + 11] = f32::INFINITY; // an origin
    clips[40] = 3;
    assert_eq!(
        pack_actor_transforms_bulk(&mut out, &flat, None, None, 3, 0.0),
        Err(VatError::NonFinite {
            what: "transform of actor 77".into()
        })
    );
    assert_eq!(
        pack_actor_transforms_bulk(&mut out, &flat, Some(&clips), None, 3, 0.0),
        Err(VatError::IndexOutOfRange {
            what: "clip index",
            index: 3,
            len: 3
        })
    );
    assert!(out.iter().all(|&v| v == -3.0), "a rejected call wrote data");
}

#[test]
fn bulk_blends_match_single_states() {
    let n = 50;
    for full in [false, true] {
        let stride = record_floats(full);
        let mut options = opts(full);
        options.time_origin = 8.0;
        let (mut out, (_, _, clips, starts)) = packed_bulk(n, options);
        let before = out.clone();
        let blends = BulkBlends {
            actor_ids: &[7, 3],
            prev_clips: &[2, 0],
            prev_start_times: &[1.0, 100.0], // actor 3 "started" its previous clip after this one
            blend_times: &[0.25, -1.0],
        };
        apply_blends_bulk(&mut out, stride, &blends, 3, 8.0).unwrap();
        let a7 = unpack_actor(&out[7 * stride..]);
        // Actor 7 starts at 3.5 s (3.5 - 8.0 stored): 2.5 s into clip 2 at the switch.
        assert_eq!((a7.clip, a7.prev_clip), (clips[7] as u32, 2));
        assert_eq!((a7.prev_elapsed, a7.blend_time), (2.5, 0.25));
        assert_eq!(a7.start_time, starts[7] - 8.0);
        let a3 = unpack_actor(&out[3 * stride..]);
        assert_eq!(
            (a3.prev_clip, a3.prev_elapsed, a3.blend_time),
            (0, 0.0, 0.0)
        );
        // Only the two records changed, and in full records the basis is kept.
        for i in (0..n).filter(|i| *i != 7 && *i != 3) {
            assert_eq!(
                &out[i * stride..(i + 1) * stride],
                &before[i * stride..(i + 1) * stride]
            );
        }
        if full {
            assert_eq!(
                unpack_basis(&out[7 * stride..]),
                unpack_basis(&before[7 * stride..])
            );
        }
    }
}

#[test]
fn bulk_blends_report_the_first_error_and_write_nothing() {
    let n = 10;
    let (mut out, _) = packed_bulk(n, opts(false));
    let before = out.clone();
    let blends = |ids: &'static [i32], prev: &'static [i32], t: &'static [f32]| BulkBlends {
        actor_ids: ids,
        prev_clips: prev,
        prev_start_times: t,
        blend_times: &[0.2, 0.2],
    };
    let cases = [
        (
            blends(&[1, 10], &[0, 0], &[0.0, 0.0]),
            VatError::IndexOutOfRange {
                what: "actor id",
                index: 10,
                len: n,
            },
        ),
        (
            blends(&[1, 2], &[0, 3], &[0.0, 0.0]),
            VatError::IndexOutOfRange {
                what: "previous clip",
                index: 3,
                len: 3,
            },
        ),
        (
            blends(&[1, 2], &[0, 1], &[0.0, f32::INFINITY]),
            VatError::BadValue {
                what: "previous start time of entry 1".into(),
                value: f64::INFINITY,
                allowed: "finite and within +-2^32 seconds (4294967296)",
            },
        ),
        (
            blends(&[1, 2], &[0, 1], &[0.0]),
            VatError::BadLength {
                what: "previous start times",
                expected: 2,
                got: 1,
            },
        ),
    ];
    for (b, e) in cases {
        assert_eq!(
            apply_blends_bulk(&mut out, ACTOR_FLOATS, &b, 3, 0.0),
            Err(e)
        );
        assert_eq!(out, before, "a rejected call wrote data");
    }
}

#[test]
fn item_limits_follow_the_index_and_the_texture_size() {
    use crate::layout::{MAX_ACTORS, MAX_TEXTURE_SIZE};
    // At 16384 rows both record sizes stop at the 24-bit index (full records fill the texture).
    assert_eq!(
        item_limit(ACTOR_TEXELS, MAX_TEXTURE_SIZE),
        MAX_ACTORS as usize
    );
    assert_eq!(
        item_limit(ACTOR_TEXELS_FULL, MAX_TEXTURE_SIZE),
        MAX_ACTORS as usize
    );
    assert_eq!(
        item_limit(1, 1 << 20),
        MAX_ACTORS as usize,
        "we create at most 16384 rows"
    );
    // A renderer with smaller textures halves the full records' room.
    assert_eq!(item_limit(ACTOR_TEXELS_FULL, 8192), 1 << 23);
    assert!(check_item_count("actors", 1 << 24, ACTOR_TEXELS_FULL, 16384).is_ok());
    let e = check_item_count("actors", (1 << 24) + 1, ACTOR_TEXELS_FULL, 16384).unwrap_err();
    assert_eq!(
        e.to_string(),
        "16777217 actors are more than the 16777216 one crowd can hold (an instance names its \
         actor with a 24-bit index)"
    );
    let e = check_item_count("actors", (1 << 23) + 1, ACTOR_TEXELS_FULL, 8192).unwrap_err();
    assert!(e.to_string().contains("4096 x 8192 texels"), "{e}");
}
