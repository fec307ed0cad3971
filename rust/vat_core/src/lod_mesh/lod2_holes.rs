//! Where LOD2's holes open on the real characters (see `real_characters.rs` for the files): per
//! LOD2 candidate, how many views of how many poses fail, the largest loss, the worst views with
//! their holes and loss, and the source bones whose pixels the holes are (so a failure can be
//! put down to a sword, a foot or a joint). Ignored; run with
//! `VAT_LOD_SOURCES=DIR cargo test -p vat_core --release lod2_holes -- --ignored --nocapture`.
//! `VAT_LOD_ONLY=NAME` as in `real_characters`; `VAT_LOD2_TRIANGLES=N,M,..` the targets (600 by
//! default); `VAT_LOD2_KINDS` the candidates ("whole 40,parts 40,whole 64,parts 64" by
//! default: whole or by part, at the automatic voxel size or 64 cells); `VAT_LOD_PICTURES=DIR`
//! writes each candidate's two worst views as PPMs, and with `VAT_LOD_ALL_VIEWS=1` every view of
//! the first pose too.

use glam::Vec3;

use super::real_characters::{dumped_characters, read_dumped};
use super::silhouette::{holes_of, level_mask, rows, source_mask, Framing, Rows};
use super::{level_positions, LodChain, LodSource};
use super::{MAX_HOLES_PCT, SILHOUETTE_VIEWS};

/// Views listed per candidate, worst first.
const LISTED: usize = 6;

#[test]
#[ignore = "needs $VAT_LOD_SOURCES with characters dumped by the bake"]
fn lod2_holes() {
    let (dir, names) = dumped_characters();
    let targets: Vec<u32> = std::env::var("VAT_LOD2_TRIANGLES")
        .unwrap_or("600".into())
        .split(',')
        .filter_map(|t| t.parse().ok())
        .collect();
    let kinds =
        std::env::var("VAT_LOD2_KINDS").unwrap_or("whole 40,parts 40,whole 64,parts 64".into());
    for name in names {
        let (source, poses) = read_dumped(&dir, &name);
        let triangles: usize = source.surfaces.iter().map(|s| s.indices.len() / 3).sum();
        if poses.is_empty() {
            continue;
        }
        println!("== {name}: {triangles} triangles, {} poses", poses.len());
        let b = crate::bounds::Bounds::from_points(&source.positions);
        let extent = (b.max - b.min).max_element();
        for &target in &targets {
            let cells_list: Vec<u32> = std::env::var("VAT_LOD2_CELLS")
                .unwrap_or("40,64".into())
                .split(',')
                .filter_map(|t| t.parse().ok())
                .collect();
            for (cells, voxel) in cells_list
                .iter()
                .map(|&c| (c, if c == 40 { 0.0 } else { extent / c as f32 }))
            {
                for (kind, by_part) in [("whole", false), ("parts", true)] {
                    if !kinds.contains(&format!("{kind} {cells}")) {
                        continue;
                    }
                    let built =
                        super::lod2::build_lod2_with(&source, target, voxel, &poses, by_part);
                    let (level, columns) = match built {
                        Ok(b) => b,
                        Err(e) => {
                            println!("   {name} {kind} {cells} at {target}: {e}");
                            continue;
                        }
                    };
                    let chain = LodChain {
                        levels: vec![level],
                        columns,
                    };
                    report(&source, &chain, &poses, &format!("{name} {kind} {cells}"));
                }
            }
        }
    }
}

/// Per view of every pose the holes in %, then the worst views with their holes by bone.
fn report(source: &LodSource, chain: &LodChain, poses: &[Vec<Vec3>], label: &str) {
    use rayon::prelude::*;
    let per_view: Vec<(f32, f32, u32, u32)> = (0..poses.len())
        .into_par_iter()
        .flat_map_iter(|p| {
            let lod = level_positions(chain, 0, &poses[p]);
            (0..SILHOUETTE_VIEWS).map(move |view| {
                let framing = Framing::new(source, &poses[p], view);
                let covered = source_mask(source, &poses[p], framing);
                let mask = level_mask(source, chain, 0, &lod, framing);
                let near = rows::dilated(&covered, super::silhouette::LOSS_DISTANCE_PX);
                let (pct, loss) = super::silhouette::compare_rows(&covered, &near, &mask);
                (pct, loss, view, p as u32)
            })
        })
        .collect();
    let failing = per_view.iter().filter(|v| v.0 > MAX_HOLES_PCT).count();
    let loss = per_view.iter().map(|v| v.1).fold(0.0, f32::max);
    let loss_failing = per_view
        .iter()
        .filter(|v| v.1 > super::MAX_LOSS_PCT)
        .count();
    let mut sorted = per_view.clone();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut poses_failing: Vec<u32> = per_view
        .iter()
        .filter(|v| v.0 > MAX_HOLES_PCT)
        .map(|v| v.3)
        .collect();
    poses_failing.sort();
    poses_failing.dedup();
    println!(
        "   {label}: {} triangles, {failing} of {} views over {MAX_HOLES_PCT}% holes ({} poses: \
         {poses_failing:?}); loss at most {loss:.2}%, {loss_failing} views over",
        chain.levels[0].triangle_count(),
        per_view.len(),
        poses_failing.len()
    );
    if let Ok(dir) = std::env::var("VAT_LOD_PICTURES") {
        let all = std::env::var("VAT_LOD_ALL_VIEWS").is_ok();
        let pose0: Vec<(f32, f32, u32, u32)> =
            (0..SILHOUETTE_VIEWS).map(|v| (0.0, 0.0, v, 0)).collect();
        for &(_, _, view, pose) in sorted.iter().take(2).chain(pose0.iter().filter(|_| all)) {
            let image = super::silhouette_image(source, chain, 0, &poses[pose as usize], view);
            let file = format!("{dir}/{}_v{view}_p{pose}.ppm", label.replace(' ', "_"));
            super::real_characters::write_ppm(&file, &image);
        }
    }
    for &(pct, loss, view, pose) in sorted.iter().take(LISTED) {
        let bones = holes_by_bone(source, chain, &poses[pose as usize], view);
        let named: Vec<String> = bones
            .iter()
            .take(4)
            .map(|(b, n)| {
                let name = source
                    .bone_names
                    .get(*b as usize)
                    .map_or("-", String::as_str);
                format!("{name} {n}")
            })
            .collect();
        println!(
            "      view {view} pose {pose}: holes {pct:.2}% loss {loss:.2}%; by bone: {}",
            named.join(", ")
        );
    }
}

/// The hole pixels of one view, counted by the bone of the source triangles that cover them
/// (the bone of a triangle's first corner; a pixel under several bones counts for each),
/// most first.
fn holes_by_bone(
    source: &LodSource,
    chain: &LodChain,
    pose: &[Vec3],
    view: u32,
) -> Vec<(u32, u32)> {
    let framing = Framing::new(source, pose, view);
    let covered = source_mask(source, pose, framing);
    let lod = level_positions(chain, 0, pose);
    let holes = holes_of(&covered, &level_mask(source, chain, 0, &lod, framing));
    let mut by_bone: std::collections::BTreeMap<u32, Rows> = Default::default();
    for t in source
        .surfaces
        .iter()
        .flat_map(|s| s.indices.chunks_exact(3))
    {
        let bone = source.bones[t[0] as usize];
        let p = [t[0], t[1], t[2]].map(|v| framing.pixel(pose[v as usize]));
        rows::fill_triangle(by_bone.entry(bone).or_insert(rows::EMPTY), p);
    }
    let mut counts: Vec<(u32, u32)> = by_bone
        .iter()
        .map(|(&b, m)| {
            let both: Rows = std::array::from_fn(|y| m[y] & holes[y]);
            (b, rows::count(&both))
        })
        .filter(|&(_, n)| n > 0)
        .collect();
    counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    counts
}
