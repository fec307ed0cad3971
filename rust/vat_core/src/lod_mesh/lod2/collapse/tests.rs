//! The manifold-safe collapses on tubes: thin ones down to a tetrahedron, joints kept by bone
//! centres or by a pose that bends them.

use super::*;
use crate::lod_mesh::lod2::manifold::indices_closed_manifold;

/// An open-ended tube closed by two fan caps: `rings` rings of `sides` vertices.
fn tube(sides: u32, rings: u32, radius: f32) -> Mesh {
    let mut positions = Vec::new();
    for r in 0..rings {
        for s in 0..sides {
            let a = std::f32::consts::TAU * s as f32 / sides as f32;
            positions.push(Vec3::new(radius * a.cos(), r as f32, radius * a.sin()));
        }
    }
    let (bottom, top) = (positions.len() as u32, positions.len() as u32 + 1);
    positions.push(Vec3::new(0.0, -0.5, 0.0));
    positions.push(Vec3::new(0.0, rings as f32 - 0.5, 0.0));
    let id = |r: u32, s: u32| r * sides + s % sides;
    let mut indices = Vec::new();
    for s in 0..sides {
        for r in 0..rings - 1 {
            indices.extend([id(r, s), id(r + 1, s), id(r + 1, s + 1)]);
            indices.extend([id(r, s), id(r + 1, s + 1), id(r, s + 1)]);
        }
        indices.extend([bottom, id(0, s), id(0, s + 1)]);
        indices.extend([top, id(rings - 1, s + 1), id(rings - 1, s)]);
    }
    Mesh { positions, indices }
}

#[test]
fn a_thin_tube_shrinks_to_the_target_and_stays_manifold() {
    let mesh = tube(4, 30, 0.05);
    assert!(indices_closed_manifold(&mesh.indices, mesh.positions.len()));
    let centres = vec![Vec3::ZERO; mesh.positions.len()];
    for target in [200, 60, 20, 8] {
        let out = collapse_to(&mesh, &centres, 0.0, &[], target);
        assert!(
            indices_closed_manifold(&out.indices, out.positions.len()),
            "{target}"
        );
        assert!(
            out.indices.len() / 3 <= target,
            "{} > {target}",
            out.indices.len() / 3
        );
    }
    // A tetrahedron (4 triangles) is as far as a closed mesh goes.
    let out = collapse_to(&mesh, &centres, 0.0, &[], 1);
    assert_eq!(out.indices.len() / 3, 4);
    assert!(indices_closed_manifold(&out.indices, out.positions.len()));
}

#[test]
fn bone_centres_keep_a_ring_at_the_joint() {
    let mesh = tube(8, 21, 0.5);
    // Lower half on one bone, upper half on another, far apart.
    let centres: Vec<Vec3> = mesh
        .positions
        .iter()
        .map(|p| Vec3::new(0.0, if p.y < 10.0 { 0.0 } else { 100.0 }, 0.0))
        .collect();
    // The tallest triangle across the joint (between y = 9 and y = 10).
    let spread = |out: &Mesh| {
        out.indices
            .chunks_exact(3)
            .map(|t| [t[0], t[1], t[2]].map(|v| out.positions[v as usize].y))
            .filter(|y| y.iter().any(|&y| y < 9.5) && y.iter().any(|&y| y > 9.5))
            .map(|y| {
                y.iter().copied().fold(f32::MIN, f32::max)
                    - y.iter().copied().fold(f32::MAX, f32::min)
            })
            .fold(0.0, f32::max)
    };
    let out = collapse_to(&mesh, &centres, 1.0, &[], 64);
    assert!(indices_closed_manifold(&out.indices, out.positions.len()));
    assert!(spread(&out) < 4.0, "{}", spread(&out));
    // Without the bone term the same budget stretches triangles far across the joint.
    let plain = collapse_to(&mesh, &centres, 0.0, &[], 64);
    assert!(spread(&plain) > 8.0, "{}", spread(&plain));
}

#[test]
fn a_pose_that_bends_the_tube_keeps_a_ring_at_the_bend() {
    // Straight in the reference pose; the pose bends it 90 degrees at y = 10. With no bone
    // term, only the pose tells the collapses where the joint is.
    let mesh = tube(8, 21, 0.5);
    let centres = vec![Vec3::ZERO; mesh.positions.len()];
    let turn = glam::Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let pivot = Vec3::new(0.0, 10.0, 0.0);
    let bent: Vec<Vec3> = mesh
        .positions
        .iter()
        .map(|&p| {
            if p.y > 10.0 {
                pivot + turn * (p - pivot)
            } else {
                p
            }
        })
        .collect();
    // Largest distance of a bent-pose vertex from the collapsed mesh in that pose, over the
    // bent part's surface near the bend (the rings from y = 9 to 13).
    let gap = |out: &Mesh, kept: &[u32]| -> f32 {
        let posed: Vec<Vec3> = kept.iter().map(|&k| bent[k as usize]).collect();
        let tris: Vec<[Vec3; 3]> = out
            .indices
            .chunks_exact(3)
            .map(|t| [0, 1, 2].map(|k| posed[t[k] as usize]))
            .collect();
        let bvh = super::super::nearest::TriangleBvh::new(tris, 0.0);
        mesh.positions
            .iter()
            .zip(&bent)
            .filter(|(p, _)| (9.0..=13.0).contains(&p.y))
            .map(|(_, &q)| bvh.nearest(q).unwrap().distance)
            .fold(0.0, f32::max)
    };
    let (posed, kept) = collapse_to_mapped(&mesh, &centres, 0.0, std::slice::from_ref(&bent), 64);
    assert!(indices_closed_manifold(
        &posed.indices,
        posed.positions.len()
    ));
    assert!(posed.indices.len() / 3 <= 64);
    let (plain, plain_kept) = collapse_to_mapped(&mesh, &centres, 0.0, &[], 64);
    let (with, without) = (gap(&posed, &kept), gap(&plain, &plain_kept));
    assert!(
        with < 0.5 * without,
        "{with} with the pose, {without} without"
    );
    assert!(with < 0.3, "{with}");
}

#[test]
fn one_run_to_many_targets_gives_what_each_run_alone_gives() {
    let mesh = tube(8, 40, 0.5);
    // Bone centres in two groups and a bent pose, so the costs are not all alike.
    let centres: Vec<Vec3> = mesh
        .positions
        .iter()
        .map(|p| Vec3::new(0.0, if p.y < 10.0 { 5.0 } else { 15.0 }, 0.0))
        .collect();
    let bent: Vec<Vec3> = mesh
        .positions
        .iter()
        .map(|p| {
            if p.y < 10.0 {
                *p
            } else {
                Vec3::new(p.x + (p.y - 10.0), 10.0, p.z)
            }
        })
        .collect();
    let poses = std::slice::from_ref(&bent);
    // In no particular order, with one the run cannot reach (below a tetrahedron).
    let targets = [120, 400, 1, 40];
    let together = collapse_to_targets(&mesh, &centres, 1.0, poses, &targets);
    assert_eq!(together.len(), targets.len());
    for (&target, (mesh_t, kept_t)) in targets.iter().zip(&together) {
        let (alone, kept) = collapse_to_mapped(&mesh, &centres, 1.0, poses, target);
        assert_eq!(mesh_t.indices, alone.indices, "target {target}");
        assert_eq!(mesh_t.positions, alone.positions, "target {target}");
        assert_eq!(kept_t, &kept, "target {target}");
    }
    assert!(together[1].0.indices.len() / 3 <= 400);
    assert_eq!(
        together[2].0.indices.len() / 3,
        4,
        "the tetrahedron is as far as it goes"
    );
}

/// FNV-1a over a mesh's indices and position bits (stable across Rust releases).
fn mesh_hash(mesh: &Mesh) -> u64 {
    let words = mesh.indices.iter().copied().chain(
        mesh.positions
            .iter()
            .flat_map(|p| p.to_array().map(f32::to_bits)),
    );
    words.fold(0xcbf2_9ce4_8422_2325, |h, w| {
        (h ^ u64::from(w)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Pins what the collapses give on a bent tube with two bone groups (many equal costs, so the
/// queue's order of ties matters too): a change meant only to make them faster must give the
/// same meshes, bit for bit.
#[test]
fn the_collapses_give_the_same_meshes_as_before() {
    let mesh = tube(12, 60, 0.5);
    let centres: Vec<Vec3> = mesh
        .positions
        .iter()
        .map(|p| Vec3::new(0.0, if p.y < 20.0 { 5.0 } else { 40.0 }, 0.0))
        .collect();
    let pose = |bend: f32| -> Vec<Vec3> {
        mesh.positions
            .iter()
            .map(|p| {
                if p.y < 20.0 {
                    *p
                } else {
                    Vec3::new(
                        p.x + bend * (p.y - 20.0),
                        20.0 + (1.0 - bend) * (p.y - 20.0),
                        p.z,
                    )
                }
            })
            .collect()
    };
    let poses = [pose(1.0), pose(0.5), pose(-0.7)];
    let out = collapse_to_targets(&mesh, &centres, 1.0, &poses, &[600, 150, 30]);
    let hashes: Vec<u64> = out.iter().map(|(m, _)| mesh_hash(m)).collect();
    assert_eq!(
        hashes,
        [
            0xdf48_bce9_9fc5_32f6,
            0x972d_27bb_6c99_3a00,
            0xeba9_9fc2_ea1a_2ab5
        ]
    );
}
