//! The remesh every LOD2 candidate is simplified from (steps 1 and 2 of the module docs), and
//! the search over candidates that shares it.
//!
//! A chain tries up to three triangle targets at up to two voxel sizes, whole and by part. The
//! remesh depends only on the voxel size and the rigid parts (which depend on the target only
//! through the cap on their number), so [`Lod2Search`] builds each once; and the manifold-safe
//! collapses from a whole remesh surface run once for every target ([`Shared`]).

use std::sync::Arc;

use glam::Vec3;
use rayon::prelude::*;

use super::bind::{self, SourceTriangles};
use super::closed::{simplify_closed_with, Shared};
use super::parts::{self, Parts};
use super::{surface, voxel};
use super::{
    BIND_SLACK_VOXELS, JOINT_OVERLAP_VOXELS, MIN_PART_TRIANGLES, PART_TOLERANCE_VOXELS,
    SHAPE_POSES, SMOOTH_ITERATIONS, SNAP_VOXELS,
};
use crate::error::{Result, VatError};
use crate::lod_mesh::{ColumnSource, LodLevel, LodSource};

/// The rigid parts a remesh at `voxel_size` for `target` triangles uses: by bone over `poses`
/// when `by_part`, capped so each part can get [`MIN_PART_TRIANGLES`]; one part otherwise.
fn rigid_for(
    source: &LodSource,
    tris: &SourceTriangles,
    voxel_size: f32,
    poses: &[Vec<Vec3>],
    by_part: bool,
    target: usize,
) -> Parts {
    let voxel = voxel::choose_voxel_size(&tris.bounds, voxel_size);
    parts::rigid_parts(
        source,
        tris,
        if by_part { poses } else { &[] },
        PART_TOLERANCE_VOXELS * voxel,
        (target / MIN_PART_TRIANGLES).max(1),
        JOINT_OVERLAP_VOXELS * voxel,
    )
}

/// The closed surface around the source's voxels, one piece per group of rigid parts, smoothed,
/// with what simplifying and binding it needs.
pub(crate) struct Remesh<'a> {
    source: &'a LodSource,
    tris: Arc<SourceTriangles>,
    voxel: f32,
    /// The rigid parts it was built for.
    rigid: Parts,
    /// The pieces: rigid parts merged where they do not touch away from their joints.
    parts: Parts,
    mesh: surface::Mesh,
    /// Piece per vertex of `mesh`.
    piece_of: Vec<u32>,
    /// Bone centre per vertex of `mesh` (see [`bone_centres`]).
    centres: Vec<Vec3>,
    shape_poses: Vec<&'a Vec<Vec3>>,
    shared: Shared,
}

impl<'a> Remesh<'a> {
    /// Voxelises `source` at `voxel_size` (0 = automatic) and extracts the surface of each piece
    /// of `rigid`; `targets` are the triangle counts [`Self::lod2`] may be asked for. Errors
    /// when the grid gives no surface.
    fn new(
        source: &'a LodSource,
        tris: Arc<SourceTriangles>,
        voxel_size: f32,
        poses: &'a [Vec<Vec3>],
        rigid: Parts,
        targets: &[usize],
    ) -> Result<Self> {
        let corners: Vec<_> = tris
            .triangles
            .iter()
            .map(|t| t.map(|v| source.positions[v as usize]))
            .collect();
        let voxel = voxel::choose_voxel_size(&tris.bounds, voxel_size);
        let grid = voxel::voxelize(&corners, &tris.bounds, voxel);
        let overlap = JOINT_OVERLAP_VOXELS * voxel;
        let dims = grid.dims;
        // One rigid part (no poses, or nothing moves apart): the whole grid is the one piece,
        // and no sample needs its nearest triangle.
        let (parts, grids) = if rigid.count > 1 {
            let mut nearest = parts::nearest_triangles(&grid, &tris);
            parts::absorb_islands(&grid, &mut nearest, &rigid);
            let parts = parts::merge_apart(source, &tris, &grid, &nearest, rigid.clone(), overlap);
            let mut grids = parts::part_grids(&grid, &nearest, &parts);
            // Each piece closed within the character (see `voxel::close_within`): no handle or
            // cavity the nearest-triangle labelling left costs triangles.
            grids
                .par_iter_mut()
                .for_each(|g| voxel::close_within(g, &grid.solid));
            (parts, grids)
        } else {
            (rigid.clone(), vec![grid])
        };
        // Every piece's surface in one mesh (disjoint components), so one simplification spends
        // the target where the error is, whatever piece it falls on.
        // Pieces extracted and smoothed in parallel, joined in order.
        let extracted: Vec<surface::Mesh> = grids
            .par_iter()
            .map(|g| {
                let mut m = surface::extract(g);
                surface::smooth(&mut m, SMOOTH_ITERATIONS);
                m
            })
            .collect();
        let mut mesh = surface::Mesh::default();
        let mut piece_of = Vec::new();
        for (piece, m) in extracted.into_iter().enumerate() {
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
        Ok(Self {
            source,
            tris,
            voxel,
            rigid,
            parts,
            mesh,
            piece_of,
            centres,
            shape_poses: spread_poses(poses, SHAPE_POSES),
            shared: Shared::new(targets),
        })
    }

    /// The listed vertices of the surface in each shape pose: each one's nearest point of its
    /// piece's source triangles there, plus its offset from that point in the reference pose.
    fn in_poses(&self, vertices: &[u32]) -> Vec<Vec<Vec3>> {
        let hits: Vec<_> = vertices
            .par_iter()
            .map(|&v| {
                let p = self.mesh.positions[v as usize];
                let piece = self.piece_of[v as usize];
                let hit = self
                    .tris
                    .bvh
                    .nearest_where(p, |t| {
                        self.parts.count == 1 || self.parts.of_triangle[t as usize] == piece
                    })
                    .expect("every piece has source triangles");
                (
                    self.tris.triangles[hit.triangle as usize],
                    hit.weights,
                    p - hit.point,
                )
            })
            .collect();
        self.shape_poses
            .par_iter()
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
    }

    /// LOD2 at `target` triangles: the surface simplified (see [`simplify_closed`]) and bound
    /// to the source (step 4 of the module docs). Vertex `i` uses column `i`.
    pub(crate) fn lod2(&self, target: usize) -> Result<(LodLevel, Vec<ColumnSource>)> {
        let (simplified, old) = simplify_closed_with(
            &self.mesh,
            &self.centres,
            |vertices| self.in_poses(vertices),
            target,
            Some(&self.shared),
        )?;
        let piece_of: Vec<u32> = old.iter().map(|&v| self.piece_of[v as usize]).collect();
        let (parts, rigid) = (&self.parts, &self.rigid);
        // A vertex anchors to the nearest triangle of its piece's parts, and binds within the
        // anchor's rigid part (and the triangles at that part's joints).
        let (mut level, mut columns) = bind::bind(
            &simplified,
            &self.tris,
            &self.source.positions,
            BIND_SLACK_VOXELS * self.voxel,
            SNAP_VOXELS * self.voxel,
            |v, t| parts.count == 1 || parts.of_triangle[t as usize] == piece_of[v],
            |anchor, t| rigid.accepts(rigid.of_triangle[anchor as usize], t),
        );
        if !super::is_closed_manifold(&level) {
            // Binding keeps the connectivity, so this would be a bug, not bad input.
            return Err(VatError::InvalidValue {
                what: "LOD2 remesh",
                detail: "the bound mesh is not closed and manifold".into(),
            });
        }
        super::hard_edges::keep_hard_edges(
            &mut level,
            &mut columns,
            &self.tris,
            &self.source.positions,
            &self.source.normals,
        );
        Ok((level, columns))
    }
}

/// The LOD2 candidates of one chain: the source checked and indexed once, each remesh built
/// once and kept for every target that uses the same voxel size and rigid parts.
pub(crate) struct Lod2Search<'a> {
    source: &'a LodSource,
    poses: &'a [Vec<Vec3>],
    tris: Arc<SourceTriangles>,
    targets: Vec<usize>,
    /// Remeshes built so far, with the voxel size and the `by_part` they were asked with.
    remeshes: Vec<(f32, bool, Remesh<'a>)>,
}

impl<'a> Lod2Search<'a> {
    /// A search over `targets` (the triangle counts candidates will be asked for). Errors as
    /// [`super::build_lod2`] does for the source and the poses.
    pub(crate) fn new(
        source: &'a LodSource,
        poses: &'a [Vec<Vec3>],
        targets: &[usize],
    ) -> Result<Self> {
        super::check_source(source)?;
        super::check_poses(source, poses)?;
        Ok(Self {
            source,
            poses,
            tris: Arc::new(SourceTriangles::new(source, &source.positions)?),
            targets: targets.to_vec(),
            remeshes: Vec::new(),
        })
    }

    /// [`super::build_lod2_with`] of the source and poses at `target` with `(voxel_size,
    /// by_part)`, with the same errors: the same answer, from a remesh built once for every
    /// target that uses the same voxel size and rigid parts.
    pub(crate) fn candidate(
        &mut self,
        target: u32,
        (voxel_size, by_part): (f32, bool),
    ) -> Result<(LodLevel, Vec<ColumnSource>)> {
        super::check_request(self.source, target, voxel_size)?;
        let target = target as usize;
        let rigid = rigid_for(
            self.source,
            &self.tris,
            voxel_size,
            self.poses,
            by_part,
            target,
        );
        let known = self.remeshes.iter().position(|(v, p, r)| {
            *v == voxel_size && *p == by_part && r.rigid.of_triangle == rigid.of_triangle
        });
        let k = match known {
            Some(k) => k,
            None => {
                let remesh = Remesh::new(
                    self.source,
                    Arc::clone(&self.tris),
                    voxel_size,
                    self.poses,
                    rigid,
                    &self.targets,
                )?;
                self.remeshes.push((voxel_size, by_part, remesh));
                self.remeshes.len() - 1
            }
        };
        self.remeshes[k].2.lod2(target)
    }
}

/// Up to `count` of `poses`, far apart: the first, then each time the one farthest from those
/// already chosen (by the summed squared distances of a sample of vertices), so a joint's
/// extremes are in when the clips hold them.
pub(super) fn spread_poses(poses: &[Vec<Vec3>], count: usize) -> Vec<&Vec<Vec3>> {
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
        .par_iter()
        .map(|&p| {
            let hit = tris.bvh.nearest(p).expect("the BVH was checked non-empty");
            let corners = tris.triangles[hit.triangle as usize];
            let heaviest = super::nearest::heaviest(hit.weights);
            let bone = source
                .bones
                .get(corners[heaviest] as usize)
                .copied()
                .unwrap_or(u32::MAX);
            sums.get(&bone).map_or(Vec3::ZERO, |(sum, n)| *sum / *n)
        })
        .collect()
}
