use glam::{Affine3A, Quat, Vec3};

use super::*;
use crate::bake::skin_tests::{random_mesh, Lcg};
use crate::bake::{
    skin_frames, EncodingParams, MeshFrame, MeshSource, Precision, SkinBinding, SkinnedFrames,
};
use crate::bounds::Bounds;
use crate::lod_mesh::ColumnSource;

fn label(f: usize) -> String {
    format!("frame {f}")
}

/// Random frames for `meshes`: every transform random, or (`rigid_motion`) bones that rotate and
/// move and mesh nodes that also scale uniformly.
fn random_frames(
    rng: &mut Lcg,
    meshes: &[MeshSource],
    count: usize,
    rigid_motion: bool,
) -> Vec<Vec<MeshFrame>> {
    let transform = |rng: &mut Lcg, scale: f32| {
        if rigid_motion {
            let rot = Quat::from_scaled_axis(Vec3::new(rng.next(), rng.next(), rng.next()) * 3.0);
            let t = Vec3::new(rng.next(), rng.next(), rng.next()) * 2.0;
            Affine3A::from_scale_rotation_translation(Vec3::splat(scale), rot, t)
        } else {
            rng.transform()
        }
    };
    (0..count)
        .map(|_| {
            meshes
                .iter()
                .map(|m| {
                    let scale = 0.5 + rng.next();
                    MeshFrame {
                        pre: transform(rng, scale),
                        bones: (0..m.skin.as_ref().map_or(0, |s| s.bind_count))
                            .map(|_| transform(rng, 1.0))
                            .collect(),
                        blend_weights: vec![0.0; m.blend_shapes.len()],
                    }
                })
                .collect()
        })
        .collect()
}

/// `random_mesh` with every vertex's weights at most 1 in sum (some below: the rest stays with the
/// mesh node), as Godot's importers leave them.
fn normalized_mesh(rng: &mut Lcg, n: usize, influences: usize) -> MeshSource {
    let mut mesh = random_mesh(rng, n, influences, 0, true);
    if let Some(skin) = &mut mesh.skin {
        for (v, weights) in skin.weights.chunks_mut(influences).enumerate() {
            let sum: f32 = weights.iter().sum();
            let target = if v % 5 == 0 { 0.8 } else { 1.0 };
            weights.iter_mut().for_each(|w| *w *= target / sum);
        }
    }
    mesh
}

fn vertex_columns(n: usize) -> Vec<ColumnSource> {
    (0..n as u32).map(ColumnSource::Vertex).collect()
}

fn encode_float(rig: &BoneRig, columns: &[ColumnSource]) -> EncodedBones {
    let params = EncodingParams::for_bounds(Precision::Float, &Bounds::default(), true);
    encode_bones(rig, columns, &params, 0.0).unwrap()
}

fn max_error(a: &[Vec3], b: &[Vec3]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.distance(*y))
        .fold(0.0, f32::max)
}

fn skinned(meshes: &[MeshSource], frames: &[Vec<MeshFrame>]) -> SkinnedFrames {
    skin_frames(meshes, frames, &label).unwrap()
}

#[test]
fn float_bones_give_the_vertex_bakes_positions_for_any_transforms() {
    let mut rng = Lcg(7);
    let meshes = vec![
        normalized_mesh(&mut rng, 40, 4),
        normalized_mesh(&mut rng, 30, 8),
        random_mesh(&mut rng, 10, 0, 0, true),
    ];
    let frames = random_frames(&mut rng, &meshes, 6, false);
    let rig = build_rig(&meshes, &frames, &[]).unwrap().unwrap();
    assert_eq!(rig.frames, 6);
    assert_eq!(rig.vertices.len(), 80);
    let bones = encode_float(&rig, &vertex_columns(80));
    let reference = skinned(&meshes, &frames);
    for f in 0..6 {
        let (ps, _, _) = decode_frame(&bones, f as u32);
        let err = max_error(&ps, reference.frame_positions(f));
        // Weights are stored in 14 bits: each within 3.1e-5, here times transforms that move
        // points a few units apart.
        assert!(err < 5e-4, "frame {f}: {err}");
    }
}

#[test]
fn normals_and_tangents_match_for_rotations_and_uniform_scales() {
    let mut rng = Lcg(11);
    let meshes = vec![normalized_mesh(&mut rng, 50, 4)];
    let tangents: Vec<Vec<Vec3>> = vec![meshes[0]
        .normals
        .iter()
        .map(|n| n.any_orthonormal_vector())
        .collect()];
    let frames = random_frames(&mut rng, &meshes, 4, true);
    let rig = build_rig(&meshes, &frames, &tangents).unwrap().unwrap();
    let bones = encode_float(&rig, &vertex_columns(50));
    let reference = skinned(&meshes, &frames);
    let tangent_ref = skinned(&crate::bake::tangent_sources(&meshes, &tangents), &frames);
    for f in 0..4 {
        let (_, ns, ts) = decode_frame(&bones, f as u32);
        // The blended bone bases (Godot's GPU skinning) and the vertex bake's blended
        // orthonormalized ones agree where every bone is a rotation (any mesh node scale), up to
        // the 12-bit directions and 14-bit weights stored.
        let err = max_error(&ns, reference.frame_normals(f));
        assert!(err < 3e-3, "frame {f} normals: {err}");
        assert!(
            max_error(&ts, tangent_ref.frame_normals(f)) < 3e-3,
            "frame {f} tangents"
        );
    }
}

#[test]
fn one_influence_vertices_get_exact_normals() {
    // A single bone per vertex: the blended basis is that bone's, whose normal direction is the
    // vertex bake's whenever the bone is a rotation times a uniform scale.
    let mut rng = Lcg(3);
    let mut mesh = random_mesh(&mut rng, 20, 0, 0, true);
    mesh.skin = Some(SkinBinding {
        bones: (0..20).flat_map(|v| [v % 3, 0, 0, 0]).collect(),
        weights: (0..20).flat_map(|_| [1.0, 0.0, 0.0, 0.0]).collect(),
        influences: 4,
        bind_count: 3,
    });
    let meshes = vec![mesh];
    let frames = random_frames(&mut rng, &meshes, 3, true);
    let rig = build_rig(&meshes, &frames, &[]).unwrap().unwrap();
    assert_eq!(rig.palette, 3);
    let bones = encode_float(&rig, &vertex_columns(20));
    let reference = skinned(&meshes, &frames);
    for f in 0..3 {
        let (_, ns, _) = decode_frame(&bones, f as u32);
        let err = max_error(&ns, reference.frame_normals(f));
        // Within the 12-bit direction's step (about 0.05 degrees).
        assert!(err < 1.2e-3, "frame {f}: {err}");
    }
}

#[test]
fn meshes_on_one_skeleton_share_its_bones() {
    let mut rng = Lcg(5);
    let a = normalized_mesh(&mut rng, 12, 4);
    let b = normalized_mesh(&mut rng, 9, 4);
    let mut frames = random_frames(&mut rng, &[a.clone(), b.clone()], 3, false);
    for frame in &mut frames {
        frame[1] = frame[0].clone();
    }
    let both = build_rig(&[a.clone(), b], &frames, &[]).unwrap().unwrap();
    let alone = build_rig(
        &[a],
        &frames
            .iter()
            .map(|f| vec![f[0].clone()])
            .collect::<Vec<_>>(),
        &[],
    )
    .unwrap()
    .unwrap();
    // b's binds are a subset of the 7 bones random_mesh draws from, plus the node transform.
    assert!(both.palette <= 8, "{}", both.palette);
    assert!(both.palette >= alone.palette);
    let mut distinct: Vec<u32> = both
        .vertices
        .iter()
        .flat_map(|v| v.influences.iter().filter(|i| i.1 != 0.0).map(|i| i.0))
        .collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), both.palette, "every palette entry is used");
}

#[test]
fn animated_blend_shapes_are_refused_by_name_and_constant_ones_kept() {
    let mut rng = Lcg(9);
    let mut mesh = random_mesh(&mut rng, 10, 4, 3, true);
    mesh.skin = normalized_mesh(&mut rng, 10, 4).skin;
    let mut frames = random_frames(&mut rng, std::slice::from_ref(&mesh), 3, false);
    for (f, frame) in frames.iter_mut().enumerate() {
        frame[0].blend_weights = vec![0.5, 0.0, 0.25 * f as f32];
    }
    let refusal = build_rig(std::slice::from_ref(&mesh), &frames, &[])
        .unwrap()
        .unwrap_err();
    assert_eq!(
        refusal,
        Refusal::AnimatedBlendShapes {
            mesh: 0,
            shapes: vec![2]
        }
    );
    let message = refusal.message(std::slice::from_ref(&mesh), &|m, s| format!("shape{m}{s}"));
    assert!(message.contains("'shape02'"), "{message}");
    assert!(message.contains("STORAGE_VERTICES"), "{message}");

    // Constant weights (0.5 on shape 0) are part of the rest pose.
    for frame in &mut frames {
        frame[0].blend_weights = vec![0.5, 0.0, 0.0];
    }
    let rig = build_rig(std::slice::from_ref(&mesh), &frames, &[])
        .unwrap()
        .unwrap();
    let bones = encode_float(&rig, &vertex_columns(10));
    let reference = skinned(std::slice::from_ref(&mesh), &frames);
    for f in 0..3 {
        let err = max_error(
            &decode_frame(&bones, f as u32).0,
            reference.frame_positions(f),
        );
        assert!(err < 5e-4, "frame {f}: {err}");
    }
}

#[test]
fn more_than_four_influences_take_eight_and_more_than_eight_are_refused() {
    let mut mesh = random_mesh(&mut Lcg(1), 2, 0, 0, true);
    mesh.skin = Some(SkinBinding {
        bones: vec![0, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        weights: vec![0.2; 5]
            .into_iter()
            .chain([0.0; 3])
            .chain([1.0])
            .chain([0.0; 7])
            .collect(),
        influences: 8,
        bind_count: 5,
    });
    let frames = random_frames(&mut Lcg(2), std::slice::from_ref(&mesh), 2, false);
    let rig = build_rig(std::slice::from_ref(&mesh), &frames, &[])
        .unwrap()
        .unwrap();
    assert_eq!(rig.influences, 8);
    let bones = encode_float(&rig, &vertex_columns(2));
    assert_eq!(bones.skin_texels(), 4);
    let reference = skinned(std::slice::from_ref(&mesh), &frames);
    let err = max_error(&decode_frame(&bones, 1).0, reference.frame_positions(1));
    assert!(err < 1e-4, "{err}");

    // Eight binds that do not sum to 1: the ninth transform (the mesh node) does not fit.
    let mut wide = mesh.clone();
    wide.skin = Some(SkinBinding {
        bones: (0..8).chain(0..8).collect(),
        weights: vec![0.1; 16],
        influences: 8,
        bind_count: 8,
    });
    let frames = random_frames(&mut Lcg(2), std::slice::from_ref(&wide), 2, false);
    let refusal = build_rig(std::slice::from_ref(&wide), &frames, &[])
        .unwrap()
        .unwrap_err();
    assert_eq!(
        refusal,
        Refusal::TooManyInfluences {
            mesh: 0,
            vertex: 0,
            count: 9
        }
    );
}

#[test]
fn bound_columns_of_one_bone_are_the_weighted_sum() {
    // All three vertices on one bone: skinning the blended rest point is exact.
    let mut rng = Lcg(21);
    let mut mesh = random_mesh(&mut rng, 3, 0, 0, true);
    mesh.skin = Some(SkinBinding {
        bones: vec![1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0],
        weights: vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        influences: 4,
        bind_count: 2,
    });
    let meshes = vec![mesh];
    let frames = random_frames(&mut rng, &meshes, 3, false);
    let rig = build_rig(&meshes, &frames, &[]).unwrap().unwrap();
    let weights = [0.2, 0.3, 0.5];
    let columns = [ColumnSource::Bound {
        vertices: [0, 1, 2],
        weights,
    }];
    let bones = encode_float(&rig, &columns);
    let reference = skinned(&meshes, &frames);
    for f in 0..3 {
        let ps = reference.frame_positions(f);
        let want = ps[0] * weights[0] + ps[1] * weights[1] + ps[2] * weights[2];
        let got = decode_column(&bones, f as u32, 0).0;
        assert!(got.distance(want) < 1e-4, "frame {f}: {got} vs {want}");
    }
}

#[test]
fn half_precision_stays_near_the_float_bake() {
    let mut rng = Lcg(13);
    let meshes = vec![normalized_mesh(&mut rng, 60, 4)];
    let frames = random_frames(&mut rng, &meshes, 4, true);
    let reference = skinned(&meshes, &frames);
    let bounds = Bounds::from_points(&reference.positions);
    let rig = build_rig(&meshes, &frames, &[]).unwrap().unwrap();
    let half = EncodingParams::for_bounds(Precision::Half, &bounds, true);
    let bones = encode_bones(&rig, &vertex_columns(60), &half, 0.0).unwrap();
    let diagonal = bounds.size().length();
    for f in 0..4 {
        let err = max_error(
            &decode_frame(&bones, f as u32).0,
            reference.frame_positions(f),
        );
        // Each basis entry and translation within half's step (2^-11 relative): the error grows
        // with the rest positions' reach (here up to about 1.7) and the transform's scale.
        assert!(
            err < 4e-3 * diagonal,
            "frame {f}: {err} of diagonal {diagonal}"
        );
    }
}

#[test]
fn texture_bytes_is_what_encoding_stores() {
    let mut rng = Lcg(17);
    let meshes = vec![normalized_mesh(&mut rng, 25, 4)];
    let frames = random_frames(&mut rng, &meshes, 5, false);
    let rig = build_rig(&meshes, &frames, &[]).unwrap().unwrap();
    for precision in [Precision::Half, Precision::Float] {
        let params = EncodingParams::for_bounds(
            precision,
            &Bounds::from_points(&[Vec3::ZERO, Vec3::ONE]),
            true,
        );
        let bones = encode_bones(&rig, &vertex_columns(25), &params, 0.0).unwrap();
        let want = texture_bytes(precision, rig.palette, 5, 25, rig.influences).unwrap();
        assert_eq!(bones.bones.len() + bones.skin.len(), want);
    }
}

#[test]
fn bad_columns_and_transforms_are_errors() {
    let mut rng = Lcg(19);
    let meshes = vec![normalized_mesh(&mut rng, 4, 4)];
    let mut frames = random_frames(&mut rng, &meshes, 2, false);
    let rig_ok = build_rig(&meshes, &frames, &[]).unwrap().unwrap();
    let params = EncodingParams::for_bounds(Precision::Float, &Bounds::default(), true);
    assert!(encode_bones(&rig_ok, &[], &params, 0.0).is_err());
    assert!(encode_bones(&rig_ok, &[ColumnSource::Vertex(4)], &params, 0.0).is_err());
    frames[1][0].pre.translation.x = f32::NAN;
    assert!(build_rig(&meshes, &frames, &[]).is_err());
}

#[test]
fn layouts_give_a_row_per_frame_and_whole_columns_per_row() {
    let (bones, skin) = layouts(20, 131, 5462, 4).unwrap();
    assert_eq!((bones.width, bones.height), (60, 131));
    // 5462 columns of 3 texels: 5461 fit a 16384-wide row, so two rows of 2731 columns.
    assert_eq!((skin.width, skin.height), (2731 * 3, 2));
    for columns in [1usize, 5461, 5462, 50_000, 1_000_003] {
        for influences in [4, 8] {
            let (_, skin) = layouts(1, 1, columns, influences).unwrap();
            let t = skin_texels(influences);
            assert_eq!(skin.width as usize % t, 0, "whole columns per row");
            assert!(skin.width <= crate::layout::MAX_TEXTURE_SIZE);
            let per_row = skin.width as usize / t;
            assert!(per_row * skin.height as usize >= columns);
            assert!(
                per_row * (skin.height as usize - 1) < columns,
                "no empty row"
            );
        }
    }
    assert!(
        layouts(5462, 1, 1, 4).is_err(),
        "more bone texels than a row takes"
    );
    assert!(layouts(1, 16385, 1, 4).is_err(), "more frames than rows");
}

#[test]
fn packed_influences_and_directions_round_trip() {
    for entry in [0u32, 1, 17, 1023] {
        for w in [0.0f32, 1e-4, 0.25, 0.5, 0.999, 1.0] {
            let v = pack_influence(entry, w);
            assert_eq!(v, v.round(), "an integer, exact in f32");
            let (e, got) = unpack_influence(v);
            assert_eq!(e, entry);
            assert!(
                (got - w).abs() <= 0.5 / 16383.0 + 1e-7,
                "{entry} {w}: {got}"
            );
        }
    }
    let mut rng = Lcg(41);
    for _ in 0..1000 {
        let d = Vec3::new(rng.next() - 0.5, rng.next() - 0.5, rng.next() - 0.5).normalize();
        let got = unpack_direction(pack_direction(d));
        assert!(got.angle_between(d).to_degrees() < 0.06, "{d}: {got}");
    }
}

#[test]
fn weights_a_bone_texture_cannot_store_are_refused() {
    let mut rng = Lcg(43);
    let mut mesh = normalized_mesh(&mut rng, 3, 4);
    if let Some(skin) = &mut mesh.skin {
        skin.weights[0] = 1.5;
    }
    let frames = random_frames(&mut rng, std::slice::from_ref(&mesh), 2, false);
    let refusal = build_rig(std::slice::from_ref(&mesh), &frames, &[])
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(
            refusal,
            Refusal::UnusualWeights {
                mesh: 0,
                vertex: 0,
                ..
            }
        ),
        "{refusal:?}"
    );
}

#[test]
fn bound_columns_keep_the_fewest_influences_within_the_tolerance() {
    let mut rng = Lcg(47);
    let meshes = vec![normalized_mesh(&mut rng, 30, 4)];
    let frames = random_frames(&mut rng, &meshes, 6, true);
    let rig = build_rig(&meshes, &frames, &[]).unwrap().unwrap();
    let columns: Vec<ColumnSource> = (0..10u32)
        .map(|i| ColumnSource::Bound {
            vertices: [i, i + 10, i + 20],
            weights: [0.5, 0.3, 0.2],
        })
        .collect();
    let params = EncodingParams::for_bounds(Precision::Float, &Bounds::default(), true);
    let all = encode_bones(&rig, &columns, &params, 0.0).unwrap();
    let used = |b: &EncodedBones| {
        (0..10u32)
            .map(|c| {
                let at = (c as usize * b.skin_texels() as usize + 1) * SKIN_TEXEL_BYTES;
                (0..4)
                    .filter(|k| {
                        let v = f32::from_le_bytes(
                            b.skin[at + k * 4..at + k * 4 + 4].try_into().unwrap(),
                        );
                        unpack_influence(v).1 != 0.0
                    })
                    .count()
            })
            .sum::<usize>()
    };
    for tolerance in [1.0f32, 10.0] {
        let fewer = encode_bones(&rig, &columns, &params, tolerance).unwrap();
        assert!(
            used(&fewer) < used(&all),
            "{tolerance}: fewer influences kept"
        );
        for f in 0..6 {
            let err = max_error(&decode_frame(&fewer, f).0, &decode_frame(&all, f).0);
            // Within the tolerance, and the 14-bit weights' rounding.
            assert!(err <= tolerance + 1e-3, "{tolerance} frame {f}: {err}");
        }
    }
}
