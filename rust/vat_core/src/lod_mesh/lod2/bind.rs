//! Shrink-wrap and bind: each LOD2 vertex moves to the nearest point of the source surface and
//! is bound to that source triangle by barycentric weights.

use glam::Vec3;

use super::nearest::{Hit, TriangleBvh};
use super::surface::Mesh;
use crate::error::{Result, VatError};
use crate::lod_mesh::{ColumnSource, LodLevel, LodSource, LodSurface, LodVertex};

/// The source's triangles with the surface each belongs to, indexed for nearest-point queries.
pub(crate) struct SourceTriangles {
    /// Source-vertex indices per triangle.
    pub triangles: Vec<[u32; 3]>,
    /// Source surface per triangle.
    pub surface: Vec<u32>,
    /// Nearest-point index over the triangles at the positions it was built with.
    pub bvh: TriangleBvh,
    /// Bounds of every triangle's corners.
    pub bounds: crate::bounds::Bounds,
    /// The bone with the largest weight per source vertex (see [`LodSource::bones`]).
    pub bones: Vec<u32>,
    /// 1 when the source's front faces are counter-clockwise (`(b - a) x (c - a)` points out of
    /// the front), -1 when clockwise (Godot's convention); see [`winding`].
    pub winding: f32,
}

impl SourceTriangles {
    /// The triangles of every surface of `source` at `positions` (one per source vertex; indices
    /// already checked). Fails when every triangle is degenerate.
    pub fn new(source: &LodSource, positions: &[Vec3]) -> Result<Self> {
        let mut triangles = Vec::new();
        let mut surface = Vec::new();
        for (s, surf) in source.surfaces.iter().enumerate() {
            for t in surf.indices.chunks_exact(3) {
                triangles.push([t[0], t[1], t[2]]);
                surface.push(s as u32);
            }
        }
        let corners = triangles
            .iter()
            .map(|t| t.map(|v| positions[v as usize]))
            .collect();
        let bvh = TriangleBvh::new(corners, min_area(positions));
        if bvh.is_empty() {
            return Err(VatError::InvalidValue {
                what: "LOD2 source mesh",
                detail: format!(
                    "all {} triangles have zero area; there is no surface to remesh",
                    triangles.len()
                ),
            });
        }
        let winding = winding(&triangles, positions, &source.normals);
        let bounds = crate::bounds::Bounds::from_points(
            &triangles
                .iter()
                .flatten()
                .map(|&v| positions[v as usize])
                .collect::<Vec<_>>(),
        );
        Ok(Self {
            triangles,
            surface,
            bvh,
            bounds,
            bones: source.bones.clone(),
            winding,
        })
    }
}

/// Which way the source's front faces wind: 1 for counter-clockwise, -1 for clockwise. Read
/// from the vertex normals (the side most triangles' normals point to), or, when the normals do
/// not say (missing, zero, or split evenly), from the sign of the enclosed volume, which is
/// positive for a closed counter-clockwise mesh.
pub(crate) fn winding(triangles: &[[u32; 3]], positions: &[Vec3], normals: &[Vec3]) -> f32 {
    let (mut agree, mut total, mut volume) = (0.0f64, 0.0f64, 0.0f64);
    for t in triangles {
        let [a, b, c] = t.map(|v| positions[v as usize]);
        let cross = (b - a).cross(c - a);
        let n: Vec3 = t
            .iter()
            .map(|&v| normals.get(v as usize).copied().unwrap_or_default())
            .sum();
        agree += f64::from(cross.dot(n));
        total += f64::from(cross.length() * n.length());
        volume += f64::from(a.dot(b.cross(c)));
    }
    let sign = if agree.abs() > 0.25 * total {
        agree
    } else {
        volume
    };
    if sign < 0.0 {
        -1.0
    } else {
        1.0
    }
}

/// Area below which a triangle counts as degenerate: tiny against the points' bounding box.
pub(crate) fn min_area(positions: &[Vec3]) -> f32 {
    let b = crate::bounds::Bounds::from_points(positions);
    let diagonal = (b.max - b.min).length();
    (diagonal * 1e-6) * (diagonal * 1e-6)
}

/// Moves every vertex of `mesh` onto the source surface and binds it there. Vertex `i` of the
/// result uses column `i`; each triangle draws with the surface most of its vertices bind to
/// (no majority: the surface nearest to its centre).
///
/// A vertex goes to the nearest source point facing its way (source triangle normal within 90
/// degrees of the vertex normal) unless that is more than `slack` farther than the nearest point
/// of any facing: so the outside of a thin part or of a crease does not wrap onto the inside and
/// flip, while a side with no source facing it (a one-sided plane's back) still wraps.
///
/// Then a vertex moves to a corner of its triangle within `snap` of its point that lies farther
/// out along the vertex normal (the farthest out of those) and follows the same bone as the
/// point's heaviest corner (a corner across a joint would make the vertex follow another bone):
/// a point inside a source facet lies inside the facet's corners by the facet's own sag, and on
/// a coarse source (a low-poly character) those corners are what makes its silhouette; LOD2's
/// flat triangles between points sunk into facets would leave that rim uncovered.
///
/// A vertex considers only the source triangles `t` for which `same_part(anchor, t)` holds,
/// where `anchor` is the source triangle nearest to it among those `piece(vertex, t)` takes (the
/// triangles of the parts its piece was remeshed from): so a vertex of one rigid part never
/// binds to a nearby part that moves away. `piece` must take at least one triangle of the BVH
/// for each vertex and `same_part(anchor, anchor)` must hold; `|_, _| true` for both considers
/// every triangle.
pub(crate) fn bind(
    mesh: &Mesh,
    source: &SourceTriangles,
    source_positions: &[Vec3],
    slack: f32,
    snap: f32,
    piece: impl Fn(usize, u32) -> bool + Sync,
    same_part: impl Fn(u32, u32) -> bool + Sync,
) -> (LodLevel, Vec<ColumnSource>) {
    let face_normal = |[a, b, c]: [Vec3; 3]| (b - a).cross(c - a);
    let source_normals: Vec<Vec3> = source
        .triangles
        .iter()
        .map(|t| face_normal(t.map(|v| source_positions[v as usize])) * source.winding)
        .collect();
    let mut vertex_normals = vec![Vec3::ZERO; mesh.positions.len()];
    for t in mesh.indices.chunks_exact(3) {
        let n = face_normal([0, 1, 2].map(|k| mesh.positions[t[k] as usize]));
        for &v in t {
            vertex_normals[v as usize] += n;
        }
    }
    let hits: Vec<_> = mesh
        .positions
        .iter()
        .zip(&vertex_normals)
        .enumerate()
        .map(|(v, (&p, &n))| {
            let anchor = source
                .bvh
                .nearest_where(p, |t| piece(v, t))
                .expect("the piece takes a triangle of the BVH");
            let accept = |t: u32| same_part(anchor.triangle, t);
            let any = source
                .bvh
                .nearest_where(p, accept)
                .expect("the anchor itself is accepted");
            let facing = source
                .bvh
                .nearest_where(p, |t| accept(t) && source_normals[t as usize].dot(n) > 0.0);
            let hit = match facing {
                Some(f) if f.distance <= any.distance + slack => f,
                _ => any,
            };
            let corners = source.triangles[hit.triangle as usize];
            // Only to a corner on the bone the point mostly follows: a corner across a joint
            // would make the vertex follow the other bone.
            let bone = |k: usize| source.bones.get(corners[k] as usize).copied();
            let heaviest = super::nearest::heaviest(hit.weights);
            let same_bone = [0, 1, 2].map(|k| bone(k) == bone(heaviest));
            snap_outwards(hit, n, corners, same_bone, source_positions, snap)
        })
        .collect();
    let vertices: Vec<LodVertex> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| LodVertex {
            sources: source.triangles[h.triangle as usize],
            weights: h.weights,
            column: i as u32,
        })
        .collect();
    let columns = vertices
        .iter()
        .map(|v| ColumnSource::Bound {
            vertices: v.sources,
            weights: v.weights,
        })
        .collect();
    let mut by_surface: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
    for t in mesh.indices.chunks_exact(3) {
        let s = [t[0], t[1], t[2]].map(|v| source.surface[hits[v as usize].triangle as usize]);
        let surface = if s[0] == s[1] || s[0] == s[2] {
            s[0]
        } else if s[1] == s[2] {
            s[1]
        } else {
            let centre = t.iter().map(|&v| hits[v as usize].point).sum::<Vec3>() / 3.0;
            let h = source.bvh.nearest(centre).expect("non-empty");
            source.surface[h.triangle as usize]
        };
        // `mesh` is wound counter-clockwise seen from outside; follow the source's convention.
        let tri = if source.winding > 0.0 {
            [t[0], t[1], t[2]]
        } else {
            [t[0], t[2], t[1]]
        };
        by_surface
            .entry(surface)
            .or_default()
            .extend_from_slice(&tri);
    }
    let level = LodLevel {
        vertices,
        surfaces: by_surface
            .into_iter()
            .map(|(source_surface, indices)| LodSurface {
                source_surface,
                indices,
            })
            .collect(),
    };
    (level, columns)
}

/// `hit` moved to the corner of its triangle (`corners`, indices into `positions`) within
/// `snap` of its point that lies farthest along `normal` beyond it, if any.
fn snap_outwards(
    mut hit: Hit,
    normal: Vec3,
    corners: [u32; 3],
    allowed: [bool; 3],
    positions: &[Vec3],
    snap: f32,
) -> Hit {
    let out = |k: usize| normal.dot(positions[corners[k] as usize] - hit.point);
    let best = (0..3)
        .filter(|&k| {
            allowed[k] && positions[corners[k] as usize].distance(hit.point) <= snap && out(k) > 0.0
        })
        .max_by(|&a, &b| out(a).total_cmp(&out(b)));
    if let Some(k) = best {
        hit.weights = [0.0; 3];
        hit.weights[k] = 1.0;
        hit.point = positions[corners[k] as usize];
    }
    hit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lod_mesh::SourceSurface;

    #[test]
    fn vertices_bind_to_the_nearest_source_facing_their_way_within_the_slack() {
        // Source: a big triangle at y = 0 facing +y (surface 0) and one at y = 0.5 facing -y
        // (surface 1). The LOD mesh: a small triangle at y = 0.45 facing +y.
        let positions = vec![
            Vec3::new(-5.0, 0.0, -5.0),
            Vec3::new(0.0, 0.0, 5.0),
            Vec3::new(5.0, 0.0, -5.0),
            Vec3::new(-5.0, 0.5, -5.0),
            Vec3::new(5.0, 0.5, -5.0),
            Vec3::new(0.0, 0.5, 5.0),
        ];
        let surfaces = vec![
            SourceSurface {
                indices: vec![0, 1, 2],
                double_sided: false,
            },
            SourceSurface {
                indices: vec![3, 4, 5],
                double_sided: false,
            },
        ];
        #[allow(clippy::needless_update)] // fields LodSource gains later keep their defaults
        let normals = [
            Vec3::Y,
            Vec3::Y,
            Vec3::Y,
            Vec3::NEG_Y,
            Vec3::NEG_Y,
            Vec3::NEG_Y,
        ]
        .to_vec();
        let source = LodSource {
            positions,
            normals,
            surfaces,
            ..Default::default()
        };
        let tris = SourceTriangles::new(&source, &source.positions).unwrap();
        let mesh = Mesh {
            positions: vec![
                Vec3::new(0.0, 0.45, 0.0),
                Vec3::new(0.0, 0.45, 0.1),
                Vec3::new(0.1, 0.45, 0.0),
            ],
            indices: vec![0, 1, 2],
        };
        // Generous slack: the facing triangle 0.45 below wins over the nearer one 0.05 above.
        let (level, columns) = bind(
            &mesh,
            &tris,
            &source.positions,
            1.0,
            0.0,
            |_, _| true,
            |_, _| true,
        );
        assert!(level.vertices.iter().all(|v| v.sources == [0, 1, 2]));
        assert_eq!(level.surfaces.len(), 1);
        assert_eq!(level.surfaces[0].source_surface, 0);
        // The bound point is the vertex dropped onto y = 0.
        let v = level.vertices[0];
        let p: Vec3 = (0..3)
            .map(|k| source.positions[v.sources[k] as usize] * v.weights[k])
            .sum();
        assert!((p - Vec3::ZERO).length() < 1e-5, "{p}");
        assert_eq!(
            columns[0],
            ColumnSource::Bound {
                vertices: v.sources,
                weights: v.weights
            }
        );
        // Tight slack: the nearest point wins whatever its facing.
        let (level, _) = bind(
            &mesh,
            &tris,
            &source.positions,
            0.1,
            0.0,
            |_, _| true,
            |_, _| true,
        );
        assert!(level.vertices.iter().all(|v| v.sources == [3, 4, 5]));
        assert_eq!(level.surfaces[0].source_surface, 1);
    }

    #[test]
    fn a_vertex_snaps_only_to_a_corner_on_the_bone_it_mostly_follows() {
        // One source triangle tilted up towards corner 1; the LOD vertex lies over it, mostly
        // over corner 0. Corner 1 is farther out and within reach: the vertex snaps to it only
        // when corner 1 is on corner 0's bone, not across a joint.
        let bound_to = |bones: Vec<u32>| {
            let source = LodSource {
                positions: vec![Vec3::ZERO, Vec3::new(1.0, 0.3, 0.0), Vec3::Z],
                normals: vec![Vec3::Y; 3],
                bones,
                surfaces: vec![SourceSurface {
                    indices: vec![0, 1, 2],
                    double_sided: false,
                }],
                ..Default::default()
            };
            let tris = SourceTriangles::new(&source, &source.positions).unwrap();
            let p = Vec3::new(0.15, 0.5, 0.2);
            let mesh = Mesh {
                positions: vec![
                    p,
                    p + Vec3::new(0.0, 0.0, 0.01),
                    p + Vec3::new(0.01, 0.0, 0.0),
                ],
                indices: vec![0, 1, 2],
            };
            let (level, _) = bind(
                &mesh,
                &tris,
                &source.positions,
                1.0,
                2.0,
                |_, _| true,
                |_, _| true,
            );
            level.vertices[0].weights
        };
        assert_eq!(bound_to(vec![0, 0, 0]), [0.0, 1.0, 0.0]);
        let across = bound_to(vec![0, 1, 0]);
        assert!(across[0] > across[1] && across[1] > 0.0, "{across:?}");
    }

    #[test]
    fn a_vertex_snaps_to_a_corner_farther_out_within_reach() {
        let positions = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let hit = Hit {
            triangle: 0,
            point: Vec3::new(0.9, 0.05, 0.0),
            weights: [0.05, 0.9, 0.05],
            distance: 0.0,
        };
        let snapped = |normal: Vec3, snap: f32| {
            snap_outwards(hit, normal, [0, 1, 2], [true; 3], &positions, snap)
        };
        // Facing +x: corner 1 lies farther out and within reach.
        let s = snapped(Vec3::X, 0.2);
        assert_eq!((s.weights, s.point), ([0.0, 1.0, 0.0], Vec3::X));
        // Out of reach, or no corner farther out within reach: the point stays.
        assert_eq!(snapped(Vec3::X, 0.05), hit);
        assert_eq!(snapped(Vec3::NEG_X, 0.2), hit);
        // Facing +y: corner 2 is farther out but 1.3 away; with the reach for it, it wins.
        assert_eq!(snapped(Vec3::Y, 0.2), hit);
        assert_eq!(snapped(Vec3::Y, 2.0).weights, [0.0, 0.0, 1.0]);
    }
}
