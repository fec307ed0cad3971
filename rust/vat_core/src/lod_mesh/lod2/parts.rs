//! Rigid parts: LOD2 is remeshed part by part so that parts which move apart never share a
//! triangle.
//!
//! One remesh of the whole character merges every two parts that lie within the voxel shell of
//! each other in the reference pose (an arm hanging at the thigh, a big head on a thin neck), and
//! the triangles joining them stretch into webs once the poses pull them apart. Here the source's
//! bones are grouped into parts whose vertices keep their distances over the baked poses (within
//! a tolerance): a part moves as one, so nothing inside it stretches. Each solid voxel sample
//! goes to the part of its nearest source triangle, and each part is extracted, simplified and
//! bound on its own, to its own triangles only.
//!
//! Where two parts meet in the mesh (a joint: a position both parts' triangles use), each part
//! also takes the other's samples within the joint overlap and may bind there, so the closed
//! pieces overlap at the joint and no gap opens when it bends. Parts that are only near each
//! other in space, not joined in the mesh, take nothing from each other.

use std::collections::HashMap;

use glam::Vec3;
use rayon::prelude::*;

use super::bind::SourceTriangles;
use super::voxel::Grid;
use crate::lod_mesh::weld::{find, union};
use crate::lod_mesh::LodSource;

/// Extreme points sampled per bone to measure how bones move against each other.
const SAMPLES_PER_BONE: usize = 6;

/// The source's triangles grouped into rigid parts.
#[derive(Debug, Clone)]
pub(crate) struct Parts {
    /// Part per source triangle (indexing [`SourceTriangles::triangles`]).
    pub of_triangle: Vec<u32>,
    /// Per source triangle, the other parts it joins within the overlap (sorted).
    pub joins: Vec<Vec<u32>>,
    /// Number of parts.
    pub count: usize,
}

impl Parts {
    /// Parts from one key per source triangle (triangles with equal keys are one part),
    /// numbered from 0 in order of first use, with their joins within `overlap`.
    fn numbered<K: std::hash::Hash + Eq>(
        source: &LodSource,
        tris: &SourceTriangles,
        keys: impl Iterator<Item = K>,
        overlap: f32,
    ) -> Self {
        let mut number: HashMap<K, u32> = HashMap::new();
        let of_triangle: Vec<u32> = keys
            .map(|k| {
                let next = number.len() as u32;
                *number.entry(k).or_insert(next)
            })
            .collect();
        let joins = joins(source, tris, &of_triangle, overlap);
        Parts {
            of_triangle,
            joins,
            count: number.len(),
        }
    }

    /// True if part `part` may use source triangle `t`: its own, or one at a joint with it.
    pub fn accepts(&self, part: u32, t: u32) -> bool {
        self.of_triangle[t as usize] == part || self.joins[t as usize].binary_search(&part).is_ok()
    }
}

/// Groups the source's bones into parts that move rigidly over `poses` (source-vertex positions
/// per pose): two bones are one part when no distance between their sampled points changes by
/// more than `tolerance` from the reference pose. Then merges parts until there are at most
/// `max_parts`, the smallest (by triangle count) into the one it moves least against. Without
/// poses, the whole character is one part.
///
/// `overlap`: how far (reference pose) from a joint position a triangle still joins the part
/// across the joint.
pub(crate) fn rigid_parts(
    source: &LodSource,
    tris: &SourceTriangles,
    poses: &[Vec<Vec3>],
    tolerance: f32,
    max_parts: usize,
    overlap: f32,
) -> Parts {
    let bone_of = |v: u32| source.bones.get(v as usize).copied().unwrap_or(u32::MAX);
    // The bone per triangle: the one most corners follow (corner 0's on a three-way split).
    let triangle_bone: Vec<u32> = tris
        .triangles
        .iter()
        .map(|t| {
            let b = t.map(bone_of);
            if b[1] == b[2] {
                b[1]
            } else {
                b[0]
            }
        })
        .collect();
    let mut bones: Vec<u32> = triangle_bone.clone();
    bones.sort_unstable();
    bones.dedup();
    let group_of: HashMap<u32, usize> = bones.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let mut triangles_per_group = vec![0usize; bones.len()];
    for b in &triangle_bone {
        triangles_per_group[group_of[b]] += 1;
    }
    let samples = bone_samples(source, tris, &triangle_bone, &bones);
    let n = bones.len();
    // Largest change of distance between two groups' samples over the poses.
    let deviation = |a: &[u32], b: &[u32]| -> f32 {
        let mut worst = 0.0f32;
        for pose in poses {
            for &i in a {
                for &j in b {
                    let (i, j) = (i as usize, j as usize);
                    let reference = source.positions[i].distance(source.positions[j]);
                    worst = worst.max((pose[i].distance(pose[j]) - reference).abs());
                }
            }
        }
        worst
    };
    let pairs: Vec<(usize, usize, f32)> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|(a, b)| (a, b, deviation(&samples[a], &samples[b])))
        .collect();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    for &(a, b, d) in &pairs {
        if d <= tolerance {
            union(&mut parent, a as u32, b as u32);
        }
    }
    // Merge the smallest part into the part it moves least against until few enough remain.
    loop {
        let mut size: HashMap<u32, usize> = HashMap::new();
        for (g, &count) in triangles_per_group.iter().enumerate() {
            *size.entry(find(&mut parent, g as u32)).or_default() += count;
        }
        if size.len() <= max_parts.max(1) {
            break;
        }
        let (&small, _) = size
            .iter()
            .min_by_key(|&(&root, &count)| (count, root))
            .expect("more than one part");
        let mut best: Option<(f32, u32)> = None;
        for &(a, b, d) in &pairs {
            let (ra, rb) = (find(&mut parent, a as u32), find(&mut parent, b as u32));
            let other = match (ra == small, rb == small) {
                (true, false) => rb,
                (false, true) => ra,
                _ => continue,
            };
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, other));
            }
        }
        let (_, other) = best.expect("another part exists");
        union(&mut parent, small, other);
    }
    let roots: Vec<u32> = (0..n as u32).map(|g| find(&mut parent, g)).collect();
    let keys = triangle_bone.iter().map(|b| roots[group_of[b]]);
    Parts::numbered(source, tris, keys, overlap)
}

/// Merges parts that touch in `grid` only at their joints or not at all: one remesh of both
/// then makes no web (no solid sample one takes lies next to one the other takes, away from a
/// joint of the two), and saves the caps where they meet. A part takes the samples nearest to
/// its triangles and to the triangles joined to it; two samples touch along any of the 13
/// lattice directions.
/// `nearest` is the nearest source triangle per sample (`u32::MAX` for an empty one).
pub(crate) fn merge_apart(
    source: &LodSource,
    tris: &SourceTriangles,
    grid: &Grid,
    nearest: &[u32],
    parts: Parts,
    overlap: f32,
) -> Parts {
    let n = parts.count;
    if n < 2 {
        return parts;
    }
    let [nx, ny, nz] = grid.dims;
    let mut touching = vec![false; n * n];
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                let t = nearest[grid.index(x, y, z)];
                if t == u32::MAX {
                    continue;
                }
                for d in FORWARD {
                    let at = |a: usize, v: usize, dims: usize| {
                        let w = v as isize + d[a];
                        (0..dims as isize).contains(&w).then_some(w as usize)
                    };
                    let (Some(x2), Some(y2), Some(z2)) = (at(0, x, nx), at(1, y, ny), at(2, z, nz))
                    else {
                        continue;
                    };
                    let u = nearest[grid.index(x2, y2, z2)];
                    if u == u32::MAX {
                        continue;
                    }
                    // Every part that takes one sample touches every part that takes the
                    // other, unless one part takes both (a joint).
                    for p in accepted(&parts, t) {
                        for q in accepted(&parts, u) {
                            if !parts.accepts(q, t) && !parts.accepts(p, u) {
                                touching[p as usize * n + q as usize] = true;
                                touching[q as usize * n + p as usize] = true;
                            }
                        }
                    }
                }
            }
        }
    }
    // Greedy: join two groups while no member of one touches a member of the other.
    let mut group: Vec<usize> = (0..n).collect();
    for a in 0..n {
        for b in a + 1..n {
            let (ga, gb) = (group[a], group[b]);
            if ga == gb {
                continue;
            }
            let clash = (0..n)
                .filter(|&i| group[i] == ga)
                .any(|i| (0..n).any(|j| group[j] == gb && touching[i * n + j]));
            if !clash {
                for g in group.iter_mut() {
                    if *g == gb {
                        *g = ga;
                    }
                }
            }
        }
    }
    let keys = parts.of_triangle.iter().map(|&p| group[p as usize]);
    Parts::numbered(source, tris, keys, overlap)
}

/// The parts that take source triangle `t`: its own, then those joined at it.
fn accepted(parts: &Parts, t: u32) -> impl Iterator<Item = u32> + '_ {
    std::iter::once(parts.of_triangle[t as usize]).chain(parts.joins[t as usize].iter().copied())
}

/// The 13 lattice directions whose first non-zero step is positive: half of the 26
/// neighbours, so each touching pair is seen once.
const FORWARD: [[isize; 3]; 13] = {
    let mut out = [[0; 3]; 13];
    let mut k = 0;
    let mut code = 0;
    while code < 27 {
        let d = [code % 3 - 1, (code / 3) % 3 - 1, code / 9 - 1];
        // First non-zero component positive (this skips (0, 0, 0) too).
        let first = if d[0] != 0 {
            d[0]
        } else if d[1] != 0 {
            d[1]
        } else {
            d[2]
        };
        if first > 0 {
            out[k] = d;
            k += 1;
        }
        code += 1;
    }
    out
};

/// Per bone group, up to [`SAMPLES_PER_BONE`] source vertices of its triangles: the extremes
/// along each axis in the reference pose (far-apart points show a turn as well as a shift).
fn bone_samples(
    source: &LodSource,
    tris: &SourceTriangles,
    triangle_bone: &[u32],
    bones: &[u32],
) -> Vec<Vec<u32>> {
    let index: HashMap<u32, usize> = bones.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    // Per group: (min, max) vertex along x, y, z.
    let mut extremes: Vec<[Option<(u32, u32)>; 3]> = vec![[None; 3]; bones.len()];
    for (t, &b) in tris.triangles.iter().zip(triangle_bone) {
        let e = &mut extremes[index[&b]];
        for &v in t {
            let p = source.positions[v as usize];
            for (axis, slot) in e.iter_mut().enumerate() {
                let (lo, hi) = slot.get_or_insert((v, v));
                if p[axis] < source.positions[*lo as usize][axis] {
                    *lo = v;
                }
                if p[axis] > source.positions[*hi as usize][axis] {
                    *hi = v;
                }
            }
        }
    }
    extremes
        .into_iter()
        .map(|e| {
            let mut s: Vec<u32> = e.iter().flatten().flat_map(|&(lo, hi)| [lo, hi]).collect();
            s.sort_unstable();
            s.dedup();
            s.truncate(SAMPLES_PER_BONE);
            s
        })
        .collect()
}

/// Per triangle, the other parts it joins: parts whose triangles share a position with its
/// part's triangles (a joint) within `overlap` of the triangle's centre.
fn joins(
    source: &LodSource,
    tris: &SourceTriangles,
    of_triangle: &[u32],
    overlap: f32,
) -> Vec<Vec<u32>> {
    let key = |p: Vec3| p.to_array().map(f32::to_bits);
    let mut parts_at: HashMap<[u32; 3], Vec<u32>> = HashMap::new();
    for (t, &part) in tris.triangles.iter().zip(of_triangle) {
        for &v in t {
            let list = parts_at
                .entry(key(source.positions[v as usize]))
                .or_default();
            if !list.contains(&part) {
                list.push(part);
            }
        }
    }
    // Joint positions per pair of parts (lower part first).
    let mut joints: HashMap<(u32, u32), Vec<Vec3>> = HashMap::new();
    for (k, list) in &parts_at {
        for (i, &a) in list.iter().enumerate() {
            for &b in &list[i + 1..] {
                let p = Vec3::from_array(k.map(f32::from_bits));
                joints.entry((a.min(b), a.max(b))).or_default().push(p);
            }
        }
    }
    let overlap2 = overlap * overlap;
    tris.triangles
        .par_iter()
        .zip(of_triangle)
        .map(|(t, &part)| {
            let centre = t
                .iter()
                .map(|&v| source.positions[v as usize])
                .sum::<Vec3>()
                / 3.0;
            let mut out: Vec<u32> = joints
                .iter()
                .filter(|((a, b), _)| *a == part || *b == part)
                .filter(|(_, points)| {
                    points
                        .iter()
                        .any(|p| p.distance_squared(centre) <= overlap2)
                })
                .map(|(&(a, b), _)| if a == part { b } else { a })
                .collect();
            out.sort_unstable();
            out
        })
        .collect()
}

/// The nearest source triangle to each solid sample of `grid` (`u32::MAX` for an empty one).
pub(crate) fn nearest_triangles(grid: &Grid, tris: &SourceTriangles) -> Vec<u32> {
    let [nx, ny, _] = grid.dims;
    grid.solid
        .par_iter()
        .enumerate()
        .map(|(i, &solid)| {
            if !solid {
                return u32::MAX;
            }
            let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
            tris.bvh
                .nearest(grid.position(x, y, z))
                .map_or(u32::MAX, |h| h.triangle)
        })
        .collect()
}

/// Fewest samples a connected region of one part keeps; smaller ones (islands of interior
/// samples nearest to another part's triangle, slivers between parts) join a neighbour.
const MIN_ISLAND_SAMPLES: usize = 8;

/// Gives every island of `nearest` (a region of solid samples, connected along the axes, whose
/// nearest triangles are all one part's, smaller than [`MIN_ISLAND_SAMPLES`]) the nearest
/// triangle of the sample beside it whose part most of its neighbours have: each island would
/// otherwise become a small closed piece of its own, costing triangles and drawing nothing.
pub(crate) fn absorb_islands(grid: &Grid, nearest: &mut [u32], parts: &Parts) {
    if parts.count < 2 {
        return;
    }
    let [nx, ny, nz] = grid.dims;
    let part = |t: u32| parts.of_triangle[t as usize];
    let neighbours = |i: usize| {
        let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
        let mut out = [usize::MAX; 6];
        if x > 0 {
            out[0] = i - 1;
        }
        if x + 1 < nx {
            out[1] = i + 1;
        }
        if y > 0 {
            out[2] = i - nx;
        }
        if y + 1 < ny {
            out[3] = i + nx;
        }
        if z > 0 {
            out[4] = i - nx * ny;
        }
        if z + 1 < nz {
            out[5] = i + nx * ny;
        }
        out
    };
    let mut seen = vec![false; nearest.len()];
    let mut region = Vec::new();
    for start in 0..nearest.len() {
        if seen[start] || nearest[start] == u32::MAX {
            continue;
        }
        let label = part(nearest[start]);
        region.clear();
        region.push(start);
        seen[start] = true;
        let mut k = 0;
        while k < region.len() {
            for nb in neighbours(region[k]) {
                if nb != usize::MAX
                    && !seen[nb]
                    && nearest[nb] != u32::MAX
                    && part(nearest[nb]) == label
                {
                    seen[nb] = true;
                    region.push(nb);
                }
            }
            k += 1;
        }
        if region.len() >= MIN_ISLAND_SAMPLES {
            continue;
        }
        // The outside neighbour whose part is most common around the island.
        let mut votes: HashMap<u32, (usize, u32)> = HashMap::new();
        for &i in &region {
            for nb in neighbours(i) {
                if nb != usize::MAX && nearest[nb] != u32::MAX && part(nearest[nb]) != label {
                    let e = votes.entry(part(nearest[nb])).or_insert((0, nearest[nb]));
                    e.0 += 1;
                }
            }
        }
        if let Some((_, (_, t))) = votes
            .into_iter()
            .max_by_key(|(p, (n, _))| (*n, u32::MAX - p))
        {
            for &i in &region {
                nearest[i] = t;
            }
        }
    }
}

/// One grid per part: the solid samples of `grid` whose nearest source triangle (`nearest`, from
/// [`nearest_triangles`]) the part accepts (its own, or one at a joint with it).
pub(crate) fn part_grids(grid: &Grid, nearest: &[u32], parts: &Parts) -> Vec<Grid> {
    (0..parts.count as u32)
        .map(|part| Grid {
            solid: nearest
                .iter()
                .map(|&t| t != u32::MAX && parts.accepts(part, t))
                .collect(),
            origin: grid.origin,
            voxel: grid.voxel,
            dims: grid.dims,
        })
        .collect()
}
