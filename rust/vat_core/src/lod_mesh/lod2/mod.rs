//! LOD2: a new closed mesh of a few hundred triangles, bound to the source by barycentric weights.
//!
//! Steps ([`build_lod2`]):
//! 1. Thicken and voxelise: samples within a shell of the source surface are solid (thin parts
//!    and one-sided planes become volumes), the outside is flooded from the grid border and
//!    everything it does not reach is solid too (`voxel.rs`).
//! 2. Extract the closed surface around the solid samples by marching tetrahedra with one
//!    consistent diagonal rule, so it is manifold by construction, and smooth off the staircase
//!    (`surface.rs`).
//! 3. Simplify to the triangle target with meshoptimizer, weighing each vertex's bone centre so
//!    joints keep rings of vertices. Where meshoptimizer would pinch a thin part (an edge in four
//!    triangles), it goes only part of the way and manifold-safe edge collapses finish
//!    (`collapse.rs`).
//! 4. Shrink-wrap and bind: every vertex moves to the nearest point of the source surface (the
//!    reference pose) that faces its way, or to a corner of that triangle that lies farther out
//!    nearby on the bone the point mostly follows, and is bound to that triangle by barycentric
//!    weights (`bind.rs`). Its VAT column
//!    is the weighted sum of the triangle's three columns, so it follows the animation with no
//!    bones and the shader needs nothing special. Triangles wind like the source's (clockwise
//!    fronts for Godot).
//! 5. Keep the hard edges it can: a triangle corner whose bound normal lies far off the
//!    triangle's face takes a copy of its vertex bound to a coincident source point that faces
//!    its way, where the source has one (`hard_edges.rs`).
//!
//! Steps 1 and 2 depend only on the voxel size and the rigid parts, so a chain that tries
//! several targets builds each remesh once (`remesh.rs`), and step 3's work shared between
//! targets (meshoptimizer's result per goal, the collapses from the whole surface) is done once
//! (`closed.rs`).
//!
//! With poses (source-vertex positions per baked pose), the grid is split into pieces by rigid
//! part (`parts.rs`): bones whose points keep their distances over the poses form a part; each
//! solid sample goes to the part of its nearest source triangle (islands of a few samples join
//! the part around them); parts that touch in the grid away from their joints go to different
//! pieces, and each piece is closed by one sample within the character's solid samples (no
//! handle or cavity of the labelling costs triangles: `voxel::close_within`) and extracted on
//! its own. So an arm hanging at the thigh or a head on
//! a thin neck no longer merges with it in the shell and stretches into a web when the poses
//! pull them apart. All pieces are then simplified as one mesh (the target goes where the error
//! is), and each vertex binds within the part its piece came from (plus that part's joints).
//! Without poses the whole character is one piece. `build_chain` tries both and keeps the one
//! whose silhouettes check best.
//!
//! Either way, poses also shape the simplification: the manifold-safe collapses weigh their
//! error in up to `SHAPE_POSES` of them, chosen far apart (each surface vertex follows its
//! nearest source triangle there), so triangles that would cut into a bent knee or a raised arm
//! cost what they cost in that pose, not what they cost in the reference pose.
//!
//! Texture: a LOD2 vertex interpolates the bound triangle's UVs, so a LOD2 triangle whose
//! vertices bind into different UV charts smears the texture across the seam
//! ([`Lod2Stats::seam_crossing_triangles`] counts them). The better fix is a texture of LOD2's
//! own: unwrap LOD2 automatically and bake it from the source at LOD0's texel density.

mod bind;
mod closed;
mod collapse;
mod hard_edges;
mod manifold;
mod nearest;
mod parts;
mod remesh;
mod stats;
mod surface;
mod voxel;

#[cfg(test)]
mod parts_tests;
#[cfg(test)]
mod tests;

pub use manifold::is_closed_manifold;
pub use stats::{lod2_stats, Lod2Stats, SHADING_OFF_DEGREES};

#[cfg(test)]
use closed::{components, simplify_closed};
#[cfg(test)]
use remesh::spread_poses;
pub(crate) use remesh::Lod2Search;

use glam::Vec3;

use crate::error::{Result, VatError};
use crate::lod_mesh::{ColumnSource, LodLevel, LodSource};

/// Taubin smoothing rounds applied to the voxel surface before simplifying.
const SMOOTH_ITERATIONS: usize = 6;
/// How much farther (in voxels) than the nearest source point a vertex may bind to reach a
/// source point facing its way (see `bind::bind`).
const BIND_SLACK_VOXELS: f32 = 2.0;
/// How far (in voxels) a bound vertex may move to a corner of its source triangle that lies
/// farther out (see `bind::bind`): the rim a coarse source's facets leave is within reach. 3
/// rather than 2: at a few hundred triangles LOD2's chords cut inside a low-poly source's
/// outline, and the corners a little farther away hold it out (KayKit's knight at 600
/// triangles: worst holes 1.24% at 2, 0.93% at 3). Only corners on the bone the point mostly
/// follows count, so a vertex never snaps across a joint (at 3 voxels, a bent capsule's LOD2
/// then stays as close to it as at 2).
const SNAP_VOXELS: f32 = 3.0;
/// Weight of the squared distance between bone centres against the quadric error in the
/// manifold-safe collapses (both in squared lengths).
const COLLAPSE_BONE_WEIGHT: f32 = 1.0;
/// Weight of the bone attribute against the position error while simplifying (see
/// [`bone_centres`]).
const BONE_WEIGHT: f32 = 1.0;
/// Two bones are one rigid part while no distance between them changes by more than this many
/// voxels over the poses (see `parts.rs`).
const PART_TOLERANCE_VOXELS: f32 = 1.0;
/// How far from a joint (in voxels) the parts on either side overlap.
const JOINT_OVERLAP_VOXELS: f32 = 1.0;
/// Most poses whose shape the manifold-safe collapses weigh (see [`spread_poses`]): enough to
/// take in each joint's extremes, few enough that simplifying stays cheap.
const SHAPE_POSES: usize = 8;
/// Triangles a rigid part should at least be able to get: the target over this caps the number
/// of parts.
const MIN_PART_TRIANGLES: usize = 16;

/// Builds LOD2 of `source`: a closed, manifold mesh of at most `target_triangles` triangles
/// (and usually just under it), remeshed at `voxel_size` (0 = automatic: the largest extent /
/// 40; always at least what keeps the grid within 192 samples per axis).
///
/// Returns the level and its columns: vertex `i` uses column `i`, a [`ColumnSource::Bound`] on
/// the source triangle nearest to it, and its `sources`/`weights` are that column's
/// vertices/weights. Each triangle draws with the source surface most of its vertices bind to.
///
/// Errors ([`VatError::InvalidValue`] naming what and why, or [`VatError::IndexOutOfRange`],
/// [`VatError::NonFinite`]): no triangles or only zero-area ones; a source index past the
/// positions; a non-finite position; a target of 0 or not below the source's triangle count; a
/// negative or non-finite voxel size; a remesh that comes out empty; a simplified mesh that is
/// not closed and manifold or cannot get down to the target.
pub fn build_lod2(
    source: &LodSource,
    target_triangles: u32,
    voxel_size: f32,
    poses: &[Vec<Vec3>],
) -> Result<(LodLevel, Vec<ColumnSource>)> {
    build_lod2_with(
        source,
        target_triangles,
        voxel_size,
        poses,
        !poses.is_empty(),
    )
}

/// [`build_lod2`], remeshed per rigid part over `poses` when `by_part`, else as one piece; in
/// both cases the simplification weighs its error in the poses (see the module docs). Same
/// errors as [`build_lod2`].
pub fn build_lod2_with(
    source: &LodSource,
    target_triangles: u32,
    voxel_size: f32,
    poses: &[Vec<Vec3>],
    by_part: bool,
) -> Result<(LodLevel, Vec<ColumnSource>)> {
    // The request first, so its errors come before those of the poses.
    check_request(source, target_triangles, voxel_size)?;
    Lod2Search::new(source, poses, &[target_triangles as usize])?
        .candidate(target_triangles, (voxel_size, by_part))
}

/// The source checked ([`check_source`]), the target below its triangle count and the voxel
/// size 0 or positive.
fn check_request(source: &LodSource, target_triangles: u32, voxel_size: f32) -> Result<()> {
    let source_triangles = check_source(source)?;
    if target_triangles == 0 || target_triangles as usize >= source_triangles {
        return Err(VatError::InvalidValue {
            what: "LOD2 triangle target",
            detail: format!(
                "{target_triangles} must be at least 1 and below the source's \
                 {source_triangles} triangles"
            ),
        });
    }
    if !(voxel_size.is_finite() && voxel_size >= 0.0) {
        return Err(VatError::InvalidValue {
            what: "LOD2 voxel size",
            detail: format!("{voxel_size} must be 0 (automatic) or a positive finite length"),
        });
    }
    Ok(())
}

/// Triangles of the source after checking indices and positions; an error when there are none.
fn check_source(source: &LodSource) -> Result<usize> {
    let n = source.positions.len();
    let mut triangles = 0;
    for (s, surf) in source.surfaces.iter().enumerate() {
        if !surf.indices.len().is_multiple_of(3) {
            return Err(VatError::InvalidValue {
                what: "LOD2 source mesh",
                detail: format!(
                    "surface {s} has {} indices, not a multiple of 3",
                    surf.indices.len()
                ),
            });
        }
        if let Some(&bad) = surf.indices.iter().find(|&&i| i as usize >= n) {
            return Err(VatError::IndexOutOfRange {
                what: "LOD2 source vertex index",
                index: bad as i64,
                len: n,
            });
        }
        triangles += surf.indices.len() / 3;
    }
    if triangles == 0 {
        return Err(VatError::InvalidValue {
            what: "LOD2 source mesh",
            detail: "it has no triangles".into(),
        });
    }
    if let Some(v) = source.positions.iter().position(|p| !p.is_finite()) {
        return Err(VatError::NonFinite {
            what: format!("LOD2 source position of vertex {v}"),
        });
    }
    Ok(triangles)
}

/// Every pose has one finite position per source vertex.
fn check_poses(source: &LodSource, poses: &[Vec<Vec3>]) -> Result<()> {
    for (k, pose) in poses.iter().enumerate() {
        crate::error::check_len("LOD2 pose positions", source.positions.len(), pose.len())?;
        if let Some(v) = pose.iter().position(|p| !p.is_finite()) {
            return Err(VatError::NonFinite {
                what: format!("LOD2 pose {k} position of vertex {v}"),
            });
        }
    }
    Ok(())
}
