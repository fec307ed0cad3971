//! The closed surface around a voxel grid's solid samples, smoothed and simplified.
//!
//! Extraction is marching tetrahedra over the Freudenthal (Kuhn) split of every cell into six
//! tetrahedra around its main diagonal. The split is the same in every cell, so neighbouring
//! cells cut their shared face along the same diagonal: that is the consistent diagonal rule
//! that resolves samples touching only along an edge. The surface is the level set of a
//! piecewise-linear function that is never zero at a sample, so it is a closed 2-manifold: each
//! triangle edge lies on one lattice triangle shared by exactly two tetrahedra (or inside one
//! tetrahedron, for a quad's diagonal), and each tetrahedron adds exactly one segment there.

use std::collections::HashMap;

use glam::Vec3;

use super::voxel::Grid;

/// A triangle mesh: positions and three indices per triangle.
#[derive(Debug, Clone, Default)]
pub(crate) struct Mesh {
    /// Vertex positions.
    pub positions: Vec<Vec3>,
    /// Triangles, counter-clockwise seen from outside.
    pub indices: Vec<u32>,
}

/// The six tetrahedra of a cell as corner numbers `dx | dy << 1 | dz << 2`: one per order in
/// which the path from corner 0 to corner 7 steps along the axes.
const TETS: [[usize; 4]; 6] = {
    const fn tet(a: usize, b: usize) -> [usize; 4] {
        [0, 1 << a, (1 << a) | (1 << b), 7]
    }
    [
        tet(0, 1),
        tet(0, 2),
        tet(1, 0),
        tet(1, 2),
        tet(2, 0),
        tet(2, 1),
    ]
};

/// Marching tetrahedra over `grid`: one vertex at the midpoint of every lattice edge between a
/// solid and an empty sample, triangles facing away from the solid side.
pub(crate) fn extract(grid: &Grid) -> Mesh {
    let [nx, ny, nz] = grid.dims;
    let mut mesh = Mesh::default();
    let mut edge_vertex: HashMap<(u32, u32), u32> = HashMap::new();
    if nx < 2 || ny < 2 || nz < 2 {
        return mesh;
    }
    for z in 0..nz - 1 {
        for y in 0..ny - 1 {
            for x in 0..nx - 1 {
                let corner =
                    |c: usize| grid.index(x + (c & 1), y + ((c >> 1) & 1), z + ((c >> 2) & 1));
                let ids: [usize; 8] = std::array::from_fn(corner);
                let solid = ids.map(|i| grid.solid[i]);
                let count = solid.iter().filter(|&&s| s).count();
                if count == 0 || count == 8 {
                    continue;
                }
                for tet in TETS {
                    let samples = tet.map(|c| ids[c]);
                    let inside = tet.map(|c| solid[c]);
                    march_tet(grid, samples, inside, &mut edge_vertex, &mut mesh);
                }
            }
        }
    }
    mesh
}

/// Adds the 0, 1 or 2 triangles of one tetrahedron (sample indices and their solidity).
fn march_tet(
    grid: &Grid,
    samples: [usize; 4],
    inside: [bool; 4],
    edge_vertex: &mut HashMap<(u32, u32), u32>,
    mesh: &mut Mesh,
) {
    let solid: Vec<usize> = (0..4).filter(|&k| inside[k]).collect();
    let empty: Vec<usize> = (0..4).filter(|&k| !inside[k]).collect();
    let pos = |i: usize| {
        let (x, rest) = (i % grid.dims[0], i / grid.dims[0]);
        grid.position(x, rest % grid.dims[1], rest / grid.dims[1])
    };
    let mut vertex = |a: usize, b: usize| -> u32 {
        let (sa, sb) = (samples[a] as u32, samples[b] as u32);
        let key = (sa.min(sb), sa.max(sb));
        *edge_vertex.entry(key).or_insert_with(|| {
            mesh.positions
                .push((pos(samples[a]) + pos(samples[b])) * 0.5);
            (mesh.positions.len() - 1) as u32
        })
    };
    // Each triangle is listed with the direction it must face (from solid towards empty).
    let mut tris: Vec<([u32; 3], Vec3)> = Vec::with_capacity(2);
    match solid.len() {
        1 | 3 => {
            let (lone, others, outward) = if solid.len() == 1 {
                let s = solid[0];
                (s, empty.clone(), -1.0)
            } else {
                let e = empty[0];
                (e, solid.clone(), 1.0)
            };
            let tri = [
                vertex(lone, others[0]),
                vertex(lone, others[1]),
                vertex(lone, others[2]),
            ];
            let centre = others.iter().map(|&k| pos(samples[k])).sum::<Vec3>() / 3.0;
            // From the lone solid corner outwards, or towards the lone empty corner.
            tris.push((tri, (pos(samples[lone]) - centre) * outward));
        }
        2 => {
            let (i0, i1, o0, o1) = (solid[0], solid[1], empty[0], empty[1]);
            let quad = [
                vertex(i0, o0),
                vertex(i0, o1),
                vertex(i1, o1),
                vertex(i1, o0),
            ];
            let out = (pos(samples[o0]) + pos(samples[o1])) - (pos(samples[i0]) + pos(samples[i1]));
            tris.push(([quad[0], quad[1], quad[2]], out));
            tris.push(([quad[0], quad[2], quad[3]], out));
        }
        _ => {}
    }
    for (mut t, out) in tris {
        let [a, b, c] = t.map(|v| mesh.positions[v as usize]);
        if (b - a).cross(c - a).dot(out) < 0.0 {
            t.swap(1, 2);
        }
        mesh.indices.extend_from_slice(&t);
    }
}

/// Taubin smoothing (a shrinking step `lambda`, then an inflating step `mu`, `iterations`
/// times): removes the lattice's staircase without shrinking the shape much. Connectivity is
/// untouched, so the mesh stays closed and manifold.
pub(crate) fn smooth(mesh: &mut Mesh, iterations: usize) {
    const LAMBDA: f32 = 0.5;
    const MU: f32 = -0.53;
    let n = mesh.positions.len();
    let mut neighbours: Vec<Vec<u32>> = vec![Vec::new(); n];
    for t in mesh.indices.chunks_exact(3) {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            neighbours[a as usize].push(b);
            neighbours[b as usize].push(a);
        }
    }
    for list in &mut neighbours {
        list.sort_unstable();
        list.dedup();
    }
    let mut next = mesh.positions.clone();
    for _ in 0..iterations {
        for factor in [LAMBDA, MU] {
            for (v, list) in neighbours.iter().enumerate() {
                if list.is_empty() {
                    continue;
                }
                let p = mesh.positions[v];
                let mean = list
                    .iter()
                    .map(|&u| mesh.positions[u as usize])
                    .sum::<Vec3>()
                    / list.len() as f32;
                next[v] = p + (mean - p) * factor;
            }
            std::mem::swap(&mut mesh.positions, &mut next);
        }
    }
}

/// Simplifies to at most `target` triangles with meshoptimizer (no error limit: the target is
/// what counts) and returns the triangles over `mesh`'s vertices. `attributes` holds three
/// floats per vertex, weighed by `weight` against the position error (see `bone_centres` in the module root);
/// `locks` marks vertices that must stay.
pub(crate) fn simplify(
    mesh: &Mesh,
    target: usize,
    attributes: &[f32],
    weight: f32,
    locks: &[bool],
) -> Vec<u32> {
    let positions: Vec<[f32; 3]> = mesh.positions.iter().map(|p| p.to_array()).collect();
    meshopt::simplify_with_attributes_and_locks_decoder(
        &mesh.indices,
        &positions,
        attributes,
        &[weight; 3],
        3 * std::mem::size_of::<f32>(),
        locks,
        target * 3,
        1.0,
        meshopt::SimplifyOptions::Regularize,
        None,
    )
}

/// The mesh of `indices` over `positions` with only the vertices it uses, in first-use order.
#[cfg(test)]
pub(crate) fn compact(positions: &[Vec3], indices: &[u32]) -> Mesh {
    compact_mapped(positions, indices).0
}

/// [`compact`], also giving each new vertex's index in `positions`.
pub(crate) fn compact_mapped(positions: &[Vec3], indices: &[u32]) -> (Mesh, Vec<u32>) {
    let mut remap = vec![u32::MAX; positions.len()];
    let mut out = Mesh::default();
    let mut old = Vec::new();
    for &i in indices {
        let r = &mut remap[i as usize];
        if *r == u32::MAX {
            *r = out.positions.len() as u32;
            out.positions.push(positions[i as usize]);
            old.push(i);
        }
        out.indices.push(*r);
    }
    (out, old)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lod_mesh::lod2::manifold::indices_closed_manifold;

    fn grid_with(dims: [usize; 3], solid: &[(usize, usize, usize)]) -> Grid {
        let mut g = Grid {
            origin: Vec3::ZERO,
            voxel: 1.0,
            dims,
            solid: vec![false; dims[0] * dims[1] * dims[2]],
        };
        for &(x, y, z) in solid {
            let i = g.index(x, y, z);
            g.solid[i] = true;
        }
        g
    }

    /// Signed volume of a closed mesh (positive when it faces outwards).
    fn volume(mesh: &Mesh) -> f32 {
        mesh.indices
            .chunks_exact(3)
            .map(|t| {
                let [a, b, c] = [0, 1, 2].map(|k| mesh.positions[t[k] as usize]);
                a.dot(b.cross(c)) / 6.0
            })
            .sum()
    }

    #[test]
    fn one_sample_gives_a_closed_outward_surface() {
        let mesh = extract(&grid_with([3, 3, 3], &[(1, 1, 1)]));
        assert!(!mesh.indices.is_empty());
        assert!(indices_closed_manifold(&mesh.indices, mesh.positions.len()));
        assert!(volume(&mesh) > 0.0);
    }

    #[test]
    fn samples_touching_along_an_edge_or_a_corner_stay_manifold() {
        // Every pair of diagonal neighbours (edge-touching and corner-touching voxels), in every
        // direction: the consistent diagonal rule either joins or separates them, never both.
        for dz in 0..=1usize {
            for dy in 0..=2usize {
                for dx in 0..=2usize {
                    if (dx, dy, dz) == (1, 1, 0) {
                        continue;
                    }
                    let mesh = extract(&grid_with(
                        [5, 5, 4],
                        &[(1, 1, 1), (dx + 1, dy + 1, dz + 1)],
                    ));
                    // Shift so the second sample may sit on the other side of the first.
                    assert!(
                        indices_closed_manifold(&mesh.indices, mesh.positions.len()),
                        "offset ({dx},{dy},{dz})"
                    );
                    assert!(volume(&mesh) > 0.0);
                }
            }
        }
        let checker: Vec<_> = (0..4)
            .flat_map(|z| (0..4).flat_map(move |y| (0..4).map(move |x| (x + 1, y + 1, z + 1))))
            .filter(|(x, y, z)| (x + y + z) % 2 == 0)
            .collect();
        let mesh = extract(&grid_with([6, 6, 6], &checker));
        assert!(indices_closed_manifold(&mesh.indices, mesh.positions.len()));
    }

    #[test]
    fn smoothing_and_simplifying_keep_a_ball_closed() {
        let mut solid = Vec::new();
        for z in 0..14 {
            for y in 0..14 {
                for x in 0..14 {
                    let d = Vec3::new(x as f32, y as f32, z as f32) - Vec3::splat(6.5);
                    if d.length() < 5.5 {
                        solid.push((x + 1, y + 1, z + 1));
                    }
                }
            }
        }
        let mut mesh = extract(&grid_with([17, 17, 17], &solid));
        let v0 = volume(&mesh);
        smooth(&mut mesh, 5);
        assert!(indices_closed_manifold(&mesh.indices, mesh.positions.len()));
        assert!(
            (volume(&mesh) - v0).abs() < 0.1 * v0,
            "{} vs {v0}",
            volume(&mesh)
        );
        let attributes = vec![0.0; mesh.positions.len() * 3];
        let locks = vec![false; mesh.positions.len()];
        let small = compact(
            &mesh.positions,
            &simplify(&mesh, 100, &attributes, 0.0, &locks),
        );
        assert!(small.indices.len() / 3 <= 100 && small.indices.len() / 3 >= 80);
        assert!(indices_closed_manifold(
            &small.indices,
            small.positions.len()
        ));
    }
}
