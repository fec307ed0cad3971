use glam::{Vec2, Vec3};

use super::*;
use crate::lod_mesh::test_meshes::{capsule_limb, cell_uv, palette, seamed_cylinder};
use crate::lod_mesh::{
    check_placed_silhouettes, check_placed_silhouettes_against, check_silhouettes, level_positions,
    ColumnSource, LodLevel, SilhouetteReport, SurfaceTexture, SILHOUETTE_VIEWS,
};

fn settings() -> LodSettings {
    LodSettings {
        lod2_triangles: 60,
        ..LodSettings::default()
    }
}

#[test]
fn the_chain_has_three_levels_over_one_column_list() {
    let source = capsule_limb(24, 8, 6);
    let chain = build_chain(&source, &settings(), &[]).unwrap();
    assert_eq!(chain.levels.len(), 3);
    let [lod0, lod1, lod2] = [0, 1, 2].map(|l| &chain.levels[l]);
    assert_eq!(
        lod0.vertices.len(),
        source.positions.len(),
        "no seams to weld"
    );
    let share = lod1.triangle_count() as f32 / lod0.triangle_count() as f32;
    assert!((0.45..=0.60).contains(&share));
    assert!(lod2.triangle_count() <= 60 && lod2.triangle_count() > 0);
    // LOD0's columns come first and are source vertices; LOD2's follow, bound.
    let lod0_columns = lod0.vertices.iter().map(|v| v.column).max().unwrap() + 1;
    assert_eq!(lod0_columns as usize, lod0.vertices.len());
    assert!(lod1.vertices.iter().all(|v| v.column < lod0_columns));
    assert!(lod2.vertices.iter().all(|v| v.column >= lod0_columns));
    // Every column is used by some level.
    let mut used = vec![false; chain.columns.len()];
    for v in chain.levels.iter().flat_map(|l| &l.vertices) {
        used[v.column as usize] = true;
    }
    assert!(used.iter().all(|&u| u));
    for v in &lod2.vertices {
        let ColumnSource::Bound { vertices, weights } = chain.columns[v.column as usize] else {
            panic!("LOD2 columns are bound");
        };
        assert_eq!((v.sources, v.weights), (vertices, weights));
        assert!((weights.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }
    assert_eq!(
        level_positions(&chain, 0, &source.positions).len(),
        lod0.vertices.len()
    );
    let report = check_silhouettes(&source, &chain, 0, &[]);
    assert_eq!((report.holes_pct, report.loss_pct), (0.0, 0.0));
    let report = check_silhouettes(&source, &chain, 1, &[]);
    assert!(
        report.holes_pct < 1.0 && report.loss_pct < 6.0,
        "{report:?}"
    );
}

#[test]
fn lod0_welds_palette_seams_of_a_textured_source() {
    let mut source = seamed_cylinder(
        16,
        6,
        |i, _| cell_uv(9, i as f32 / 16.0),
        |y| u32::from(y > 1.0),
    );
    source.textures = vec![vec![palette()]];
    let chain = build_chain(&source, &settings(), &[]).unwrap();
    assert_eq!(source.positions.len(), 17 * 7);
    assert_eq!(chain.levels[0].vertices.len(), 16 * 7);
}

fn error_of(source: &LodSource, settings: &LodSettings) -> String {
    build_chain(source, settings, &[]).unwrap_err().to_string()
}

#[test]
fn bad_input_is_refused_with_what_and_where() {
    let good = capsule_limb(12, 4, 3);
    assert!(error_of(&LodSource::default(), &settings()).contains("no triangles"));
    for (lod1_ratio, head_ratio) in [(0.0, 0.75), (1.5, 0.75), (f32::NAN, 0.75), (0.5, 0.0)] {
        let s = LodSettings {
            lod1_ratio,
            head_ratio,
            ..settings()
        };
        assert!(error_of(&good, &s).contains("outside (0, 1]"));
    }
    let s = LodSettings {
        lod2_triangles: 100_000,
        ..settings()
    };
    let short = build_chain(&good, &s, &[]).unwrap();
    assert_eq!(
        short.levels.len(),
        2,
        "LOD2's target above LOD1's triangles: the chain stops at LOD1"
    );
    assert!(short.levels[1].triangle_count() < short.levels[0].triangle_count());
    let s = LodSettings {
        voxel_size: -1.0,
        ..settings()
    };
    assert!(error_of(&good, &s).starts_with("LOD2 voxel size"));
    let mut nan = good.clone();
    nan.positions[5].y = f32::NAN;
    assert_eq!(
        error_of(&nan, &settings()),
        "LOD source position of vertex 5 is not finite (NaN or infinity)"
    );
    let mut short = good.clone();
    short.uvs.pop();
    assert!(error_of(&short, &settings()).starts_with("LOD source UVs has"));
    let mut out_of_range = good.clone();
    out_of_range.surfaces[0].indices[7] = 10_000;
    assert!(error_of(&out_of_range, &settings()).contains("surface 0 index 7 is vertex 10000"));
    let mut textures = good.clone();
    textures.textures = vec![vec![palette()], Vec::new()];
    assert!(error_of(&textures, &settings()).contains("2 texture lists for 1 surfaces"));
    textures.textures = vec![vec![SurfaceTexture {
        width: 2,
        height: 2,
        rgba8: vec![0; 15],
    }]];
    assert!(error_of(&textures, &settings()).contains("image 0 of surface 0 is 2 x 2 with 15"));
    let _ = Vec3::ZERO;
}

#[test]
fn lod2_targets_double_up_to_half_of_lod1() {
    let at = |lod2_triangles, lod1| {
        let s = LodSettings {
            lod2_triangles,
            ..LodSettings::default()
        };
        lod2_targets(&s, lod1)
    };
    assert_eq!(at(300, 2822), [300, 600, 1200]);
    assert_eq!(
        at(300, 1682),
        [300, 600, 841],
        "the last held to half of LOD1"
    );
    assert_eq!(at(300, 1000), [300, 500]);
    assert_eq!(
        at(300, 430),
        [300],
        "the target itself is never held back, only the retries"
    );
    assert_eq!(at(u32::MAX, usize::MAX), [u32::MAX]);
}

#[test]
fn a_lod2_that_fails_is_rebuilt_at_a_larger_target() {
    let source = capsule_limb(24, 8, 6);
    let s = settings();
    let poses = vec![source.positions.clone()];
    let lod1_triangles = build_chain(&source, &s, &[]).unwrap().levels[1].triangle_count();
    let targets = lod2_targets(&s, lod1_triangles);
    assert!(
        targets.len() >= 2,
        "{targets:?} under LOD1 {lod1_triangles}"
    );
    let masks = SourceSilhouettes::new(&source, &poses);
    let best = |pass: &dyn Fn(&LodLevel, &SilhouetteReport) -> bool| {
        best_lod2_with(&source, &s, &poses, &masks, lod1_triangles, pass).unwrap()
    };
    // Everything passes: the first candidate at the target.
    let (first, _, report) = best(&|_, _| true);
    assert!(first.triangle_count() <= 60, "{}", first.triangle_count());
    assert!(report.is_some());
    // Only levels above the target pass: the next target's.
    let (retried, columns, _) = best(&|level, _| level.triangle_count() > 60);
    let n = retried.triangle_count();
    assert!(n > 60 && n <= targets[1] as usize, "{n} for {targets:?}");
    assert_eq!(
        columns.len(),
        retried.vertices.len(),
        "bound, one column each"
    );
    // Nothing passes: the best score over every target, still a closed level within the last.
    let (fallback, _, report) = best(&|_, _| false);
    let n = fallback.triangle_count();
    assert!(n > 0 && n <= *targets.last().unwrap() as usize);
    assert!(report.unwrap().score().is_finite());
}

#[test]
fn the_costliest_lod2_variant_waits_until_every_target_failed_the_others() {
    let source = capsule_limb(24, 8, 6);
    let s = settings();
    assert_eq!(s.voxel_size, 0.0, "automatic: a finer voxel is tried too");
    let poses = vec![source.positions.clone()];
    let lod1_triangles = build_chain(&source, &s, &[]).unwrap().levels[1].triangle_count();
    let targets = lod2_targets(&s, lod1_triangles);
    let masks = SourceSilhouettes::new(&source, &poses);
    // Nothing passes: every candidate is offered, and the order shows in their sizes.
    let offered = std::cell::RefCell::new(Vec::new());
    let pass = |level: &LodLevel, report: &SilhouetteReport| {
        offered
            .borrow_mut()
            .push((level.triangle_count(), report.holes_pct));
        false
    };
    best_lod2_with(&source, &s, &poses, &masks, lod1_triangles, pass).unwrap();
    let offered = offered.into_inner();
    let t = targets.len();
    assert!(t >= 2, "{targets:?} under LOD1 {lod1_triangles}");
    // First the three cheaper variants at each target in turn (only the first where it shows
    // far too many holes, except at the last target), then the finer per-part remesh at each
    // target not given up, from the smallest.
    let mut expected = Vec::new();
    let mut given_up = Vec::new();
    let mut k = 0;
    for (i, &target) in targets.iter().enumerate() {
        let (_, holes) = offered[k];
        let hopeless = i + 1 < t && holes > HOPELESS_HOLES * MAX_HOLES_PCT;
        let n = if hopeless { 1 } else { 3 };
        expected.extend(std::iter::repeat_n(target, n));
        given_up.push(hopeless);
        k += n;
    }
    expected.extend(
        targets
            .iter()
            .zip(&given_up)
            .filter(|(_, &g)| !g)
            .map(|(t, _)| *t),
    );
    assert_eq!(offered.len(), expected.len(), "{offered:?} for {targets:?}");
    for (k, (&(n, _), &target)) in offered.iter().zip(&expected).enumerate() {
        assert!(
            n <= target as usize,
            "candidate {k}: {n} over {target} in {offered:?}"
        );
    }
    // The capsule's smallest target is given up after its first candidate; the last never is,
    // and gets all four variants.
    assert!(given_up[0], "{offered:?}");
    assert!(!given_up[t - 1]);
    assert!(offered[1].0 > targets[0] as usize, "{offered:?}");
    assert_eq!(
        expected.iter().filter(|&&x| x == targets[t - 1]).count(),
        4,
        "{expected:?}"
    );
}

/// `count` poses that bend `source` above y = 1, each `step` more than the last (the first
/// unbent).
fn bent_poses(source: &LodSource, count: usize, step: f32) -> Vec<Vec<Vec3>> {
    (0..count)
        .map(|k| {
            let bend = k as f32 * step;
            source
                .positions
                .iter()
                .map(|p| *p + Vec3::new((p.y - 1.0).max(0.0) * bend, 0.0, 0.0))
                .collect()
        })
        .collect()
}

#[test]
fn the_checked_chain_reports_every_level_as_a_check_of_its_own_does() {
    let source = capsule_limb(24, 8, 6);
    let poses = bent_poses(&source, 6, 0.2);
    let (chain, reports) = build_checked_chain(&source, &settings(), &poses).unwrap();
    assert_eq!(reports.len(), chain.levels.len());
    for (level, report) in reports.iter().enumerate() {
        assert_eq!(
            *report,
            Some(check_silhouettes(&source, &chain, level, &poses)),
            "level {level}"
        );
    }
    assert_eq!(build_chain(&source, &settings(), &poses).unwrap(), chain);
}

#[test]
fn lod0_that_draws_the_source_is_reported_without_a_render_as_the_render_reports_it() {
    // A seam column repeated with its own UV: the weld joins the copies, which lie at the same
    // point, bit for bit, in every pose.
    let source = seamed_cylinder(
        12,
        4,
        |i, j| Vec2::new(i as f32 / 12.0, j as f32 / 4.0),
        |_| 0,
    );
    let poses = bent_poses(&source, 4, 0.2);
    let s = settings();
    let lod0 = weld(&source, &s);
    assert!(
        lod0.columns.len() < source.positions.len(),
        "the seam copies share columns"
    );
    assert!(poses_drawn_as_source(&source, &lod0, &poses)
        .iter()
        .all(|&same| same));
    let alone = LodChain {
        levels: vec![lod0.level.clone()],
        columns: lod0.columns.clone(),
    };
    let rendered = check_silhouettes(&source, &alone, 0, &poses);
    assert_eq!(rendered, SilhouetteReport::default());
    let (_, reports) = build_checked_chain(&source, &s, &poses).unwrap();
    assert_eq!(reports[0], Some(rendered));
    // One copy a hair's breadth off in one pose (still welded): the check renders.
    let mut moved = poses.clone();
    let copy = (0..source.positions.len())
        .find(|&v| source.positions[v] == source.positions[0] && v != 0)
        .expect("vertex 0 has a seam copy");
    moved[2][copy].y += 1e-6;
    assert_eq!(
        poses_drawn_as_source(&source, &lod0, &moved),
        [true, true, false, true]
    );
    // Only that pose is rendered, and the report is the render's of every pose, bit for bit;
    // it shows the hair's breadth as a few pixels at most.
    let rendered = check_silhouettes(&source, &alone, 0, &moved);
    let (_, reports) = build_checked_chain(&source, &s, &moved).unwrap();
    assert_eq!(reports[0], Some(rendered));
    let masks = SourceSilhouettes::new(&source, &moved);
    assert_eq!(masks.check_unless(&alone, 0, |pose| pose != 2), rendered);
    // Taking every pose as drawn as the source gives the empty report, whatever the level.
    let lod2 = build_chain(&source, &s, &moved).unwrap();
    let last = lod2.levels.len() - 1;
    assert_ne!(masks.check(&lod2, last), SilhouetteReport::default());
    assert_eq!(
        masks.check_unless(&lod2, last, |_| true),
        SilhouetteReport::default()
    );
}

#[test]
fn kept_source_masks_check_a_placed_level_as_a_fresh_render_does() {
    let source = capsule_limb(24, 8, 6);
    let poses = bent_poses(&source, 4, 0.25);
    let (chain, reports, masks) =
        build_checked_chain_keeping_masks(&source, &settings(), &poses).unwrap();
    assert_eq!(
        (chain.clone(), reports),
        build_checked_chain(&source, &settings(), &poses).unwrap()
    );
    assert_eq!(masks.view_count(), poses.len() * SILHOUETTE_VIEWS as usize);
    let last = chain.levels.len() - 1;
    let bound: Vec<Vec<Vec3>> = poses
        .iter()
        .map(|p| level_positions(&chain, last, p))
        .collect();
    // The level where binding puts it, and the level left unbent in every pose (holes).
    let unbent: Vec<Vec<Vec3>> = vec![bound[0].clone(); poses.len()];
    for placed in [&bound, &unbent] {
        let fresh = check_placed_silhouettes(&source, &chain, last, &poses, placed);
        let kept = check_placed_silhouettes_against(&masks, &source, &chain, last, &poses, placed);
        assert_eq!(kept, fresh);
    }
    assert!(
        !check_placed_silhouettes_against(&masks, &source, &chain, last, &poses, &unbent).passes()
    );
    // Masks of other poses are not used, fewer or as many: the check renders the source of these.
    let fewer = &poses[..2];
    let fresh = check_placed_silhouettes(&source, &chain, last, fewer, &bound[..2]);
    let kept = check_placed_silhouettes_against(&masks, &source, &chain, last, fewer, &bound[..2]);
    assert_eq!(kept, fresh);
    let others = bent_poses(&source, 4, -0.25);
    let fresh = check_placed_silhouettes(&source, &chain, last, &others, &bound);
    let kept = check_placed_silhouettes_against(&masks, &source, &chain, last, &others, &bound);
    assert_eq!(kept, fresh);
    assert_ne!(
        kept,
        check_placed_silhouettes_against(&masks, &source, &chain, last, &poses, &bound),
        "the other poses' source differs from these poses' masks"
    );
}
