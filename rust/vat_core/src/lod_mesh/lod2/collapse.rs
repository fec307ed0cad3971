//! Edge collapses that keep a closed manifold closed and manifold, for the triangles
//! meshoptimizer cannot remove without pinching a thin part.
//!
//! Cheapest collapse first, by quadric error (squared distances to the planes of the triangles
//! merged into each vertex) plus, weighed, the squared distance between the two ends' bone
//! centres and the squared travel of an end that borders another bone's region (so joints keep
//! their rings in place), plus the same quadric error in each pose given: the mesh must keep its
//! shape where the animation bends it, not only in the reference pose. A collapse of `u` into `v` is allowed only when
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

/// Where a collapse of edge (a, b) puts the vertex it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    A,
    B,
    Middle,
}

impl Keep {
    /// The kept vertex's position given the ends' positions (in any pose).
    fn pick(self, a: Vec3, b: Vec3) -> Vec3 {
        match self {
            Keep::A => a,
            Keep::B => b,
            Keep::Middle => (a + b) * 0.5,
        }
    }
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
    /// Per pose, each vertex's position in that pose.
    poses: Vec<Vec<Vec3>>,
    /// Per pose, each vertex's quadric of its triangles' planes in that pose.
    pose_quadrics: Vec<Vec<Quadric>>,
}

/// Collapses edges of the closed, manifold `mesh` until it has at most `target` triangles or no
/// allowed collapse is left. `centres` holds each vertex's bone centre, weighed by `weight`
/// against the quadric error; `poses` holds, per pose, a position for every vertex of `mesh`,
/// and each pose's quadric error counts as much as the reference pose's.
#[cfg(test)]
pub(crate) fn collapse_to(
    mesh: &Mesh,
    centres: &[Vec3],
    weight: f32,
    poses: &[Vec<Vec3>],
    target: usize,
) -> Mesh {
    collapse_to_mapped(mesh, centres, weight, poses, target).0
}

/// [`collapse_to`], also giving each kept vertex's index in `mesh`.
pub(crate) fn collapse_to_mapped(
    mesh: &Mesh,
    centres: &[Vec3],
    weight: f32,
    poses: &[Vec<Vec3>],
    target: usize,
) -> (Mesh, Vec<u32>) {
    collapse_to_targets(mesh, centres, weight, poses, &[target])
        .pop()
        .expect("one target, one mesh")
}

/// [`collapse_to_mapped`] for each of `targets` from one run: the collapses go cheapest first
/// whatever the target, so the run to the smallest target passes through each larger one's
/// result on its way; each is kept when the run first gets there (or where it ends, when no
/// allowed collapse is left). One result per target, in the order given.
pub(crate) fn collapse_to_targets(
    mesh: &Mesh,
    centres: &[Vec3],
    weight: f32,
    poses: &[Vec<Vec3>],
    targets: &[usize],
) -> Vec<(Mesh, Vec<u32>)> {
    let n = mesh.positions.len();
    let triangles: Vec<[u32; 3]> = mesh
        .indices
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .collect();
    let mut s = State {
        positions: mesh.positions.clone(),
        centres: centres.to_vec(),
        quadrics: quadrics(&triangles, &mesh.positions),
        triangles: triangles.clone(),
        alive: vec![true; mesh.indices.len() / 3],
        around: vec![Vec::new(); n],
        stamps: vec![0; n],
        weight,
        pose_quadrics: poses.iter().map(|p| quadrics(&triangles, p)).collect(),
        poses: poses.to_vec(),
    };
    for (i, t) in s.triangles.iter().enumerate() {
        for &v in t {
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
    // The targets largest first, each with its place in the answer.
    let mut order: Vec<usize> = (0..targets.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(targets[k]));
    let mut out: Vec<Option<(Mesh, Vec<u32>)>> = vec![None; targets.len()];
    let mut next = 0;
    let mut count = s.triangles.len();
    while next < order.len() {
        if count <= targets[order[next]] {
            out[order[next]] = Some(s.snapshot());
            next += 1;
            continue;
        }
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
    // No allowed collapse left: the targets not reached get where the run ended.
    for &k in &order[next..] {
        out[k] = Some(s.snapshot());
    }
    out.into_iter()
        .map(|m| m.expect("every target answered"))
        .collect()
}

/// The sum of two quadrics.
fn sum(a: &Quadric, b: &Quadric) -> Quadric {
    std::array::from_fn(|k| a[k] + b[k])
}

/// Per vertex, the sum of the plane quadrics of the triangles around it at `positions`.
fn quadrics(triangles: &[[u32; 3]], positions: &[Vec3]) -> Vec<Quadric> {
    let mut out = vec![[0.0; 10]; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|v| positions[v as usize].as_dvec3());
        let normal = (b - a).cross(c - a).normalize_or_zero();
        let q = plane_quadric(normal, -normal.dot(a));
        for &v in t {
            out[v as usize].iter_mut().zip(q).for_each(|(x, y)| *x += y);
        }
    }
    out
}

impl State {
    /// The cheapest way to collapse edge (a, b): into a, into b, or both to the midpoint.
    fn candidate(&self, a: u32, b: u32) -> Candidate {
        const OPTIONS: [Keep; 3] = [Keep::A, Keep::B, Keep::Middle];
        let q = sum(&self.quadrics[a as usize], &self.quadrics[b as usize]);
        let (pa, pb) = (self.positions[a as usize], self.positions[b as usize]);
        let (ca, cb) = (self.centres[a as usize], self.centres[b as usize]);
        // A vertex next to another bone's region is on a joint: moving it costs its travel, so
        // the joint keeps a ring in place while the vertices around it go first.
        let w = f64::from(self.weight);
        let (ja, jb) = (
            f64::from(u8::from(self.is_joint(a))),
            f64::from(u8::from(self.is_joint(b))),
        );
        let cost = |p: Vec3| {
            let travel = ja * f64::from((p - pa).length_squared())
                + jb * f64::from((p - pb).length_squared());
            quadric_error(&q, p).max(0.0) + w * (f64::from((ca - cb).length_squared()) + travel)
        };
        // The same error in every pose, where each option puts the kept vertex at a's or b's
        // position in that pose or halfway between them: one pass over the poses for all three.
        let mut posed = [0.0f64; 3];
        for (pose, quadrics) in self.poses.iter().zip(&self.pose_quadrics) {
            let q = sum(&quadrics[a as usize], &quadrics[b as usize]);
            let (x, y) = (pose[a as usize], pose[b as usize]);
            for (total, keep) in posed.iter_mut().zip(OPTIONS) {
                *total += quadric_error(&q, keep.pick(x, y)).max(0.0);
            }
        }
        let totals: [f64; 3] = std::array::from_fn(|k| cost(OPTIONS[k].pick(pa, pb)) + posed[k]);
        // The first of equally cheap options, as `Iterator::min_by` picks.
        let best = (1..3).fold(0, |best, k| {
            if totals[k].total_cmp(&totals[best]).is_lt() {
                k
            } else {
                best
            }
        });
        let keep = OPTIONS[best];
        let (from, to) = if keep == Keep::A { (b, a) } else { (a, b) };
        Candidate {
            cost: totals[best],
            from,
            to,
            position: keep.pick(pa, pb),
            stamps: (self.stamps[from as usize], self.stamps[to as usize]),
        }
    }

    /// Whether a neighbour of `v` has another bone centre than `v`.
    fn is_joint(&self, v: u32) -> bool {
        let c = self.centres[v as usize];
        self.live_around(v)
            .flat_map(|t| self.triangles[t as usize])
            .any(|u| u != v && self.centres[u as usize] != c)
    }

    /// The live triangles, compacted, with each kept vertex's index in the input mesh.
    fn snapshot(&self) -> (Mesh, Vec<u32>) {
        let indices: Vec<u32> = self
            .triangles
            .iter()
            .zip(&self.alive)
            .filter(|(_, &alive)| alive)
            .flat_map(|(t, _)| *t)
            .collect();
        compact_mapped(&self.positions, &indices)
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
        let (pf, pt) = (self.positions[from as usize], self.positions[to as usize]);
        if position == pf {
            self.centres[to as usize] = self.centres[from as usize];
        }
        for (pose, quadrics) in self.poses.iter_mut().zip(&mut self.pose_quadrics) {
            let q = quadrics[from as usize];
            quadrics[to as usize]
                .iter_mut()
                .zip(q)
                .for_each(|(x, y)| *x += y);
            let (f, t) = (pose[from as usize], pose[to as usize]);
            pose[to as usize] = if position == pf {
                f
            } else if position == pt {
                t
            } else {
                (f + t) * 0.5
            };
        }
        self.positions[to as usize] = position;
        // `to` took over `from`'s fan: drop the dead triangles now, or the lists of the vertices
        // that survive grow with every collapse they absorb and every later scan walks them.
        let alive = &self.alive;
        self.around[to as usize].retain(|&t| alive[t as usize]);
        self.around[from as usize].clear();
        self.stamps[from as usize] += 1;
        self.stamps[to as usize] += 1;
        removed
    }
}

#[cfg(test)]
mod tests;
