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
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use glam::{DVec3, Vec3};
use rayon::prelude::*;

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

/// One candidate collapse in the queue (smallest cost first). Small, so the queue sifts fast:
/// the kept vertex's position is not stored but read again when the candidate is taken (it is
/// still where it was while the candidate is current).
#[derive(Debug, Clone, Copy)]
struct Candidate {
    cost: f64,
    from: u32,
    /// The vertex kept, with [`MIDDLE`] set when it moves halfway to `from`.
    to: u32,
    /// The two ends' versions when the candidate was made; stale once either changed.
    stamps: (u32, u32),
}

/// The bit of [`Candidate::to`] that says the kept vertex moves to the edge's midpoint.
const MIDDLE: u32 = 1 << 31;

impl Candidate {
    /// The vertex kept.
    fn to(&self) -> u32 {
        self.to & !MIDDLE
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
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
    /// Number of poses.
    pose_count: usize,
    /// Vertex-major: vertex `v`'s position in pose `p` at `v * pose_count + p`.
    poses: Vec<Vec3>,
    /// Vertex-major like `poses`: each vertex's quadric of its triangles' planes in each pose.
    pose_quadrics: Vec<Quadric>,
    /// Per vertex, whether a neighbour has another bone centre (see [`State::is_joint`]), kept
    /// up to date as collapses change neighbours and centres.
    joint: Vec<bool>,
    /// Scratch lists for [`State::allowed`], kept to save allocations.
    scratch: [Vec<u32>; 3],
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
    collapse_to_targets_unless(
        mesh,
        centres,
        weight,
        poses,
        targets,
        &AtomicBool::new(false),
    )
    .expect("never stopped")
}

/// Collapses between two looks at whether a run should stop.
const STOP_CHECK_EVERY: u32 = 1024;

/// [`collapse_to_targets`], given up (`None`) soon after `stop` is set: for a run started in
/// case it is needed.
pub(crate) fn collapse_to_targets_unless(
    mesh: &Mesh,
    centres: &[Vec3],
    weight: f32,
    poses: &[Vec<Vec3>],
    targets: &[usize],
    stop: &AtomicBool,
) -> Option<Vec<(Mesh, Vec<u32>)>> {
    if stop.load(AtomicOrdering::Relaxed) {
        return None;
    }
    let n = mesh.positions.len();
    assert!(
        n < MIDDLE as usize,
        "{n} vertices; a candidate keeps a flag in bit 31"
    );
    let triangles: Vec<[u32; 3]> = mesh
        .indices
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .collect();
    let pose_count = poses.len();
    let mut s = State {
        positions: mesh.positions.clone(),
        centres: centres.to_vec(),
        quadrics: quadrics(&triangles, &mesh.positions),
        triangles: triangles.clone(),
        alive: vec![true; mesh.indices.len() / 3],
        around: vec![Vec::new(); n],
        stamps: vec![0; n],
        weight,
        pose_count,
        poses: vertex_major(&poses.iter().map(Vec::as_slice).collect::<Vec<_>>(), n),
        pose_quadrics: vertex_major(
            &poses
                .par_iter()
                .map(|p| quadrics(&triangles, p))
                .collect::<Vec<_>>()
                .iter()
                .map(Vec::as_slice)
                .collect::<Vec<_>>(),
            n,
        ),
        joint: Vec::new(),
        scratch: Default::default(),
    };
    for (i, t) in s.triangles.iter().enumerate() {
        for &v in t {
            s.around[v as usize].push(i as u32);
        }
    }
    s.joint = (0..n as u32)
        .into_par_iter()
        .map(|v| s.is_joint(v))
        .collect();
    // Every edge's first candidate, worked out in parallel and queued in edge order.
    let first: Vec<Candidate> = s
        .triangles
        .par_iter()
        .flat_map_iter(|t| {
            (0..3)
                .map(|k| (t[k], t[(k + 1) % 3]))
                .filter(|(a, b)| a < b)
                .map(|(a, b)| s.candidate(a, b))
        })
        .collect();
    if stop.load(AtomicOrdering::Relaxed) {
        return None;
    }
    let mut heap = BinaryHeap::new();
    for c in first {
        heap.push(c);
    }
    // The targets largest first, each with its place in the answer.
    let mut order: Vec<usize> = (0..targets.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(targets[k]));
    let mut out: Vec<Option<(Mesh, Vec<u32>)>> = vec![None; targets.len()];
    let mut next = 0;
    let mut count = s.triangles.len();
    let mut steps = 0u32;
    while next < order.len() {
        steps = steps.wrapping_add(1);
        if steps.is_multiple_of(STOP_CHECK_EVERY) && stop.load(AtomicOrdering::Relaxed) {
            return None;
        }
        if count <= targets[order[next]] {
            out[order[next]] = Some(s.snapshot());
            next += 1;
            continue;
        }
        let Some(c) = heap.pop() else { break };
        let to = c.to();
        if (s.stamps[c.from as usize], s.stamps[to as usize]) != c.stamps {
            continue;
        }
        let (pf, pt) = (s.positions[c.from as usize], s.positions[to as usize]);
        let position = if c.to & MIDDLE != 0 {
            (pf + pt) * 0.5
        } else {
            pt
        };
        if !s.allowed(c.from, to, position) {
            continue;
        }
        count -= s.collapse(c.from, to, position);
        let around = s.neighbours(to);
        // Only `to` and its neighbours changed neighbours or a neighbour's centre.
        for &v in around.iter().chain([&to]) {
            s.joint[v as usize] = s.is_joint(v);
        }
        for u in around {
            heap.push(s.candidate(to.min(u), to.max(u)));
        }
    }
    // No allowed collapse left: the targets not reached get where the run ended.
    for &k in &order[next..] {
        out[k] = Some(s.snapshot());
    }
    Some(
        out.into_iter()
            .map(|m| m.expect("every target answered"))
            .collect(),
    )
}

/// `per_pose[p][v]` laid out vertex-major: element `v * per_pose.len() + p`, for `n` vertices.
fn vertex_major<T: Copy>(per_pose: &[&[T]], n: usize) -> Vec<T> {
    (0..n)
        .flat_map(|v| per_pose.iter().map(move |pose| pose[v]))
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
            f64::from(u8::from(self.joint[a as usize])),
            f64::from(u8::from(self.joint[b as usize])),
        );
        let cost = |p: Vec3| {
            let travel = ja * f64::from((p - pa).length_squared())
                + jb * f64::from((p - pb).length_squared());
            quadric_error(&q, p).max(0.0) + w * (f64::from((ca - cb).length_squared()) + travel)
        };
        // The same error in every pose, where each option puts the kept vertex at a's or b's
        // position in that pose or halfway between them: one pass over the poses for all three.
        let mut posed = [0.0f64; 3];
        let np = self.pose_count;
        let (ra, rb) = (
            a as usize * np..(a as usize + 1) * np,
            b as usize * np..(b as usize + 1) * np,
        );
        let (qa, qb) = (
            &self.pose_quadrics[ra.clone()],
            &self.pose_quadrics[rb.clone()],
        );
        let (xa, xb) = (&self.poses[ra], &self.poses[rb]);
        for p in 0..np {
            let q = sum(&qa[p], &qb[p]);
            let (x, y) = (xa[p], xb[p]);
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
            to: if keep == Keep::Middle {
                to | MIDDLE
            } else {
                to
            },
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
        let mut out = Vec::new();
        self.neighbours_into(v, &mut out);
        out
    }

    /// [`Self::neighbours`] of `v` into `out` (cleared first), sorted.
    fn neighbours_into(&self, v: u32, out: &mut Vec<u32>) {
        out.clear();
        out.extend(
            self.live_around(v)
                .flat_map(|t| self.triangles[t as usize])
                .filter(|&u| u != v),
        );
        out.sort_unstable();
        out.dedup();
    }

    /// Whether collapsing `from` into `to` at `position` keeps the mesh closed, manifold and
    /// unfolded (see the module docs).
    fn allowed(&mut self, from: u32, to: u32, position: Vec3) -> bool {
        let [mut nf, mut nt, mut opposite] = std::mem::take(&mut self.scratch);
        let ok = self.allowed_with(from, to, position, [&mut nf, &mut nt, &mut opposite]);
        self.scratch = [nf, nt, opposite];
        ok
    }

    /// [`Self::allowed`] with three scratch lists.
    fn allowed_with(
        &self,
        from: u32,
        to: u32,
        position: Vec3,
        [nf, nt, opposite]: [&mut Vec<u32>; 3],
    ) -> bool {
        self.neighbours_into(from, nf);
        self.neighbours_into(to, nt);
        if nf.binary_search(&to).is_err() {
            return false;
        }
        opposite.clear();
        opposite.extend(
            self.live_around(from)
                .filter(|&t| self.triangles[t as usize].contains(&to))
                .flat_map(|t| self.triangles[t as usize])
                .filter(|&u| u != from && u != to),
        );
        opposite.sort_unstable();
        // The neighbours both ends share must be exactly the two opposite their edge.
        let mut shared = nf.iter().filter(|u| nt.binary_search(u).is_ok());
        let shared_len = nf.iter().filter(|u| nt.binary_search(u).is_ok()).count();
        if opposite.len() != 2
            || shared_len != 2
            || shared.next() != Some(&opposite[0])
            || shared.next() != Some(&opposite[1])
        {
            return false;
        }
        let shared = shared_len;
        let union = nf.len() + nt.len() - shared - 2;
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
        let np = self.pose_count;
        for p in 0..np {
            let (f, t) = (from as usize * np + p, to as usize * np + p);
            let q = self.pose_quadrics[f];
            self.pose_quadrics[t]
                .iter_mut()
                .zip(q)
                .for_each(|(x, y)| *x += y);
            let (f, t) = (self.poses[f], self.poses[t]);
            self.poses[to as usize * np + p] = if position == pf {
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
