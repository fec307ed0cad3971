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

mod chain;
mod checked;
mod columns;
mod features;
#[cfg(test)]
mod lod2_holes;
#[cfg(test)]
mod real_characters;
mod silhouette;
mod silhouette_cache;
mod simplify;
#[cfg(test)]
mod test_meshes;
mod weld;

pub use chain::{build_chain, build_checked_chain, build_checked_chain_keeping_masks};
pub use columns::{apply_columns, apply_columns_in, level_positions};
pub use silhouette::{
    check_placed_silhouettes, check_placed_silhouettes_against, check_silhouettes,
    silhouette_image, SilhouetteImage, SilhouetteReport, SourceMasks, MAX_HOLES_PCT, MAX_LOSS_PCT,
    SILHOUETTE_SIZE, SILHOUETTE_VIEWS,
};

/// One image a surface may be drawn with (its albedo, or one texture variation), as RGBA8 rows
/// from the top. The weld samples it to tell which UV seams it can close without a visible change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SurfaceTexture {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes, RGBA, row by row from the top (UV (0, 0) is the top-left).
    pub rgba8: Vec<u8>,
}

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
    /// Per source surface, every image it may be drawn with (albedo, each texture variation);
    /// an empty list for a surface drawn without a texture. Empty as a whole when unknown: the
    /// weld then closes no UV seam (see [`build_chain`]).
    #[serde(default)]
    pub textures: Vec<Vec<SurfaceTexture>>,
}

/// What [`build_chain`] aims for. The defaults follow the recipe.
#[derive(Debug, Clone, PartialEq)]
pub struct LodSettings {
    /// LOD1's share of LOD0's triangles over the whole mesh, in (0, 1]; the result lands within
    /// `lod1_ratio * 45/52 ..= lod1_ratio * 60/52` (45-60% at the default 0.52) or is an error.
    pub lod1_ratio: f32,
    /// The head bone's name; empty picks the first bone whose name contains "head" (any case).
    /// Pieces on it, or on any bone whose name contains "head", keep at least `head_ratio`.
    pub head_bone: String,
    /// The least share of its triangles the head region keeps in LOD1, in (0, 1].
    pub head_ratio: f32,
    /// LOD2's triangle target; must be below LOD1's triangle count. When no LOD2 of this many
    /// triangles passes the silhouette check, the chain aims at twice and then four times it, at
    /// most half of LOD1's triangles (see `chain::lod2_targets`).
    pub lod2_triangles: u32,
    /// LOD2's remesh voxel edge in the character's units; 0 picks one from the bounds.
    pub voxel_size: f32,
    /// Coincident vertices weld when their normals are at most this many degrees apart. The
    /// default, 0.1, welds only copies the render cannot tell apart (a diffuse shade changes by
    /// at most sin 0.1 degrees, under half of 1/255): hard edges stay hard and a faceted
    /// character stays faceted.
    pub weld_normal_degrees: f32,
    /// A UV seam on an edge whose faces meet at more than this many degrees stays split.
    pub sharp_edge_degrees: f32,
}

impl Default for LodSettings {
    fn default() -> Self {
        Self {
            lod1_ratio: 0.52,
            head_bone: String::new(),
            head_ratio: 0.75,
            lod2_triangles: 300,
            voxel_size: 0.0,
            weld_normal_degrees: 0.1,
            sharp_edge_degrees: 70.0,
        }
    }
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
