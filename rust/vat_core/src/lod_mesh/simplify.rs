//! LOD1: LOD0 simplified piece by piece on LOD0's own vertices.
//!
//! A piece is one connected part (through shared positions, so UV seams stay inside it) of the
//! triangles of one surface that follow one bone (the bone most of a triangle's corners follow).
//! meshoptimizer's simplifier removes vertices only, never moves one, so LOD1 keeps LOD0's
//! columns and UVs. A piece's open borders (where it meets another piece or the mesh ends) are
//! locked, and so is every point two pieces share: neighbouring pieces keep meeting exactly.
//!
//! Pieces on the head region keep `head_ratio` of their triangles, the others a common ratio,
//! searched so the total comes closest to `lod1_ratio` of LOD0. If that misses the window
//! (`lod1_ratio * 45/52 ..= lod1_ratio * 60/52`), the head goes down with the rest; if that
//! misses it too (locked borders leave too little to remove), it is an error.

use std::collections::HashMap;

use meshopt::{SimplifyOptions, VertexDataAdapter};
use rayon::prelude::*;

use super::weld::{find, union, Welded};
use super::{LodLevel, LodSettings, LodSource, LodSurface};
use crate::error::{Result, VatError};

/// The lowest ratio the search gives a piece.
const MIN_RATIO: f32 = 0.02;
/// Steps of the bisection over the ratio.
const SEARCH_STEPS: u32 = 14;
/// The result window around `lod1_ratio`, as fractions of it (45% and 60% at 52%).
pub(crate) const WINDOW: (f32, f32) = (45.0 / 52.0, 60.0 / 52.0);
/// meshoptimizer's error limit, relative to a piece's extent: no limit, the count decides.
const NO_ERROR_LIMIT: f32 = 1e3;

/// One piece: its surface (index into the level's surfaces), its triangles (LOD0 vertex
/// indices) and whether it is part of the head region.
struct Piece {
    surface: usize,
    indices: Vec<u32>,
    head: bool,
}

/// LOD1 from `lod0` (see the module docs). Errors: an unknown `head_bone`, or a total outside
/// the window.
pub(crate) fn simplify_lod1(
    source: &LodSource,
    lod0: &Welded,
    settings: &LodSettings,
) -> Result<LodLevel> {
    let head = head_bones(source, &settings.head_bone)?;
    let pieces = pieces(lod0, &head);
    let locks = locks(lod0, &pieces);
    let positions: Vec<[f32; 3]> = lod0.positions.iter().map(|p| p.to_array()).collect();
    let bytes = meshopt::typed_to_bytes(&positions);
    let adapter = VertexDataAdapter::new(bytes, 12, 0).expect("12-byte positions");
    let total0 = lod0.level.triangle_count() as f32;
    let target = settings.lod1_ratio * total0;
    let run = |head_ratio: Option<f32>, k: f32| -> Vec<Vec<u32>> {
        pieces
            .par_iter()
            .map(|p| {
                let ratio = if p.head { head_ratio.unwrap_or(k) } else { k };
                simplify_piece(&p.indices, &adapter, &locks, ratio)
            })
            .collect()
    };
    let count = |r: &[Vec<u32>]| r.iter().map(|p| p.len() / 3).sum::<usize>() as f32;
    let (lo, hi) = (
        settings.lod1_ratio * WINDOW.0 * total0,
        settings.lod1_ratio * WINDOW.1 * total0,
    );
    let mut best = search(|k| run(Some(settings.head_ratio), k), target, &count);
    if !(lo..=hi).contains(&count(&best)) {
        best = search(|k| run(None, k), target, &count);
    }
    let kept = count(&best);
    if !(lo..=hi).contains(&kept) {
        return Err(VatError::InvalidValue {
            what: "LOD1",
            detail: format!(
                "simplifying LOD0's {total0} triangles piece by piece keeps {kept} ({:.1}%), \
                 outside {:.1}-{:.1}%: the pieces' locked borders leave too little to remove; \
                 raise the LOD1 ratio",
                100.0 * kept / total0,
                100.0 * lo / total0,
                100.0 * hi / total0
            ),
        });
    }
    Ok(assemble(lod0, &pieces, best))
}

/// The run (one index list per piece) whose triangle total comes closest to `target`, over
/// ratios in `[MIN_RATIO, 1]` (the total grows with the ratio).
fn search(
    run: impl Fn(f32) -> Vec<Vec<u32>>,
    target: f32,
    count: &impl Fn(&[Vec<u32>]) -> f32,
) -> Vec<Vec<u32>> {
    let (mut lo, mut hi) = (MIN_RATIO, 1.0f32);
    let mut best: Option<(f32, Vec<Vec<u32>>)> = None;
    for _ in 0..SEARCH_STEPS {
        let k = 0.5 * (lo + hi);
        let result = run(k);
        let n = count(&result);
        if best.as_ref().is_none_or(|(d, _)| (n - target).abs() < *d) {
            best = Some(((n - target).abs(), result));
        }
        if n > target {
            hi = k;
        } else {
            lo = k;
        }
    }
    best.map(|(_, r)| r).unwrap_or_default()
}

/// One piece simplified to about `ratio` of its triangles, borders and `locks` kept.
fn simplify_piece(
    indices: &[u32],
    adapter: &VertexDataAdapter<'_>,
    locks: &[bool],
    ratio: f32,
) -> Vec<u32> {
    let triangles = indices.len() / 3;
    let keep = ((ratio * triangles as f32).round() as usize).clamp(1, triangles);
    if keep == triangles {
        return indices.to_vec();
    }
    meshopt::simplify_with_locks(
        indices,
        adapter,
        locks,
        keep * 3,
        NO_ERROR_LIMIT,
        SimplifyOptions::LockBorder | SimplifyOptions::Sparse,
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

/// LOD0's triangles split into pieces, in (surface, bone, first triangle) order.
fn pieces(lod0: &Welded, head: &[bool]) -> Vec<Piece> {
    let mut out = Vec::new();
    for (s, surface) in lod0.level.surfaces.iter().enumerate() {
        let mut by_bone: HashMap<u32, Vec<[u32; 3]>> = HashMap::new();
        for t in surface.indices.chunks_exact(3) {
            let b = [t[0], t[1], t[2]].map(|v| lod0.bones[v as usize]);
            let bone = if b[1] == b[2] { b[1] } else { b[0] };
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

/// Per LOD0 vertex: locked when its point is shared by two or more pieces.
fn locks(lod0: &Welded, pieces: &[Piece]) -> Vec<bool> {
    let mut owner: HashMap<u32, usize> = HashMap::new();
    let mut shared: HashMap<u32, bool> = HashMap::new();
    for (p, piece) in pieces.iter().enumerate() {
        for &v in &piece.indices {
            let g = lod0.position_group[v as usize];
            let first = *owner.entry(g).or_insert(p);
            if first != p {
                shared.insert(g, true);
            }
        }
    }
    lod0.position_group
        .iter()
        .map(|g| shared.contains_key(g))
        .collect()
}

/// The level from each piece's triangles: LOD0's vertices that are still used, in LOD0's order.
fn assemble(lod0: &Welded, pieces: &[Piece], result: Vec<Vec<u32>>) -> LodLevel {
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
#[path = "simplify_tests.rs"]
mod tests;
