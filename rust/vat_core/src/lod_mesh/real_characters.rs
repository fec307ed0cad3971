//! The chain on real characters dumped by the bake (`NAME.source.json`, `NAME.poses.json` in
//! `$VAT_LOD_SOURCES`), with a table of what each level keeps. Ignored: the files are not part
//! of the repository. Run with
//! `VAT_LOD_SOURCES=DIR cargo test -p vat_core --release real_characters -- --ignored --nocapture`
//! (`VAT_LOD_ONLY=NAME` keeps the characters whose names contain NAME; `VAT_LOD2_TRIANGLES=N`
//! sets the LOD2 target, 300 by default).

use std::time::Instant;

use glam::Vec3;

use super::weld::weld;
use super::{build_chain, check_silhouettes, silhouette_image, LodSettings, LodSource};
use crate::encode::bytes_per_vertex_frame;
use crate::encode::Precision;

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

#[test]
#[ignore = "needs $VAT_LOD_SOURCES with characters dumped by the bake"]
fn real_characters() {
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
    assert!(!names.is_empty(), "no NAME.source.json in {dir}");
    let picture_dir = std::env::var("VAT_LOD_PICTURES").ok();
    for name in names {
        let read = |suffix: &str| std::fs::read_to_string(format!("{dir}/{name}.{suffix}.json"));
        let source: LodSource = serde_json::from_str(&read("source").unwrap()).unwrap();
        let poses: Vec<Vec<Vec3>> = read("poses")
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap_or_default();
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
        for (l, level) in chain.levels.iter().enumerate() {
            let start = Instant::now();
            let r = check_silhouettes(&source, &chain, l, &poses);
            println!(
                "   LOD{l}: {} vertices, {} triangles, holes {:.2}%, loss {:.2}% (worst view {} \
                 pose {}; check {:.0} ms)",
                level.vertices.len(),
                level.triangle_count(),
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

/// The two masks as one picture: grey where both cover, red where only the source does (holes),
/// blue where only the level does (loss).
fn write_ppm(path: &str, image: &super::SilhouetteImage) {
    let mut out = format!("P6 {} {} 255\n", image.size, image.size).into_bytes();
    for (&o, &c) in image.original.iter().zip(&image.candidate) {
        out.extend_from_slice(match (o != 0, c != 0) {
            (true, true) => &[160, 160, 160],
            (true, false) => &[255, 0, 0],
            (false, true) => &[0, 0, 255],
            (false, false) => &[255, 255, 255],
        });
    }
    std::fs::write(path, out).unwrap();
}
