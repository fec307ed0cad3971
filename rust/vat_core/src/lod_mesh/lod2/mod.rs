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
//!    nearby, and is bound to that triangle by barycentric weights (`bind.rs`). Its VAT column
//!    is the weighted sum of the triangle's three columns, so it follows the animation with no
//!    bones and the shader needs nothing special. Triangles wind like the source's (clockwise
//!    fronts for Godot).
//!
//! With poses (source-vertex positions per baked pose), the grid is split into pieces by rigid
//! part (`parts.rs`): bones whose points keep their distances over the poses form a part; each
//! solid sample goes to the part of its nearest source triangle (islands of a few samples join
//! the part around them); parts that touch in the grid away from their joints go to different
//! pieces, and each piece is extracted on its own. So an arm hanging at the thigh or a head on
//! a thin neck no longer merges with it in the shell and stretches into a web when the poses
//! pull them apart. All pieces are then simplified as one mesh (the target goes where the error
//! is), and each vertex binds within the part its piece came from (plus that part's joints).
//! Without poses the whole character is one piece. `build_chain` tries both and keeps the one
//! whose silhouettes check best.
//!
//! Either way, poses also shape the simplification: the manifold-safe collapses weigh their
//! error in up to [`SHAPE_POSES`] of them, chosen far apart (each surface vertex follows its
//! nearest source triangle there), so triangles that would cut into a bent knee or a raised arm
//! cost what they cost in that pose, not what they cost in the reference pose.
//!
//! Texture: a LOD2 vertex interpolates the bound triangle's UVs, so a LOD2 triangle whose
//! vertices bind into different UV charts smears the texture across the seam
//! ([`Lod2Stats::seam_crossing_triangles`] counts them). The better fix is a texture of LOD2's
//! own: unwrap LOD2 automatically and bake it from the source at LOD0's texel density.

mod bind;
mod collapse;
mod manifold;
mod nearest;
mod parts;
mod stats;
mod surface;
mod voxel;

#[cfg(test)]
mod parts_tests;
#[cfg(test)]
mod tests;

pub use manifold::is_closed_manifold;
pub use stats::{lod2_stats, Lod2Stats};

use glam::Vec3;

use crate::bounds::Bounds;
use crate::error::{Result, VatError};
use crate::lod_mesh::{ColumnSource, LodLevel, LodSource};

/// Taubin smoothing rounds applied to the voxel surface before simplifying.
const SMOOTH_ITERATIONS: usize = 6;
/// How much farther (in voxels) than the nearest source point a vertex may bind to reach a
/// source point facing its way (see `bind::bind`).
const BIND_SLACK_VOXELS: f32 = 2.0;
/// How far (in voxels) a bound vertex may move to a corner of its source triangle that lies
/// farther out (see `bind::bind`): the rim a coarse source's facets leave is within reach.
const SNAP_VOXELS: f32 = 2.0;
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
    check_poses(source, poses)?;
    let tris = bind::SourceTriangles::new(source, &source.positions)?;
    let corners: Vec<_> = tris
        .triangles
        .iter()
        .map(|t| t.map(|v| source.positions[v as usize]))
        .collect();
    let used: Vec<_> = tris
        .triangles
        .iter()
        .flatten()
        .map(|&v| source.positions[v as usize])
        .collect();
    let bounds = Bounds::from_points(&used);
    let voxel = voxel::choose_voxel_size(&bounds, voxel_size);
    let grid = voxel::voxelize(&corners, &bounds, voxel);
    let overlap = JOINT_OVERLAP_VOXELS * voxel;
    let rigid = parts::rigid_parts(
        source,
        &tris,
        if by_part { poses } else { &[] },
        PART_TOLERANCE_VOXELS * voxel,
        (target_triangles as usize / MIN_PART_TRIANGLES).max(1),
        overlap,
    );
    let dims = grid.dims;
    // One rigid part (no poses, or nothing moves apart): the whole grid is the one piece, and
    // no sample needs its nearest triangle.
    let (parts, grids) = if rigid.count > 1 {
        let mut nearest = parts::nearest_triangles(&grid, &tris);
        parts::absorb_islands(&grid, &mut nearest, &rigid);
        let parts = parts::merge_apart(source, &tris, &grid, &nearest, rigid.clone(), overlap);
        let grids = parts::part_grids(&grid, &nearest, &parts);
        (parts, grids)
    } else {
        (rigid.clone(), vec![grid])
    };
    // Every piece's surface in one mesh (disjoint components), so one simplification spends
    // the target where the error is, whatever piece it falls on.
    let mut mesh = surface::Mesh::default();
    let mut piece_of = Vec::new();
    for (piece, g) in grids.iter().enumerate() {
        let mut m = surface::extract(g);
        surface::smooth(&mut m, SMOOTH_ITERATIONS);
        let offset = mesh.positions.len() as u32;
        mesh.indices.extend(m.indices.iter().map(|i| i + offset));
        mesh.positions.extend(m.positions);
        piece_of.resize(mesh.positions.len(), piece as u32);
    }
    if mesh.indices.is_empty() {
        return Err(VatError::InvalidValue {
            what: "LOD2 remesh",
            detail: format!(
                "the voxel grid ({} x {} x {} at {voxel}) gave no surface",
                dims[0], dims[1], dims[2]
            ),
        });
    }
    let centres = bone_centres(&mesh, source, &tris);
    let shape_poses = spread_poses(poses, SHAPE_POSES);
    // A surface vertex in a pose: its nearest point of its piece's source triangles there, plus
    // its offset from that point in the reference pose.
    let in_poses = |vertices: &[u32]| -> Vec<Vec<Vec3>> {
        let hits: Vec<_> = vertices
            .iter()
            .map(|&v| {
                let p = mesh.positions[v as usize];
                let piece = piece_of[v as usize];
                let hit = tris
                    .bvh
                    .nearest_where(p, |t| {
                        parts.count == 1 || parts.of_triangle[t as usize] == piece
                    })
                    .expect("every piece has source triangles");
                (
                    tris.triangles[hit.triangle as usize],
                    hit.weights,
                    p - hit.point,
                )
            })
            .collect();
        shape_poses
            .iter()
            .map(|pose| {
                hits.iter()
                    .map(|(corners, weights, offset)| {
                        (0..3)
                            .map(|k| pose[corners[k] as usize] * weights[k])
                            .sum::<Vec3>()
                            + *offset
                    })
                    .collect()
            })
            .collect()
    };
    let (simplified, old) = simplify_closed(&mesh, &centres, in_poses, target_triangles as usize)?;
    let piece_of: Vec<u32> = old.iter().map(|&v| piece_of[v as usize]).collect();
    // A vertex anchors to the nearest triangle of its piece's parts, and binds within the
    // anchor's rigid part (and the triangles at that part's joints).
    let (level, columns) = bind::bind(
        &simplified,
        &tris,
        &source.positions,
        BIND_SLACK_VOXELS * voxel,
        SNAP_VOXELS * voxel,
        |v, t| parts.count == 1 || parts.of_triangle[t as usize] == piece_of[v],
        |anchor, t| rigid.accepts(rigid.of_triangle[anchor as usize], t),
    );
    if !is_closed_manifold(&level) {
        // Binding keeps the connectivity, so this would be a bug, not bad input.
        return Err(VatError::InvalidValue {
            what: "LOD2 remesh",
            detail: "the bound mesh is not closed and manifold".into(),
        });
    }
    Ok((level, columns))
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

/// `mesh` simplified to at most `target` triangles, closed and manifold, and for each of its
/// vertices the index of that vertex in `mesh`.
///
/// meshoptimizer first. It keeps a closed mesh closed but may pinch a thin tube into an edge
/// shared by four triangles, or flatten a small piece into two triangles on the same three
/// vertices; then it simplifies only to a looser target where it does not, and
/// the manifold-safe edge collapses of [`collapse`] take the rest (from the full surface if no
/// looser target works). `centres` are the vertices' bone centres (see [`bone_centres`]);
/// `in_poses` gives the listed vertices' positions in each pose the collapses weigh.
fn simplify_closed(
    mesh: &surface::Mesh,
    centres: &[Vec3],
    in_poses: impl Fn(&[u32]) -> Vec<Vec<Vec3>>,
    target: usize,
) -> Result<(surface::Mesh, Vec<u32>)> {
    if mesh.indices.len() / 3 <= target {
        return Ok((mesh.clone(), (0..mesh.positions.len() as u32).collect()));
    }
    let bounds = Bounds::from_points(&mesh.positions);
    let scale = 1.0
        / (bounds.max - bounds.min)
            .max_element()
            .max(f32::MIN_POSITIVE);
    let attributes: Vec<f32> = centres
        .iter()
        .flat_map(|c| (*c * scale).to_array())
        .collect();
    let locks = vec![false; mesh.positions.len()];
    // meshoptimizer may collapse a whole small component away; every piece must stay.
    let component = components(mesh);
    let count = component.iter().max().map_or(0, |&c| c as usize + 1);
    let closed = |indices: &[u32]| {
        let mut kept = vec![false; count];
        for &v in indices {
            kept[component[v as usize] as usize] = true;
        }
        !indices.is_empty()
            && kept.iter().all(|&k| k)
            && manifold::bad_edges(indices).is_empty()
            && !manifold::has_doubled_triangles(indices)
    };
    let mut start = None;
    for factor in [1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0] {
        let goal = (target as f32 * factor) as usize;
        let indices = surface::simplify(mesh, goal, &attributes, BONE_WEIGHT, &locks);
        if closed(&indices) {
            let (m, old) = surface::compact_mapped(&mesh.positions, &indices);
            if m.indices.len() / 3 <= target {
                return Ok((m, old));
            }
            start = Some((m, old));
            break;
        }
    }
    let (from, old) =
        start.unwrap_or_else(|| (mesh.clone(), (0..mesh.positions.len() as u32).collect()));
    let from_centres: Vec<Vec3> = old.iter().map(|&v| centres[v as usize]).collect();
    let (out, kept) = collapse::collapse_to_mapped(
        &from,
        &from_centres,
        COLLAPSE_BONE_WEIGHT,
        &in_poses(&old),
        target,
    );
    let count = out.indices.len() / 3;
    if count > target {
        return Err(VatError::InvalidValue {
            what: "LOD2 remesh",
            detail: format!(
                "the voxel surface simplifies to no fewer than {count} closed, manifold \
                 triangles, above the target of {target}; raise the target or the voxel size"
            ),
        });
    }
    if !manifold::indices_closed_manifold(&out.indices, out.positions.len())
        || manifold::has_doubled_triangles(&out.indices)
    {
        return Err(VatError::InvalidValue {
            what: "LOD2 remesh",
            detail: format!(
                "simplifying to {target} triangles left a mesh that is not closed and manifold"
            ),
        });
    }
    let old = kept.iter().map(|&k| old[k as usize]).collect();
    Ok((out, old))
}

/// Up to `count` of `poses`, far apart: the first, then each time the one farthest from those
/// already chosen (by the summed squared distances of a sample of vertices), so a joint's
/// extremes are in when the clips hold them.
fn spread_poses(poses: &[Vec<Vec3>], count: usize) -> Vec<&Vec<Vec3>> {
    let Some(first) = poses.first() else {
        return Vec::new();
    };
    // About 256 sample vertices are plenty to tell poses apart.
    let step = (first.len() / 256).max(1);
    let distance = |a: &[Vec3], b: &[Vec3]| -> f32 {
        a.iter()
            .step_by(step)
            .zip(b.iter().step_by(step))
            .map(|(p, q)| p.distance_squared(*q))
            .sum()
    };
    let mut chosen = vec![0usize];
    let mut nearest: Vec<f32> = poses.iter().map(|p| distance(p, first)).collect();
    while chosen.len() < count.min(poses.len()) {
        let (next, &d) = nearest
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .expect("poses is not empty");
        if d <= 0.0 {
            break;
        }
        chosen.push(next);
        for (n, pose) in nearest.iter_mut().zip(poses) {
            *n = n.min(distance(pose, &poses[next]));
        }
    }
    chosen.iter().map(|&k| &poses[k]).collect()
}

/// Per vertex of `mesh`, its connected component (through triangles), numbered from 0.
fn components(mesh: &surface::Mesh) -> Vec<u32> {
    let mut parent: Vec<u32> = (0..mesh.positions.len() as u32).collect();
    for t in mesh.indices.chunks_exact(3) {
        crate::lod_mesh::weld::union(&mut parent, t[0], t[1]);
        crate::lod_mesh::weld::union(&mut parent, t[0], t[2]);
    }
    let mut number = std::collections::HashMap::new();
    (0..mesh.positions.len() as u32)
        .map(|v| {
            let root = crate::lod_mesh::weld::find(&mut parent, v);
            let next = number.len() as u32;
            *number.entry(root).or_insert(next)
        })
        .collect()
}

/// Per vertex of `mesh`: the centre of the bone its nearest source point follows (the bone with
/// the largest weight on that triangle's heaviest corner; the mean of that bone's source
/// vertices). Collapsing an edge between two bones then costs their distance apart, so the
/// simplifiers keep vertex rings at the joints and LOD2 bends there instead of stretching long
/// triangles across them. Unskinned vertices form one group of their own.
fn bone_centres(
    mesh: &surface::Mesh,
    source: &LodSource,
    tris: &bind::SourceTriangles,
) -> Vec<Vec3> {
    let mut sums: std::collections::HashMap<u32, (Vec3, f32)> = Default::default();
    for (p, &b) in source.positions.iter().zip(&source.bones) {
        let e = sums.entry(b).or_default();
        e.0 += *p;
        e.1 += 1.0;
    }
    mesh.positions
        .iter()
        .map(|&p| {
            let hit = tris.bvh.nearest(p).expect("the BVH was checked non-empty");
            let corners = tris.triangles[hit.triangle as usize];
            let heaviest = (0..3)
                .max_by(|&a, &b| hit.weights[a].total_cmp(&hit.weights[b]))
                .unwrap_or(0);
            let bone = source
                .bones
                .get(corners[heaviest] as usize)
                .copied()
                .unwrap_or(u32::MAX);
            sums.get(&bone).map_or(Vec3::ZERO, |(sum, n)| *sum / *n)
        })
        .collect()
}
