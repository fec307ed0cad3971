use std::f32::consts::FRAC_PI_2;

use glam::{Affine3A, Quat, Vec3};

use super::*;
use crate::bake::skin_math::{normal_matrix, orthonormalized, BLEND_WEIGHT_EPSILON};

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

// --- the fast path against the step-by-step formulas ---------------------------------------

/// The module docs' steps 1-3 one vertex at a time, exactly as written there (the
/// implementation this module had before the folded fast path): the reference.
fn reference_vertex(mesh: &MeshSource, mf: &MeshFrame, v: usize) -> (Vec3, Vec3) {
    use glam::Vec3A;
    let p_src = Vec3A::from(mesh.positions[v]);
    let n_src = mesh.normals.get(v).map_or(Vec3A::Y, |&n| n.into());
    let (mut p, mut n) = (p_src, n_src);
    for (shape, &w) in mesh.blend_shapes.iter().zip(&mf.blend_weights) {
        if w.abs() <= BLEND_WEIGHT_EPSILON {
            continue;
        }
        let sp = Vec3A::from(shape.positions[v]);
        let sn = shape.normals.get(v).map(|&n| Vec3A::from(n));
        match mesh.blend_mode {
            BlendMode::Normalized => {
                p += w * (sp - p_src);
                n += sn.map_or(Vec3A::ZERO, |sn| w * (sn - n_src));
            }
            BlendMode::Relative => {
                p += w * sp;
                n += sn.map_or(Vec3A::ZERO, |sn| w * sn);
            }
        }
    }
    if let Some(skin) = &mesh.skin {
        let (mut dp, mut dn) = (Vec3A::ZERO, Vec3A::ZERO);
        for k in v * skin.influences..(v + 1) * skin.influences {
            let w = skin.weights[k];
            if w < f32::EPSILON {
                continue;
            }
            let bone = mf.bones[skin.bones[k] as usize];
            dp += w * (bone.transform_point3a(p) - p);
            dn += w * (orthonormalized(bone.matrix3) * n - n);
        }
        (p, n) = (p + dp, (n + dn).normalize_or_zero());
    }
    let normal = if mesh.normals.is_empty() {
        Vec3A::Y
    } else {
        (normal_matrix(mf.pre.matrix3) * n).normalize_or(Vec3A::Y)
    };
    (mf.pre.transform_point3a(p).into(), normal.into())
}

/// Deterministic pseudo-random numbers in [0, 1).
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    pub(crate) fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    fn vec(&mut self, scale: f32) -> Vec3 {
        Vec3::new(self.next() - 0.5, self.next() - 0.5, self.next() - 0.5) * 2.0 * scale
    }

    /// Rotation, non-uniform (sometimes mirrored) scale, a little shear, translation.
    pub(crate) fn transform(&mut self) -> Affine3A {
        let rot = Quat::from_scaled_axis(self.vec(3.0));
        let mut scale = Vec3::ONE + self.vec(0.4);
        if self.next() < 0.2 {
            scale.x = -scale.x;
        }
        let shear = glam::Mat3::from_cols(Vec3::X, Vec3::Y + self.vec(0.1), Vec3::Z);
        let m = glam::Mat3::from_quat(rot) * glam::Mat3::from_diagonal(scale) * shear;
        Affine3A::from_mat3_translation(m, self.vec(2.0))
    }
}

/// A mesh of `n` vertices: skinned with `influences` slots (some weights zero or tiny, with
/// garbage bone indices there) when `influences > 0`, with `shapes` blend shapes.
pub(crate) fn random_mesh(
    rng: &mut Lcg,
    n: usize,
    influences: usize,
    shapes: usize,
    with_normals: bool,
) -> MeshSource {
    let positions: Vec<Vec3> = (0..n).map(|_| rng.vec(1.0)).collect();
    let normals: Vec<Vec3> = if with_normals {
        (0..n).map(|_| rng.vec(1.0).normalize_or(Vec3::Y)).collect()
    } else {
        Vec::new()
    };
    let blend_shapes = (0..shapes)
        .map(|s| BlendShape {
            positions: positions.iter().map(|&p| p + rng.vec(0.1)).collect(),
            // Every other shape leaves normals alone.
            normals: if s.is_multiple_of(2) && with_normals {
                (0..n).map(|_| rng.vec(1.0).normalize_or(Vec3::Y)).collect()
            } else {
                Vec::new()
            },
        })
        .collect();
    let skin = (influences > 0).then(|| {
        let (mut bones, mut weights) = (Vec::new(), Vec::new());
        for _ in 0..n {
            for k in 0..influences {
                let r = rng.next();
                let (bone, w) = match k {
                    0 => ((rng.next() * 7.0) as u32, 0.2 + rng.next()),
                    _ if r < 0.3 => (999, 0.0),
                    _ if r < 0.4 => (999, 1e-8),
                    _ => ((rng.next() * 7.0) as u32, rng.next()),
                };
                bones.push(bone);
                weights.push(w);
            }
            // Most vertices' weights sum to one, some not (Godot then keeps the remainder at rest).
            let sum: f32 = weights[weights.len() - influences..].iter().sum();
            if rng.next() < 0.8 {
                let len = weights.len();
                weights[len - influences..]
                    .iter_mut()
                    .for_each(|w| *w /= sum);
            }
        }
        SkinBinding {
            bones,
            weights,
            influences,
            bind_count: 7,
        }
    });
    MeshSource {
        name: format!("random{n}"),
        positions,
        normals,
        skin,
        blend_shapes,
        blend_mode: if shapes.is_multiple_of(2) {
            BlendMode::Normalized
        } else {
            BlendMode::Relative
        },
    }
}

#[test]
fn fast_path_matches_the_step_by_step_reference() {
    let mut rng = Lcg(11);
    let meshes = vec![
        random_mesh(&mut rng, 300, 4, 0, true),
        random_mesh(&mut rng, 200, 8, 2, true),
        random_mesh(&mut rng, 100, 0, 0, true),
        random_mesh(&mut rng, 120, 0, 3, true),
        random_mesh(&mut rng, 80, 4, 1, false),
        random_mesh(&mut rng, 60, 0, 0, false),
    ];
    let frames: Vec<Vec<MeshFrame>> = (0..9)
        .map(|_| {
            meshes
                .iter()
                .map(|m| {
                    let bones = match &m.skin {
                        Some(skin) => (0..skin.bind_count).map(|_| rng.transform()).collect(),
                        None => Vec::new(),
                    };
                    // Some weights below Godot's threshold, some negative, some above one.
                    let blend_weights = (0..m.blend_shapes.len())
                        .map(|_| match rng.next() {
                            r if r < 0.2 => 5e-5,
                            r => r * 2.4 - 0.7,
                        })
                        .collect();
                    frame(rng.transform(), bones, blend_weights)
                })
                .collect()
        })
        .collect();
    let out = skin_frames(&meshes, &frames, &label).unwrap();
    let (mut worst_p, mut worst_n) = (0.0f32, 0.0f32);
    for (f, frame) in frames.iter().enumerate() {
        let (ps, ns) = (out.frame_positions(f), out.frame_normals(f));
        let mut i = 0;
        for (mesh, mf) in meshes.iter().zip(frame) {
            for v in 0..mesh.positions.len() {
                let (p, n) = reference_vertex(mesh, mf, v);
                let scale = 1.0 + p.abs().max_element();
                worst_p = worst_p.max((ps[i] - p).abs().max_element() / scale);
                worst_n = worst_n.max((ns[i] - n).abs().max_element());
                if mesh.normals.is_empty() {
                    assert_eq!(ns[i], Vec3::Y);
                }
                i += 1;
            }
        }
    }
    // Only f32 rounding separates the two: a few ulps of the magnitudes involved.
    assert!(
        worst_p < 2e-6,
        "positions differ by up to {worst_p} (relative)"
    );
    assert!(worst_n < 2e-6, "normals differ by up to {worst_n}");
}

#[test]
fn tangents_skin_as_normals_do_and_ignore_blend_shapes() {
    let mesh = MeshSource {
        name: "m".into(),
        positions: vec![Vec3::ZERO, Vec3::X],
        normals: vec![Vec3::Y, Vec3::Y],
        skin: None,
        blend_shapes: vec![BlendShape {
            positions: vec![Vec3::ONE, Vec3::ONE],
            normals: vec![Vec3::Z, Vec3::Z],
        }],
        blend_mode: BlendMode::Relative,
    };
    let tangents = vec![vec![Vec3::X, Vec3::Z]];
    let t = tangent_sources(std::slice::from_ref(&mesh), &tangents);
    assert_eq!(t[0].normals, tangents[0]);
    assert_eq!(t[0].positions, mesh.positions);
    assert!(t[0].blend_shapes[0].normals.is_empty());
    assert_eq!(
        t[0].blend_shapes[0].positions,
        mesh.blend_shapes[0].positions
    );
    // A tangent list of the wrong length leaves +X.
    let short = tangent_sources(std::slice::from_ref(&mesh), &[vec![Vec3::Z]]);
    assert_eq!(short[0].normals, vec![Vec3::X, Vec3::X]);
    // Turned by a rigid frame's rotation exactly as a normal is.
    let frame = MeshFrame {
        pre: Affine3A::from_quat(Quat::from_rotation_y(FRAC_PI_2)),
        bones: Vec::new(),
        blend_weights: vec![1.0],
    };
    let skinned = skin_frames(&t, &[vec![frame]], &|f| format!("frame {f}")).expect("skins");
    assert!(
        close(skinned.normals[0], Vec3::new(0.0, 0.0, -1.0)),
        "{:?}",
        skinned.normals[0]
    );
    assert!(
        close(skinned.normals[1], Vec3::X),
        "{:?}",
        skinned.normals[1]
    );
}
