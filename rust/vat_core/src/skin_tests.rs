use std::f32::consts::FRAC_PI_2;

use glam::{Affine3A, Quat, Vec3};

use super::*;

const TOL: f32 = 1e-5;

fn close(a: Vec3, b: Vec3) -> bool {
    (a - b).abs().max_element() < TOL
}

fn rigid(name: &str, positions: Vec<Vec3>, normals: Vec<Vec3>) -> MeshSource {
    MeshSource {
        name: name.into(),
        positions,
        normals,
        skin: None,
        blend_shapes: Vec::new(),
        blend_mode: BlendMode::Normalized,
    }
}

/// One vertex at (1, 0, 0) with normal +X, weighted to bones 0 and 1.
fn two_bone_mesh(w0: f32, w1: f32) -> MeshSource {
    let mut mesh = rigid("Arm", vec![Vec3::X], vec![Vec3::X]);
    mesh.skin = Some(SkinBinding {
        bones: vec![0, 1, 0, 0],
        weights: vec![w0, w1, 0.0, 0.0],
        influences: 4,
        bind_count: 2,
    });
    mesh
}

fn frame(pre: Affine3A, bones: Vec<Affine3A>, blend_weights: Vec<f32>) -> MeshFrame {
    MeshFrame {
        pre,
        bones,
        blend_weights,
    }
}

fn label(f: usize) -> String {
    format!("clip 'walk' frame {f}")
}

fn bake_one(mesh: MeshSource, mf: MeshFrame) -> (Vec3, Vec3) {
    let out = skin_frames(&[mesh], &[vec![mf]], &label).unwrap();
    (out.positions[0], out.normals[0])
}

#[test]
fn rigid_mesh_follows_its_node_transform() {
    // Rotate 90 degrees about Y (X -> -Z), then move by (0, 2, 0).
    let pre = Affine3A::from_rotation_translation(Quat::from_rotation_y(FRAC_PI_2), Vec3::Y * 2.0);
    let (p, n) = bake_one(
        rigid("Hat", vec![Vec3::X], vec![Vec3::X]),
        frame(pre, vec![], vec![]),
    );
    assert!(close(p, Vec3::new(0.0, 2.0, -1.0)), "{p}");
    assert!(close(n, Vec3::NEG_Z), "{n}");
}

#[test]
fn single_bone_translation() {
    let bones = vec![
        Affine3A::from_translation(Vec3::new(1.0, 0.0, 0.0)),
        Affine3A::IDENTITY,
    ];
    let (p, n) = bake_one(
        two_bone_mesh(1.0, 0.0),
        frame(Affine3A::IDENTITY, bones, vec![]),
    );
    assert!(close(p, Vec3::new(2.0, 0.0, 0.0)), "{p}");
    assert!(close(n, Vec3::X), "{n}");
}

#[test]
fn two_bones_blend_linearly() {
    // B1 rotates 90 degrees about Z: (1,0,0) -> (0,1,0). Half/half gives (0.5, 0.5, 0) and the
    // normal halfway between +X and +Y, renormalized.
    let bones = vec![Affine3A::IDENTITY, Affine3A::from_rotation_z(FRAC_PI_2)];
    let (p, n) = bake_one(
        two_bone_mesh(0.5, 0.5),
        frame(Affine3A::IDENTITY, bones, vec![]),
    );
    assert!(close(p, Vec3::new(0.5, 0.5, 0.0)), "{p}");
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!(close(n, Vec3::new(h, h, 0.0)), "{n}");
}

#[test]
fn bone_normals_use_the_orthonormalized_basis() {
    // A bone that scales X by 2 and shears Y into X: positions see the full matrix, normals only
    // its orthonormalized basis, which here is the identity.
    let m = glam::Mat3::from_cols(Vec3::X * 2.0, Vec3::X + Vec3::Y, Vec3::Z);
    let bones = vec![
        Affine3A::from_mat3_translation(m, Vec3::ZERO),
        Affine3A::IDENTITY,
    ];
    let (p, n) = bake_one(
        two_bone_mesh(1.0, 0.0),
        frame(Affine3A::IDENTITY, bones, vec![]),
    );
    assert!(close(p, Vec3::new(2.0, 0.0, 0.0)), "{p}");
    assert!(close(n, Vec3::X), "{n}");
    let o = orthonormalized(glam::Mat3A::from_cols(
        Vec3::new(2.0, 0.0, 0.0).into(),
        Vec3::new(1.0, 3.0, 0.0).into(),
        Vec3::new(1.0, 1.0, 5.0).into(),
    ));
    assert!(close(o.x_axis.into(), Vec3::X) && close(o.y_axis.into(), Vec3::Y));
    assert!(close(o.z_axis.into(), Vec3::Z));
}

#[test]
fn node_normals_use_the_inverse_transpose() {
    // pre scales X by 2: normal (1,1,0)/sqrt2 -> (0.5, 1, 0) normalized = (1, 2, 0)/sqrt5.
    let pre = Affine3A::from_scale(Vec3::new(2.0, 1.0, 1.0));
    let mesh = rigid(
        "M",
        vec![Vec3::ONE],
        vec![Vec3::new(1.0, 1.0, 0.0).normalize()],
    );
    let (p, n) = bake_one(mesh, frame(pre, vec![], vec![]));
    assert!(close(p, Vec3::new(2.0, 1.0, 1.0)));
    assert!(close(n, Vec3::new(1.0, 2.0, 0.0) / 5f32.sqrt()), "{n}");
    // A mirror keeps normals pointing outward: +X under scale (-1, 1, 1) becomes -X.
    let mirror = Affine3A::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    let (_, n) = bake_one(
        rigid("M", vec![Vec3::X], vec![Vec3::X]),
        frame(mirror, vec![], vec![]),
    );
    assert!(close(n, Vec3::NEG_X), "{n}");
}

#[test]
fn missing_or_zero_normals_bake_as_up() {
    let rot = Affine3A::from_rotation_x(1.0);
    let (_, n) = bake_one(
        rigid("A", vec![Vec3::X], vec![]),
        frame(rot, vec![], vec![]),
    );
    assert_eq!(n, Vec3::Y);
    let (_, n) = bake_one(
        rigid("B", vec![Vec3::X], vec![Vec3::ZERO]),
        frame(rot, vec![], vec![]),
    );
    assert_eq!(n, Vec3::Y);
}

fn shaped(mode: BlendMode) -> MeshSource {
    let mut mesh = rigid("Face", vec![Vec3::ONE], vec![Vec3::Z]);
    mesh.blend_mode = mode;
    mesh.blend_shapes = vec![
        BlendShape {
            positions: vec![Vec3::new(2.0, 1.0, 1.0)],
            normals: vec![Vec3::X],
        },
        BlendShape {
            positions: vec![Vec3::new(1.0, 3.0, 1.0)],
            normals: vec![],
        },
    ];
    mesh
}

#[test]
fn normalized_blend_shapes_add_deltas_from_source() {
    // 0.5 * ((2,1,1) - (1,1,1)) + 0.25 * ((1,3,1) - (1,1,1)) = (0.5, 0.5, 0).
    let mf = frame(Affine3A::IDENTITY, vec![], vec![0.5, 0.25]);
    let (p, n) = bake_one(shaped(BlendMode::Normalized), mf);
    assert!(close(p, Vec3::new(1.5, 1.5, 1.0)), "{p}");
    // n = Z + 0.5 * (X - Z) = (0.5, 0, 0.5) -> normalized.
    assert!(close(n, Vec3::new(1.0, 0.0, 1.0).normalize()), "{n}");
}

#[test]
fn relative_blend_shapes_add_shapes_as_deltas() {
    // (1,1,1) + 0.5 * (2,1,1) + 0.25 * (1,3,1) = (2.25, 2.25, 1.75).
    let mf = frame(Affine3A::IDENTITY, vec![], vec![0.5, 0.25]);
    let (p, _) = bake_one(shaped(BlendMode::Relative), mf);
    assert!(close(p, Vec3::new(2.25, 2.25, 1.75)), "{p}");
}

#[test]
fn tiny_blend_weights_are_skipped() {
    let mf = frame(Affine3A::IDENTITY, vec![], vec![1e-4, -1e-4]);
    let (p, _) = bake_one(shaped(BlendMode::Relative), mf);
    assert_eq!(p, Vec3::ONE);
}

#[test]
fn tiny_bone_weights_are_skipped() {
    // Weight below f32::EPSILON on a far-away bone has no effect, even with a bad index.
    let mut mesh = two_bone_mesh(1.0, 1e-8);
    mesh.skin.as_mut().unwrap().bones[1] = 99;
    let bones = vec![Affine3A::IDENTITY, Affine3A::IDENTITY];
    let (p, _) = bake_one(mesh, frame(Affine3A::IDENTITY, bones, vec![]));
    assert_eq!(p, Vec3::X);
}

#[test]
fn meshes_concatenate_frame_major() {
    let meshes = [
        rigid("A", vec![Vec3::ZERO, Vec3::X], vec![]),
        rigid("B", vec![Vec3::Z], vec![]),
    ];
    let frames: Vec<Vec<MeshFrame>> = (0..40)
        .map(|f| {
            let pre = Affine3A::from_translation(Vec3::Y * f as f32);
            vec![
                frame(pre, vec![], vec![]),
                frame(Affine3A::IDENTITY, vec![], vec![]),
            ]
        })
        .collect();
    let out = skin_frames(&meshes, &frames, &label).unwrap();
    assert_eq!((out.vertex_count, out.frame_count), (3, 40));
    for f in 0..40 {
        let y = f as f32;
        let expect = [Vec3::new(0.0, y, 0.0), Vec3::new(1.0, y, 0.0), Vec3::Z];
        assert_eq!(out.frame_positions(f), &expect);
        assert_eq!(out.frame_normals(f), &[Vec3::Y; 3]);
    }
    assert_eq!(skin_frames(&meshes, &frames, &label).unwrap(), out);
}

#[test]
fn validate_reports_bad_static_data() {
    assert_eq!(validate(&[]), Err(VatError::NoMeshes));
    assert_eq!(
        validate(&[rigid("E", vec![], vec![])]),
        Err(VatError::NoMeshes)
    );
    let bad = rigid("N", vec![Vec3::ZERO; 3], vec![Vec3::Y; 2]);
    assert_eq!(
        validate(&[bad]),
        Err(VatError::MismatchedArray {
            mesh: "N".into(),
            what: "normals",
            expected: 3,
            got: 2
        })
    );
    let mut far = two_bone_mesh(0.5, 0.5);
    far.skin.as_mut().unwrap().bones[1] = 2;
    assert_eq!(
        validate(&[far]),
        Err(VatError::BoneOutOfRange {
            mesh: "Arm".into(),
            vertex: 0,
            bone: 2,
            bind_count: 2
        })
    );
    let mut short = two_bone_mesh(1.0, 0.0);
    short.skin.as_mut().unwrap().weights.pop();
    assert!(matches!(
        validate(&[short]),
        Err(VatError::MismatchedArray {
            what: "bone weights",
            ..
        })
    ));
    let mut six = two_bone_mesh(1.0, 0.0);
    six.skin.as_mut().unwrap().influences = 6;
    assert!(matches!(
        validate(&[six]),
        Err(VatError::MismatchedArray {
            expected: 8,
            got: 6,
            ..
        })
    ));
    let nan = rigid("X", vec![Vec3::new(0.0, f32::NAN, 0.0)], vec![]);
    assert!(matches!(validate(&[nan]), Err(VatError::NonFinite { .. })));
}

#[test]
fn skin_frames_reports_bad_frames_with_labels() {
    let meshes = [two_bone_mesh(1.0, 0.0)];
    let ok = frame(Affine3A::IDENTITY, vec![Affine3A::IDENTITY; 2], vec![]);
    let frames = vec![vec![ok.clone()], vec![]];
    assert_eq!(
        skin_frames(&meshes, &frames, &label),
        Err(VatError::FrameMismatch {
            frame: 1,
            expected_meshes: 1,
            got: 0
        })
    );
    let one_bone = frame(Affine3A::IDENTITY, vec![Affine3A::IDENTITY], vec![]);
    assert_eq!(
        skin_frames(&meshes, &[vec![one_bone]], &label),
        Err(VatError::MismatchedArray {
            mesh: "Arm".into(),
            what: "bone transforms",
            expected: 2,
            got: 1
        })
    );
    let mut nan = ok.clone();
    nan.bones[1] = Affine3A::from_translation(Vec3::splat(f32::INFINITY));
    let frames = vec![
        vec![ok.clone()],
        vec![ok.clone()],
        vec![ok.clone()],
        vec![nan],
    ];
    let err = skin_frames(&meshes, &frames, &label).unwrap_err();
    assert_eq!(
        err.to_string(),
        "transform of mesh 'Arm' at clip 'walk' frame 3 is not finite (NaN or infinity)"
    );
    // Finite inputs that overflow are caught on the result.
    let huge = frame(
        Affine3A::from_scale(Vec3::splat(1e30)),
        vec![Affine3A::from_scale(Vec3::splat(1e30)); 2],
        vec![],
    );
    let err = skin_frames(&meshes, &[vec![ok], vec![huge]], &label).unwrap_err();
    assert_eq!(
        err,
        VatError::NonFinite {
            what: "skinned vertex 0 of mesh 'Arm' at clip 'walk' frame 1".into()
        }
    );
}

#[test]
fn bounds_of_points() {
    let b = bounds_of(&[Vec3::new(1.0, 2.0, 3.0), Vec3::new(-1.0, 0.0, 5.0)]);
    assert_eq!(
        (b.min, b.max),
        (Vec3::new(-1.0, 0.0, 3.0), Vec3::new(1.0, 2.0, 5.0))
    );
}
