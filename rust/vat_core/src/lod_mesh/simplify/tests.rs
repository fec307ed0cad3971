use std::collections::HashMap;

use glam::Vec3;

use super::*;
use crate::lod_mesh::test_meshes::{capsule_limb, faceted, identity_chain, plane};
use crate::lod_mesh::weld::weld;
use crate::lod_mesh::{check_silhouettes, ColumnSource, LodChain};

fn lod1_of(source: &LodSource, settings: &LodSettings) -> (Welded, Result<LodLevel>) {
    let lod0 = weld(source, settings);
    let lod1 = simplify_lod1(source, &lod0, settings);
    (lod0, lod1)
}

/// Edges (as position-group pairs) and how many triangles use each.
fn edge_uses(level: &LodLevel, group_of: impl Fn(u32) -> u32) -> HashMap<(u32, u32), u32> {
    let mut uses = HashMap::new();
    for t in level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
    {
        for k in 0..3 {
            let (a, b) = (group_of(t[k]), group_of(t[(k + 1) % 3]));
            *uses.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    uses
}

#[test]
fn capsule_lod1_halves_the_triangles_and_stays_closed() {
    let source = capsule_limb(24, 8, 6);
    let (lod0, lod1) = lod1_of(&source, &LodSettings::default());
    let lod1 = lod1.unwrap();
    let (n0, n1) = (lod0.level.triangle_count(), lod1.triangle_count());
    let share = n1 as f32 / n0 as f32;
    assert!((0.45..=0.60).contains(&share), "{n1} of {n0}");
    assert!(lod1.vertices.len() < lod0.level.vertices.len());
    // LOD1's vertices are LOD0's: same columns, same sources.
    for v in &lod1.vertices {
        assert!(lod0.level.vertices.contains(v));
    }
    // Closed: every edge still joins exactly two triangles (no crack at the piece border).
    let column_of = |v: u32| lod1.vertices[v as usize].column;
    assert!(edge_uses(&lod1, column_of).values().all(|&n| n == 2));
    // Every vertex both bones' pieces share is still there.
    let pieces = pieces(&lod0, &[false, false], true);
    let locked = locks(&source, &lod0, &pieces, &sharp_points(&source, &lod0), &[]);
    let shared: Vec<_> = (0..locked.len())
        .filter(|&v| locked[v] == SimplifyVertex::Lock)
        .collect();
    assert_eq!(
        shared.len(),
        48,
        "the two rings where the bones' triangles meet"
    );
    for v in shared {
        assert!(lod1.vertices.contains(&lod0.level.vertices[v]));
    }
}

#[test]
fn the_head_keeps_more() {
    let mut source = capsule_limb(24, 8, 6);
    source.bone_names[1] = "mixamorig:Head".into();
    let (lod0, lod1) = lod1_of(&source, &LodSettings::default());
    let lod1 = lod1.unwrap();
    let on_bone = |level: &LodLevel, bone: u32| {
        level
            .surfaces
            .iter()
            .flat_map(|s| s.indices.chunks_exact(3))
            .filter(|t| {
                let b = [t[0], t[1], t[2]]
                    .map(|v| source.bones[level.vertices[v as usize].sources[0] as usize]);
                (if b[1] == b[2] { b[1] } else { b[0] }) == bone
            })
            .count() as f32
    };
    let head = on_bone(&lod1, 1) / on_bone(&lod0.level, 1);
    let body = on_bone(&lod1, 0) / on_bone(&lod0.level, 0);
    assert!(head > 0.65 && body < 0.45, "head {head}, body {body}");
    let share = lod1.triangle_count() as f32 / lod0.level.triangle_count() as f32;
    assert!((0.45..=0.60).contains(&share), "{share}");
}

#[test]
fn an_unknown_head_bone_is_refused() {
    let source = capsule_limb(8, 2, 2);
    let settings = LodSettings {
        head_bone: "Skull".into(),
        ..LodSettings::default()
    };
    let e = lod1_of(&source, &settings).1.unwrap_err();
    assert!(e.to_string().contains("no bone is named 'Skull'"), "{e}");
    assert_eq!(head_bones(&source, "shin").unwrap(), vec![false, true]);
}

#[test]
fn a_plane_keeps_its_outline() {
    let source = plane(12, false);
    let (lod0, lod1) = lod1_of(&source, &LodSettings::default());
    let lod1 = lod1.unwrap();
    let share = lod1.triangle_count() as f32 / lod0.level.triangle_count() as f32;
    assert!((0.45..=0.60).contains(&share), "{share}");
    // Border vertices (the open mesh's edge) all stay.
    for (v, p) in lod0.positions.iter().enumerate() {
        if p.x.abs() == 0.5 || p.y.abs() == 0.5 {
            assert!(
                lod1.vertices.contains(&lod0.level.vertices[v]),
                "border vertex {p}"
            );
        }
    }
    let chain = LodChain {
        levels: vec![lod1],
        columns: lod0.columns.clone(),
    };
    let report = check_silhouettes(&source, &chain, 0, &[]);
    assert!(
        report.holes_pct < 0.5 && report.loss_pct < 0.5,
        "{report:?}"
    );
    let _ = identity_chain(&source);
    assert!(chain
        .columns
        .iter()
        .all(|c| matches!(c, ColumnSource::Vertex(_))));
}

#[test]
fn locked_pieces_that_cannot_shrink_are_an_error() {
    // 40 separate triangles, each its own piece with a locked border: nothing can go.
    let mut b = crate::lod_mesh::test_meshes::Builder::default();
    for i in 0..40 {
        let o = Vec3::new(2.0 * i as f32, 0.0, 0.0);
        let v =
            [Vec3::ZERO, Vec3::X, Vec3::Y].map(|p| b.vertex(o + p, Vec3::Z, glam::Vec2::ZERO, 0));
        b.triangle(0, v[0], v[1], v[2]);
    }
    let (_, lod1) = lod1_of(&b.source, &LodSettings::default());
    let e = lod1.unwrap_err();
    assert!(
        e.to_string()
            .contains("keeps 40 (100.0%) at best, outside 45.0-60.0%"),
        "{e}"
    );
}

#[test]
fn one_bone_per_ring_falls_back_to_whole_parts() {
    // Every ring on its own bone: each bone's piece is a strip whose borders are all locked.
    let mut source = capsule_limb(24, 8, 6);
    source.bones = source
        .positions
        .iter()
        .map(|p| ((p.y + 1.0) * 8.0).round() as u32)
        .collect();
    source.bone_names = (0..40).map(|b| format!("bone{b}")).collect();
    let (lod0, lod1) = lod1_of(&source, &LodSettings::default());
    let lod1 = lod1.unwrap();
    let share = lod1.triangle_count() as f32 / lod0.level.triangle_count() as f32;
    assert!((0.45..=0.60).contains(&share), "{share}");
    let column_of = |v: u32| lod1.vertices[v as usize].column;
    assert!(edge_uses(&lod1, column_of).values().all(|&n| n == 2));
}

#[test]
fn uv_seams_kept_by_the_weld_stay_seams() {
    // A gradient around a cylinder: the seam (u = 1 beside u = 0) stays split in LOD0, and no
    // LOD1 triangle may reach across it (its UVs would sweep the whole texture).
    let mut source = crate::lod_mesh::test_meshes::seamed_cylinder(
        24,
        8,
        |i, j| glam::Vec2::new(i as f32 / 24.0, j as f32 / 8.0),
        |_| 0,
    );
    source.textures = vec![vec![crate::lod_mesh::test_meshes::gradient()]];
    let (lod0, lod1) = lod1_of(&source, &LodSettings::default());
    let lod1 = lod1.unwrap();
    assert_eq!(lod0.level.vertices.len(), 25 * 9);
    let share = lod1.triangle_count() as f32 / lod0.level.triangle_count() as f32;
    assert!((0.45..=0.60).contains(&share), "{share}");
    for t in lod1.surfaces[0].indices.chunks_exact(3) {
        let u =
            [t[0], t[1], t[2]].map(|v| source.uvs[lod1.vertices[v as usize].sources[0] as usize].x);
        let span =
            u.iter().copied().fold(f32::MIN, f32::max) - u.iter().copied().fold(f32::MAX, f32::min);
        assert!(span < 0.5, "a triangle spans u {u:?}");
    }
}

/// `a` and `b` as one source (one surface, b's vertices after a's).
fn merged(a: &LodSource, b: &LodSource) -> LodSource {
    let mut out = a.clone();
    let offset = a.positions.len() as u32;
    out.positions.extend(&b.positions);
    out.normals.extend(&b.normals);
    out.uvs.extend(&b.uvs);
    out.bones.extend(&b.bones);
    let extra = b.surfaces[0].indices.iter().map(|&v| v + offset);
    out.surfaces[0].indices.extend(extra);
    out
}

#[test]
fn flat_pieces_give_up_more_than_curved_ones() {
    // A finely cut flat plane (every inner vertex free to go) beside a round capsule of about
    // the same size: one common ratio would cut both alike; one common error keeps the capsule's
    // curvature and takes the plane's flat interior instead.
    let mut flat = plane(16, false);
    for p in &mut flat.positions {
        *p = *p * 2.0 + Vec3::new(3.0, 1.0, 0.0);
    }
    let source = merged(&capsule_limb(24, 8, 6), &flat);
    let (lod0, lod1) = lod1_of(&source, &LodSettings::default());
    let lod1 = lod1.unwrap();
    let on_plane = |level: &LodLevel| {
        level.surfaces[0]
            .indices
            .chunks_exact(3)
            .filter(|t| source.positions[level.vertices[t[0] as usize].sources[0] as usize].x > 2.0)
            .count() as f32
    };
    let all = |level: &LodLevel| level.triangle_count() as f32;
    let plane_share = on_plane(&lod1) / on_plane(&lod0.level);
    let capsule_share = (all(&lod1) - on_plane(&lod1)) / (all(&lod0.level) - on_plane(&lod0.level));
    assert!(
        capsule_share > plane_share + 0.3,
        "capsule keeps {capsule_share}, plane {plane_share}"
    );
    let share = all(&lod1) / all(&lod0.level);
    assert!((0.45..=0.60).contains(&share), "{share}");
}

#[test]
fn convex_corners_are_priorities_for_the_simplifier() {
    let source = crate::lod_mesh::test_meshes::hard_cube();
    let lod0 = weld(&source, &LodSettings::default());
    let pieces = pieces(&lod0, &[false], true);
    let flags = locks(&source, &lod0, &pieces, &sharp_points(&source, &lod0), &[]);
    assert_eq!(flags.len(), 24);
    assert!(flags.iter().all(|f| f.contains(SimplifyVertex::Priority)));
}

/// Per triangle of `level`, the largest angle (degrees) between a corner's normal and the face.
fn corner_angles(source: &LodSource, level: &LodLevel) -> Vec<f32> {
    let mut out = Vec::new();
    for t in level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
    {
        let src = [t[0], t[1], t[2]].map(|v| level.vertices[v as usize].sources[0] as usize);
        let [p0, p1, p2] = src.map(|v| source.positions[v]);
        let Some(face) = (p2 - p0).cross(p1 - p0).try_normalize() else {
            continue;
        };
        let worst = src
            .iter()
            .map(|&v| {
                source.normals[v]
                    .dot(face)
                    .clamp(-1.0, 1.0)
                    .acos()
                    .to_degrees()
            })
            .fold(0.0f32, f32::max);
        out.push(worst);
    }
    out
}

#[test]
fn a_faceted_mesh_stays_faceted() {
    let source = faceted(&capsule_limb(24, 8, 6));
    let (lod0, lod1) = lod1_of(&source, &LodSettings::default());
    // The weld joins only copies of coplanar facets (a quad's two halves).
    let points = lod0
        .position_group
        .iter()
        .collect::<std::collections::HashSet<_>>();
    assert!(lod0.level.vertices.len() >= 3 * points.len());
    let lod1 = lod1.unwrap();
    let share = lod1.triangle_count() as f32 / lod0.level.triangle_count() as f32;
    assert!((0.45..=0.60).contains(&share), "{share}");
    let angles = corner_angles(&source, &lod1);
    let mean = angles.iter().sum::<f32>() / angles.len() as f32;
    let sharp = angles.iter().filter(|&&a| a > 20.0).count();
    // Each corner is the copy of the source facet nearest the new face's direction (facets 15
    // degrees apart round the capsule). Without that, corners keep whichever facet's copy the
    // collapses left: a mean of 4.0 degrees, the worst 18.8.
    assert!(mean < 3.0, "mean corner angle {mean} degrees");
    assert_eq!(
        sharp,
        0,
        "{sharp} of {} triangles shade across a facet edge",
        angles.len()
    );
}

#[test]
fn hard_edges_of_a_smooth_mesh_stay_hard() {
    // A cube's faces, each a 6 x 6 grid: every triangle must still be shaded with its own face's
    // normal wherever the collapses go (the normal's weight in the collapse order already keeps
    // them off 90-degree edges; this holds the side choice to that).
    let mut b = crate::lod_mesh::test_meshes::Builder::default();
    let n = 6;
    for face in [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z] {
        let u = face.any_orthonormal_vector();
        let v = face.cross(u);
        let mut grid = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                let (x, y) = (i as f32 / n as f32 - 0.5, j as f32 / n as f32 - 0.5);
                grid.push(b.vertex(face * 0.5 + u * x + v * y, face, glam::Vec2::ZERO, 0));
            }
        }
        let at = |i: u32, j: u32| grid[(j * (n + 1) + i) as usize];
        for j in 0..n {
            for i in 0..n {
                b.quad(0, [at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)]);
            }
        }
    }
    b.source.bone_names = vec!["root".into()];
    let source = b.source;
    let (_, lod1) = lod1_of(&source, &LodSettings::default());
    let angles = corner_angles(&source, &lod1.unwrap());
    let worst = angles.iter().copied().fold(0.0f32, f32::max);
    assert!(
        worst < 1.0,
        "a triangle's corner is {worst} degrees off its face"
    );
}
