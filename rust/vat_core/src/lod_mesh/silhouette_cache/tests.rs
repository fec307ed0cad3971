use glam::Vec3;

use super::*;
use crate::lod_mesh::silhouette::{compare, silhouette_image};
use crate::lod_mesh::test_meshes::capsule_limb;
use crate::lod_mesh::{build_chain, LodSettings};

/// A capsule, its chain, and poses that bend it more and more above y = 1.
fn bent_capsule() -> (LodSource, LodChain, Vec<Vec<Vec3>>) {
    let source = capsule_limb(24, 8, 6);
    let settings = LodSettings {
        lod2_triangles: 40,
        ..LodSettings::default()
    };
    let chain = build_chain(&source, &settings, &[]).unwrap();
    let poses = (0..20)
        .map(|k| {
            let bend = k as f32 * 0.15;
            source
                .positions
                .iter()
                .map(|p| {
                    let over = (p.y - 1.0).max(0.0);
                    *p + Vec3::new(over * bend, -over * bend * 0.3, 0.0)
                })
                .collect()
        })
        .collect();
    (source, chain, poses)
}

/// The check from scratch: both masks rendered per view, as `silhouette_image` does.
fn from_scratch(
    source: &LodSource,
    chain: &LodChain,
    level: usize,
    poses: &[Vec<Vec3>],
) -> SilhouetteReport {
    let mut per_view = Vec::new();
    for (p, pose) in poses.iter().enumerate() {
        for view in 0..SILHOUETTE_VIEWS {
            let (holes, loss) = compare(&silhouette_image(source, chain, level, pose, view));
            per_view.push((holes, loss, view, p as u32));
        }
    }
    fold(per_view)
}

#[test]
fn the_kept_source_masks_give_the_same_report_as_rendering_both() {
    let (source, chain, poses) = bent_capsule();
    let masks = SourceSilhouettes::new(&source, &poses);
    for level in 0..chain.levels.len() {
        let report = masks.check(&chain, level);
        assert_eq!(report, from_scratch(&source, &chain, level, &poses));
        assert_eq!(
            report,
            super::super::check_silhouettes(&source, &chain, level, &poses)
        );
    }
    // LOD2 of 40 triangles is far from the bent capsule: the check must see it.
    assert!(!masks.check(&chain, 2).passes());
    // No poses: the reference pose.
    let reference = SourceSilhouettes::new(&source, &[]);
    assert_eq!(
        reference.check(&chain, 1),
        from_scratch(&source, &chain, 1, std::slice::from_ref(&source.positions))
    );
}

#[test]
fn a_failing_level_stops_early_and_a_passing_one_sees_every_pose() {
    let (source, chain, poses) = bent_capsule();
    let masks = SourceSilhouettes::new(&source, &poses);
    let full = masks.check(&chain, 2);
    assert!(!full.passes());
    // From its worst pose, the first round already fails.
    let (early, complete) = masks.check_until_failed(&chain, 2, full.worst_pose);
    assert!(!complete && !early.passes());
    assert!(early.holes_pct <= full.holes_pct && early.loss_pct <= full.loss_pct);
    assert!(early.score() <= full.score());
    // LOD0 passes everywhere: the whole check, whatever pose it starts from.
    let (report, complete) = masks.check_until_failed(&chain, 0, 13);
    assert!(complete);
    assert_eq!(report, masks.check(&chain, 0));
}

#[test]
fn points_in_holes_are_those_where_the_level_lost_its_outline() {
    // A double-sided 4 x 4 grid, and the same grid without its corner quad at (0.5, 0.5).
    let source = crate::lod_mesh::test_meshes::plane(4, true);
    let mut chain = crate::lod_mesh::test_meshes::identity_chain(&source);
    let indices = &mut chain.levels[0].surfaces[0].indices;
    indices.truncate(indices.len() - 6);
    let corner = source
        .positions
        .iter()
        .position(|p| *p == Vec3::new(0.5, 0.5, 0.0))
        .unwrap();
    let opposite = source
        .positions
        .iter()
        .position(|p| *p == Vec3::new(-0.5, -0.5, 0.0))
        .unwrap();
    let masks = SourceSilhouettes::new(&source, &[]);
    let hits = masks.points_in_holes(&chain, 0, 0.5, |pose| pose.to_vec());
    assert_eq!(hits.len(), source.positions.len());
    assert!(hits[corner] > 0, "{hits:?}");
    assert_eq!(hits[opposite], 0, "{hits:?}");
    // Views with fewer holes than asked for send nothing; the whole level sends nothing.
    assert!(masks
        .points_in_holes(&chain, 0, 100.0, |pose| pose.to_vec())
        .iter()
        .all(|&n| n == 0));
    let whole = crate::lod_mesh::test_meshes::identity_chain(&source);
    assert!(masks
        .points_in_holes(&whole, 0, 0.0, |pose| pose.to_vec())
        .iter()
        .all(|&n| n == 0));
}

#[test]
fn a_repeated_pose_is_rendered_once_and_the_report_is_unchanged() {
    let (source, chain, poses) = bent_capsule();
    // Poses 0..20, then 5 and 19 again, then 3 again with one coordinate a bit off.
    let mut repeated = poses.clone();
    repeated.push(poses[5].clone());
    repeated.push(poses[19].clone());
    let mut nearly = poses[3].clone();
    nearly[0].x = f32::from_bits(nearly[0].x.to_bits() + 1);
    repeated.push(nearly);
    let masks = SourceSilhouettes::new(&source, &repeated);
    assert_eq!(masks.views.len(), 21 * SILHOUETTE_VIEWS as usize);
    assert_eq!(masks.distinct.of_pose[20], 5);
    assert_eq!(masks.distinct.of_pose[21], 19);
    assert_eq!(masks.distinct.of_pose[22], 20);
    assert_eq!(masks.distinct.copies[5], 2);
    for level in 0..chain.levels.len() {
        assert_eq!(
            masks.check(&chain, level),
            from_scratch(&source, &chain, level, &repeated),
            "level {level}"
        );
    }
    // Starting at a repeat starts at its first copy.
    let full = masks.check(&chain, 2);
    let (early, complete) = masks.check_until_failed(&chain, 2, 21);
    assert!(!complete && !early.passes());
    assert_eq!(
        masks.check_until_failed(&chain, 0, 21).0,
        masks.check(&chain, 0)
    );
    assert!(full.worst_pose < 20, "a report names a pose's first place");
    // Hits count every copy: a pose listed twice counts twice, as two renders would.
    let doubled = [poses[0].clone(), poses[0].clone()];
    let once = SourceSilhouettes::new(&source, &poses[..1]);
    let twice = SourceSilhouettes::new(&source, &doubled);
    let lod2_points = |pose: &[Vec3]| crate::lod_mesh::level_positions(&chain, 0, pose);
    let hits_once = once.points_in_holes(&chain, 2, 0.0, lod2_points);
    let hits_twice = twice.points_in_holes(&chain, 2, 0.0, lod2_points);
    assert!(hits_once.iter().any(|&n| n > 0));
    assert_eq!(
        hits_twice,
        hits_once.iter().map(|n| 2 * n).collect::<Vec<_>>()
    );
}
