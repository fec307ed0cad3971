use glam::{Affine3A, Vec3};

use super::*;
use crate::bake::encode::encode;
use crate::bake::skin::tests::{random_mesh, Lcg};
use crate::bake::skin::{skin_frames, SkinBinding};
use crate::clip::{plan_clips, total_frames, ClipSpec};

fn label(f: usize) -> String {
    format!("clip 'walk' frame {f}")
}

/// Clips of `counts` frames each (looped, so each stores exactly its count).
fn clips(counts: &[u32]) -> Vec<Clip> {
    let specs: Vec<ClipSpec> = counts
        .iter()
        .enumerate()
        .map(|(i, &n)| ClipSpec {
            name: format!("c{i}"),
            duration: n as f32,
            fps: 1.0,
            looped: true,
        })
        .collect();
    plan_clips(&specs).unwrap()
}

/// `count` random poses of `meshes` (some blend weights below Godot's threshold).
fn random_frames(rng: &mut Lcg, meshes: &[MeshSource], count: usize) -> Vec<Vec<MeshFrame>> {
    (0..count)
        .map(|_| {
            meshes
                .iter()
                .map(|m| MeshFrame {
                    pre: rng.transform(),
                    bones: match &m.skin {
                        Some(skin) => (0..skin.bind_count).map(|_| rng.transform()).collect(),
                        None => Vec::new(),
                    },
                    blend_weights: (0..m.blend_shapes.len())
                        .map(|_| match rng.next() {
                            r if r < 0.2 => 5e-5,
                            r => r * 2.4 - 0.7,
                        })
                        .collect(),
                })
                .collect()
        })
        .collect()
}

fn reference(
    meshes: &[MeshSource],
    frames: &[Vec<MeshFrame>],
    clips: &[Clip],
    precision: Precision,
    normals: bool,
) -> Result<EncodedVat> {
    encode(
        &skin_frames(meshes, frames, &label)?,
        clips,
        precision,
        normals,
    )
}

/// The fused bake gives exactly the bytes (and bounds, parameters) of skinning then encoding:
/// skinned meshes with 4 and 8 influences, rigid ones, both blend modes, meshes without normals,
/// both precisions, with and without normals, layouts with and without padding.
#[test]
fn fused_bake_matches_skin_then_encode() {
    let mut rng = Lcg(23);
    let cases = [
        (
            vec![(300, 4, 0, true), (200, 8, 2, true), (100, 0, 0, true)],
            vec![4, 5],
        ),
        (
            vec![(120, 0, 3, true), (80, 4, 1, false), (60, 0, 0, false)],
            vec![7],
        ),
        (vec![(257, 8, 0, true)], vec![1, 2, 3]),
        (vec![(33, 0, 0, true)], vec![3]),
        (vec![(5000, 4, 1, true), (1000, 8, 0, false)], vec![2, 3]),
    ];
    for (mesh_specs, counts) in cases {
        let meshes: Vec<MeshSource> = mesh_specs
            .iter()
            .map(|&(n, infl, shapes, nrm)| random_mesh(&mut rng, n, infl, shapes, nrm))
            .collect();
        let clips = clips(&counts);
        let frames = random_frames(&mut rng, &meshes, total_frames(&clips) as usize);
        for precision in [Precision::Half, Precision::Float] {
            for normals in [true, false] {
                let expected = reference(&meshes, &frames, &clips, precision, normals).unwrap();
                let got = skin_encode(&meshes, &frames, &label, &clips, precision, normals);
                assert!(
                    got.as_ref() == Ok(&expected),
                    "{mesh_specs:?} {counts:?} {precision:?} normals {normals}"
                );
            }
        }
    }
}

/// Encoding into used memory overwrites all of it, padding included (18,003 texels: two rows).
#[test]
fn encode_into_overwrites_every_byte() {
    let mut rng = Lcg(5);
    let meshes = vec![random_mesh(&mut rng, 6001, 4, 1, true)];
    let clips = clips(&[3]);
    let frames = random_frames(&mut rng, &meshes, 3);
    let expected = reference(&meshes, &frames, &clips, Precision::Half, true).unwrap();
    let encoder =
        SkinEncoder::new(&meshes, &frames, &label, &clips, Precision::Half, true).unwrap();
    assert!(encoder.layout.texel_count() > encoder.layout.used_texels());
    let mut positions = vec![0xa5u8; encoder.position_bytes()];
    let mut normals = vec![0x5au8; encoder.normal_bytes()];
    encoder.encode_into(&mut positions, &mut normals);
    assert_eq!(encoder.into_encoded(positions, normals), expected);
}

/// The normals alone are the bytes the full pass writes, into used memory too (padding zeroed).
#[test]
fn encode_normals_into_writes_the_normal_texture_alone() {
    let mut rng = Lcg(6);
    let meshes = vec![random_mesh(&mut rng, 6001, 4, 1, true)];
    let clips = clips(&[3]);
    let frames = random_frames(&mut rng, &meshes, 3);
    let expected = reference(&meshes, &frames, &clips, Precision::Float, true).unwrap();
    let encoder =
        SkinEncoder::new(&meshes, &frames, &label, &clips, Precision::Float, true).unwrap();
    let mut normals = vec![0x5au8; encoder.normal_bytes()];
    encoder.encode_normals_into(&mut normals);
    assert_eq!(normals, expected.normals);
}

/// Meshes, their frames, clips.
type Bake = (Vec<MeshSource>, Vec<Vec<MeshFrame>>, Vec<Clip>);

/// Every error of skinning then encoding, reported the same way (the lowest offending frame).
#[test]
fn fused_bake_reports_the_same_errors() {
    let arm = MeshSource {
        name: "Arm".into(),
        positions: vec![Vec3::X, Vec3::Y],
        normals: vec![Vec3::X, Vec3::Y],
        skin: Some(SkinBinding {
            bones: vec![0, 1, 0, 0, 1, 0, 0, 0],
            weights: vec![0.5, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
            influences: 4,
            bind_count: 2,
        }),
        blend_shapes: Vec::new(),
        blend_mode: crate::bake::skin::BlendMode::Normalized,
    };
    let meshes = [arm];
    let ok = MeshFrame {
        pre: Affine3A::IDENTITY,
        bones: vec![Affine3A::IDENTITY; 2],
        blend_weights: vec![],
    };
    let huge = MeshFrame {
        pre: Affine3A::from_scale(Vec3::splat(1e30)),
        bones: vec![Affine3A::from_scale(Vec3::splat(1e30)); 2],
        blend_weights: vec![],
    };
    let mut infinite = ok.clone();
    infinite.bones[1] = Affine3A::from_translation(Vec3::splat(f32::INFINITY));
    let five = clips(&[5]);
    let cases: Vec<Bake> = vec![
        // Non-finite results in frames 2 and 4: frame 2 is reported.
        (
            meshes.to_vec(),
            vec![
                vec![ok.clone()],
                vec![ok.clone()],
                vec![huge.clone()],
                vec![ok.clone()],
                vec![huge.clone()],
            ],
            five.clone(),
        ),
        // A non-finite transform outranks a non-finite result in an earlier frame.
        (
            meshes.to_vec(),
            vec![
                vec![huge.clone()],
                vec![ok.clone()],
                vec![infinite],
                vec![ok.clone()],
                vec![ok.clone()],
            ],
            five.clone(),
        ),
        // A missing mesh entry.
        (
            meshes.to_vec(),
            vec![vec![ok.clone()], vec![]],
            five.clone(),
        ),
        // Wrong bone count.
        (
            meshes.to_vec(),
            vec![vec![MeshFrame {
                bones: vec![Affine3A::IDENTITY],
                ..ok.clone()
            }]],
            five.clone(),
        ),
        // Bad static data, no mesh at all.
        (Vec::new(), vec![vec![]], five.clone()),
        // Encoding's errors: no clips, frames that disagree with the clips, and a skinning
        // error that outranks them.
        (meshes.to_vec(), vec![vec![ok.clone()]], Vec::new()),
        (meshes.to_vec(), vec![vec![ok.clone()]; 4], five.clone()),
        (meshes.to_vec(), vec![vec![huge]], Vec::new()),
    ];
    for (meshes, frames, clips) in cases {
        for normals in [true, false] {
            let expected = reference(&meshes, &frames, &clips, Precision::Half, normals);
            let got = skin_encode(&meshes, &frames, &label, &clips, Precision::Half, normals);
            assert!(expected.is_err());
            assert_eq!(got, expected, "{} frames", frames.len());
        }
    }
}
