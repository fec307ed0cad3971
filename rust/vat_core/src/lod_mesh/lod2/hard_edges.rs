//! LOD2 keeps the source's hard edges where it can.
//!
//! A bound LOD2 vertex draws with the source's normal at its point. Where that point lies on a
//! hard edge or corner of the source (after `bind` snapped it to a corner, say), the source has
//! other vertices at the same place with other normals, one per face around the edge; a single
//! LOD2 vertex there gives every LOD2 triangle around it the one face's normal, and the edge is
//! smoothed over. So each triangle corner whose normal lies far off its triangle's face takes a
//! copy of its vertex bound to the coincident source point whose normal agrees best with that
//! face (on the triangle's own material and the vertex's bone, so its texture and motion stay
//! the same). The copy sits where the vertex sits, so no crack opens; where no source point
//! coincides (a LOD2 triangle across the edge, a bevel the remesh cut), the corner stays as it
//! was: those are the hard edges LOD2 cannot keep.

use std::collections::HashMap;

use glam::Vec3;

use super::bind::SourceTriangles;
use super::nearest::{heaviest, Hit};
use crate::lod_mesh::columns::{bound_normal, weighted};
use crate::lod_mesh::{ColumnSource, LodLevel, LodVertex};

/// A corner looks for a copy when its normal lies more than this many degrees off its
/// triangle's face (its diffuse shade then off by over 29%). Each copy is a vertex more to draw:
/// at 30 degrees RobotExpressive's LOD2 (600 triangles) grows from 331 to 749 vertices, at 45
/// (and a gain of 20) to 665; the knight's from 326 to 486 and 473.
const OFF_DEGREES: f32 = 45.0;
/// A copy is taken when its normal lies at least this many degrees closer to the face than the
/// corner's own.
const GAIN_DEGREES: f32 = 20.0;
/// Source points within this share of the source's bounding-box diagonal count as coincident.
const COINCIDENT: f32 = 1e-5;
/// Most coincident source triangles tried per corner (a box's corner has three faces, each of
/// two triangles).
const MAX_STEPS: usize = 6;

/// Gives each corner of `level` (bound to `tris`, vertex `i` using column `i`) whose normal lies
/// off its triangle's face a copy bound to a coincident source point facing the triangle's way,
/// when there is one (module docs). Copies are appended to the vertices and the columns (vertex
/// `i` still uses column `i`); a vertex copied for several triangles of one face is copied once.
/// Returns the vertex each copy was made of, in the order the copies were appended (none when
/// `normals` does not hold one normal per source position).
pub(crate) fn keep_hard_edges(
    level: &mut LodLevel,
    columns: &mut Vec<ColumnSource>,
    tris: &SourceTriangles,
    positions: &[Vec3],
    normals: &[Vec3],
) -> Vec<u32> {
    if normals.len() != positions.len() {
        // No normal per source vertex: nothing says where an edge is hard.
        return Vec::new();
    }
    let tolerance = (tris.bounds.max - tris.bounds.min).length() * COINCIDENT;
    // What the bake draws at a binding: the bound column's normal.
    let normal_at = |corners: [u32; 3], weights: [f32; 3]| bound_normal(normals, corners, weights);
    let bone_of = |corners: [u32; 3], weights: [f32; 3]| {
        tris.bones.get(corners[heaviest(weights)] as usize).copied()
    };
    let points: Vec<Vec3> = level
        .vertices
        .iter()
        .map(|v| weighted(positions, v.sources, v.weights))
        .collect();
    let off = OFF_DEGREES.to_radians().cos();
    let gain = GAIN_DEGREES.to_radians();
    // (vertex, source triangle, weights' bits) -> the copy made for it.
    let mut copies: HashMap<(u32, u32, [u32; 3]), u32> = HashMap::new();
    let mut originals = Vec::new();
    for surface in &mut level.surfaces {
        let material = surface.source_surface;
        for t in surface.indices.chunks_exact_mut(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|v| points[v as usize]);
            // Level triangles wind like the source's; `winding` turns the cross product out.
            let face = ((b - a).cross(c - a) * tris.winding).normalize_or_zero();
            if face == Vec3::ZERO {
                continue;
            }
            for corner in t.iter_mut() {
                let v = level.vertices[*corner as usize];
                let own = normal_at(v.sources, v.weights);
                let mut best_cos = own.dot(face);
                if best_cos >= off {
                    continue;
                }
                let bone = bone_of(v.sources, v.weights);
                let p = points[*corner as usize];
                let mut best: Option<Hit> = None;
                let mut tried = [u32::MAX; MAX_STEPS];
                for step in 0..MAX_STEPS {
                    // The nearest source triangle of this material not tried yet with a corner
                    // whose normal faces the triangle's way better than the best so far.
                    let found = tris.bvh.nearest_where(p, |s| {
                        let corners = tris.triangles[s as usize];
                        tris.surface[s as usize] == material
                            && !tried.contains(&s)
                            && corners.iter().any(|&k| {
                                normals
                                    .get(k as usize)
                                    .is_some_and(|n| n.dot(face) > best_cos)
                            })
                    });
                    let Some(hit) = found.filter(|h| h.distance <= tolerance) else {
                        break;
                    };
                    tried[step] = hit.triangle;
                    let corners = tris.triangles[hit.triangle as usize];
                    let n = normal_at(corners, hit.weights);
                    if n.dot(face) > best_cos && bone_of(corners, hit.weights) == bone {
                        best_cos = n.dot(face);
                        best = Some(hit);
                    }
                }
                let Some(hit) = best else { continue };
                if own.dot(face).clamp(-1.0, 1.0).acos() - best_cos.clamp(-1.0, 1.0).acos() < gain {
                    continue;
                }
                let sources = tris.triangles[hit.triangle as usize];
                let key = (*corner, hit.triangle, hit.weights.map(f32::to_bits));
                let next = level.vertices.len() as u32;
                let copy = *copies.entry(key).or_insert(next);
                if copy == next {
                    originals.push(*corner);
                    level.vertices.push(LodVertex {
                        sources,
                        weights: hit.weights,
                        column: next,
                    });
                    columns.push(ColumnSource::Bound {
                        vertices: sources,
                        weights: hit.weights,
                    });
                }
                *corner = copy;
            }
        }
    }
    originals
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::lod_mesh::lod2::bind::bind;
    use crate::lod_mesh::lod2::surface::Mesh;
    use crate::lod_mesh::lod2::{build_lod2, is_closed_manifold};
    use crate::lod_mesh::test_meshes::{capsule_limb, hard_box};
    use crate::lod_mesh::{LodLevel, LodSource};

    /// Corners of `level` whose drawn normal (the bound source normals blended) lies more than
    /// `degrees` off their triangle's face, and all corners.
    fn corners_off(level: &LodLevel, source: &LodSource, degrees: f32) -> (usize, usize) {
        let point = |v: u32| {
            let v = level.vertices[v as usize];
            weighted(&source.positions, v.sources, v.weights)
        };
        // What the bake draws at each corner.
        let drawn = |v: u32| {
            let v = level.vertices[v as usize];
            bound_normal(&source.normals, v.sources, v.weights)
        };
        let cos = degrees.to_radians().cos();
        let (mut off, mut all) = (0, 0);
        for t in level
            .surfaces
            .iter()
            .flat_map(|s| s.indices.chunks_exact(3))
        {
            let [a, b, c] = [t[0], t[1], t[2]].map(point);
            // Godot's winding (the test meshes'): clockwise fronts.
            let face = (c - a).cross(b - a).normalize_or_zero();
            if face.abs().max_element() < 20f32.to_radians().cos() {
                continue;
            }
            for &v in t {
                all += 1;
                off += usize::from(drawn(v).dot(face) < cos);
            }
        }
        (off, all)
    }

    #[test]
    fn each_face_of_a_box_gets_its_own_copy_of_each_corner() {
        // LOD2 as the cube itself (8 vertices, 12 triangles, counter-clockwise outward) bound
        // to a hard-edged box: each vertex binds to one of the three faces at its corner.
        let source = hard_box(2);
        let tris = SourceTriangles::new(&source, &source.positions).unwrap();
        let corner = |k: u32| glam::UVec3::new(k & 1, k >> 1 & 1, k >> 2 & 1).as_vec3() - 0.5;
        let index =
            |p: Vec3| u32::from(p.x > 0.0) | u32::from(p.y > 0.0) << 1 | u32::from(p.z > 0.0) << 2;
        let mut indices = Vec::new();
        for n in [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z] {
            let (u, v) = (
                n.any_orthonormal_vector(),
                n.cross(n.any_orthonormal_vector()),
            );
            let q = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
                .map(|(x, y)| index(n + u * x + v * y));
            indices.extend([q[0], q[1], q[2], q[0], q[2], q[3]]);
        }
        let mesh = Mesh {
            positions: (0..8).map(corner).collect(),
            indices,
        };
        let same = |_: usize, _: u32| true;
        let (mut level, mut columns) =
            bind(&mesh, &tris, &source.positions, 0.1, 0.0, same, |_, _| true);
        assert!(is_closed_manifold(&level));
        let before = corners_off(&level, &source, 45.0);
        assert_eq!(before.1, 36);
        assert!(
            before.0 >= 12,
            "{before:?}: each vertex shades one face of three"
        );
        let originals = keep_hard_edges(
            &mut level,
            &mut columns,
            &tris,
            &source.positions,
            &source.normals,
        );
        // Two copies per corner, each at its vertex's point, on the same bone.
        assert_eq!(originals.len(), 16);
        assert_eq!((level.vertices.len(), columns.len()), (24, 24));
        let at = |v: usize| {
            let v = level.vertices[v];
            weighted(&source.positions, v.sources, v.weights)
        };
        for (k, &o) in originals.iter().enumerate() {
            assert!(at(8 + k).distance(at(o as usize)) < 1e-6);
        }
        assert_eq!(corners_off(&level, &source, 1.0).0, 0);
        // With the copies joined back, the mesh is the one bound.
        let mut joined = level.clone();
        for i in joined
            .surfaces
            .iter_mut()
            .flat_map(|s| s.indices.iter_mut())
        {
            if *i >= 8 {
                *i = originals[*i as usize - 8];
            }
        }
        joined.vertices.truncate(8);
        assert!(is_closed_manifold(&joined));
    }

    #[test]
    fn lod2_of_a_hard_box_keeps_its_edges_without_cracks() {
        let source = hard_box(12);
        let (level, columns) = build_lod2(&source, 300, 0.0, &[]).unwrap();
        // Triangles on a face shade with that face's normal at every corner (with one vertex
        // per point, 123 of their 846 corners shaded a neighbouring face).
        let (off, all) = corners_off(&level, &source, 45.0);
        assert_eq!(off, 0, "{off} of {all} corners shade another face");
        assert!(all > 600, "{all} corners on faces");
        // Split by index, as LOD0 is at hard edges.
        assert!(!is_closed_manifold(&level));
        assert_eq!(columns.len(), level.vertices.len());
        let bound = |v: &LodVertex| ColumnSource::Bound {
            vertices: v.sources,
            weights: v.weights,
        };
        let ok = |(i, v): (usize, &LodVertex)| v.column == i as u32 && columns[i] == bound(v);
        assert!(level.vertices.iter().enumerate().all(ok));
    }

    #[test]
    fn a_smooth_source_gets_no_copies() {
        // One normal per point: nothing to copy, however far off a corner's normal lies.
        let (level, _) = build_lod2(&capsule_limb(24, 16, 6), 200, 0.0, &[]).unwrap();
        assert!(is_closed_manifold(&level));
    }
}
