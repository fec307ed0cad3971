//! How well a LOD2 level fits its source: distances both ways and texture-seam crossings.

use std::collections::HashMap;

use glam::Vec3;

use super::bind::min_area;
use super::is_closed_manifold;
use super::nearest::TriangleBvh;
use crate::lod_mesh::columns::bound_normal;
use crate::lod_mesh::{LodLevel, LodSource};

/// Measurements of a bound level against its source at one pose.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Lod2Stats {
    /// Triangles over all surfaces.
    pub triangles: usize,
    /// Vertices (each one VAT column).
    pub vertices: usize,
    /// [`is_closed_manifold`] of the level, by vertex index: where LOD2 keeps a hard edge it
    /// splits the vertices there as LOD0 does, and is then closed only with the copies joined
    /// (the remesh is checked closed before it splits).
    pub closed_manifold: bool,
    /// Largest distance from a point of the level (vertices, edge midpoints, triangle centres)
    /// to the source surface: how far LOD2 floats off the original.
    pub max_distance: f32,
    /// Mean of the same distances.
    pub mean_distance: f32,
    /// Largest distance from a source vertex to the level's surface: how much of the original
    /// LOD2 misses (thin parts it drops, gaps it bridges).
    pub max_source_distance: f32,
    /// Mean of the same distances.
    pub mean_source_distance: f32,
    /// The source's bounding-box diagonal at that pose, to read the distances against.
    pub diagonal: f32,
    /// Triangles whose vertices are bound into different UV charts of the source. Their UVs
    /// interpolate across a seam, so the texture smears over them. Re-baking a texture of
    /// LOD2's own (an automatic unwrap, filled from the source) is the full fix.
    pub seam_crossing_triangles: usize,
    /// Triangles facing against the source triangles their vertices bind to (their face normal
    /// at this pose against the sum of the bound triangles' face normals): with back faces
    /// culled they vanish. Both sides of a one-sided source part count one side here.
    pub flipped_triangles: usize,
    /// Triangles whose shade at their centre (their corners' bound normals blended) lies more
    /// than [`SHADING_OFF_DEGREES`] off the source's own there (its normal at the source point
    /// nearest the centre), with the source's reference-pose normals: where the level shades
    /// across a hard edge the source draws, or smooths a facet. 0 without a normal per source
    /// vertex.
    pub shading_off_triangles: usize,
}

/// See [`Lod2Stats::shading_off_triangles`].
pub const SHADING_OFF_DEGREES: f32 = 30.0;

/// Measures `level` (bound to `source`) with the source's vertices at `positions` (the
/// reference pose or any other, one per source vertex).
pub fn lod2_stats(source: &LodSource, level: &LodLevel, positions: &[Vec3]) -> Lod2Stats {
    let lod_positions: Vec<Vec3> = level
        .vertices
        .iter()
        .map(|v| {
            (0..3)
                .map(|k| positions[v.sources[k] as usize] * v.weights[k])
                .sum()
        })
        .collect();
    let lod_tris: Vec<[u32; 3]> = level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]))
        .collect();
    let src_tris: Vec<[u32; 3]> = source
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]))
        .collect();
    let corners = |tris: &[[u32; 3]], p: &[Vec3]| -> Vec<[Vec3; 3]> {
        tris.iter().map(|t| t.map(|v| p[v as usize])).collect()
    };
    let src_bvh = TriangleBvh::new(corners(&src_tris, positions), min_area(positions));
    let lod_bvh = TriangleBvh::new(corners(&lod_tris, &lod_positions), 0.0);

    let mut samples = lod_positions.clone();
    for [a, b, c] in corners(&lod_tris, &lod_positions) {
        samples.extend([
            (a + b) * 0.5,
            (b + c) * 0.5,
            (c + a) * 0.5,
            (a + b + c) / 3.0,
        ]);
    }
    let (max_distance, mean_distance) = max_mean(&samples, &src_bvh);
    let (max_source_distance, mean_source_distance) = max_mean(positions, &lod_bvh);
    let b = crate::bounds::Bounds::from_points(positions);
    Lod2Stats {
        triangles: level.triangle_count(),
        vertices: level.vertices.len(),
        closed_manifold: is_closed_manifold(level),
        max_distance,
        mean_distance,
        max_source_distance,
        mean_source_distance,
        diagonal: (b.max - b.min).length(),
        seam_crossing_triangles: seam_crossings(source, level),
        flipped_triangles: flipped(level, &lod_positions, positions),
        shading_off_triangles: shading_off(source, level, &lod_positions, &src_tris, &src_bvh),
    }
}

/// [`Lod2Stats::shading_off_triangles`] of `level` at `lod_positions`, against the source's
/// triangles `src_tris` indexed by `src_bvh` at the same pose.
fn shading_off(
    source: &LodSource,
    level: &LodLevel,
    lod_positions: &[Vec3],
    src_tris: &[[u32; 3]],
    src_bvh: &TriangleBvh,
) -> usize {
    if source.normals.len() != source.positions.len() {
        return 0;
    }
    // What the bake draws at a binding: the bound column's normal.
    let normal =
        |sources: [u32; 3], weights: [f32; 3]| bound_normal(&source.normals, sources, weights);
    let cos = SHADING_OFF_DEGREES.to_radians().cos();
    level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
        .filter(|t| {
            let centre = t.iter().map(|&v| lod_positions[v as usize]).sum::<Vec3>() / 3.0;
            let drawn = t
                .iter()
                .map(|&v| {
                    let v = level.vertices[v as usize];
                    normal(v.sources, v.weights)
                })
                .sum::<Vec3>()
                .normalize_or_zero();
            src_bvh.nearest(centre).is_some_and(|hit| {
                drawn.dot(normal(src_tris[hit.triangle as usize], hit.weights)) < cos
            })
        })
        .count()
}

/// Level triangles facing against the source triangles their vertices bind to.
fn flipped(level: &LodLevel, lod_positions: &[Vec3], positions: &[Vec3]) -> usize {
    let normal = |[a, b, c]: [Vec3; 3]| (b - a).cross(c - a).normalize_or_zero();
    level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
        .filter(|t| {
            let own = normal([0, 1, 2].map(|k| lod_positions[t[k] as usize]));
            let bound: Vec3 = t
                .iter()
                .map(|&v| {
                    normal(
                        level.vertices[v as usize]
                            .sources
                            .map(|s| positions[s as usize]),
                    )
                })
                .sum();
            own.dot(bound) < 0.0
        })
        .count()
}

/// Largest and mean distance from `points` to the BVH's surface (0, 0 when either is empty).
fn max_mean(points: &[Vec3], bvh: &TriangleBvh) -> (f32, f32) {
    let d: Vec<f32> = points
        .iter()
        .filter_map(|&p| bvh.nearest(p).map(|h| h.distance))
        .collect();
    if d.is_empty() {
        return (0.0, 0.0);
    }
    let max = d.iter().copied().fold(0.0, f32::max);
    (max, d.iter().sum::<f32>() / d.len() as f32)
}

/// How much longer than the source's own texel density predicts a LOD2 edge may be in UV space
/// before it counts as running across a seam.
const SEAM_STRETCH: f32 = 4.0;

/// LOD2 triangles with an edge that runs across a UV seam of the source: its ends bind into
/// different UV charts, or its UV length is over [`SEAM_STRETCH`] times what the bound
/// triangles' texel density gives for its length (the two sides of a seam inside one chart, as
/// on a wrapped cylinder).
///
/// A chart is a set of source triangles connected through shared corners with the same position
/// and UV: vertices split only for a hard normal still join, those split for a UV seam do not.
fn seam_crossings(source: &LodSource, level: &LodLevel) -> usize {
    let n = source.positions.len();
    let uv = |v: u32| source.uvs.get(v as usize).copied().unwrap_or_default();
    // One node per distinct (position, UV).
    let mut key_of: HashMap<([u32; 3], [u32; 2]), usize> = HashMap::new();
    let node: Vec<usize> = (0..n)
        .map(|v| {
            let key = (
                source.positions[v].to_array().map(f32::to_bits),
                uv(v as u32).to_array().map(f32::to_bits),
            );
            let next = key_of.len();
            *key_of.entry(key).or_insert(next)
        })
        .collect();
    let mut parent: Vec<usize> = (0..key_of.len()).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for s in &source.surfaces {
        for t in s.indices.chunks_exact(3) {
            let a = find(&mut parent, node[t[0] as usize]);
            for &v in &t[1..] {
                let b = find(&mut parent, node[v as usize]);
                parent[b] = a;
            }
        }
    }
    struct Bound {
        chart: usize,
        position: Vec3,
        uv: glam::Vec2,
        /// UV length per unit of length on the bound triangle.
        density: f32,
    }
    let bound: Vec<Bound> = level
        .vertices
        .iter()
        .map(|v| {
            let p = v.sources.map(|s| source.positions[s as usize]);
            let t = v.sources.map(uv);
            let area = (p[1] - p[0]).cross(p[2] - p[0]).length();
            let uv_area = (t[1] - t[0]).perp_dot(t[2] - t[0]).abs();
            Bound {
                chart: find(&mut parent, node[v.sources[0] as usize]),
                position: (0..3).map(|k| p[k] * v.weights[k]).sum(),
                uv: (0..3).map(|k| t[k] * v.weights[k]).sum(),
                density: if area > 0.0 {
                    (uv_area / area).sqrt()
                } else {
                    0.0
                },
            }
        })
        .collect();
    let crosses = |a: &Bound, b: &Bound| {
        let expected = a.density.max(b.density) * (a.position - b.position).length();
        a.chart != b.chart || (a.uv - b.uv).length() > SEAM_STRETCH * expected + 1e-6
    };
    level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
        .filter(|t| (0..3).any(|k| crosses(&bound[t[k] as usize], &bound[t[(k + 1) % 3] as usize])))
        .count()
}
