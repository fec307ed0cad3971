use super::*;
use crate::lod_mesh::test_meshes::{capsule_limb, hard_cube, plane};
use crate::lod_mesh::weld::weld;
use crate::lod_mesh::LodSettings;

fn sharp_positions(source: &LodSource) -> Vec<Vec3> {
    let lod0 = weld(source, &LodSettings::default());
    let sharp = sharp_points(source, &lod0);
    let mut out: Vec<Vec3> = Vec::new();
    for (v, &g) in lod0.position_group.iter().enumerate() {
        if sharp[g as usize] && !out.contains(&lod0.positions[v]) {
            out.push(lod0.positions[v]);
        }
    }
    out
}

#[test]
fn a_cube_is_sharp_at_its_eight_corners_only() {
    let corners = sharp_positions(&hard_cube());
    assert_eq!(corners.len(), 8, "{corners:?}");
    assert!(corners.iter().all(|p| p.abs() == Vec3::splat(0.5)));
}

#[test]
fn smooth_and_flat_meshes_have_no_sharp_points() {
    assert!(sharp_positions(&capsule_limb(24, 8, 6)).is_empty());
    assert!(sharp_positions(&plane(6, false)).is_empty());
}

#[test]
fn a_concave_crease_is_not_sharp() {
    // Two quads folded 90 degrees into a valley (an open box's inside corner), faces up and
    // inwards: the fold line is concave.
    let mut b = crate::lod_mesh::test_meshes::Builder::default();
    let uv = glam::Vec2::ZERO;
    let floor = [(0., 0., 0.), (1., 0., 0.), (1., 0., -1.), (0., 0., -1.)]
        .map(|(x, y, z)| b.vertex(Vec3::new(x, y, z), Vec3::Y, uv, 0));
    b.quad(0, floor);
    let wall = [(0., 0., -1.), (1., 0., -1.), (1., 1., -1.), (0., 1., -1.)]
        .map(|(x, y, z)| b.vertex(Vec3::new(x, y, z), Vec3::Z, uv, 0));
    b.quad(0, wall);
    assert!(sharp_positions(&b.source).is_empty());
    // The same fold turned inside out (a ridge) is sharp along its fold line.
    let mut ridge = b.source.clone();
    for s in &mut ridge.surfaces {
        for t in s.indices.chunks_exact_mut(3) {
            t.swap(1, 2);
        }
    }
    for n in &mut ridge.normals {
        *n = -*n;
    }
    let fold = sharp_positions(&ridge);
    assert_eq!(fold.len(), 2, "{fold:?}");
    assert!(fold.iter().all(|p| p.y == 0.0 && p.z == -1.0));
}
