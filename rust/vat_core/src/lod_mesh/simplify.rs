//! LOD1: LOD0 simplified piece by piece on LOD0's own vertices.
//!
//! A piece is one connected part (through shared positions, so UV seams stay inside it) of the
//! triangles of one surface that follow one bone (the bone most of a triangle's corners follow).
//! meshoptimizer's simplifier removes vertices only, never moves one, so LOD1 keeps LOD0's
//! columns and UVs. A piece's open borders (where it meets another piece or the mesh ends) are
//! locked, and so is every point two pieces share: neighbouring pieces keep meeting exactly.
//! Collapses may cross normal splits (hard edges of flat-shaded meshes, which would otherwise
//! lock nearly every vertex) but not UV seams that LOD0 kept, whose points are protected; the
//! normal weighs in the collapse order. A triangle left with corners from both sides of a hard
//! edge then takes, at each such corner, the copy whose normal is nearest its face's, so hard
//! edges stay hard and faceted meshes faceted wherever a triangle lies on one side.
//!
//! Every piece is simplified down to one common error limit, relative to the whole character's
//! extent (not the piece's), searched so the total comes closest to `lod1_ratio` of LOD0: a thin
//! or detailed piece keeps the triangles its shape needs and a flat one gives up more. Points on
//! convex sharp edges (see [`super::features`]) are costlier to move, so outlines stay. Pieces on
//! the head region keep at least `head_ratio` of their triangles. If the total misses the window
//! (`lod1_ratio * 45/52 ..= lod1_ratio * 60/52`), the head goes down with the rest; if that
//! misses too, the pieces become each surface's connected parts whatever their bones (a small
//! character's per-bone pieces are mostly locked border); if that misses too, it is an error.

use std::collections::HashMap;

use meshopt::{SimplifyOptions, SimplifyVertex, VertexDataAdapter};
use rayon::prelude::*;

use super::features::sharp_points;
use super::weld::{find, union, Welded};
use super::{LodLevel, LodSettings, LodSource, LodSurface};
use crate::error::{Result, VatError};

/// The error limits the search spans, as powers of ten of the character's extent.
const ERROR_EXPONENTS: (f32, f32) = (-5.0, 3.0);
/// Steps of the bisection over the error limit's exponent.
const SEARCH_STEPS: u32 = 16;
/// The result window around `lod1_ratio`, as fractions of it (45% and 60% at 52%).
pub(crate) const WINDOW: (f32, f32) = (45.0 / 52.0, 60.0 / 52.0);
/// Weight of each normal component against position error in meshoptimizer's collapse order.
const NORMAL_WEIGHT: f32 = 0.5;

/// One piece: its surface (index into the level's surfaces), its triangles (LOD0 vertex
/// indices) and whether it is part of the head region.
struct Piece {
    surface: usize,
    indices: Vec<u32>,
    head: bool,
}

/// LOD1 from `lod0` aiming at `lod1_ratio` of its triangles (see the module docs). Errors: an
/// unknown `head_bone`, or a total outside the window.
pub(crate) fn simplify_lod1(
    source: &LodSource,
    lod0: &Welded,
    settings: &LodSettings,
) -> Result<LodLevel> {
    simplify_lod1_to(source, lod0, settings, settings.lod1_ratio, &[])
}

/// LOD1 from `lod0` aiming at `share` of its triangles, inside the window of `lod1_ratio` (a
/// retry after a failed silhouette check aims higher in the same window), with the points
/// `pinned` (per position group of `lod0`; empty for none) locked too: a repair keeps the points
/// whose loss opened holes. Errors as [`simplify_lod1`].
pub(crate) fn simplify_lod1_to(
    source: &LodSource,
    lod0: &Welded,
    settings: &LodSettings,
    share: f32,
    pinned: &[bool],
) -> Result<LodLevel> {
    let head = head_bones(source, &settings.head_bone)?;
    let attributes = Attributes::of(source, lod0);
    let positions: Vec<[f32; 3]> = lod0.positions.iter().map(|p| p.to_array()).collect();
    let bytes = meshopt::typed_to_bytes(&positions);
    let adapter = VertexDataAdapter::new(bytes, 12, 0).expect("12-byte positions");
    let extent = extent_of(&lod0.positions);
    let sharp = sharp_points(source, lod0);
    let total0 = lod0.level.triangle_count() as f32;
    let target = share * total0;
    let count = |r: &[Vec<u32>]| r.iter().map(|p| p.len() / 3).sum::<usize>() as f32;
    let window =
        (settings.lod1_ratio * WINDOW.0 * total0)..=(settings.lod1_ratio * WINDOW.1 * total0);
    // Per bone with the head's own share; per bone alike; per part alike (a mesh whose bones'
    // pieces are too small to lose half their triangles inside locked borders).
    let attempts = [
        (true, Some(settings.head_ratio)),
        (true, None),
        (false, None),
    ];
    let mut kept = 0.0;
    for (by_bone, head_ratio) in attempts {
        let pieces = pieces(lod0, &head, by_bone);
        let locks = locks(source, lod0, &pieces, &sharp, pinned);
        let run = |error: f32| -> Vec<Vec<u32>> {
            pieces
                .par_iter()
                .map(|p| {
                    let least = if p.head {
                        head_ratio.unwrap_or(0.0)
                    } else {
                        0.0
                    };
                    let limit = Limit {
                        least,
                        error: error * extent,
                    };
                    simplify_piece(&p.indices, &adapter, &attributes, &locks, limit)
                })
                .collect()
        };
        let best = search(run, target, &window, &count);
        kept = count(&best);
        if window.contains(&kept) {
            return Ok(assemble(
                lod0,
                &pieces,
                best,
                &NormalCopies::of(source, lod0),
            ));
        }
    }
    Err(VatError::InvalidValue {
        what: "LOD1",
        detail: format!(
            "simplifying LOD0's {total0} triangles piece by piece keeps {kept} ({:.1}%) at best, \
             outside {:.1}-{:.1}%: the pieces' locked borders leave too little to remove; \
             raise the LOD1 ratio",
            100.0 * kept / total0,
            100.0 * window.start() / total0,
            100.0 * window.end() / total0
        ),
    })
}

/// The run (one index list per piece) whose triangle total comes closest to `target`, among
/// those inside `window` if any is (a retry aiming near the window's top must not step over it), over
/// error limits `10^ERROR_EXPONENTS.0 ..= 10^ERROR_EXPONENTS.1` of the character's extent,
/// bisected on the exponent (the total falls as the limit grows).
fn search(
    run: impl Fn(f32) -> Vec<Vec<u32>>,
    target: f32,
    window: &std::ops::RangeInclusive<f32>,
    count: &impl Fn(&[Vec<u32>]) -> f32,
) -> Vec<Vec<u32>> {
    let (mut lo, mut hi) = ERROR_EXPONENTS;
    // Outside the window ranks after inside, then the distance to the target.
    let mut best_key = (true, f32::INFINITY);
    let mut best = Vec::new();
    for _ in 0..SEARCH_STEPS {
        let k = 0.5 * (lo + hi);
        let result = run(10f32.powf(k));
        let n = count(&result);
        let key = (!window.contains(&n), (n - target).abs());
        if key < best_key {
            (best_key, best) = (key, result);
        }
        if n > target {
            lo = k;
        } else {
            hi = k;
        }
    }
    best
}

/// The largest side of the points' bounds (at least the smallest positive float).
fn extent_of(points: &[glam::Vec3]) -> f32 {
    let (lo, hi) = points.iter().fold(
        (glam::Vec3::splat(f32::MAX), glam::Vec3::splat(f32::MIN)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    (hi - lo).max_element().max(f32::MIN_POSITIVE)
}

/// Where a piece's simplification stops: at `least` of its triangles, or before the first
/// collapse whose error (in the character's units) passes `error`, whichever comes first.
#[derive(Clone, Copy)]
struct Limit {
    least: f32,
    error: f32,
}

/// Per-vertex attributes meshoptimizer weighs against position error: the normal.
struct Attributes {
    values: Vec<f32>,
    weights: Vec<f32>,
}

impl Attributes {
    fn of(source: &LodSource, lod0: &Welded) -> Self {
        let values = lod0
            .level
            .vertices
            .iter()
            .flat_map(|v| source.normals[v.sources[0] as usize].to_array())
            .collect();
        Self {
            values,
            weights: vec![NORMAL_WEIGHT; 3],
        }
    }
}

/// One piece simplified down to `limit`, borders and `locks` kept.
fn simplify_piece(
    indices: &[u32],
    adapter: &VertexDataAdapter<'_>,
    attributes: &Attributes,
    locks: &[SimplifyVertex],
    limit: Limit,
) -> Vec<u32> {
    let triangles = indices.len() / 3;
    let keep = ((limit.least * triangles as f32).round() as usize).min(triangles);
    if keep == triangles {
        return indices.to_vec();
    }
    let options = SimplifyOptions::LockBorder
        | SimplifyOptions::Sparse
        | SimplifyOptions::Permissive
        | SimplifyOptions::ErrorAbsolute;
    meshopt::simplify_with_attributes_and_locks(
        indices,
        adapter,
        &attributes.values,
        &attributes.weights,
        12,
        locks,
        keep * 3,
        limit.error,
        options,
        None,
    )
}

/// Bones of the head region: `head_bone` (or, if empty, the first bone whose name contains
/// "head") and every bone whose name contains "head", any case.
pub(crate) fn head_bones(source: &LodSource, head_bone: &str) -> Result<Vec<bool>> {
    let mut head: Vec<bool> = source
        .bone_names
        .iter()
        .map(|n| n.to_lowercase().contains("head"))
        .collect();
    if !head_bone.is_empty() {
        let Some(b) = source.bone_names.iter().position(|n| n == head_bone) else {
            return Err(VatError::InvalidValue {
                what: "LOD head bone",
                detail: format!(
                    "no bone is named '{head_bone}' (the skeleton has {} bones); name one of \
                     them, or leave it empty to use the first bone whose name contains 'head'",
                    source.bone_names.len()
                ),
            });
        };
        head[b] = true;
    }
    Ok(head)
}

/// LOD0's triangles split into pieces, in (surface, bone, first triangle) order; with
/// `split_bones` false, into connected parts of each surface only (none of them the head's).
fn pieces(lod0: &Welded, head: &[bool], split_bones: bool) -> Vec<Piece> {
    let mut out = Vec::new();
    for (s, surface) in lod0.level.surfaces.iter().enumerate() {
        let mut by_bone: HashMap<u32, Vec<[u32; 3]>> = HashMap::new();
        for t in surface.indices.chunks_exact(3) {
            let b = [t[0], t[1], t[2]].map(|v| lod0.bones[v as usize]);
            let bone = match split_bones {
                false => u32::MAX,
                true if b[1] == b[2] => b[1],
                true => b[0],
            };
            by_bone.entry(bone).or_default().push([t[0], t[1], t[2]]);
        }
        let mut bones: Vec<u32> = by_bone.keys().copied().collect();
        bones.sort_unstable();
        for bone in bones {
            let is_head = head.get(bone as usize).copied().unwrap_or(false);
            for indices in components(lod0, &by_bone[&bone]) {
                out.push(Piece {
                    surface: s,
                    indices,
                    head: is_head,
                });
            }
        }
    }
    out
}

/// `triangles` grouped into parts connected through shared positions, in first-triangle order.
fn components(lod0: &Welded, triangles: &[[u32; 3]]) -> Vec<Vec<u32>> {
    let mut parent: Vec<u32> = (0..triangles.len() as u32).collect();
    let mut first_at: HashMap<u32, u32> = HashMap::new();
    for (i, t) in triangles.iter().enumerate() {
        for &v in t {
            let g = lod0.position_group[v as usize];
            match first_at.get(&g) {
                Some(&j) => union(&mut parent, j, i as u32),
                None => {
                    first_at.insert(g, i as u32);
                }
            }
        }
    }
    let mut slot: HashMap<u32, usize> = HashMap::new();
    let mut out: Vec<Vec<u32>> = Vec::new();
    for (i, t) in triangles.iter().enumerate() {
        let root = find(&mut parent, i as u32);
        let k = *slot.entry(root).or_insert_with(|| {
            out.push(Vec::new());
            out.len() - 1
        });
        out[k].extend_from_slice(t);
    }
    out
}

/// Per LOD0 vertex: locked when its point is shared by two or more pieces or `pinned` (per
/// position group, possibly empty); protected (its UV
/// seam kept) when another vertex of its surface at the same point has another UV; a priority
/// (costlier to move) when its point is `sharp` (per position group).
fn locks(
    source: &LodSource,
    lod0: &Welded,
    pieces: &[Piece],
    sharp: &[bool],
    pinned: &[bool],
) -> Vec<SimplifyVertex> {
    let mut owner: HashMap<u32, usize> = HashMap::new();
    let mut shared: HashMap<u32, bool> = HashMap::new();
    let mut uv_at: HashMap<(usize, u32), glam::Vec2> = HashMap::new();
    let mut seam: HashMap<(usize, u32), bool> = HashMap::new();
    for (p, piece) in pieces.iter().enumerate() {
        for &v in &piece.indices {
            let g = lod0.position_group[v as usize];
            let first = *owner.entry(g).or_insert(p);
            if first != p {
                shared.insert(g, true);
            }
            let uv = source.uvs[lod0.level.vertices[v as usize].sources[0] as usize];
            if *uv_at.entry((piece.surface, g)).or_insert(uv) != uv {
                seam.insert((piece.surface, g), true);
            }
        }
    }
    let mut flags = vec![SimplifyVertex::None; lod0.level.vertices.len()];
    for piece in pieces {
        for &v in &piece.indices {
            let g = lod0.position_group[v as usize];
            let pin = pinned.get(g as usize).copied().unwrap_or(false);
            flags[v as usize] = if pin || shared.contains_key(&g) {
                SimplifyVertex::Lock
            } else if seam.contains_key(&(piece.surface, g)) {
                SimplifyVertex::Protect
            } else {
                SimplifyVertex::None
            };
            if sharp[g as usize] {
                flags[v as usize] |= SimplifyVertex::Priority;
            }
        }
    }
    flags
}

/// LOD0's hard edges: per LOD0 vertex, the vertices of its surface at its point with its UV and
/// dominant bone, which differ from it only in their normal (one copy per side of the edge, as the weld kept
/// them), and each vertex's normal.
struct NormalCopies {
    /// Per LOD0 vertex, the index of its list in `lists`; `u32::MAX` where it has no copy.
    list_of: Vec<u32>,
    lists: Vec<Vec<u32>>,
    normals: Vec<glam::Vec3>,
}

impl NormalCopies {
    fn of(source: &LodSource, lod0: &Welded) -> Self {
        let vertices = &lod0.level.vertices;
        let mut by_key: HashMap<(u32, u32, u32, [u32; 2]), Vec<u32>> = HashMap::new();
        for (s, surface) in lod0.level.surfaces.iter().enumerate() {
            for &v in &surface.indices {
                let uv = source.uvs[vertices[v as usize].sources[0] as usize];
                // The same dominant bone, as the weld asks of copies it joins: copies that
                // follow other bones would part when the character moves.
                let key = (
                    s as u32,
                    lod0.position_group[v as usize],
                    lod0.bones[v as usize],
                    uv.to_array().map(f32::to_bits),
                );
                let list = by_key.entry(key).or_default();
                if !list.contains(&v) {
                    list.push(v);
                }
            }
        }
        let mut list_of = vec![u32::MAX; vertices.len()];
        let mut lists = Vec::new();
        for list in by_key.into_values().filter(|l| l.len() > 1) {
            for &v in &list {
                list_of[v as usize] = lists.len() as u32;
            }
            lists.push(list);
        }
        let normals = vertices
            .iter()
            .map(|v| source.normals[v.sources[0] as usize])
            .collect();
        Self {
            list_of,
            lists,
            normals,
        }
    }

    /// `triangle` (LOD0 vertices) with each corner on a hard edge replaced by its copy whose
    /// normal is closest to the triangle's face normal. A collapse across a hard edge leaves a
    /// triangle with corners from both sides, shaded as if the edge were smooth; this gives each
    /// corner the side the triangle faces, so a faceted mesh stays faceted and a crease stays
    /// sharp wherever the simplified triangles still lie on one side of it.
    fn sides(&self, lod0: &Welded, triangle: [u32; 3]) -> [u32; 3] {
        if triangle
            .iter()
            .all(|&v| self.list_of[v as usize] == u32::MAX)
        {
            return triangle;
        }
        let [a, b, c] = triangle.map(|v| lod0.positions[v as usize]);
        let mut face = (b - a).cross(c - a);
        // Orient it by the corners' own normals, whatever the winding convention.
        let corners: glam::Vec3 = triangle.iter().map(|&v| self.normals[v as usize]).sum();
        if face.dot(corners) < 0.0 {
            face = -face;
        }
        let Some(face) = face.try_normalize() else {
            return triangle;
        };
        triangle.map(
            |v| match self.lists.get(self.list_of[v as usize] as usize) {
                None => v,
                Some(list) => list.iter().copied().fold(v, |best, c| {
                    if self.normals[c as usize].dot(face) > self.normals[best as usize].dot(face) {
                        c
                    } else {
                        best
                    }
                }),
            },
        )
    }
}

/// The level from each piece's triangles, each corner on the side of a hard edge its triangle
/// faces ([`NormalCopies::sides`]): LOD0's vertices that are used, in LOD0's order.
fn assemble(
    lod0: &Welded,
    pieces: &[Piece],
    mut result: Vec<Vec<u32>>,
    copies: &NormalCopies,
) -> LodLevel {
    for indices in &mut result {
        for t in indices.chunks_exact_mut(3) {
            t.copy_from_slice(&copies.sides(lod0, [t[0], t[1], t[2]]));
        }
    }
    let mut used = vec![false; lod0.level.vertices.len()];
    for &v in result.iter().flatten() {
        used[v as usize] = true;
    }
    let mut remap = vec![u32::MAX; used.len()];
    let mut level = LodLevel::default();
    for (v, _) in used.iter().enumerate().filter(|(_, u)| **u) {
        remap[v] = level.vertices.len() as u32;
        level.vertices.push(lod0.level.vertices[v]);
    }
    let mut surfaces: Vec<Vec<u32>> = vec![Vec::new(); lod0.level.surfaces.len()];
    for (piece, indices) in pieces.iter().zip(result) {
        surfaces[piece.surface].extend(indices.iter().map(|&v| remap[v as usize]));
    }
    for (s, indices) in surfaces.into_iter().enumerate() {
        if !indices.is_empty() {
            level.surfaces.push(LodSurface {
                source_surface: lod0.level.surfaces[s].source_surface,
                indices,
            });
        }
    }
    level
}

#[cfg(test)]
mod tests;
