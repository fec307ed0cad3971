//! Rigid parts on two capsules side by side, closer than the voxel shell: a "body" (bone 0)
//! and an "arm" (bone 1) that swings away from it in the second pose.

use glam::{Quat, Vec3};

use super::bind::SourceTriangles;
use super::parts::rigid_parts;
use super::tests::capsule;
use super::*;

const RADIUS: f32 = 0.2;
const LENGTH: f32 = 2.0;
const VOXEL: f32 = 0.1;

/// The two capsules, one voxel apart, in one surface; and the arm's top, where it swings.
fn body_and_arm() -> (LodSource, Vec3) {
    let body = capsule(RADIUS, LENGTH, 12);
    let mut source = body.clone();
    let shift = Vec3::X * (2.0 * RADIUS + VOXEL);
    let n = source.positions.len() as u32;
    source
        .positions
        .extend(body.positions.iter().map(|p| *p + shift));
    source.normals.extend(body.normals.iter().copied());
    source.uvs.extend(body.uvs.iter().copied());
    source.bones = vec![0; n as usize];
    source.bones.extend(vec![1; n as usize]);
    let arm: Vec<u32> = body.surfaces[0].indices.iter().map(|i| i + n).collect();
    source.surfaces[0].indices.extend(arm);
    (source, shift + Vec3::Y * LENGTH)
}

/// The reference pose, then the arm swung 90 degrees out about its top.
fn poses(source: &LodSource, pivot: Vec3) -> Vec<Vec<Vec3>> {
    let turn = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let swung = source
        .positions
        .iter()
        .zip(&source.bones)
        .map(|(&p, &b)| {
            if b == 1 {
                pivot + turn * (p - pivot)
            } else {
                p
            }
        })
        .collect();
    vec![source.positions.clone(), swung]
}

/// Triangles of `level` whose vertices bind to both capsules: webs once the arm swings.
fn webs(level: &LodLevel, source: &LodSource) -> usize {
    let bone = |v: &crate::lod_mesh::LodVertex| {
        source.bones[v.sources[super::nearest::heaviest(v.weights)] as usize]
    };
    level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
        .filter(|t| {
            let b = t.iter().map(|&v| bone(&level.vertices[v as usize]));
            let b: Vec<u32> = b.collect();
            b.iter().any(|&x| x != b[0])
        })
        .count()
}

#[test]
fn bones_that_move_apart_are_separate_parts_and_rigid_ones_one() {
    let (source, pivot) = body_and_arm();
    let tris = SourceTriangles::new(&source, &source.positions).unwrap();
    let parts = rigid_parts(&source, &tris, &poses(&source, pivot), VOXEL, 8, VOXEL);
    assert_eq!(parts.count, 2);
    let n = tris.triangles.len() / 2;
    assert!(parts.of_triangle[..n]
        .iter()
        .all(|&p| p == parts.of_triangle[0]));
    assert!(parts.of_triangle[n..]
        .iter()
        .all(|&p| p != parts.of_triangle[0]));
    // No joint: the capsules share no position, so neither takes the other's triangles.
    assert!(parts.joins.iter().all(Vec::is_empty));
    // Both moved together: one part. No poses: one part.
    let moved: Vec<Vec3> = source.positions.iter().map(|p| *p + Vec3::ONE).collect();
    let together = vec![source.positions.clone(), moved];
    assert_eq!(
        rigid_parts(&source, &tris, &together, VOXEL, 8, VOXEL).count,
        1
    );
    assert_eq!(rigid_parts(&source, &tris, &[], VOXEL, 8, VOXEL).count, 1);
}

#[test]
fn parts_that_move_apart_are_remeshed_without_webs() {
    let (source, pivot) = body_and_arm();
    let poses = poses(&source, pivot);
    // One remesh of both: the shell joins the capsules, and triangles bind across the gap.
    let (whole, _) = build_lod2(&source, 200, VOXEL, &[]).unwrap();
    assert!(webs(&whole, &source) > 0, "the control case should web");
    // Part by part: two closed pieces, each bound to its own capsule, within the target.
    let (level, columns) = build_lod2(&source, 200, VOXEL, &poses).unwrap();
    assert_eq!(webs(&level, &source), 0);
    assert!(is_closed_manifold(&level));
    assert!(level.triangle_count() <= 200);
    assert_eq!(columns.len(), level.vertices.len());
    // The arm's piece follows the swing: every vertex bound to the arm moves with it.
    for v in &level.vertices {
        if source.bones[v.sources[0] as usize] == 1 {
            let at = |pose: &[Vec3]| -> Vec3 {
                (0..3)
                    .map(|k| pose[v.sources[k] as usize] * v.weights[k])
                    .sum()
            };
            let expected = pivot
                + Quat::from_rotation_z(std::f32::consts::FRAC_PI_2) * (at(&poses[0]) - pivot);
            assert!(at(&poses[1]).distance(expected) < 1e-4);
        }
    }
}

#[test]
fn poses_of_the_wrong_length_or_not_finite_are_refused() {
    let (source, pivot) = body_and_arm();
    let mut poses = poses(&source, pivot);
    poses[1].pop();
    let e = build_lod2(&source, 200, VOXEL, &poses)
        .unwrap_err()
        .to_string();
    assert!(e.contains("LOD2 pose positions"), "{e}");
    poses[1] = source.positions.clone();
    poses[1][7] = Vec3::NAN;
    let e = build_lod2(&source, 200, VOXEL, &poses)
        .unwrap_err()
        .to_string();
    assert!(e.contains("LOD2 pose 1 position of vertex 7"), "{e}");
}

#[test]
fn small_islands_join_the_part_around_them_and_large_regions_stay() {
    use super::parts::{absorb_islands, Parts};
    use super::voxel::Grid;
    let dims = [6, 6, 6];
    let grid = Grid {
        origin: Vec3::ZERO,
        voxel: 1.0,
        dims,
        solid: vec![true; 216],
    };
    // Triangle 0 is part 0, triangle 1 part 1; no joints.
    let parts = Parts {
        of_triangle: vec![0, 1],
        joins: vec![vec![], vec![]],
        count: 2,
    };
    let at = |x: usize, y: usize, z: usize| grid.index(x, y, z);
    let mut nearest = vec![0u32; 216];
    // A lone sample of part 1 inside part 0, and a 2 x 2 x 3 block of part 1 in a corner.
    nearest[at(1, 1, 1)] = 1;
    for z in 3..6 {
        for y in 4..6 {
            for x in 4..6 {
                nearest[at(x, y, z)] = 1;
            }
        }
    }
    absorb_islands(&grid, &mut nearest, &parts);
    assert_eq!(nearest[at(1, 1, 1)], 0, "the island joins part 0");
    assert_eq!(
        nearest.iter().filter(|&&t| t == 1).count(),
        12,
        "the block stays"
    );
}

#[test]
fn simplifying_keeps_a_small_piece_beside_a_big_one() {
    use super::voxel::Grid;
    // A 6 x 6 x 6 block of solid samples and a lone sample apart from it.
    let dims = [12, 10, 10];
    let mut grid = Grid {
        origin: Vec3::ZERO,
        voxel: 1.0,
        dims,
        solid: vec![false; 1200],
    };
    for z in 2..8 {
        for y in 2..8 {
            for x in 2..8 {
                let i = grid.index(x, y, z);
                grid.solid[i] = true;
            }
        }
    }
    let lone = grid.index(10, 5, 5);
    grid.solid[lone] = true;
    let mesh = super::surface::extract(&grid);
    assert_eq!(
        components(&mesh).iter().max(),
        Some(&1),
        "two pieces to start with"
    );
    let centres = vec![Vec3::ZERO; mesh.positions.len()];
    let (out, old) = simplify_closed(&mesh, &centres, |_| Vec::new(), 24).unwrap();
    assert!(out.indices.len() / 3 <= 24);
    let kept = components(&out);
    assert_eq!(kept.iter().max(), Some(&1), "both pieces kept");
    assert_eq!(old.len(), out.positions.len());
    assert!(old.iter().all(|&o| (o as usize) < mesh.positions.len()));
}

#[test]
fn a_search_gives_what_each_candidate_built_alone_gives() {
    let (source, pivot) = body_and_arm();
    let poses = poses(&source, pivot);
    let targets = [60usize, 120, 200];
    let variants = [
        (VOXEL, false),
        (VOXEL, true),
        (VOXEL * 0.75, false),
        (VOXEL * 0.75, true),
    ];
    let mut search = super::Lod2Search::new(&source, &poses, &targets).unwrap();
    for &target in &targets {
        for &(voxel, by_part) in &variants {
            let got = search.candidate(target as u32, (voxel, by_part));
            let alone = build_lod2_with(&source, target as u32, voxel, &poses, by_part);
            assert_eq!(
                got, alone,
                "target {target}, voxel {voxel}, by part {by_part}"
            );
        }
    }
    // The same errors too: a target at the source's triangle count.
    let over = source.surfaces[0].indices.len() as u32 / 3 + 1_000_000;
    let got = search.candidate(over, variants[0]);
    assert_eq!(got, build_lod2_with(&source, over, VOXEL, &poses, false));
    assert!(got.is_err());
}
