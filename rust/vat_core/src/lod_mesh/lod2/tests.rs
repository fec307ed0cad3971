//! LOD2 on synthetic meshes: a UV sphere, a two-bone capsule limb, a one-sided plane, two boxes
//! touching along one edge.

use glam::{Quat, Vec2, Vec3};

use super::*;
use crate::lod_mesh::{LodSource, SourceSurface};

/// A source with one surface per index list; bones from `bone_of(position)`.
#[allow(clippy::needless_update)]
fn source(
    positions: Vec<Vec3>,
    uvs: Vec<Vec2>,
    surfaces: Vec<Vec<u32>>,
    bone_of: impl Fn(Vec3) -> u32,
) -> LodSource {
    LodSource {
        normals: vec![Vec3::Y; positions.len()],
        bones: positions.iter().map(|&p| bone_of(p)).collect(),
        bone_names: vec!["root".into(), "upper".into()],
        positions,
        uvs,
        surfaces: surfaces
            .into_iter()
            .map(|indices| SourceSurface {
                indices,
                double_sided: false,
            })
            .collect(),
        // Fields LodSource gains later (none of which LOD2 reads) keep their defaults.
        ..Default::default()
    }
}

/// A UV sphere: `rings` x `segments` quads, the seam column and the poles duplicated for UVs.
/// Triangles above `split_y` go to surface 0, the rest to surface 1 (one surface when it is
/// above the sphere).
fn sphere(radius: f32, rings: u32, segments: u32, split_y: f32) -> LodSource {
    let mut positions = Vec::new();
    let mut uvs = Vec::new();
    for r in 0..=rings {
        let theta = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..=segments {
            let phi = std::f32::consts::TAU * s as f32 / segments as f32;
            positions.push(
                Vec3::new(
                    theta.sin() * phi.cos(),
                    theta.cos(),
                    theta.sin() * phi.sin(),
                ) * radius,
            );
            uvs.push(Vec2::new(
                s as f32 / segments as f32,
                r as f32 / rings as f32,
            ));
        }
    }
    let id = |r: u32, s: u32| r * (segments + 1) + s;
    let (mut top, mut bottom) = (Vec::new(), Vec::new());
    for r in 0..rings {
        for s in 0..segments {
            let (a, b, c, d) = (id(r, s), id(r, s + 1), id(r + 1, s + 1), id(r + 1, s));
            let list = if positions[a as usize].y > split_y {
                &mut top
            } else {
                &mut bottom
            };
            if r > 0 {
                list.extend([a, b, c]);
            }
            if r + 1 < rings {
                list.extend([a, c, d]);
            }
        }
    }
    let surfaces = if top.is_empty() {
        vec![bottom]
    } else {
        vec![top, bottom]
    };
    source(positions, uvs, surfaces, |_| 0)
}

/// A capsule along +y from 0 to `length`, radius `radius`, sharing vertices (no seams). Bone 0
/// below the joint at `length / 2`, bone 1 above.
pub(super) fn capsule(radius: f32, length: f32, segments: u32) -> LodSource {
    // Profile from the bottom pole to the top pole: a half circle, a straight side, a half circle.
    let mut profile: Vec<(f32, f32)> = Vec::new();
    let cap = 6;
    for i in 1..=cap {
        let a = std::f32::consts::FRAC_PI_2 * i as f32 / cap as f32;
        profile.push((radius * a.sin(), radius - radius * a.cos()));
    }
    let side = 12;
    for i in 1..side {
        profile.push((
            radius,
            radius + (length - 2.0 * radius) * i as f32 / side as f32,
        ));
    }
    for i in 0..cap {
        let a = std::f32::consts::FRAC_PI_2 * (cap - i) as f32 / cap as f32;
        profile.push((radius * a.sin(), length - radius + radius * a.cos()));
    }
    let mut positions = vec![Vec3::ZERO];
    for &(r, y) in &profile {
        for s in 0..segments {
            let phi = std::f32::consts::TAU * s as f32 / segments as f32;
            positions.push(Vec3::new(r * phi.cos(), y, -r * phi.sin()));
        }
    }
    positions.push(Vec3::new(0.0, length, 0.0));
    let top = positions.len() as u32 - 1;
    let ring = |k: usize, s: u32| 1 + k as u32 * segments + s % segments;
    let mut indices = Vec::new();
    for s in 0..segments {
        indices.extend([0, ring(0, s), ring(0, s + 1)]);
        for k in 0..profile.len() - 1 {
            let (a, b, c, d) = (
                ring(k, s),
                ring(k + 1, s),
                ring(k + 1, s + 1),
                ring(k, s + 1),
            );
            indices.extend([a, b, c, a, c, d]);
        }
        let last = profile.len() - 1;
        indices.extend([top, ring(last, s + 1), ring(last, s)]);
    }
    let uvs = vec![Vec2::ZERO; positions.len()];
    source(positions, uvs, vec![indices], |p| {
        u32::from(p.y > length / 2.0)
    })
}

/// A one-sided square in the xz plane, `n` x `n` quads.
fn plane(n: u32) -> LodSource {
    let mut positions = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            positions.push(Vec3::new(i as f32 / n as f32, 0.0, j as f32 / n as f32));
        }
    }
    let id = |i: u32, j: u32| j * (n + 1) + i;
    let mut indices = Vec::new();
    for j in 0..n {
        for i in 0..n {
            indices.extend([id(i, j), id(i, j + 1), id(i + 1, j + 1)]);
            indices.extend([id(i, j), id(i + 1, j + 1), id(i + 1, j)]);
        }
    }
    let uvs = positions.iter().map(|p| Vec2::new(p.x, p.z)).collect();
    source(positions, uvs, vec![indices], |_| 0)
}

/// Two unit boxes, each face `n` x `n` quads, touching only along the edge x = 1, y = 1.
fn touching_boxes(n: u32) -> LodSource {
    let mut positions = Vec::new();
    let mut indices = Vec::new();
    for offset in [Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0)] {
        // Each face: an origin corner and two edge vectors, ordered so the normal points out.
        let faces = [
            (Vec3::ZERO, Vec3::Y, Vec3::X),
            (Vec3::Z, Vec3::X, Vec3::Y),
            (Vec3::ZERO, Vec3::Z, Vec3::Y),
            (Vec3::X, Vec3::Y, Vec3::Z),
            (Vec3::ZERO, Vec3::X, Vec3::Z),
            (Vec3::Y, Vec3::Z, Vec3::X),
        ];
        for (o, u, v) in faces {
            let base = positions.len() as u32;
            for j in 0..=n {
                for i in 0..=n {
                    positions
                        .push(offset + o + u * (i as f32 / n as f32) + v * (j as f32 / n as f32));
                }
            }
            let id = |i: u32, j: u32| base + j * (n + 1) + i;
            for j in 0..n {
                for i in 0..n {
                    indices.extend([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
                    indices.extend([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
                }
            }
        }
    }
    let uvs = vec![Vec2::ZERO; positions.len()];
    source(positions, uvs, vec![indices], |_| 0)
}

/// Position of every level vertex from source positions (the bound columns' formula).
fn level_positions(level: &LodLevel, positions: &[Vec3]) -> Vec<Vec3> {
    level
        .vertices
        .iter()
        .map(|v| {
            (0..3)
                .map(|k| positions[v.sources[k] as usize] * v.weights[k])
                .sum()
        })
        .collect()
}

/// Every property LOD2 promises for any source, with the fit measured against `max_fit` (a
/// fraction of the source's bounding-box diagonal).
fn check_lod2(src: &LodSource, target: u32, voxel: f32, max_fit: f32) -> (LodLevel, Lod2Stats) {
    let (level, columns) = build_lod2(src, target, voxel, &[]).unwrap();
    let tris = level.triangle_count();
    assert!(is_closed_manifold(&level), "not closed and manifold");
    assert!(
        tris <= target as usize,
        "{tris} triangles over the target {target}"
    );
    assert!(
        tris * 4 >= target as usize * 3,
        "{tris} triangles, far below the target {target}"
    );
    assert_eq!(columns.len(), level.vertices.len());
    let source_tris: std::collections::HashSet<[u32; 3]> = src
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]))
        .collect();
    for (i, v) in level.vertices.iter().enumerate() {
        assert!(
            v.weights.iter().all(|&w| w >= 0.0),
            "vertex {i}: {:?}",
            v.weights
        );
        assert!((v.weights.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(
            source_tris.contains(&v.sources),
            "vertex {i} not bound to a source triangle"
        );
        assert_eq!(v.column, i as u32);
        assert_eq!(
            columns[i],
            ColumnSource::Bound {
                vertices: v.sources,
                weights: v.weights
            }
        );
    }
    for s in &level.surfaces {
        assert!((s.source_surface as usize) < src.surfaces.len());
    }
    let stats = lod2_stats(src, &level, &src.positions);
    assert!(stats.closed_manifold);
    assert!(
        stats.max_distance <= max_fit * stats.diagonal,
        "LOD2 floats {} off a source of diagonal {}",
        stats.max_distance,
        stats.diagonal
    );
    assert!(
        stats.max_source_distance <= max_fit * stats.diagonal,
        "LOD2 misses the source by {} (diagonal {})",
        stats.max_source_distance,
        stats.diagonal
    );
    (level, stats)
}

#[test]
fn sphere_becomes_a_closed_bound_mesh_near_the_target() {
    let src = sphere(1.0, 24, 32, 2.0);
    let (_, stats) = check_lod2(&src, 200, 0.0, 0.03);
    // Only triangles over the one UV seam (and the poles' fans) can cross charts.
    assert!(
        stats.seam_crossing_triangles > 0 && stats.seam_crossing_triangles < 40,
        "{stats:?}"
    );
}

#[test]
fn each_triangle_draws_with_the_surface_under_it() {
    let src = sphere(1.0, 24, 32, 0.0);
    let (level, _) = check_lod2(&src, 150, 0.0, 0.03);
    assert_eq!(level.surfaces.len(), 2);
    let pos = level_positions(&level, &src.positions);
    for s in &level.surfaces {
        for t in s.indices.chunks_exact(3) {
            let y = t.iter().map(|&v| pos[v as usize].y).sum::<f32>() / 3.0;
            // Surface 0 is the top half; only triangles straddling the equator may disagree.
            let expected_top = s.source_surface == 0;
            assert!(
                y.abs() < 0.25 || (y > 0.0) == expected_top,
                "y {y} on {}",
                s.source_surface
            );
        }
    }
}

#[test]
fn bent_limb_is_followed_through_the_bound_weights() {
    let (radius, length) = (0.25, 3.0);
    let src = capsule(radius, length, 16);
    let (level, _) = check_lod2(&src, 120, 0.0, 0.04);
    // Second pose: bone 1 swings 90 degrees about the joint.
    let joint = Vec3::new(0.0, length / 2.0, 0.0);
    let rot = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let bent: Vec<Vec3> = src
        .positions
        .iter()
        .zip(&src.bones)
        .map(|(&p, &b)| if b == 1 { joint + rot * (p - joint) } else { p })
        .collect();
    let rest = level_positions(&level, &src.positions);
    let moved = level_positions(&level, &bent);
    let mut rigid = 0;
    for (i, v) in level.vertices.iter().enumerate() {
        let bones = v.sources.map(|s| src.bones[s as usize]);
        if bones == [1, 1, 1] {
            // Wholly on the upper bone: moves rigidly with it.
            assert!((moved[i] - (joint + rot * (rest[i] - joint))).length() < 1e-4);
            rigid += 1;
        } else if bones == [0, 0, 0] {
            assert!((moved[i] - rest[i]).length() < 1e-6);
        }
    }
    assert!(
        rigid * 4 > level.vertices.len(),
        "{rigid} of {}",
        level.vertices.len()
    );
    // The bent LOD2 still wraps the bent limb: no source vertex is far from it.
    let stats = lod2_stats(&src, &level, &bent);
    // (Rigid skinning creases the source itself at the joint; LOD2 rounds that crease off.)
    assert!(stats.max_source_distance < 0.7 * radius, "{stats:?}");
    assert!(stats.mean_source_distance < 0.2 * radius, "{stats:?}");
    assert!(stats.max_distance < 0.7 * radius, "{stats:?}");
}

#[test]
fn one_sided_plane_becomes_a_closed_slab() {
    let src = plane(12);
    // The slab's rounded rim lets the simplifier cut the square's corners a little.
    let (level, stats) = check_lod2(&src, 100, 0.0, 0.08);
    // Both sides of the slab were wrapped back onto the plane.
    let pos = level_positions(&level, &src.positions);
    assert!(pos.iter().all(|p| p.y.abs() < 1e-6));
    assert_eq!(stats.seam_crossing_triangles, 0);
}

#[test]
fn boxes_touching_along_an_edge_give_one_closed_mesh() {
    let src = touching_boxes(4);
    check_lod2(&src, 150, 0.05, 0.05);
    check_lod2(&src, 150, 0.0, 0.05);
}

#[test]
fn bad_input_is_refused_with_what_and_why() {
    let src = sphere(1.0, 8, 8, 2.0);
    let count = src.surfaces[0].indices.len() / 3;
    let msg = |r: Result<(LodLevel, Vec<ColumnSource>)>| r.unwrap_err().to_string();
    assert!(
        msg(build_lod2(&src, 0, 0.0, &[])).contains("LOD2 triangle target: 0 must be at least 1")
    );
    let m = msg(build_lod2(&src, count as u32, 0.0, &[]));
    assert!(
        m.contains(&format!("below the source's {count} triangles")),
        "{m}"
    );
    assert!(msg(build_lod2(&src, 20, -1.0, &[])).contains("LOD2 voxel size: -1"));
    assert!(msg(build_lod2(&src, 20, f32::NAN, &[])).contains("LOD2 voxel size"));

    let mut empty = src.clone();
    empty.surfaces.iter_mut().for_each(|s| s.indices.clear());
    assert_eq!(
        msg(build_lod2(&empty, 20, 0.0, &[])),
        "LOD2 source mesh: it has no triangles"
    );
    let mut bad_index = src.clone();
    bad_index.surfaces[0].indices[4] = 9999;
    assert!(msg(build_lod2(&bad_index, 20, 0.0, &[])).contains("LOD2 source vertex index 9999"));
    let mut ragged = src.clone();
    ragged.surfaces[0].indices.pop();
    assert!(msg(build_lod2(&ragged, 20, 0.0, &[])).contains("not a multiple of 3"));
    let mut nan = src.clone();
    nan.positions[3].x = f32::NAN;
    assert!(msg(build_lod2(&nan, 20, 0.0, &[])).contains("vertex 3"));
    // Two balls far apart cannot close up in fewer than 2 x 4 triangles.
    let mut two = src.clone();
    let n = two.positions.len() as u32;
    let far: Vec<Vec3> = two.positions.iter().map(|p| *p + Vec3::X * 10.0).collect();
    two.positions.extend(far);
    two.uvs.extend(src.uvs.clone());
    two.normals.extend(src.normals.clone());
    two.bones.extend(src.bones.clone());
    let copy: Vec<u32> = two.surfaces[0].indices.iter().map(|i| i + n).collect();
    two.surfaces[0].indices.extend(copy);
    let m = msg(build_lod2(&two, 6, 0.0, &[]));
    assert!(
        m.starts_with("LOD2 remesh: the voxel surface simplifies to no fewer than 8"),
        "{m}"
    );
    let mut flat = src.clone();
    flat.positions.iter_mut().for_each(|p| *p = Vec3::ONE);
    assert!(msg(build_lod2(&flat, 20, 0.0, &[])).contains("zero area"));
}

/// Signed volume of a level at `positions` (positive when wound counter-clockwise outwards).
fn signed_volume(level: &LodLevel, positions: &[Vec3]) -> f32 {
    let p = level_positions(level, positions);
    level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
        .map(|t| p[t[0] as usize].dot(p[t[1] as usize].cross(p[t[2] as usize])) / 6.0)
        .sum()
}

#[test]
fn lod2_winds_its_triangles_like_the_source() {
    // Counter-clockwise fronts, normals outwards.
    let mut src = sphere(1.0, 16, 24, 2.0);
    src.normals = src.positions.iter().map(|p| p.normalize()).collect();
    let (level, _) = check_lod2(&src, 100, 0.0, 0.05);
    let volume = signed_volume(&level, &src.positions);
    assert!(volume > 3.0, "{volume}");
    // Clockwise fronts (Godot's convention), same normals: LOD2 turns round with it.
    for s in &mut src.surfaces {
        s.indices.chunks_exact_mut(3).for_each(|t| t.swap(1, 2));
    }
    let (level, _) = check_lod2(&src, 100, 0.0, 0.05);
    let volume = signed_volume(&level, &src.positions);
    assert!(volume < -3.0, "{volume}");
    assert_eq!(
        lod2_stats(&src, &level, &src.positions).flipped_triangles,
        0
    );
}

#[test]
fn shape_poses_are_spread_out() {
    // Poses that shift every vertex by 0, 0.1, 1, 0.5 and 1 again along x.
    let base = [Vec3::ZERO, Vec3::Y, Vec3::Z];
    let shifted = |d: f32| base.iter().map(|p| *p + Vec3::X * d).collect::<Vec<_>>();
    let poses: Vec<Vec<Vec3>> = [0.0, 0.1, 1.0, 0.5, 1.0].map(shifted).to_vec();
    let picked =
        |count| -> Vec<f32> { spread_poses(&poses, count).iter().map(|p| p[0].x).collect() };
    assert_eq!(picked(2), [0.0, 1.0]);
    assert_eq!(picked(3), [0.0, 1.0, 0.5]);
    // A pose equal to one already chosen adds nothing: four distinct poses at most.
    assert_eq!(picked(8), [0.0, 1.0, 0.5, 0.1]);
    assert!(spread_poses(&[], 8).is_empty());
}
