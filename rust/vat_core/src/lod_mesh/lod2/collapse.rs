//! Edge collapses that keep a closed manifold closed and manifold, for the triangles
//! meshoptimizer cannot remove without pinching a thin part.
//!
//! Cheapest collapse first, by quadric error (squared distances to the planes of the triangles
//! merged into each vertex) plus, weighed, the squared distance between the two ends' bone
//! centres and the squared travel of an end that borders another bone's region (so joints keep
//! their rings in place). A collapse of `u` into `v` is allowed only when
//! * the link condition holds: `u` and `v` share exactly the two neighbours opposite their edge
//!   (otherwise the collapse would glue two sheets along an edge or a vertex);
//! * `v` keeps at least three neighbours (a tetrahedron is not flattened into two triangles);
//! * no surrounding triangle turns over or degenerates.
//!
//! Each such collapse removes two triangles and keeps every edge in exactly two triangles.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use glam::{DVec3, Vec3};

use super::surface::{compact_mapped, Mesh};

/// A symmetric 4x4 quadric: `[a2, ab, ac, ad, b2, bc, bd, c2, cd, d2]` of a plane sum.
type Quadric = [f64; 10];

/// The least |cosine| between a triangle's normal before and after a collapse.
const MIN_NORMAL_COSINE: f32 = 0.2;

fn plane_quadric(n: DVec3, d: f64) -> Quadric {
    [
        n.x * n.x,
        n.x * n.y,
        n.x * n.z,
        n.x * d,
        n.y * n.y,
        n.y * n.z,
        n.y * d,
        n.z * n.z,
        n.z * d,
        d * d,
    ]
}

fn quadric_error(q: &Quadric, p: Vec3) -> f64 {
    let (x, y, z) = (f64::from(p.x), f64::from(p.y), f64::from(p.z));
    q[0] * x * x
        + 2.0 * q[1] * x * y
        + 2.0 * q[2] * x * z
        + 2.0 * q[3] * x
        + q[4] * y * y
        + 2.0 * q[5] * y * z
        + 2.0 * q[6] * y
        + q[7] * z * z
        + 2.0 * q[8] * z
        + q[9]
}

/// One candidate collapse in the queue (smallest cost first).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate {
    cost: f64,
    from: u32,
    to: u32,
    position: Vec3,
    /// The two ends' versions when the candidate was made; stale once either changed.
    stamps: (u32, u32),
}

impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        other.cost.total_cmp(&self.cost)
    }
}

struct State {
    positions: Vec<Vec3>,
    /// Bone centre per vertex (see `bone_centres` in the module root), in the same units as `positions`.
    centres: Vec<Vec3>,
    quadrics: Vec<Quadric>,
    triangles: Vec<[u32; 3]>,
    alive: Vec<bool>,
    /// Triangles around each vertex (dead ones dropped lazily).
    around: Vec<Vec<u32>>,
    stamps: Vec<u32>,
    weight: f32,
}

/// Collapses edges of the closed, manifold `mesh` until it has at most `target` triangles or no
/// allowed collapse is left. `centres` holds each vertex's bone centre, weighed by `weight`
/// against the quadric error.
#[cfg(test)]
pub(crate) fn collapse_to(mesh: &Mesh, centres: &[Vec3], weight: f32, target: usize) -> Mesh {
    collapse_to_mapped(mesh, centres, weight, target).0
}

/// [`collapse_to`], also giving each kept vertex's index in `mesh`.
pub(crate) fn collapse_to_mapped(
    mesh: &Mesh,
    centres: &[Vec3],
    weight: f32,
    target: usize,
) -> (Mesh, Vec<u32>) {
    let n = mesh.positions.len();
    let mut s = State {
        positions: mesh.positions.clone(),
        centres: centres.to_vec(),
        quadrics: vec![[0.0; 10]; n],
        triangles: mesh
            .indices
            .chunks_exact(3)
            .map(|t| [t[0], t[1], t[2]])
            .collect(),
        alive: vec![true; mesh.indices.len() / 3],
        around: vec![Vec::new(); n],
        stamps: vec![0; n],
        weight,
    };
    for (i, t) in s.triangles.iter().enumerate() {
        let [a, b, c] = t.map(|v| s.positions[v as usize].as_dvec3());
        let normal = (b - a).cross(c - a).normalize_or_zero();
        let q = plane_quadric(normal, -normal.dot(a));
        for &v in t {
            let acc = &mut s.quadrics[v as usize];
            acc.iter_mut().zip(q).for_each(|(x, y)| *x += y);
            s.around[v as usize].push(i as u32);
        }
    }
    let mut heap = BinaryHeap::new();
    for t in &s.triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            if a < b {
                heap.push(s.candidate(a, b));
            }
        }
    }
    let mut count = s.triangles.len();
    while count > target {
        let Some(c) = heap.pop() else { break };
        if (s.stamps[c.from as usize], s.stamps[c.to as usize]) != c.stamps
            || !s.allowed(c.from, c.to, c.position)
        {
            continue;
        }
        count -= s.collapse(c.from, c.to, c.position);
        let to = c.to;
        for u in s.neighbours(to) {
            heap.push(s.candidate(to.min(u), to.max(u)));
        }
    }
    let indices: Vec<u32> = s
        .triangles
        .iter()
        .zip(&s.alive)
        .filter(|(_, &alive)| alive)
        .flat_map(|(t, _)| *t)
        .collect();
    compact_mapped(&s.positions, &indices)
}

impl State {
    /// The cheapest way to collapse edge (a, b): into a, into b, or both to the midpoint.
    fn candidate(&self, a: u32, b: u32) -> Candidate {
        let mut q = self.quadrics[a as usize];
        q.iter_mut()
            .zip(self.quadrics[b as usize])
            .for_each(|(x, y)| *x += y);
        let (pa, pb) = (self.positions[a as usize], self.positions[b as usize]);
        let (ca, cb) = (self.centres[a as usize], self.centres[b as usize]);
        // A vertex next to another bone's region is on a joint: moving it costs its travel, so
        // the joint keeps a ring in place while the vertices around it go first.
        let joint = |v: u32| {
            let c = self.centres[v as usize];
            self.neighbours(v)
                .iter()
                .any(|&u| self.centres[u as usize] != c)
        };
        let w = f64::from(self.weight);
        let (ja, jb) = (f64::from(u8::from(joint(a))), f64::from(u8::from(joint(b))));
        let cost = |p: Vec3| {
            let travel = ja * f64::from((p - pa).length_squared())
                + jb * f64::from((p - pb).length_squared());
            quadric_error(&q, p).max(0.0) + w * (f64::from((ca - cb).length_squared()) + travel)
        };
        let options = [(b, a, pa), (a, b, pb), (a, b, (pa + pb) * 0.5)];
        let (from, to, position) = options
            .into_iter()
            .min_by(|x, y| cost(x.2).total_cmp(&cost(y.2)))
            .expect("three options");
        Candidate {
            cost: cost(position),
            from,
            to,
            position,
            stamps: (self.stamps[from as usize], self.stamps[to as usize]),
        }
    }

    fn live_around(&self, v: u32) -> impl Iterator<Item = u32> + '_ {
        self.around[v as usize]
            .iter()
            .copied()
            .filter(|&t| self.alive[t as usize])
    }

    /// Distinct neighbours of `v`.
    fn neighbours(&self, v: u32) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .live_around(v)
            .flat_map(|t| self.triangles[t as usize])
            .filter(|&u| u != v)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether collapsing `from` into `to` at `position` keeps the mesh closed, manifold and
    /// unfolded (see the module docs).
    fn allowed(&self, from: u32, to: u32, position: Vec3) -> bool {
        let (nf, nt) = (self.neighbours(from), self.neighbours(to));
        if nf.binary_search(&to).is_err() {
            return false;
        }
        let shared: Vec<u32> = nf
            .iter()
            .copied()
            .filter(|u| nt.binary_search(u).is_ok())
            .collect();
        let opposite: Vec<u32> = {
            let mut o: Vec<u32> = self
                .live_around(from)
                .filter(|&t| self.triangles[t as usize].contains(&to))
                .flat_map(|t| self.triangles[t as usize])
                .filter(|&u| u != from && u != to)
                .collect();
            o.sort_unstable();
            o
        };
        if opposite.len() != 2 || shared != opposite {
            return false;
        }
        let union = nf.len() + nt.len() - shared.len() - 2;
        if union < 3 {
            return false;
        }
        for v in [from, to] {
            for t in self.live_around(v) {
                let tri = self.triangles[t as usize];
                if tri.contains(&from) && tri.contains(&to) {
                    continue;
                }
                let before = tri.map(|u| self.positions[u as usize]);
                let after = tri.map(|u| {
                    if u == from || u == to {
                        position
                    } else {
                        self.positions[u as usize]
                    }
                });
                let nb = (before[1] - before[0]).cross(before[2] - before[0]);
                let na = (after[1] - after[0]).cross(after[2] - after[0]);
                let (lb, la) = (nb.length(), na.length());
                if la <= f32::EPSILON * lb || nb.dot(na) < MIN_NORMAL_COSINE * lb * la {
                    return false;
                }
            }
        }
        true
    }

    /// Collapses `from` into `to` at `position`; returns the triangles removed (two).
    fn collapse(&mut self, from: u32, to: u32, position: Vec3) -> usize {
        let mut removed = 0;
        let fan: Vec<u32> = self.live_around(from).collect();
        for t in fan {
            let tri = &mut self.triangles[t as usize];
            if tri.contains(&to) {
                self.alive[t as usize] = false;
                removed += 1;
            } else {
                tri.iter_mut().filter(|u| **u == from).for_each(|u| *u = to);
                self.around[to as usize].push(t);
            }
        }
        let q = self.quadrics[from as usize];
        self.quadrics[to as usize]
            .iter_mut()
            .zip(q)
            .for_each(|(x, y)| *x += y);
        if position == self.positions[from as usize] {
            self.centres[to as usize] = self.centres[from as usize];
        }
        self.positions[to as usize] = position;
        self.around[from as usize].clear();
        self.stamps[from as usize] += 1;
        self.stamps[to as usize] += 1;
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lod_mesh::lod2::manifold::indices_closed_manifold;

    /// An open-ended tube closed by two fan caps: `rings` rings of `sides` vertices.
    fn tube(sides: u32, rings: u32, radius: f32) -> Mesh {
        let mut positions = Vec::new();
        for r in 0..rings {
            for s in 0..sides {
                let a = std::f32::consts::TAU * s as f32 / sides as f32;
                positions.push(Vec3::new(radius * a.cos(), r as f32, radius * a.sin()));
            }
        }
        let (bottom, top) = (positions.len() as u32, positions.len() as u32 + 1);
        positions.push(Vec3::new(0.0, -0.5, 0.0));
        positions.push(Vec3::new(0.0, rings as f32 - 0.5, 0.0));
        let id = |r: u32, s: u32| r * sides + s % sides;
        let mut indices = Vec::new();
        for s in 0..sides {
            for r in 0..rings - 1 {
                indices.extend([id(r, s), id(r + 1, s), id(r + 1, s + 1)]);
                indices.extend([id(r, s), id(r + 1, s + 1), id(r, s + 1)]);
            }
            indices.extend([bottom, id(0, s), id(0, s + 1)]);
            indices.extend([top, id(rings - 1, s + 1), id(rings - 1, s)]);
        }
        Mesh { positions, indices }
    }

    #[test]
    fn a_thin_tube_shrinks_to_the_target_and_stays_manifold() {
        let mesh = tube(4, 30, 0.05);
        assert!(indices_closed_manifold(&mesh.indices, mesh.positions.len()));
        let centres = vec![Vec3::ZERO; mesh.positions.len()];
        for target in [200, 60, 20, 8] {
            let out = collapse_to(&mesh, &centres, 0.0, target);
            assert!(
                indices_closed_manifold(&out.indices, out.positions.len()),
                "{target}"
            );
            assert!(
                out.indices.len() / 3 <= target,
                "{} > {target}",
                out.indices.len() / 3
            );
        }
        // A tetrahedron (4 triangles) is as far as a closed mesh goes.
        let out = collapse_to(&mesh, &centres, 0.0, 1);
        assert_eq!(out.indices.len() / 3, 4);
        assert!(indices_closed_manifold(&out.indices, out.positions.len()));
    }

    #[test]
    fn bone_centres_keep_a_ring_at_the_joint() {
        let mesh = tube(8, 21, 0.5);
        // Lower half on one bone, upper half on another, far apart.
        let centres: Vec<Vec3> = mesh
            .positions
            .iter()
            .map(|p| Vec3::new(0.0, if p.y < 10.0 { 0.0 } else { 100.0 }, 0.0))
            .collect();
        // The tallest triangle across the joint (between y = 9 and y = 10).
        let spread = |out: &Mesh| {
            out.indices
                .chunks_exact(3)
                .map(|t| [t[0], t[1], t[2]].map(|v| out.positions[v as usize].y))
                .filter(|y| y.iter().any(|&y| y < 9.5) && y.iter().any(|&y| y > 9.5))
                .map(|y| {
                    y.iter().copied().fold(f32::MIN, f32::max)
                        - y.iter().copied().fold(f32::MAX, f32::min)
                })
                .fold(0.0, f32::max)
        };
        let out = collapse_to(&mesh, &centres, 1.0, 64);
        assert!(indices_closed_manifold(&out.indices, out.positions.len()));
        assert!(spread(&out) < 4.0, "{}", spread(&out));
        // Without the bone term the same budget stretches triangles far across the joint.
        let plain = collapse_to(&mesh, &centres, 0.0, 64);
        assert!(spread(&plain) > 8.0, "{}", spread(&plain));
    }
}
