//! LOD0: the source with its duplicate vertices welded.
//!
//! Coincident vertices (within [`POSITION_TOLERANCE`] of the bounds' diagonal) on the same
//! dominant bone whose normals are within `weld_normal_degrees` (by default only copies whose
//! normals the render cannot tell apart) form a *cluster*; a cluster is one
//! VAT column (its lowest source vertex, whose normal it keeps), shared by every surface.
//! Within one surface a cluster is one LOD vertex when its copies have the same UV. Copies with
//! different UVs (a UV seam) weld only where nobody can see it:
//! * with [`LodSource::textures`] unknown (empty), never;
//! * on a surface drawn without a texture (its list empty), always: UVs are then invisible
//!   (a surface without UVs has all-zero UVs, so it has no seams to weld);
//! * on a textured surface, never where the seam runs along a sharp edge (faces meeting at over
//!   `sharp_edge_degrees`: such seams are usually where the texture layout means to split);
//! * otherwise only if, for every triangle whose UVs would change, every image of its surface
//!   shows the same colours (each channel within [`COLOUR_TOLERANCE`]) at 15 points
//!   spread over the triangle, sampled bilinearly with repeat, with the old and the new UVs.
//!
//! Welded copies take the UV of the copy they join (compared with the source's own UVs, so
//! accepted welds never drift). Triangles that the tolerance collapses are dropped.

use std::collections::HashMap;

use glam::{Vec2, Vec3};

use super::{
    ColumnSource, LodLevel, LodSettings, LodSource, LodSurface, LodVertex, SurfaceTexture,
};
use crate::bounds::Bounds;

/// Position tolerance of the weld, as a fraction of the bounds' diagonal.
pub(crate) const POSITION_TOLERANCE: f32 = 1e-5;
/// Largest per-channel difference (of 255) at which two texture samples count as the same colour.
pub(crate) const COLOUR_TOLERANCE: f32 = 3.0;
/// Subdivisions of a triangle's edges for the colour test: `(n + 1)(n + 2) / 2` = 15 sample
/// points (the corners, points along the edges and inside).
const SAMPLE_STEPS: u32 = 4;

/// LOD0 and what the later steps need to know about it.
#[derive(Debug, Clone)]
pub(crate) struct Welded {
    /// The level; its columns index [`Welded::columns`].
    pub level: LodLevel,
    /// One [`ColumnSource::Vertex`] per cluster that the level uses, in first-use order.
    pub columns: Vec<ColumnSource>,
    /// Per level vertex: its coincident-position group (vertices sharing it are one point).
    pub position_group: Vec<u32>,
    /// Per level vertex: its reference-pose position (its column's).
    pub positions: Vec<Vec3>,
    /// Per level vertex: its dominant bone.
    pub bones: Vec<u32>,
    /// LOD vertices there would be if every UV seam could weld (one per surface and cluster):
    /// `level.vertices.len()` minus this is what the texture check kept split. Only the
    /// real-character report reads it.
    #[cfg_attr(not(test), allow(dead_code))]
    pub all_seams_welded: usize,
}

/// Welds `source` (already validated: indices in range, arrays of equal length).
pub(crate) fn weld(source: &LodSource, settings: &LodSettings) -> Welded {
    let groups = position_groups(&source.positions);
    let clusters = normal_clusters(source, &groups, settings.weld_normal_degrees);
    let sharp = sharp_seam_groups(source, &groups, settings.sharp_edge_degrees);
    let seams = SeamWelder::new(source, &clusters, &groups, &sharp);
    let (uv_rep, all_seams_welded) = seams.run();
    build_level(source, &groups, &clusters, &uv_rep, all_seams_welded)
}

/// Per vertex, the id of its group of coincident vertices (the group's lowest vertex index).
pub(crate) fn position_groups(positions: &[Vec3]) -> Vec<u32> {
    let bounds = Bounds::from_points(positions);
    let eps = (bounds.diagonal() * POSITION_TOLERANCE).max(f32::MIN_POSITIVE);
    let cell = |p: Vec3| (p / eps).floor().as_i64vec3();
    let mut grid: HashMap<glam::I64Vec3, Vec<u32>> = HashMap::new();
    let mut parent: Vec<u32> = (0..positions.len() as u32).collect();
    for (v, &p) in positions.iter().enumerate() {
        let c = cell(p);
        for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    let Some(others) = grid.get(&(c + glam::I64Vec3::new(dx, dy, dz))) else {
                        continue;
                    };
                    for &o in others {
                        if positions[o as usize].distance(p) <= eps {
                            union(&mut parent, o, v as u32);
                        }
                    }
                }
            }
        }
        grid.entry(c).or_default().push(v as u32);
    }
    (0..positions.len() as u32)
        .map(|v| find(&mut parent, v))
        .collect()
}

/// Union-find root with path halving.
pub(crate) fn find(parent: &mut [u32], mut v: u32) -> u32 {
    while parent[v as usize] != v {
        parent[v as usize] = parent[parent[v as usize] as usize];
        v = parent[v as usize];
    }
    v
}

/// Joins the sets of `a` and `b`; the lower root stays root, so roots are each set's minimum.
pub(crate) fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    let (lo, hi) = (ra.min(rb), ra.max(rb));
    parent[hi as usize] = lo;
}

/// Per vertex, its cluster's seed: the first vertex (by index) of its position group with the
/// same dominant bone and a normal within `degrees` of the seed's.
fn normal_clusters(source: &LodSource, groups: &[u32], degrees: f32) -> Vec<u32> {
    let cos = degrees.to_radians().cos();
    let mut seeds: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut cluster = vec![0u32; groups.len()];
    for (v, &g) in groups.iter().enumerate() {
        let n = source.normals[v].normalize_or_zero();
        let list = seeds.entry(g).or_default();
        let joined = list.iter().copied().find(|&s| {
            source.bones[s as usize] == source.bones[v]
                && source.normals[s as usize].normalize_or_zero().dot(n) >= cos
        });
        cluster[v] = joined.unwrap_or_else(|| {
            list.push(v as u32);
            v as u32
        });
    }
    cluster
}

/// Per position group, whether a UV seam along a sharp edge ends there: an edge (pair of
/// groups) whose triangles use more than one pair of vertices and whose faces meet at more than
/// `degrees`.
fn sharp_seam_groups(source: &LodSource, groups: &[u32], degrees: f32) -> Vec<bool> {
    #[derive(Default)]
    struct Edge {
        normals: Vec<Vec3>,
        pairs: Vec<(u32, u32)>,
    }
    let mut edges: HashMap<(u32, u32), Edge> = HashMap::new();
    for surface in &source.surfaces {
        for t in surface.indices.chunks_exact(3) {
            let p = [t[0], t[1], t[2]].map(|v| source.positions[v as usize]);
            let n = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                let (ga, gb) = (groups[a as usize], groups[b as usize]);
                let key = (ga.min(gb), ga.max(gb));
                let pair = if ga <= gb { (a, b) } else { (b, a) };
                let e = edges.entry(key).or_default();
                e.normals.push(n);
                if !e.pairs.contains(&pair) {
                    e.pairs.push(pair);
                }
            }
        }
    }
    let cos = degrees.to_radians().cos();
    let mut sharp = vec![false; groups.len()];
    for ((ga, gb), e) in &edges {
        let is_sharp = e.pairs.len() > 1
            && e.normals.iter().enumerate().any(|(i, a)| {
                e.normals[i + 1..]
                    .iter()
                    .any(|b| a.dot(*b) < cos && *a != Vec3::ZERO && *b != Vec3::ZERO)
            });
        if is_sharp {
            sharp[*ga as usize] = true;
            sharp[*gb as usize] = true;
        }
    }
    sharp
}

/// Decides which UV-seam copies weld (see the module docs).
struct SeamWelder<'a> {
    source: &'a LodSource,
    clusters: &'a [u32],
    groups: &'a [u32],
    sharp: &'a [bool],
    /// Per vertex, the first surface that draws it (`u32::MAX` if none does).
    surface_of: Vec<u32>,
    /// Triangles by vertex, as (surface, first index) pairs: `incident[start[v]..start[v + 1]]`.
    start: Vec<usize>,
    incident: Vec<(u32, u32)>,
    /// The UVs as welded so far.
    uv_now: Vec<Vec2>,
}

impl<'a> SeamWelder<'a> {
    fn new(
        source: &'a LodSource,
        clusters: &'a [u32],
        groups: &'a [u32],
        sharp: &'a [bool],
    ) -> Self {
        let n = source.positions.len();
        let mut surface_of = vec![u32::MAX; n];
        let mut count = vec![0usize; n + 1];
        for (s, surface) in source.surfaces.iter().enumerate() {
            for &v in &surface.indices {
                count[v as usize] += 1;
                if surface_of[v as usize] == u32::MAX {
                    surface_of[v as usize] = s as u32;
                }
            }
        }
        let mut start = vec![0usize; n + 1];
        for v in 0..n {
            start[v + 1] = start[v] + count[v];
        }
        let mut fill = start.clone();
        let mut incident = vec![(0u32, 0u32); start[n]];
        for (s, surface) in source.surfaces.iter().enumerate() {
            for (t, tri) in surface.indices.chunks_exact(3).enumerate() {
                for &v in tri {
                    incident[fill[v as usize]] = (s as u32, 3 * t as u32);
                    fill[v as usize] += 1;
                }
            }
        }
        Self {
            source,
            clusters,
            groups,
            sharp,
            surface_of,
            start,
            incident,
            uv_now: source.uvs.clone(),
        }
    }

    /// Per vertex, the copy whose UV it takes (itself if it keeps its own), and how many LOD
    /// vertices there would be if every seam welded.
    fn run(mut self) -> (Vec<u32>, usize) {
        let n = self.source.positions.len();
        let mut buckets: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
        for v in 0..n {
            if self.surface_of[v] != u32::MAX {
                let key = (self.surface_of[v], self.clusters[v]);
                buckets.entry(key).or_default().push(v as u32);
            }
        }
        let mut keys: Vec<(u32, u32)> = buckets.keys().copied().collect();
        keys.sort_unstable();
        let mut rep: Vec<u32> = (0..n as u32).collect();
        for key in &keys {
            self.weld_bucket(&buckets[key], &mut rep);
        }
        (rep, keys.len())
    }

    /// One surface's copies of one cluster: same-UV copies join at once; each other UV joins
    /// the first kept UV it can take invisibly, or is kept.
    fn weld_bucket(&mut self, members: &[u32], rep: &mut [u32]) {
        let mut by_uv: Vec<Vec<u32>> = Vec::new();
        for &v in members {
            let uv = self.source.uvs[v as usize];
            match by_uv
                .iter_mut()
                .find(|g| self.source.uvs[g[0] as usize] == uv)
            {
                Some(g) => g.push(v),
                None => by_uv.push(vec![v]),
            }
        }
        // The copy drawn by the most triangles keeps its UV; the others try to join it.
        let tris = |g: &Vec<u32>| -> usize {
            g.iter()
                .map(|&v| self.start[v as usize + 1] - self.start[v as usize])
                .sum()
        };
        by_uv.sort_by(|a, b| tris(b).cmp(&tris(a)).then(a[0].cmp(&b[0])));
        let surface = self.surface_of[members[0] as usize] as usize;
        let textured = self
            .source
            .textures
            .get(surface)
            .is_none_or(|t| !t.is_empty());
        let sharp = self.sharp[self.groups[members[0] as usize] as usize];
        let mut kept: Vec<u32> = Vec::new();
        for g in &by_uv {
            let target = if textured && (sharp || self.source.textures.is_empty()) {
                None
            } else {
                kept.iter().copied().find(|&k| self.invisible(g, k))
            };
            let target = target.unwrap_or_else(|| {
                kept.push(g[0]);
                g[0]
            });
            let uv = self.source.uvs[target as usize];
            for &v in g {
                rep[v as usize] = target;
                self.uv_now[v as usize] = uv;
            }
        }
    }

    /// Whether giving `copies` the UV of `keeper` changes no colour of any triangle they draw.
    fn invisible(&self, copies: &[u32], keeper: u32) -> bool {
        let uv = self.source.uvs[keeper as usize];
        copies.iter().all(|&v| {
            self.incident[self.start[v as usize]..self.start[v as usize + 1]]
                .iter()
                .all(|&(s, first)| {
                    let textures = &self.source.textures[s as usize];
                    let tri = &self.source.surfaces[s as usize].indices[first as usize..][..3];
                    let old = [0, 1, 2].map(|k| self.source.uvs[tri[k] as usize]);
                    let new = [0, 1, 2].map(|k| {
                        if copies.contains(&tri[k]) {
                            uv
                        } else {
                            self.uv_now[tri[k] as usize]
                        }
                    });
                    textures.iter().all(|t| same_colours(t, old, new))
                })
        })
    }
}

/// Whether `texture` shows the same colours over a triangle with UVs `old` and with `new`.
pub(crate) fn same_colours(texture: &SurfaceTexture, old: [Vec2; 3], new: [Vec2; 3]) -> bool {
    if old == new {
        return true;
    }
    let n = SAMPLE_STEPS;
    (0..=n).all(|i| {
        (0..=n - i).all(|j| {
            let w = Vec3::new(i as f32, j as f32, (n - i - j) as f32) / n as f32;
            let at = |uv: [Vec2; 3]| uv[0] * w.x + uv[1] * w.y + uv[2] * w.z;
            let (a, b) = (sample(texture, at(old)), sample(texture, at(new)));
            a.iter()
                .zip(&b)
                .all(|(x, y)| (x - y).abs() <= COLOUR_TOLERANCE)
        })
    })
}

/// Bilinear RGBA sample (0-255 per channel) at `uv`, repeating, as a GPU samples level 0.
pub(crate) fn sample(texture: &SurfaceTexture, uv: Vec2) -> [f32; 4] {
    let (w, h) = (texture.width as i64, texture.height as i64);
    if w == 0 || h == 0 || texture.rgba8.len() < (w * h * 4) as usize {
        return [0.0; 4];
    }
    let x = uv.x * w as f32 - 0.5;
    let y = uv.y * h as f32 - 0.5;
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let texel = |tx: i64, ty: i64| -> [f32; 4] {
        let at = ((ty.rem_euclid(h) * w + tx.rem_euclid(w)) * 4) as usize;
        std::array::from_fn(|c| f32::from(texture.rgba8[at + c]))
    };
    let (x0, y0) = (x0 as i64, y0 as i64);
    let (a, b, c, d) = (
        texel(x0, y0),
        texel(x0 + 1, y0),
        texel(x0, y0 + 1),
        texel(x0 + 1, y0 + 1),
    );
    std::array::from_fn(|k| {
        let top = a[k] + (b[k] - a[k]) * fx;
        let bottom = c[k] + (d[k] - c[k]) * fx;
        top + (bottom - top) * fy
    })
}

/// The welded level: one LOD vertex per (surface, UV representative), one column per cluster.
fn build_level(
    source: &LodSource,
    groups: &[u32],
    clusters: &[u32],
    uv_rep: &[u32],
    all_seams_welded: usize,
) -> Welded {
    let mut out = Welded {
        level: LodLevel::default(),
        columns: Vec::new(),
        position_group: Vec::new(),
        positions: Vec::new(),
        bones: Vec::new(),
        all_seams_welded,
    };
    let mut column_of: HashMap<u32, u32> = HashMap::new();
    let mut vertex_of: HashMap<(u32, u32), u32> = HashMap::new();
    for (s, surface) in source.surfaces.iter().enumerate() {
        let mut indices = Vec::with_capacity(surface.indices.len());
        for tri in surface.indices.chunks_exact(3) {
            let reps = [tri[0], tri[1], tri[2]].map(|v| uv_rep[v as usize]);
            // A triangle the weld collapses is dropped before it makes a vertex or a column.
            if reps[0] == reps[1] || reps[1] == reps[2] || reps[0] == reps[2] {
                continue;
            }
            let t = reps.map(|r| {
                *vertex_of.entry((s as u32, r)).or_insert_with(|| {
                    let seed = clusters[r as usize];
                    let next = out.columns.len() as u32;
                    let column = *column_of.entry(seed).or_insert(next);
                    if column == next {
                        out.columns.push(ColumnSource::Vertex(seed));
                    }
                    out.level.vertices.push(LodVertex {
                        sources: [r; 3],
                        weights: [1.0, 0.0, 0.0],
                        column,
                    });
                    out.position_group.push(groups[r as usize]);
                    out.positions.push(source.positions[seed as usize]);
                    out.bones.push(source.bones[r as usize]);
                    out.level.vertices.len() as u32 - 1
                })
            });
            indices.extend_from_slice(&t);
        }
        if !indices.is_empty() {
            out.level.surfaces.push(LodSurface {
                source_surface: s as u32,
                indices,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
