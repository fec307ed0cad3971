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

/// A small deterministic generator for the comparisons below (xorshift64*).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..hi`.
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The per-pixel fill the bit rows replace: every pixel of the triangle's bounds tested.
fn reference_fill(mask: &mut [u8], p: [glam::Vec2; 3]) {
    let area = (p[1] - p[0]).perp_dot(p[2] - p[0]);
    if area == 0.0 || !area.is_finite() {
        return;
    }
    let size = SILHOUETTE_SIZE as i32;
    let lo = p[0].min(p[1]).min(p[2]);
    let hi = p[0].max(p[1]).max(p[2]);
    let x0 = (lo.x - 0.5).ceil().max(0.0) as i32;
    let y0 = (lo.y - 0.5).ceil().max(0.0) as i32;
    let x1 = ((hi.x - 0.5).floor() as i32).min(size - 1);
    let y1 = ((hi.y - 0.5).floor() as i32).min(size - 1);
    let sign = area.signum();
    for y in y0..=y1 {
        for x in x0..=x1 {
            let c = glam::Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            let inside = (0..3).all(|k| {
                let (a, b) = (p[k], p[(k + 1) % 3]);
                (b - a).perp_dot(c - a) * sign >= 0.0
            });
            if inside {
                mask[(y * size + x) as usize] = 255;
            }
        }
    }
}

/// The per-pixel flood the bit rows replace: empty regions not reaching the border, filled.
fn reference_filled(mask: &[u8], size: usize) -> Vec<u8> {
    let mut outside = vec![false; size * size];
    let mut stack: Vec<usize> = Vec::new();
    for k in 0..size {
        for i in [k, (size - 1) * size + k, k * size, k * size + size - 1] {
            if mask[i] == 0 && !outside[i] {
                outside[i] = true;
                stack.push(i);
            }
        }
    }
    while let Some(i) = stack.pop() {
        let (x, y) = (i % size, i / size);
        let mut next = Vec::new();
        if x > 0 {
            next.push(i - 1);
        }
        if x + 1 < size {
            next.push(i + 1);
        }
        if y > 0 {
            next.push(i - size);
        }
        if y + 1 < size {
            next.push(i + size);
        }
        for j in next {
            if mask[j] == 0 && !outside[j] {
                outside[j] = true;
                stack.push(j);
            }
        }
    }
    outside.iter().map(|&o| if o { 0 } else { 255 }).collect()
}

/// The per-pixel dilation the bit rows replace.
fn reference_dilated(mask: &[u8], size: usize, radius: i32) -> Vec<u8> {
    let mut out = vec![0u8; size * size];
    let n = size as i32;
    for y in 0..n {
        for x in 0..n {
            if mask[(y * n + x) as usize] == 0 {
                continue;
            }
            for dy in -radius..=radius {
                for dx in -radius..=radius {
                    let (u, v) = (x + dx, y + dy);
                    if dx * dx + dy * dy <= radius * radius && u >= 0 && v >= 0 && u < n && v < n {
                        out[(v * n + u) as usize] = 255;
                    }
                }
            }
        }
    }
    out
}

#[test]
fn row_fills_set_the_pixels_a_per_pixel_test_sets() {
    let size = SILHOUETTE_SIZE as usize;
    let mut random = Random(0x5eed);
    // Also all of them into one mask, where later ones often land on pixels already set.
    let (mut all, mut all_want) = (rows::EMPTY, vec![0u8; size * size]);
    // Big and tiny triangles, slivers, some reaching out of the frame, some degenerate.
    for round in 0..3000 {
        let reach = [4.0, 30.0, 200.0][round % 3];
        let centre = glam::Vec2::new(random.range(-10.0, 130.0), random.range(-10.0, 130.0));
        let mut p = [0; 3].map(|_| {
            centre + glam::Vec2::new(random.range(-reach, reach), random.range(-reach, reach))
        });
        if round % 7 == 0 {
            p[2] = p[0] + (p[1] - p[0]) * 0.37;
        }
        if round % 11 == 0 {
            p = p.map(|q| q.round() + glam::Vec2::splat(0.5));
        }
        let mut want = vec![0u8; size * size];
        reference_fill(&mut want, p);
        let mut got = rows::EMPTY;
        rows::fill_triangle(&mut got, p);
        assert_eq!(rows::to_bytes(&got), want, "triangle {p:?}");
        if reach < 100.0 {
            rows::fill_triangle(&mut all, p);
            reference_fill(&mut all_want, p);
            assert_eq!(rows::to_bytes(&all), all_want, "after triangle {p:?}");
        }
    }
}

#[test]
fn whole_pixel_rounding_matches_the_float_functions() {
    for v in [
        0.0f32,
        -0.0,
        0.5,
        -0.5,
        1.0,
        -1.0,
        1.5,
        -1.5,
        119.49,
        2.5e9,
        -2.5e9,
        1.6e7 + 1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
    ] {
        assert_eq!(rows::ceil_to_int(v), v.ceil() as i32, "ceil {v}");
        assert_eq!(rows::floor_to_int(v), v.floor() as i32, "floor {v}");
    }
}

#[test]
fn row_floods_and_dilations_match_per_pixel_ones() {
    let size = SILHOUETTE_SIZE as usize;
    let mut random = Random(0xd1a7);
    for round in 0..60 {
        // Rings and blobs: triangles at random, some masks nearly full, some sparse.
        let mut rows = rows::EMPTY;
        let (count, reach) = [(6, 60.0), (40, 15.0), (300, 4.0)][round % 3];
        for _ in 0..count {
            let centre = glam::Vec2::new(random.range(0.0, 120.0), random.range(0.0, 120.0));
            let p = [0; 3].map(|_| {
                centre + glam::Vec2::new(random.range(-reach, reach), random.range(-reach, reach))
            });
            rows::fill_triangle(&mut rows, p);
        }
        let bytes = rows::to_bytes(&rows);
        assert_eq!(
            rows::to_bytes(&rows::filled(&rows)),
            reference_filled(&bytes, size)
        );
        for radius in [0, 1, 2, 3] {
            assert_eq!(
                rows::to_bytes(&rows::dilated(&rows, radius)),
                reference_dilated(&bytes, size, radius),
                "radius {radius}"
            );
        }
    }
    // A ring closed only through the frame's corner pixels stays open.
    let mut ring = vec![0u8; size * size];
    for k in 0..size {
        ring[k * size + 3] = 255;
        ring[3 * size + k] = 255;
    }
    assert_eq!(
        rows::to_bytes(&rows::filled(&rows::from_bytes(&ring, size))),
        reference_filled(&ring, size)
    );
}

#[test]
fn a_level_placed_elsewhere_is_checked_where_it_is_placed() {
    let source = capsule_limb(16, 4, 4);
    let chain = identity_chain(&source);
    let bent: Vec<Vec3> = source
        .positions
        .iter()
        .map(|p| *p + Vec3::new((p.y - 1.0).max(0.0), 0.0, 0.0))
        .collect();
    let poses = [source.positions.clone(), bent.clone()];
    // Placed where binding would place it: the same report as the bound check.
    let bound = check_silhouettes(&source, &chain, 0, &poses);
    let placed = check_placed_silhouettes(&source, &chain, 0, &poses, &poses);
    assert_eq!(placed, bound);
    // The second pose placed unbent: the bent part is missing from the level's silhouette.
    let unbent = [source.positions.clone(), source.positions.clone()];
    let report = check_placed_silhouettes(&source, &chain, 0, &poses, &unbent);
    assert!(report.holes_pct > 5.0, "{report:?}");
    assert!(report.loss_pct > 5.0, "{report:?}");
    assert_eq!(report.worst_pose, 1);
    assert!(!report.passes());
}
