use glam::{Vec2, Vec3};

use super::*;
use crate::lod_mesh::test_meshes::{
    cell_uv, gradient, hard_cube, palette, seamed_cylinder, Builder,
};

fn weld_default(source: &LodSource) -> Welded {
    weld(source, &LodSettings::default())
}

/// A 12 x 3 cylinder whose UVs all lie in palette cell 5, the seam column with its own UV.
fn palette_cylinder() -> LodSource {
    let mut s = seamed_cylinder(12, 3, |i, _| cell_uv(5, i as f32 / 12.0), |_| 0);
    s.textures = vec![vec![palette()]];
    s
}

/// Every LOD0 triangle with the UVs it is drawn with (its vertices' sources), in order.
fn drawn_uvs(source: &LodSource, w: &Welded) -> Vec<[Vec2; 3]> {
    w.level
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
        .map(|t| {
            [t[0], t[1], t[2]].map(|v| source.uvs[w.level.vertices[v as usize].sources[0] as usize])
        })
        .collect()
}

fn source_uvs(source: &LodSource) -> Vec<[Vec2; 3]> {
    source
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
        .map(|t| [0, 1, 2].map(|k| source.uvs[t[k] as usize]))
        .collect()
}

#[test]
fn palette_seam_copies_weld_and_keep_their_colours() {
    let source = palette_cylinder();
    let w = weld_default(&source);
    // 13 x 4 source vertices; the seam column (13th) joins the first.
    assert_eq!(source.positions.len(), 52);
    assert_eq!(w.level.vertices.len(), 48);
    assert_eq!(w.columns.len(), 48);
    assert_eq!(w.level.triangle_count(), 72);
    let (old, new) = (source_uvs(&source), drawn_uvs(&source, &w));
    assert_eq!(old.len(), new.len());
    let tex = palette();
    let changed = old.iter().zip(&new).filter(|(a, b)| a != b).count();
    assert_eq!(changed, 6, "the seam's triangles take the other side's UVs");
    for (a, b) in old.iter().zip(&new) {
        for w in [
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::splat(1.0 / 3.0),
            Vec3::new(0.1, 0.2, 0.7),
        ] {
            let at = |uv: &[Vec2; 3]| uv[0] * w.x + uv[1] * w.y + uv[2] * w.z;
            assert_eq!(sample(&tex, at(a)), sample(&tex, at(b)));
        }
    }
    // Each column is one of the vertex's own cluster: the welded vertex's normal is its own.
    for v in &w.level.vertices {
        let ColumnSource::Vertex(c) = w.columns[v.column as usize] else {
            panic!("LOD0 columns are source vertices");
        };
        assert_eq!(
            source.positions[c as usize],
            source.positions[v.sources[0] as usize]
        );
    }
}

#[test]
fn seam_on_a_gradient_stays_split() {
    let mut source = seamed_cylinder(12, 3, |i, _| Vec2::new(i as f32 / 12.0, 0.5), |_| 0);
    source.textures = vec![vec![gradient()]];
    let w = weld_default(&source);
    assert_eq!(w.level.vertices.len(), 52);
    assert_eq!(w.all_seams_welded, 48);
    // The two copies still share one column: same point, same normal.
    assert_eq!(w.columns.len(), 48);
    assert_eq!(drawn_uvs(&source, &w), source_uvs(&source));
}

#[test]
fn every_texture_variation_must_agree() {
    let mut source = palette_cylinder();
    source.textures = vec![vec![palette(), gradient()]];
    assert_eq!(weld_default(&source).level.vertices.len(), 52);
}

#[test]
fn unknown_textures_keep_seams_and_untextured_surfaces_weld_them() {
    let mut source = seamed_cylinder(12, 3, |i, _| Vec2::new(i as f32 / 12.0, 0.5), |_| 0);
    source.textures = Vec::new();
    assert_eq!(weld_default(&source).level.vertices.len(), 52);
    source.textures = vec![Vec::new()];
    assert_eq!(weld_default(&source).level.vertices.len(), 48);
}

#[test]
fn hard_edges_stay_split() {
    let mut source = hard_cube();
    source.textures = vec![vec![palette()]];
    let w = weld_default(&source);
    assert_eq!(w.level.vertices.len(), 24);
    assert_eq!(w.columns.len(), 24);
    // A wider normal threshold (past 90 degrees) welds the corners' normals.
    let wide = LodSettings {
        weld_normal_degrees: 100.0,
        ..LodSettings::default()
    };
    source.textures = vec![Vec::new()];
    let w = weld(&source, &wide);
    assert_eq!(w.columns.len(), 8);
    assert_eq!(w.level.vertices.len(), 8);
}

/// A cube with smooth (corner) normals whose faces all use palette cell 3 (a different UV per
/// vertex): every corner's three copies differ only in UV, along 90-degree edges.
fn smooth_cube() -> LodSource {
    let mut s = hard_cube();
    for (p, n) in s.positions.iter().zip(s.normals.iter_mut()) {
        *n = p.normalize();
    }
    for (k, uv) in s.uvs.iter_mut().enumerate() {
        *uv = cell_uv(3, k as f32 / 23.0);
    }
    s
}

#[test]
fn seams_on_sharp_edges_stay_split_on_textured_surfaces() {
    let mut source = smooth_cube();
    source.textures = vec![vec![palette()]];
    let w = weld_default(&source);
    assert_eq!(w.columns.len(), 8);
    assert_eq!(w.level.vertices.len(), 24);
    // Raising the sharp-edge angle past 90 degrees lets the colour test decide: one colour.
    let blunt = LodSettings {
        sharp_edge_degrees: 120.0,
        ..LodSettings::default()
    };
    assert_eq!(weld(&source, &blunt).level.vertices.len(), 8);
}

#[test]
fn tolerance_and_bones_decide_what_is_coincident() {
    let mut b = Builder::default();
    let uv = Vec2::ZERO;
    let a = b.vertex(Vec3::ZERO, Vec3::Z, uv, 0);
    let a2 = b.vertex(Vec3::new(1e-7, 0.0, 0.0), Vec3::Z, uv, 0);
    let far = b.vertex(Vec3::new(1e-3, 0.0, 0.0), Vec3::Z, uv, 0);
    let other_bone = b.vertex(Vec3::ZERO, Vec3::Z, uv, 1);
    let x = b.vertex(Vec3::X, Vec3::Z, uv, 0);
    let y = b.vertex(Vec3::Y, Vec3::Z, uv, 0);
    let y2 = b.vertex(Vec3::new(0.0, 1.0, 0.0), Vec3::Z, uv, 1);
    for t in [[a, x, y], [a2, x, y], [far, x, y], [other_bone, x, y2]] {
        b.triangle(0, t[0], t[1], t[2]);
    }
    let groups = position_groups(&b.source.positions);
    assert_eq!(groups[a2 as usize], groups[a as usize]);
    assert_ne!(groups[far as usize], groups[a as usize]);
    assert_eq!(groups[other_bone as usize], groups[a as usize]);
    b.source.textures = vec![Vec::new()];
    let w = weld_default(&b.source);
    // a = a2; far apart; other_bone and y2 are on another bone: 3 + 1 + 2 LOD vertices.
    assert_eq!(w.level.vertices.len(), 6);
    assert_eq!(w.level.triangle_count(), 4);
}

#[test]
fn bilinear_sampling_repeats() {
    let tex = gradient();
    assert_eq!(sample(&tex, Vec2::new(0.5 / 16.0, 0.5))[0], 0.0);
    assert_eq!(sample(&tex, Vec2::new(1.0 / 16.0, 0.5))[0], 8.0);
    assert_eq!(
        sample(&tex, Vec2::new(1.0 + 3.5 / 16.0, 7.0)),
        sample(&tex, Vec2::new(3.5 / 16.0, 0.0))
    );
    // Between the last and the first texel the sample wraps.
    assert_eq!(sample(&tex, Vec2::new(0.0, 0.5))[0], 120.0);
}

#[test]
fn a_collapsed_triangle_leaves_no_vertex_or_column_behind() {
    let mut b = Builder::default();
    let a = b.vertex(Vec3::ZERO, Vec3::Z, Vec2::ZERO, 0);
    let a2 = b.vertex(Vec3::new(1e-7, 0.0, 0.0), Vec3::Z, Vec2::ZERO, 0);
    let lonely = b.vertex(Vec3::new(5.0, 5.0, 0.0), Vec3::Z, Vec2::ZERO, 0);
    let x = b.vertex(Vec3::X, Vec3::Z, Vec2::ZERO, 0);
    let y = b.vertex(Vec3::Y, Vec3::Z, Vec2::ZERO, 0);
    b.triangle(0, a, x, y);
    // Collapses onto a point and an edge: only `lonely` is new, and it must not survive.
    b.triangle(0, a, a2, lonely);
    b.source.textures = vec![Vec::new()];
    let w = weld_default(&b.source);
    assert_eq!(w.level.triangle_count(), 1);
    assert_eq!(w.level.vertices.len(), 3);
    assert_eq!(w.columns.len(), 3);
}

/// A faceted ring: 16 flat quads (4 vertices each, the face's own normal), neighbours meeting
/// at 22.5 degrees.
fn faceted_ring() -> LodSource {
    let mut b = Builder::default();
    let n = 16;
    for i in 0..n {
        let a0 = i as f32 / n as f32 * std::f32::consts::TAU;
        let a1 = (i + 1) as f32 / n as f32 * std::f32::consts::TAU;
        let mid = (a0 + a1) / 2.0;
        let normal = Vec3::new(mid.cos(), 0.0, mid.sin());
        let p = |a: f32, y: f32| Vec3::new(a.cos(), y, a.sin());
        let uv = Vec2::ZERO;
        let q = [
            b.vertex(p(a0, 0.0), normal, uv, 0),
            b.vertex(p(a1, 0.0), normal, uv, 0),
            b.vertex(p(a1, 1.0), normal, uv, 0),
            b.vertex(p(a0, 1.0), normal, uv, 0),
        ];
        b.quad(0, q);
    }
    b.source.textures = vec![Vec::new()];
    b.source
}

#[test]
fn a_faceted_mesh_stays_faceted() {
    let source = faceted_ring();
    let w = weld_default(&source);
    // Neighbouring faces meet at 22.5 degrees: each corner keeps both faces' normals.
    assert_eq!(w.level.vertices.len(), 64);
    assert_eq!(w.columns.len(), 64);
    for (v, c) in w.level.vertices.iter().zip(0..) {
        let ColumnSource::Vertex(src) = w.columns[v.column as usize] else {
            panic!("LOD0 columns are source vertices");
        };
        assert_eq!(
            source.normals[src as usize], source.normals[c],
            "vertex {c} draws its own face's normal"
        );
    }
    // The old 25-degree weld would have smoothed them: 32 columns, one normal per corner.
    let smoothing = LodSettings {
        weld_normal_degrees: 25.0,
        ..LodSettings::default()
    };
    assert_eq!(weld(&source, &smoothing).columns.len(), 32);
}

#[test]
fn copies_with_the_same_normal_still_weld() {
    // The ring with smooth normals (one per corner, as an exporter writes for a smooth mesh
    // split only by faces): every corner's two copies weld into one vertex.
    let mut source = faceted_ring();
    for (p, n) in source.positions.iter().zip(source.normals.iter_mut()) {
        *n = Vec3::new(p.x, 0.0, p.z).normalize();
    }
    let w = weld_default(&source);
    assert_eq!(w.columns.len(), 32);
    assert_eq!(w.level.vertices.len(), 32);
}
