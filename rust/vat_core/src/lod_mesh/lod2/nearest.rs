//! Nearest-triangle queries over a triangle soup: a bounding volume hierarchy (BVH) of boxes,
//! built once, queried with branch-and-bound on the squared distance.
//!
//! Used to shrink-wrap LOD2 onto the source surface, to bind its vertices, and to measure how far
//! one surface lies from another. Degenerate (zero-area) triangles are left out: they have no
//! barycentric coordinates and a neighbour always holds the same points.

use glam::Vec3;

/// Triangles per leaf: small leaves keep the exact distance tests few.
const LEAF_SIZE: usize = 4;

/// The nearest point of a [`TriangleBvh`] to a query point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Hit {
    /// Index of the triangle in the list the BVH was built from.
    pub triangle: u32,
    /// The nearest point on that triangle.
    pub point: Vec3,
    /// Barycentric weights of `point` on the triangle's corners: each >= 0, summing to 1.
    pub weights: [f32; 3],
    /// Distance from the query point to `point`.
    pub distance: f32,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    min: Vec3,
    max: Vec3,
    /// Leaf: first entry in `order`; inner: index of the left child (the right one follows it).
    start: u32,
    /// Triangles in a leaf, 0 for an inner node.
    count: u32,
}

/// A BVH over triangles given as corner positions.
#[derive(Debug, Clone)]
pub(crate) struct TriangleBvh {
    corners: Vec<[Vec3; 3]>,
    /// Triangle indices (into `corners`) grouped by leaf.
    order: Vec<u32>,
    nodes: Vec<Node>,
}

impl TriangleBvh {
    /// Builds the hierarchy over `corners`. Triangles whose area is below `min_area` (absolute)
    /// are not indexed; [`TriangleBvh::is_empty`] says whether any is left.
    pub fn new(corners: Vec<[Vec3; 3]>, min_area: f32) -> Self {
        let mut order: Vec<u32> = (0..corners.len() as u32)
            .filter(|&t| {
                let [a, b, c] = corners[t as usize];
                0.5 * (b - a).cross(c - a).length() > min_area
            })
            .collect();
        let centroids: Vec<Vec3> = corners
            .iter()
            .map(|[a, b, c]| (*a + *b + *c) / 3.0)
            .collect();
        let mut nodes = Vec::with_capacity(2 * order.len() / LEAF_SIZE + 1);
        if !order.is_empty() {
            nodes.push(Node {
                min: Vec3::ZERO,
                max: Vec3::ZERO,
                start: 0,
                count: 0,
            });
            let len = order.len();
            build(&corners, &centroids, &mut order, &mut nodes, 0, 0, len);
        }
        Self {
            corners,
            order,
            nodes,
        }
    }

    /// True when no triangle was indexed (every one degenerate, or none given).
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The indexed triangle nearest to `p` (ties: the first found), or `None` for an empty BVH.
    pub fn nearest(&self, p: Vec3) -> Option<Hit> {
        self.nearest_where(p, |_| true)
    }

    /// The nearest indexed triangle for which `accept(triangle index)` holds, or `None`.
    pub fn nearest_where(&self, p: Vec3, accept: impl Fn(u32) -> bool) -> Option<Hit> {
        if self.nodes.is_empty() {
            return None;
        }
        let mut best: Option<Hit> = None;
        let mut best_d2 = f32::INFINITY;
        let mut stack: Vec<(u32, f32)> = vec![(0, box_distance2(&self.nodes[0], p))];
        while let Some((n, d2)) = stack.pop() {
            if d2 > best_d2 {
                continue;
            }
            let node = self.nodes[n as usize];
            if node.count > 0 {
                for &t in &self.order[node.start as usize..(node.start + node.count) as usize] {
                    if !accept(t) {
                        continue;
                    }
                    let (point, weights) = closest_on_triangle(p, self.corners[t as usize]);
                    let d2 = (point - p).length_squared();
                    if d2 < best_d2 {
                        best_d2 = d2;
                        best = Some(Hit {
                            triangle: t,
                            point,
                            weights,
                            distance: d2.sqrt(),
                        });
                    }
                }
            } else {
                let (l, r) = (node.start, node.start + 1);
                let dl = box_distance2(&self.nodes[l as usize], p);
                let dr = box_distance2(&self.nodes[r as usize], p);
                // Visit the nearer child first: push it last.
                if dl < dr {
                    stack.push((r, dr));
                    stack.push((l, dl));
                } else {
                    stack.push((l, dl));
                    stack.push((r, dr));
                }
            }
        }
        best
    }
}

/// Fills node `n` with the triangles `order[start..end]`, splitting at the median centroid of
/// the longest axis until leaves hold at most [`LEAF_SIZE`].
fn build(
    corners: &[[Vec3; 3]],
    centroids: &[Vec3],
    order: &mut [u32],
    nodes: &mut Vec<Node>,
    n: usize,
    start: usize,
    end: usize,
) {
    let (mut min, mut max) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
    for &t in &order[start..end] {
        for c in corners[t as usize] {
            min = min.min(c);
            max = max.max(c);
        }
    }
    nodes[n].min = min;
    nodes[n].max = max;
    if end - start <= LEAF_SIZE {
        nodes[n].start = start as u32;
        nodes[n].count = (end - start) as u32;
        return;
    }
    let extent = max - min;
    let axis = if extent.x >= extent.y && extent.x >= extent.z {
        0
    } else if extent.y >= extent.z {
        1
    } else {
        2
    };
    let mid = (start + end) / 2;
    order[start..end].select_nth_unstable_by(mid - start, |&a, &b| {
        centroids[a as usize][axis].total_cmp(&centroids[b as usize][axis])
    });
    let left = nodes.len();
    let blank = Node {
        min: Vec3::ZERO,
        max: Vec3::ZERO,
        start: 0,
        count: 0,
    };
    nodes.push(blank);
    nodes.push(blank);
    nodes[n].start = left as u32;
    nodes[n].count = 0;
    build(corners, centroids, order, nodes, left, start, mid);
    build(corners, centroids, order, nodes, left + 1, mid, end);
}

/// Squared distance from `p` to a node's box (0 inside).
fn box_distance2(node: &Node, p: Vec3) -> f32 {
    let d = (node.min - p).max(p - node.max).max(Vec3::ZERO);
    d.length_squared()
}

/// The point of triangle `[a, b, c]` nearest to `p`, with its barycentric weights (each >= 0,
/// summing to 1). Exact up to rounding for a non-degenerate triangle (region tests on the
/// Voronoi regions of corners, edges and face).
pub(crate) fn closest_on_triangle(p: Vec3, [a, b, c]: [Vec3; 3]) -> (Vec3, [f32; 3]) {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(ap);
    let d2 = ac.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, [1.0, 0.0, 0.0]);
    }
    let bp = p - b;
    let d3 = ab.dot(bp);
    let d4 = ac.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, [0.0, 1.0, 0.0]);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + ab * v, [1.0 - v, v, 0.0]);
    }
    let cp = p - c;
    let d5 = ab.dot(cp);
    let d6 = ac.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, [0.0, 0.0, 1.0]);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + ac * w, [1.0 - w, 0.0, w]);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, [0.0, 1.0 - w, w]);
    }
    let denom = 1.0 / (va + vb + vc);
    let v = vb * denom;
    let w = vc * denom;
    let weights = clean_weights([1.0 - v - w, v, w]);
    (a * weights[0] + b * weights[1] + c * weights[2], weights)
}

/// The corner with the largest of barycentric `weights` (the last of equal ones): the one whose
/// bone a bound point mostly follows.
pub(crate) fn heaviest(weights: [f32; 3]) -> usize {
    (0..3)
        .max_by(|&a, &b| weights[a].total_cmp(&weights[b]))
        .unwrap_or(0)
}

/// Weights clamped to >= 0 and rescaled to sum to exactly 1 (up to rounding), so rounding in
/// the face region can never leave a slightly negative weight.
pub(crate) fn clean_weights(w: [f32; 3]) -> [f32; 3] {
    let w = w.map(|x| x.max(0.0));
    let sum = w[0] + w[1] + w[2];
    if sum > 0.0 {
        w.map(|x| x / sum)
    } else {
        [1.0, 0.0, 0.0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRI: [Vec3; 3] = [
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(2.0, 0.0, 0.0),
        Vec3::new(0.0, 2.0, 0.0),
    ];

    #[test]
    fn closest_point_in_each_region() {
        // Above the face: straight down, weights reproduce the point.
        let (p, w) = closest_on_triangle(Vec3::new(0.5, 0.5, 3.0), TRI);
        assert!((p - Vec3::new(0.5, 0.5, 0.0)).length() < 1e-6);
        assert!((w[0] - 0.5).abs() < 1e-6 && (w[1] - 0.25).abs() < 1e-6);
        // Beyond corner b.
        let (p, w) = closest_on_triangle(Vec3::new(5.0, -1.0, 0.0), TRI);
        assert_eq!((p, w), (TRI[1], [0.0, 1.0, 0.0]));
        // Outside edge bc: the nearest point is its midpoint.
        let (p, w) = closest_on_triangle(Vec3::new(2.0, 2.0, 1.0), TRI);
        assert!((p - Vec3::new(1.0, 1.0, 0.0)).length() < 1e-6, "{p}");
        assert!((w[1] - 0.5).abs() < 1e-6 && (w[2] - 0.5).abs() < 1e-6 && w[0] == 0.0);
        // Below edge ab.
        let (p, _) = closest_on_triangle(Vec3::new(1.0, -3.0, 0.0), TRI);
        assert!((p - Vec3::new(1.0, 0.0, 0.0)).length() < 1e-6);
    }

    #[test]
    fn bvh_matches_brute_force() {
        // A bumpy grid of triangles; random-ish query points by a fixed LCG.
        let mut corners = Vec::new();
        let h = |x: f32, y: f32| (x * 1.3).sin() * (y * 0.7).cos();
        for i in 0..12 {
            for j in 0..12 {
                let (x, y) = (i as f32, j as f32);
                let p = |dx: f32, dy: f32| Vec3::new(x + dx, y + dy, h(x + dx, y + dy));
                corners.push([p(0.0, 0.0), p(1.0, 0.0), p(1.0, 1.0)]);
                corners.push([p(0.0, 0.0), p(1.0, 1.0), p(0.0, 1.0)]);
            }
        }
        // One degenerate triangle far away must never be returned.
        corners.push([Vec3::splat(50.0); 3]);
        let bvh = TriangleBvh::new(corners.clone(), 1e-9);
        let mut seed = 12345u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        for _ in 0..300 {
            let q = Vec3::new(rnd() * 16.0 - 2.0, rnd() * 16.0 - 2.0, rnd() * 6.0 - 3.0);
            let hit = bvh.nearest(q).unwrap();
            let brute = corners[..corners.len() - 1]
                .iter()
                .map(|&t| (closest_on_triangle(q, t).0 - q).length())
                .fold(f32::INFINITY, f32::min);
            assert!(
                (hit.distance - brute).abs() < 1e-5,
                "{} vs {brute}",
                hit.distance
            );
            let [a, b, c] = corners[hit.triangle as usize];
            let w = hit.weights;
            assert!((a * w[0] + b * w[1] + c * w[2] - hit.point).length() < 1e-5);
        }
        assert!(TriangleBvh::new(vec![[Vec3::ZERO; 3]], 1e-9).is_empty());
        // A filter skips triangles: only odd ones, then none.
        let q = Vec3::new(3.3, 4.4, 2.0);
        let odd = bvh.nearest_where(q, |t| t % 2 == 1).unwrap();
        assert_eq!(odd.triangle % 2, 1);
        let brute = (1..corners.len() - 1)
            .step_by(2)
            .map(|t| (closest_on_triangle(q, corners[t]).0 - q).length())
            .fold(f32::INFINITY, f32::min);
        assert!((odd.distance - brute).abs() < 1e-5);
        assert!(bvh.nearest_where(q, |_| false).is_none());
    }
}
