//! LOD2 on dumped characters: builds LOD2 for every `NAME.source.json` (a serialised
//! `LodSource`) in `$VAT_LOD_SOURCES` and prints, per character, its size, whether it is closed
//! and manifold, how far it lies from the source (in % of the source's bounding-box diagonal) at
//! the reference pose and, when `NAME.poses.json` (an array of poses, each an array of source
//! positions `[x, y, z]`) is there, the worst over those poses, its seam-crossing triangles and
//! the triangles facing against the source and the build time.
//!
//! ```sh
//! VAT_LOD_SOURCES=/work/lod_sources cargo run --release -p vat_core --example lod2_report [TARGET] [VOXEL]
//! ```

use std::path::Path;
use std::time::Instant;

use glam::Vec3;
use vat_core::lod_mesh::lod2::{build_lod2, lod2_stats};
use vat_core::lod_mesh::LodSource;

fn main() {
    let Ok(dir) = std::env::var("VAT_LOD_SOURCES") else {
        eprintln!("set VAT_LOD_SOURCES to a folder of NAME.source.json files");
        std::process::exit(2);
    };
    let mut args = std::env::args().skip(1);
    let target: u32 = args
        .next()
        .map_or(300, |a| a.parse().expect("TARGET: a count"));
    let voxel: f32 = args
        .next()
        .map_or(0.0, |a| a.parse().expect("VOXEL: a length"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("VAT_LOD_SOURCES is not a readable folder")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".source.json").map(str::to_owned)
        })
        .collect();
    names.sort();
    println!(
        "{:<28} {:>7} {:>5} {:>5} {:>6} {:>13} {:>13} {:>13} {:>5} {:>5} {:>8}",
        "character",
        "src_tri",
        "tri",
        "vert",
        "closed",
        "off max/mean",
        "miss max/mean",
        "poses miss",
        "seams",
        "flip",
        "ms"
    );
    for name in names {
        report(Path::new(&dir), &name, target, voxel);
    }
}

/// One line for one character.
fn report(dir: &Path, name: &str, target: u32, voxel: f32) {
    let read = |suffix: &str| std::fs::read_to_string(dir.join(format!("{name}.{suffix}.json")));
    let source: LodSource = match read("source").map(|s| serde_json::from_str(&s)) {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return println!("{name:<28} unreadable source: {e}"),
        Err(e) => return println!("{name:<28} unreadable source: {e}"),
    };
    let source_tris: usize = source.surfaces.iter().map(|s| s.indices.len() / 3).sum();
    let poses: Vec<Vec<Vec3>> = read("poses")
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    let poses: Vec<Vec<Vec3>> = poses
        .into_iter()
        .filter(|p| p.len() == source.positions.len())
        .collect();
    let start = Instant::now();
    let built = build_lod2(
        &source,
        target.min(source_tris.saturating_sub(1) as u32),
        voxel,
        &poses,
    );
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let (level, _) = match built {
        Ok(b) => b,
        Err(e) => return println!("{name:<28} {source_tris:>7} error: {e}"),
    };
    let stats = lod2_stats(&source, &level, &source.positions);
    let pct = |d: f32, diagonal: f32| 100.0 * d / diagonal.max(f32::MIN_POSITIVE);
    // Worst over the poses of how much of the posed source the posed LOD2 misses.
    let mut worst = (0.0f32, 0.0f32);
    for pose in &poses {
        let s = lod2_stats(&source, &level, pose);
        worst.0 = worst.0.max(pct(s.max_source_distance, s.diagonal));
        worst.1 = worst.1.max(pct(s.mean_source_distance, s.diagonal));
    }
    println!(
        "{name:<28} {source_tris:>7} {:>5} {:>5} {:>6} {:>6.2}/{:<6.2} {:>6.2}/{:<6.2} {:>6.2}/{:<6.2} {:>5} {:>5} {ms:>8.1}",
        stats.triangles,
        stats.vertices,
        stats.closed_manifold,
        pct(stats.max_distance, stats.diagonal),
        pct(stats.mean_distance, stats.diagonal),
        pct(stats.max_source_distance, stats.diagonal),
        pct(stats.mean_source_distance, stats.diagonal),
        worst.0,
        worst.1,
        stats.seam_crossing_triangles,
        stats.flipped_triangles,
    );
}
