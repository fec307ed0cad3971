//! Shrink-wrap and bind: each LOD2 vertex moves to the nearest point of the source surface and
//! is bound to that source triangle by barycentric weights.

use glam::Vec3;

use super::nearest::TriangleBvh;
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
        Ok(Self {
            triangles,
            surface,
            bvh,
        })
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
pub(crate) fn bind(mesh: &Mesh, source: &SourceTriangles) -> (LodLevel, Vec<ColumnSource>) {
    let hits: Vec<_> = mesh
        .positions
        .iter()
        .map(|&p| {
            source
                .bvh
                .nearest(p)
                .expect("the BVH was checked non-empty")
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
        by_surface.entry(surface).or_default().extend_from_slice(t);
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
