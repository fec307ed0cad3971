//! Crowd LOD meshes cut by vertex count (every drawn vertex reads the VAT in every pass).
//!
//! The chain is built at bake time from the character's combined mesh ([`LodSource`]): LOD0 is
//! the source welded, LOD1 LOD0 simplified per piece, LOD2 a new closed mesh bound to the source
//! by barycentric weights. All levels share one VAT whose columns are [`ColumnSource`]s: a source
//! vertex, or a weighted sum of three (a bound column). Columns no level uses are not written.
//!
//! Every LOD vertex is a weighted combination of at most three source vertices
//! ([`LodVertex::sources`]), so the Godot side builds a level's arrays by interpolating the
//! source's attributes (UVs, colours, custom channels) and knows nothing of how it was made.

pub mod lod2;

use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

/// One surface (material slot) of the combined source mesh.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceSurface {
    /// Triangles as source-vertex indices, three per triangle.
    pub indices: Vec<u32>,
    /// True if the surface's material draws back faces (cull disabled): the silhouette check
    /// then counts both sides.
    pub double_sided: bool,
}

/// The character's combined mesh, one vertex per source vertex (the bake's vertex order).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LodSource {
    /// Positions in the character's space, in the reference pose (the first baked frame).
    pub positions: Vec<Vec3>,
    /// Unit normals in the same pose.
    pub normals: Vec<Vec3>,
    /// First UV set; zero where the source has none.
    pub uvs: Vec<Vec2>,
    /// The bone with the largest weight per vertex (`u32::MAX` for an unskinned vertex).
    pub bones: Vec<u32>,
    /// Bone names by index, to find the head region.
    pub bone_names: Vec<String>,
    /// Surfaces in the combined mesh's order.
    pub surfaces: Vec<SourceSurface>,
}

/// Where one VAT column's positions and normals come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColumnSource {
    /// A source vertex's skinned position and normal, as baked.
    Vertex(u32),
    /// `w0 * VAT[a] + w1 * VAT[b] + w2 * VAT[c]` at every frame (normal: the normalized weighted
    /// sum). Weights are >= 0 and sum to 1.
    Bound {
        /// The three source vertices (a source triangle's corners).
        vertices: [u32; 3],
        /// Their barycentric weights.
        weights: [f32; 3],
    },
}

/// One vertex of a LOD mesh.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LodVertex {
    /// Source vertices whose attributes (UV, colour, custom channels) this vertex interpolates;
    /// `[v, v, v]` with weights `[1, 0, 0]` for a copied source vertex.
    pub sources: [u32; 3],
    /// Interpolation weights, >= 0, summing to 1.
    pub weights: [f32; 3],
    /// This vertex's VAT column: an index into [`LodChain::columns`].
    pub column: u32,
}

/// One surface of a LOD mesh: the source surface it draws with (its material) and its triangles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LodSurface {
    /// Index into [`LodSource::surfaces`].
    pub source_surface: u32,
    /// Triangles as indices into [`LodLevel::vertices`].
    pub indices: Vec<u32>,
}

/// One level of detail.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LodLevel {
    /// The level's vertices.
    pub vertices: Vec<LodVertex>,
    /// The level's surfaces (a source surface that lost all its triangles is left out).
    pub surfaces: Vec<LodSurface>,
}

impl LodLevel {
    /// Triangles over all surfaces.
    pub fn triangle_count(&self) -> usize {
        self.surfaces.iter().map(|s| s.indices.len() / 3).sum()
    }
}

/// The whole chain: levels from most to least detailed, over one shared column list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LodChain {
    /// LOD0, LOD1, ...
    pub levels: Vec<LodLevel>,
    /// The VAT columns every level indexes, in texture order.
    pub columns: Vec<ColumnSource>,
}
