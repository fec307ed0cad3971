//! The chain on real characters dumped by the bake (`NAME.source.json`, `NAME.poses.json` in
//! `$VAT_LOD_SOURCES`), with a table of what each level keeps. Ignored: the files are not part
//! of the repository. Run with
//! `VAT_LOD_SOURCES=DIR cargo test -p vat_core --release real_characters -- --ignored --nocapture`
//! (`VAT_LOD_ONLY=NAME` keeps the characters whose names contain NAME; `VAT_LOD2_TRIANGLES=N`
//! sets the LOD2 target, 300 by default; `VAT_LOD_PICTURES=DIR` writes each level's worst view
//! as a PPM; `VAT_LOD2_CANDIDATES=1` also builds, checks and pictures every LOD2 candidate the
//! chain chooses from). The second test, `bake_chain`, times the bake's own LOD step on the same
//! files (`VAT_LOD_REPS=N` runs per character, 3 by default) and prints a fingerprint of each
//! chain: a change meant only to make the chain faster must leave the fingerprints as they were.

use std::time::Instant;

use glam::Vec3;

use super::weld::weld;
use super::{build_chain, check_silhouettes, silhouette_image, LodSettings, LodSource};
use crate::bake::encode::bytes_per_vertex_frame;
use crate::bake::encode::Precision;

/// Share of triangles whose counter-clockwise normal points along their corners' normals: near
/// 0 for Godot's clockwise front faces.
fn counter_clockwise_share(source: &LodSource) -> f32 {
    let (mut ccw, mut all) = (0usize, 0usize);
    for t in source
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
    {
        let p = [t[0], t[1], t[2]].map(|v| source.positions[v as usize]);
        let n: Vec3 = [t[0], t[1], t[2]]
            .map(|v| source.normals[v as usize])
            .iter()
            .sum();
        let face = (p[1] - p[0]).cross(p[2] - p[0]);
        if face.length_squared() > 0.0 {
            all += 1;
            ccw += usize::from(face.dot(n) > 0.0);
        }
    }
    ccw as f32 / all.max(1) as f32
}

/// `$VAT_LOD_SOURCES` and the names of the characters dumped there (`NAME.source.json`), sorted,
/// those without `$VAT_LOD_ONLY` in their name left out.
pub(super) fn dumped_characters() -> (String, Vec<String>) {
    let dir = std::env::var("VAT_LOD_SOURCES").expect("set VAT_LOD_SOURCES");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("readable VAT_LOD_SOURCES")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".source.json").map(str::to_owned))
        .collect();
    names.sort();
    if let Ok(only) = std::env::var("VAT_LOD_ONLY") {
        names.retain(|n| n.contains(&only));
    }
    (dir, names)
}

/// Character `name`'s source and poses from `dir` (`NAME.source.json`, `NAME.poses.json`; no
/// poses when that file is missing). Panics on an unreadable source or malformed JSON.
pub(super) fn read_dumped(dir: &str, name: &str) -> (LodSource, Vec<Vec<Vec3>>) {
    let read = |suffix: &str| std::fs::read_to_string(format!("{dir}/{name}.{suffix}.json"));
    let source = serde_json::from_str(&read("source").unwrap()).unwrap();
    let poses = read("poses")
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or_default();
    (source, poses)
}

#[test]
#[ignore = "needs $VAT_LOD_SOURCES with characters dumped by the bake"]
fn real_characters() {
    let (dir, names) = dumped_characters();
    assert!(!names.is_empty(), "no NAME.source.json in {dir}");
    let picture_dir = std::env::var("VAT_LOD_PICTURES").ok();
    for name in names {
        let (source, poses) = read_dumped(&dir, &name);
        let textured = source.textures.iter().filter(|t| !t.is_empty()).count();
        println!(
            "== {name}: {} source vertices, {} triangles, {} surfaces ({textured} textured, \
             textures {}), {} poses, ccw share {:.3}",
            source.positions.len(),
            source
                .surfaces
                .iter()
                .map(|s| s.indices.len() / 3)
                .sum::<usize>(),
            source.surfaces.len(),
            if source.textures.is_empty() {
                "unknown"
            } else {
                "known"
            },
            poses.len(),
            counter_clockwise_share(&source),
        );
        // The LOD2 target, or a quarter of the source's triangles on a tiny character.
        let triangles: usize = source.surfaces.iter().map(|s| s.indices.len() / 3).sum();
        let target = std::env::var("VAT_LOD2_TRIANGLES")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(LodSettings::default().lod2_triangles);
        let settings = LodSettings {
            lod2_triangles: (triangles as u32 / 4).min(target),
            ..LodSettings::default()
        };
        let welded = weld(&source, &settings);
        println!(
            "   weld: {} LOD0 vertices, {} if every UV seam welded ({} kept split by the \
             texture check), {} columns",
            welded.level.vertices.len(),
            welded.all_seams_welded,
            welded
                .level
                .vertices
                .len()
                .saturating_sub(welded.all_seams_welded),
            welded.columns.len()
        );
        let start = Instant::now();
        let chain = match build_chain(&source, &settings, &poses) {
            Ok(c) => c,
            Err(e) => {
                println!("   build_chain failed: {e}");
                continue;
            }
        };
        let built = start.elapsed();
        let bpv = bytes_per_vertex_frame(Precision::Half, true);
        println!(
            "   build_chain {:.0} ms; VAT bytes per frame {} -> {} ({} columns)",
            built.as_secs_f64() * 1e3,
            source.positions.len() * bpv,
            chain.columns.len() * bpv,
            chain.columns.len()
        );
        if std::env::var("VAT_LOD2_CANDIDATES").is_ok() {
            lod2_candidates(&name, &source, &settings, &poses, picture_dir.as_deref());
        }
        for (l, level) in chain.levels.iter().enumerate() {
            let start = Instant::now();
            let r = check_silhouettes(&source, &chain, l, &poses);
            let shading = super::lod2::lod2_stats(&source, level, &source.positions);
            println!(
                "   LOD{l}: {} vertices, {} triangles ({} shade over {} degrees off the \
                 source), holes {:.2}%, loss {:.2}% (worst view {} pose {}; check {:.0} ms)",
                level.vertices.len(),
                level.triangle_count(),
                shading.shading_off_triangles,
                super::lod2::SHADING_OFF_DEGREES,
                r.holes_pct,
                r.loss_pct,
                r.worst_view,
                r.worst_pose,
                start.elapsed().as_secs_f64() * 1e3
            );
            if let Some(dir) = &picture_dir {
                let pose = poses
                    .get(r.worst_pose as usize)
                    .unwrap_or(&source.positions);
                let image = silhouette_image(&source, &chain, l, pose, r.worst_view);
                write_ppm(&format!("{dir}/{name}_lod{l}.ppm"), &image);
            }
        }
    }
}

/// Every LOD2 candidate `best_lod2` may try (whole and per part, at the automatic voxel size
/// and 64 cells), each with its report and, with `picture_dir`, its worst view.
fn lod2_candidates(
    name: &str,
    source: &LodSource,
    settings: &LodSettings,
    poses: &[Vec<Vec3>],
    picture_dir: Option<&str>,
) {
    let b = crate::bounds::Bounds::from_points(&source.positions);
    let extent = (b.max - b.min).max_element();
    for (cells, voxel) in [(40, 0.0), (64, extent / 64.0)] {
        for (kind, by_part) in [("whole", false), ("parts", true)] {
            let start = Instant::now();
            let target = settings.lod2_triangles;
            let built = super::lod2::build_lod2_with(source, target, voxel, poses, by_part);
            let elapsed = start.elapsed().as_secs_f64() * 1e3;
            let (level, columns) = match built {
                Ok(b) => b,
                Err(e) => {
                    println!("   candidate {kind} {cells} cells: {e}");
                    continue;
                }
            };
            let chain = super::LodChain {
                levels: vec![level],
                columns,
            };
            let r = check_silhouettes(source, &chain, 0, poses);
            println!(
                "   candidate {kind} {cells} cells: {} triangles, holes {:.2}%, loss {:.2}% \
                 (worst view {} pose {}; built in {elapsed:.0} ms)",
                chain.levels[0].triangle_count(),
                r.holes_pct,
                r.loss_pct,
                r.worst_view,
                r.worst_pose
            );
            if let Some(dir) = picture_dir {
                let pose = poses
                    .get(r.worst_pose as usize)
                    .unwrap_or(&source.positions);
                let image = silhouette_image(source, &chain, 0, pose, r.worst_view);
                write_ppm(&format!("{dir}/{name}_{kind}{cells}.ppm"), &image);
            }
        }
    }
}

/// The two masks as one picture: grey where both cover; red where only the source does and it
/// counts as a hole, pink where it is only the rim a coarser outline leaves; blue where only the
/// level covers and it counts as loss, light blue where it is within the loss distance.
pub(super) fn write_ppm(path: &str, image: &super::SilhouetteImage) {
    use super::silhouette::{rows, LOSS_DISTANCE_PX};
    let candidate = rows::from_bytes(&image.candidate, image.size as usize);
    let inside = rows::to_bytes(&rows::filled(&candidate));
    let near = rows::to_bytes(&rows::dilated(
        &rows::from_bytes(&image.original, image.size as usize),
        LOSS_DISTANCE_PX,
    ));
    let covered = rows::to_bytes(&rows::dilated(&candidate, LOSS_DISTANCE_PX));
    let mut out = format!("P6 {} {} 255\n", image.size, image.size).into_bytes();
    for (i, (&o, &c)) in image.original.iter().zip(&image.candidate).enumerate() {
        out.extend_from_slice(match (o != 0, c != 0) {
            (true, true) => &[160, 160, 160],
            (true, false) if inside[i] != 0 || covered[i] == 0 => &[255, 0, 0],
            (true, false) => &[255, 190, 190],
            (false, true) if near[i] == 0 => &[0, 0, 255],
            (false, true) => &[170, 170, 255],
            (false, false) => &[255, 255, 255],
        });
    }
    std::fs::write(path, out).unwrap();
}

/// The bake's own LOD step on every dumped character (default settings; a character with no
/// more triangles than the LOD2 target skipped, as the bake skips it): the median time of
/// `build_checked_chain` over `$VAT_LOD_REPS` runs (3 by default), each level's triangles and
/// report, and a fingerprint of the whole chain, so a change that should keep the results can be
/// seen to keep them. Run like [`real_characters`], with `bake_chain` as the filter.
#[test]
#[ignore = "needs $VAT_LOD_SOURCES with characters dumped by the bake"]
fn bake_chain() {
    let (dir, names) = dumped_characters();
    let reps: usize = std::env::var("VAT_LOD_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let settings = LodSettings::default();
    for name in names {
        let (source, poses) = read_dumped(&dir, &name);
        let triangles: usize = source.surfaces.iter().map(|s| s.indices.len() / 3).sum();
        if settings.lod2_triangles as usize >= triangles {
            println!("== {name}: {triangles} triangles, skipped as the bake skips it");
            continue;
        }
        let mut times = Vec::new();
        let mut built = None;
        for _ in 0..reps.max(1) {
            let start = Instant::now();
            let result = super::build_checked_chain(&source, &settings, &poses);
            times.push(start.elapsed().as_secs_f64() * 1e3);
            built = Some(result);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "== {name}: {triangles} triangles, {} poses: build_checked_chain median {:.1} ms \
             (runs {times:.1?})",
            poses.len(),
            times[times.len() / 2]
        );
        match built.expect("at least one run") {
            Err(e) => println!("   failed: {e}"),
            Ok((chain, reports)) => {
                for (l, level) in chain.levels.iter().enumerate() {
                    let report = reports.get(l).copied().flatten();
                    println!(
                        "   LOD{l}: {} vertices, {} triangles, report {report:?}",
                        level.vertices.len(),
                        level.triangle_count()
                    );
                }
                println!("   fingerprint {:016x}", fingerprint(&chain));
            }
        }
    }
}

/// A hash of every level's vertices and triangles and every column (floats by their bits).
fn fingerprint(chain: &super::LodChain) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for level in &chain.levels {
        for v in &level.vertices {
            (v.sources, v.weights.map(f32::to_bits), v.column).hash(&mut h);
        }
        for s in &level.surfaces {
            (s.source_surface, &s.indices).hash(&mut h);
        }
    }
    for c in &chain.columns {
        match c {
            super::ColumnSource::Vertex(v) => (0u8, *v).hash(&mut h),
            super::ColumnSource::Bound { vertices, weights } => {
                (1u8, vertices, weights.map(f32::to_bits)).hash(&mut h)
            }
        }
    }
    h.finish()
}
