//! Shape features the simplifier should keep: points on convex sharp edges.
//!
//! A sharp convex edge (a box's corner, a blade's edge, a finger tip) is where a silhouette's
//! outline runs; collapsing one of its points onto a flat neighbour cuts the outline inwards,
//! which the silhouette check sees as a hole. Concave creases only move the inside of the
//! outline, so they are left to the simplifier's own error.

use std::collections::HashMap;

use glam::Vec3;

use super::weld::Welded;
use super::LodSource;

/// Faces meeting at more than this many degrees on a convex edge make its points sharp.
pub(crate) const SHARP_FEATURE_DEGREES: f32 = 30.0;

/// Per LOD0 position group: true where a convex edge of LOD0 joining exactly two triangles runs
/// through it and their faces meet at more than [`SHARP_FEATURE_DEGREES`]. Face normals point
/// along their corners' vertex normals, whatever the winding; degenerate triangles count as
/// flat.
pub(crate) fn sharp_points(source: &LodSource, lod0: &Welded) -> Vec<bool> {
    let groups = lod0
        .position_group
        .iter()
        .max()
        .map_or(0, |&g| g as usize + 1);
    let mut at = vec![Vec3::ZERO; groups];
    for (v, &g) in lod0.position_group.iter().enumerate() {
        at[g as usize] = lod0.positions[v];
    }
    // Per edge (position-group pair): each triangle's normal and the group of its third corner.
    let mut edges: HashMap<(u32, u32), Vec<(Vec3, u32)>> = HashMap::new();
    for t in lod0
        .level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
    {
        let g = [t[0], t[1], t[2]].map(|v| lod0.position_group[v as usize]);
        let p = g.map(|g| at[g as usize]);
        let along: Vec3 = [t[0], t[1], t[2]]
            .iter()
            .map(|&v| source.normals[lod0.level.vertices[v as usize].sources[0] as usize])
            .sum();
        let face = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
        let face = if face.dot(along) < 0.0 { -face } else { face };
        for k in 0..3 {
            let (a, b) = (g[k], g[(k + 1) % 3]);
            edges
                .entry((a.min(b), a.max(b)))
                .or_default()
                .push((face, g[(k + 2) % 3]));
        }
    }
    let cos = SHARP_FEATURE_DEGREES.to_radians().cos();
    let mut sharp = vec![false; groups];
    for (&(a, b), faces) in &edges {
        let [(n0, _), (n1, o1)] = faces[..] else {
            continue;
        };
        let bent = n0 != Vec3::ZERO && n1 != Vec3::ZERO && n0.dot(n1) < cos;
        // Convex: the second face's far corner lies behind the first face's plane.
        if bent && n0.dot(at[o1 as usize] - at[a as usize]) < 0.0 {
            sharp[a as usize] = true;
            sharp[b as usize] = true;
        }
    }
    sharp
}

#[cfg(test)]
mod tests;
