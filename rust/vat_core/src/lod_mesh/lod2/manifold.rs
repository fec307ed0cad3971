//! The closed-manifold test LOD2 must pass.

use std::collections::HashMap;

use crate::lod_mesh::LodLevel;

/// True when `level` has triangles and every edge (by vertex index, over all surfaces) lies in
/// exactly two triangles that use it in opposite directions: the mesh is closed, each edge
/// joins exactly two faces, and the faces agree on which side is out. A triangle that repeats a
/// vertex, or an index past the vertex list, makes it false.
pub fn is_closed_manifold(level: &LodLevel) -> bool {
    let indices: Vec<u32> = level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.iter().copied())
        .collect();
    indices_closed_manifold(&indices, level.vertices.len())
}

/// [`is_closed_manifold`] on a plain index list over `vertex_count` vertices.
pub(crate) fn indices_closed_manifold(indices: &[u32], vertex_count: usize) -> bool {
    if indices.is_empty() || !indices.len().is_multiple_of(3) {
        return false;
    }
    if indices.iter().any(|&v| v as usize >= vertex_count) {
        return false;
    }
    bad_edges(indices).is_empty()
}

/// Directed edges that break [`is_closed_manifold`]: used more than once, or without exactly
/// one reverse; plus every edge of a triangle that repeats a vertex.
pub(crate) fn bad_edges(indices: &[u32]) -> Vec<(u32, u32)> {
    let mut bad = Vec::new();
    // Each directed edge must occur once, and its reverse once.
    let mut directed: HashMap<(u32, u32), u32> = HashMap::with_capacity(indices.len());
    for t in indices.chunks_exact(3) {
        let degenerate = t[0] == t[1] || t[1] == t[2] || t[0] == t[2];
        for k in 0..3 {
            let e = (t[k], t[(k + 1) % 3]);
            *directed.entry(e).or_insert(0) += 1;
            if degenerate {
                bad.push(e);
            }
        }
    }
    bad.extend(
        directed
            .iter()
            .filter(|(&(a, b), &n)| n != 1 || directed.get(&(b, a)) != Some(&1))
            .map(|(&e, _)| e),
    );
    bad.sort_unstable();
    bad.dedup();
    bad
}

/// True when two triangles use the same three vertices (either winding): a closed "pillow" of
/// zero volume passes the edge rule but draws as one flat, flickering triangle.
pub(crate) fn has_doubled_triangles(indices: &[u32]) -> bool {
    let mut sets: Vec<[u32; 3]> = indices
        .chunks_exact(3)
        .map(|t| {
            let mut s = [t[0], t[1], t[2]];
            s.sort_unstable();
            s
        })
        .collect();
    sets.sort_unstable();
    sets.windows(2).any(|w| w[0] == w[1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lod_mesh::{LodSurface, LodVertex};

    fn level(surfaces: Vec<Vec<u32>>, vertices: usize) -> LodLevel {
        LodLevel {
            vertices: vec![
                LodVertex {
                    sources: [0; 3],
                    weights: [1.0, 0.0, 0.0],
                    column: 0,
                };
                vertices
            ],
            surfaces: surfaces
                .into_iter()
                .enumerate()
                .map(|(i, indices)| LodSurface {
                    source_surface: i as u32,
                    indices,
                })
                .collect(),
        }
    }

    const TETRA: [u32; 12] = [0, 2, 1, 0, 1, 3, 1, 2, 3, 0, 3, 2];

    #[test]
    fn a_tetrahedron_is_closed_across_surfaces() {
        assert!(is_closed_manifold(&level(vec![TETRA.to_vec()], 4)));
        // Split over two surfaces: still one closed mesh by vertex index.
        assert!(is_closed_manifold(&level(
            vec![TETRA[..6].to_vec(), TETRA[6..].to_vec()],
            4
        )));
    }

    #[test]
    fn open_flipped_doubled_or_degenerate_meshes_are_not() {
        // One face missing: open.
        assert!(!is_closed_manifold(&level(vec![TETRA[..9].to_vec()], 4)));
        // One face flipped: its edges run the same way as their neighbours'.
        let mut flipped = TETRA.to_vec();
        flipped.swap(10, 11);
        assert!(!is_closed_manifold(&level(vec![flipped], 4)));
        // Two tetrahedra sharing an edge (0-1): that edge is in four triangles.
        let mut two = TETRA.to_vec();
        two.extend([0, 5, 1, 0, 1, 4, 1, 5, 4, 0, 4, 5]);
        assert!(two.len() == 24);
        assert!(!is_closed_manifold(&level(vec![two], 6)));
        // Two triangles on the same three vertices: closed by the edge rule, but doubled.
        assert!(is_closed_manifold(&level(vec![vec![0, 1, 2, 0, 2, 1]], 3)));
        assert!(has_doubled_triangles(&[0, 1, 2, 0, 2, 1]));
        assert!(!has_doubled_triangles(&TETRA));
        // A repeated vertex, an index out of range, nothing at all.
        assert!(!is_closed_manifold(&level(vec![vec![0, 0, 1]], 4)));
        assert!(!is_closed_manifold(&level(vec![TETRA.to_vec()], 3)));
        assert!(!is_closed_manifold(&level(vec![], 0)));
    }
}
