use glam::Vec3;

use super::*;
use crate::lod_mesh::test_meshes::{capsule_limb, identity_chain, plane};

fn covered(mask: &[u8]) -> usize {
    mask.iter().filter(|&&m| m != 0).count()
}

/// The view looking most nearly along `dir`.
fn view_along(dir: Vec3) -> u32 {
    (0..SILHOUETTE_VIEWS)
        .max_by(|&a, &b| {
            view_direction(a)
                .dot(dir)
                .total_cmp(&view_direction(b).dot(dir))
        })
        .unwrap()
}

#[test]
fn views_are_spread_over_the_sphere() {
    for a in 0..SILHOUETTE_VIEWS {
        assert!((view_direction(a).length() - 1.0).abs() < 1e-5);
        for b in 0..a {
            assert!(
                view_direction(a).dot(view_direction(b)) < 0.8,
                "views {a} and {b}"
            );
        }
    }
    let up = (0..SILHOUETTE_VIEWS).map(|v| view_direction(v).y);
    assert!(up.clone().any(|y| y > 0.8) && up.clone().any(|y| y < -0.8));
}

#[test]
fn identical_meshes_differ_nowhere() {
    let source = capsule_limb(16, 4, 4);
    let chain = identity_chain(&source);
    let bent: Vec<Vec3> = source
        .positions
        .iter()
        .map(|p| {
            if p.y > 1.0 {
                *p + Vec3::new(p.y - 1.0, 0.0, 0.0)
            } else {
                *p
            }
        })
        .collect();
    let report = check_silhouettes(&source, &chain, 0, &[source.positions.clone(), bent]);
    assert_eq!(report.holes_pct, 0.0);
    assert_eq!(report.loss_pct, 0.0);
    let image = silhouette_image(&source, &chain, 0, &source.positions, 3);
    assert_eq!(image.original, image.candidate);
    assert!(
        covered(&image.original) > 1000,
        "the capsule fills the frame"
    );
}

#[test]
fn holes_and_loss_count_the_right_pixels() {
    let size = 20usize;
    let mut image = SilhouetteImage {
        size: size as u32,
        original: vec![0; size * size],
        candidate: vec![0; size * size],
    };
    for y in 5..15 {
        for x in 5..15 {
            image.original[y * size + x] = 255;
            image.candidate[y * size + x] = 255;
        }
    }
    // A 2 x 2 gap inside the candidate: 4 of the original's 100 pixels.
    for (x, y) in [(8, 8), (9, 8), (8, 9), (9, 9)] {
        image.candidate[y * size + x] = 0;
    }
    // Candidate pixels 2 px outside (kept) and 3 px outside (lost): 1 of 98.
    image.candidate[10 * size + 16] = 255;
    image.candidate[10 * size + 17] = 255;
    let (holes, loss) = compare(&image);
    assert!((holes - 4.0).abs() < 1e-4, "{holes}");
    assert!((loss - 100.0 / 98.0).abs() < 1e-4, "{loss}");
    // A notch open to the outside is not a hole: it is outside the outline.
    for x in 0..10 {
        image.candidate[12 * size + x] = 0;
    }
    let (holes, _) = compare(&image);
    assert!((holes - 4.0).abs() < 1e-4, "{holes}");
}

#[test]
fn a_missing_triangle_is_its_share_of_the_area() {
    // 4 x 4 quads = 32 triangles; drop one inside: 1/32 of the plane seen face-on.
    let source = plane(4, true);
    let mut chain = identity_chain(&source);
    let inner = 2 * (4 + 1);
    chain.levels[0].surfaces[0]
        .indices
        .drain(3 * inner..3 * inner + 3);
    let image = silhouette_image(&source, &chain, 0, &source.positions, view_along(-Vec3::Z));
    let (holes, loss) = compare(&image);
    assert!((holes - 100.0 / 32.0).abs() < 0.6, "holes {holes}%");
    assert_eq!(loss, 0.0);
    let report = check_silhouettes(&source, &chain, 0, &[]);
    assert!(report.holes_pct >= holes && report.holes_pct > 2.5);
    assert_eq!(report.loss_pct, 0.0);
}

#[test]
fn single_sided_surfaces_show_their_front_only() {
    // The plane's front faces +Z: a camera looking along -Z sees it, one along +Z does not.
    for double_sided in [false, true] {
        let source = plane(2, double_sided);
        let chain = identity_chain(&source);
        let front = silhouette_image(&source, &chain, 0, &source.positions, view_along(-Vec3::Z));
        let back = silhouette_image(&source, &chain, 0, &source.positions, view_along(Vec3::Z));
        assert!(covered(&front.original) > 3000);
        assert_eq!(covered(&back.original) > 3000, double_sided);
        assert_eq!(covered(&back.original), covered(&back.candidate));
    }
    // Turned around, the candidate shows only from behind, where the source shows nothing: all
    // loss; and from the front, where the source shows, nothing: all holes.
    let source = plane(2, false);
    let mut chain = identity_chain(&source);
    for t in chain.levels[0].surfaces[0].indices.chunks_exact_mut(3) {
        t.swap(1, 2);
    }
    let report = check_silhouettes(&source, &chain, 0, &[]);
    assert_eq!((report.holes_pct, report.loss_pct), (100.0, 100.0));
}

#[test]
fn a_missing_part_is_holes_though_outside_the_outline() {
    // 4 x 4 quads; the candidate keeps the left half: the right half lies outside its outline,
    // and all of it but a rim of LOSS_DISTANCE_PX counts as holes.
    let source = plane(4, true);
    let mut chain = identity_chain(&source);
    let positions = source.positions.clone();
    let surface = &mut chain.levels[0].surfaces[0];
    let kept: Vec<u32> = surface
        .indices
        .chunks_exact(3)
        .filter(|t| t.iter().all(|&v| positions[v as usize].x <= 1e-4))
        .flatten()
        .copied()
        .collect();
    surface.indices = kept;
    let image = silhouette_image(&source, &chain, 0, &source.positions, view_along(-Vec3::Z));
    let (holes, loss) = compare(&image);
    assert!(holes > 40.0 && holes <= 50.0, "holes {holes}%");
    assert_eq!(loss, 0.0);
}
