//! The whole chain: weld (LOD0), simplify (LOD1), remesh (LOD2), one shared column list.

use super::checked::checked_lod1;
use super::silhouette::{SourceMasks, SourceSilhouettes, MAX_HOLES_PCT};
use super::silhouette_cache::poses_or_reference;
use super::weld::weld;
use super::{ColumnSource, LodChain, LodSettings, LodSource, SilhouetteReport};
use crate::error::{Result, VatError};

/// Builds LOD0 (the source welded), LOD1 (LOD0 simplified per piece, on LOD0's vertices,
/// retried with more triangles inside its window while its silhouettes over `poses` fail) and
/// LOD2 (a small mesh bound to the source, remeshed per part that moves rigidly over `poses`:
/// source-vertex positions per baked pose, none for one part) over one column list: LOD0's columns first (LOD1
/// uses only those), then LOD2's.
///
/// UV seams weld only where no texture shows it: with `source.textures` empty (unknown) they
/// stay split; on a surface whose texture list is empty (drawn without a texture) they weld; on
/// a textured surface they weld unless they run along a sharp edge, and only if every image of
/// the surface shows the same colours over every triangle whose UVs change.
///
/// Errors, each naming what is wrong: no triangles; arrays of different lengths; a triangle
/// index out of range; a non-finite position or normal; a texture list that is not one per
/// surface, or an image whose bytes are not `width * height * 4`; a ratio outside (0, 1]; a
/// negative or non-finite voxel size or angle; a `head_bone` that no bone is named; a LOD1 that
/// misses its window. A LOD2 target not below LOD1's triangle count is no error: the chain then
/// stops at LOD1.
pub fn build_chain(
    source: &LodSource,
    settings: &LodSettings,
    poses: &[Vec<glam::Vec3>],
) -> Result<LodChain> {
    build_chain_with(source, settings, poses, false).map(|(chain, ..)| chain)
}

/// [`build_chain`], with the silhouette report over `poses` of each level (LOD0 and LOD1
/// always; LOD2 when there are poses), so the caller need not check them again: LOD0's comes
/// from the source masks the chain renders anyway, where a check of its own
/// ([`super::check_silhouettes`]) would render them all again.
pub fn build_checked_chain(
    source: &LodSource,
    settings: &LodSettings,
    poses: &[Vec<glam::Vec3>],
) -> Result<(LodChain, Vec<Option<SilhouetteReport>>)> {
    build_chain_with(source, settings, poses, true).map(|(chain, reports, _)| (chain, reports))
}

/// [`build_checked_chain`], also returning the source silhouettes the levels were checked
/// against, for checking a level again where it is drawn another way
/// ([`super::check_placed_silhouettes_against`]) without rendering the source once more.
pub fn build_checked_chain_keeping_masks(
    source: &LodSource,
    settings: &LodSettings,
    poses: &[Vec<glam::Vec3>],
) -> Result<(LodChain, Vec<Option<SilhouetteReport>>, SourceMasks)> {
    build_chain_with(source, settings, poses, true)
}

/// [`build_checked_chain`]; LOD0's report only `with_lod0`.
fn build_chain_with(
    source: &LodSource,
    settings: &LodSettings,
    poses: &[Vec<glam::Vec3>],
    with_lod0: bool,
) -> Result<(LodChain, Vec<Option<SilhouetteReport>>, SourceMasks)> {
    validate_settings(settings)?;
    validate_source(source)?;
    let lod0 = weld(source, settings);
    if lod0.level.triangle_count() == 0 {
        return Err(no_triangles("every triangle collapsed when welding"));
    }
    let masks = SourceSilhouettes::new(source, poses);
    let lod0_report = with_lod0.then(|| {
        let as_source = poses_drawn_as_source(source, &lod0, poses);
        if as_source.iter().all(|&same| same) {
            // Every mask is the source's own: no holes, no loss, the first view the worst, as
            // the render would find.
            return SilhouetteReport::default();
        }
        let alone = LodChain {
            levels: vec![lod0.level.clone()],
            columns: lod0.columns.clone(),
        };
        // Poses where LOD0 draws the source's triangles at the source's points need no render.
        masks.check_unless(&alone, 0, |pose| as_source[pose])
    });
    let (lod1, lod1_report) = checked_lod1(source, &lod0, settings, &masks)?;
    if settings.lod2_triangles as usize >= lod1.triangle_count() {
        // A small piece (a sword) whose LOD1 is already below LOD2's target: LOD1 is its
        // coarsest level, and a remesh could only add triangles.
        let chain = LodChain {
            levels: vec![lod0.level, lod1],
            columns: lod0.columns,
        };
        return Ok((
            chain,
            vec![lod0_report, Some(lod1_report)],
            masks.into_masks(),
        ));
    }
    let (mut lod2, lod2_columns, lod2_report) =
        best_lod2(source, settings, poses, &masks, lod1.triangle_count())?;
    let mut columns = lod0.columns;
    let offset = columns.len() as u32;
    for v in &mut lod2.vertices {
        v.column += offset;
    }
    columns.extend(lod2_columns);
    let chain = LodChain {
        levels: vec![lod0.level, lod1, lod2],
        columns,
    };
    Ok((
        chain,
        vec![lod0_report, Some(lod1_report), lod2_report],
        masks.into_masks(),
    ))
}

/// Per pose of `poses` (the reference positions when there are none), whether `lod0` draws
/// exactly the source's triangles there: every triangle of every source surface kept, in order,
/// on the same surface, each corner's column at a source vertex whose position is the corner's
/// own, bit for bit, in that pose. Its silhouettes there are the source's, pixel for pixel, and
/// need no render: in every pose for Kenney's figure, the soldier and CesiumMan; in 87 of 214
/// for KayKit's knight, whose welded seam copies carry different bone weights. All false when
/// the triangles differ.
fn poses_drawn_as_source(
    source: &LodSource,
    lod0: &super::weld::Welded,
    poses: &[Vec<glam::Vec3>],
) -> Vec<bool> {
    let poses = poses_or_reference(source, poses);
    let differ = vec![false; poses.len()];
    let kept = source
        .surfaces
        .iter()
        .filter(|s| !s.indices.is_empty())
        .count();
    if lod0.level.surfaces.len() != kept {
        return differ;
    }
    // (LOD0 corner's source vertex, source corner) wherever the two differ.
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for level in &lod0.level.surfaces {
        let Some(surface) = source.surfaces.get(level.source_surface as usize) else {
            return differ;
        };
        if surface.indices.len() != level.indices.len() {
            return differ;
        }
        for (&v, &corner) in level.indices.iter().zip(&surface.indices) {
            let vertex = lod0.level.vertices[v as usize];
            let ColumnSource::Vertex(seed) = lod0.columns[vertex.column as usize] else {
                return differ;
            };
            if seed != corner {
                pairs.push((seed, corner));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    let same = |pose: &[glam::Vec3]| {
        pairs.iter().all(|&(a, b)| {
            pose[a as usize].to_array().map(f32::to_bits)
                == pose[b as usize].to_array().map(f32::to_bits)
        })
    };
    poses.iter().map(|pose| same(pose)).collect()
}

/// Finer automatic voxel sizes tried after the default, as cells along the largest extent.
const FINER_CELLS: [f32; 1] = [64.0];

/// Whether a LOD2 variant (voxel size, by part) is one of those tried only after every target
/// failed the others: a per-part remesh at a voxel finer than `asked` (the automatic size's
/// finer steps). It simplifies the most triangles, part by part, so it costs the most to build
/// (KayKit's knight at 300 triangles, timed on a busy machine: 2.7 s, against 0.2, 1.1 and
/// 2.1 s for the other three), and on no character of the corpus is it the first to pass: the
/// whole remesh or the per-part one at the voxel asked for passes first, at the same target or
/// the next.
fn costs_most((voxel, by_part): (f32, bool), asked: f32) -> bool {
    by_part && voxel != asked
}

/// A target whose first candidate (the whole character remeshed at the voxel size asked for)
/// shows more than this many times [`MAX_HOLES_PCT`] in holes is given up for the next target,
/// in both rounds: holes past that are a budget too small for the outline, which the other
/// variants spread differently but do not grow. On the corpus this skips only KayKit's knight at
/// 300 triangles (3.4% holes; its other variants there fail too, at 4.0% and 7.4%), which cut
/// its chain from 2.36 to 2.07 s when candidates were still built two at a time. A first
/// candidate that fails on loss (a web between the limbs, which the per-part remesh is for) or
/// on fewer holes is never skipped. The last target is never given up.
const HOPELESS_HOLES: f32 = 3.0;

/// LOD2's triangle targets, as multiples of `lod2_triangles`: a target whose candidates all
/// fail the check is followed by the next, up to half of LOD1's triangles.
const TARGET_STEPS: [u32; 3] = [1, 2, 4];

/// LOD2's triangle targets for `settings` under a LOD1 of `lod1_triangles`: `lod2_triangles`,
/// then twice and four times that, held to half of LOD1's triangles, while they grow.
pub(crate) fn lod2_targets(settings: &LodSettings, lod1_triangles: usize) -> Vec<u32> {
    let cap = u32::try_from(lod1_triangles / 2).unwrap_or(u32::MAX);
    let mut targets = vec![settings.lod2_triangles];
    for step in &TARGET_STEPS[1..] {
        let target = settings.lod2_triangles.saturating_mul(*step).min(cap);
        if targets.last().is_some_and(|&last| target <= last) {
            break;
        }
        targets.push(target);
    }
    targets
}

/// LOD2 checked against `poses`: the whole character remeshed, then remeshed part by part
/// (see `lod2/parts.rs`), at the voxel size asked for and, when that is automatic, at finer
/// ones, for each target of [`lod2_targets`] in turn, except that the variants that cost most
/// ([`costs_most`]) are tried only after every target failed the others, in a second round over
/// the targets, and that a target whose first candidate shows far too many holes
/// ([`HOPELESS_HOLES`]) is left for the next; the first candidate whose silhouettes pass
/// ([`super::SilhouetteReport::passes`]), else the one with the best score, with its report.
/// Without poses, the whole remesh at `lod2_triangles` and the voxel size asked for, unchecked.
/// Errors only when no candidate could be built (the first error).
fn best_lod2(
    source: &LodSource,
    settings: &LodSettings,
    poses: &[Vec<glam::Vec3>],
    masks: &SourceSilhouettes,
    lod1_triangles: usize,
) -> Result<(
    super::LodLevel,
    Vec<super::ColumnSource>,
    Option<SilhouetteReport>,
)> {
    best_lod2_with(
        source,
        settings,
        poses,
        masks,
        lod1_triangles,
        |_, report| report.passes(),
    )
}

/// [`best_lod2`] with `pass` deciding which candidates (level and report) pass. Candidates are
/// checked only until they fail ([`SourceSilhouettes::check_until_failed`], from the previous
/// candidate's worst pose); a report cut short never passes, and the candidate kept after all
/// failed is checked in full.
fn best_lod2_with(
    source: &LodSource,
    settings: &LodSettings,
    poses: &[Vec<glam::Vec3>],
    masks: &SourceSilhouettes,
    lod1_triangles: usize,
    pass: impl Fn(&super::LodLevel, &SilhouetteReport) -> bool,
) -> Result<(
    super::LodLevel,
    Vec<super::ColumnSource>,
    Option<SilhouetteReport>,
)> {
    if poses.is_empty() {
        let (level, columns) =
            super::lod2::build_lod2(source, settings.lod2_triangles, settings.voxel_size, &[])?;
        return Ok((level, columns, None));
    }
    let mut voxels = vec![settings.voxel_size];
    if settings.voxel_size == 0.0 {
        let b = crate::bounds::Bounds::from_points(&source.positions);
        let extent = (b.max - b.min).max_element();
        voxels.extend(FINER_CELLS.iter().map(|cells| extent / cells));
    }
    // The best candidate so far: its report, whether that saw every pose, the level, its columns.
    let mut best: Option<(
        SilhouetteReport,
        bool,
        super::LodLevel,
        Vec<super::ColumnSource>,
    )> = None;
    let mut first_error = None;
    let mut first_pose = 0;
    let targets = lod2_targets(settings, lod1_triangles);
    let as_counts: Vec<usize> = targets.iter().map(|&t| t as usize).collect();
    let mut search = super::lod2::Lod2Search::new(source, poses, &as_counts)?;
    let variants: Vec<(f32, bool)> = voxels
        .iter()
        .flat_map(|&voxel| [(voxel, false), (voxel, true)])
        .collect();
    // Two rounds over the targets: first the variants that cost little to build, then the
    // per-part remeshes at a finer voxel than asked for (see [`costs_most`]).
    let (costly, cheap): (Vec<_>, Vec<_>) = variants
        .into_iter()
        .partition(|&variant| costs_most(variant, settings.voxel_size));
    let mut hopeless = vec![false; targets.len()];
    'rounds: for (r, round) in [cheap, costly].into_iter().enumerate() {
        let round_is_cheap = r == 0;
        // One variant at a time, none built after the first that passes. Building two at once
        // kept both cores busy but built the second in vain whenever the first passed, and a
        // variant keeps both cores busy through most of its build anyway (remesh pieces,
        // meshoptimizer's goals in pairs beside the collapses, binding): the knight's chain
        // took 2.07 s with pairs, 1.32 s one at a time.
        for (t, &target) in targets.iter().enumerate() {
            if hopeless[t] {
                continue;
            }
            for (k, &variant) in round.iter().enumerate() {
                let built = search.candidate(target, variant);
                let (level, columns) = match built {
                    Ok(built) => built,
                    Err(e) => {
                        first_error.get_or_insert(e);
                        continue;
                    }
                };
                let chain = LodChain {
                    levels: vec![level],
                    columns,
                };
                let (report, complete) = masks.check_until_failed(&chain, 0, first_pose);
                first_pose = report.worst_pose;
                let holes = report.holes_pct;
                let passed = complete && pass(&chain.levels[0], &report);
                let better = best
                    .as_ref()
                    .is_none_or(|(r, ..)| report.score() < r.score());
                if passed || better {
                    let LodChain {
                        mut levels,
                        columns,
                    } = chain;
                    best = Some((report, complete, levels.remove(0), columns));
                }
                if passed {
                    break 'rounds;
                }
                if k == 0
                    && round_is_cheap
                    && t + 1 < targets.len()
                    && holes > HOPELESS_HOLES * MAX_HOLES_PCT
                {
                    hopeless[t] = true;
                    break;
                }
            }
        }
    }
    match (best, first_error) {
        (Some((report, true, level, columns)), _) => Ok((level, columns, Some(report))),
        (Some((_, false, level, columns)), _) => {
            let chain = LodChain {
                levels: vec![level],
                columns,
            };
            let report = masks.check(&chain, 0);
            let LodChain {
                mut levels,
                columns,
            } = chain;
            Ok((levels.remove(0), columns, Some(report)))
        }
        (None, Some(e)) => Err(e),
        (None, None) => unreachable!("at least one candidate was tried"),
    }
}

fn no_triangles(why: &str) -> VatError {
    VatError::InvalidValue {
        what: "LOD source",
        detail: format!("the character has no triangles ({why}); there is nothing to simplify"),
    }
}

/// Ratios in (0, 1], sizes and angles finite and not negative.
fn validate_settings(s: &LodSettings) -> Result<()> {
    let ratio = |what: &'static str, r: f32| {
        if r > 0.0 && r <= 1.0 {
            Ok(())
        } else {
            Err(VatError::InvalidValue {
                what,
                detail: format!(
                    "{r} is outside (0, 1]; it is the share of the level above's triangles to \
                     keep"
                ),
            })
        }
    };
    ratio("LOD1 ratio", s.lod1_ratio)?;
    ratio("LOD1 head ratio", s.head_ratio)?;
    let positive = |what: &'static str, x: f32, max: f32| {
        if x.is_finite() && (0.0..=max).contains(&x) {
            Ok(())
        } else {
            Err(VatError::InvalidValue {
                what,
                detail: format!("{x} is outside 0 to {max}"),
            })
        }
    };
    positive("LOD2 voxel size", s.voxel_size, f32::MAX)?;
    positive(
        "LOD weld normal angle (degrees)",
        s.weld_normal_degrees,
        180.0,
    )?;
    positive(
        "LOD sharp edge angle (degrees)",
        s.sharp_edge_degrees,
        180.0,
    )?;
    if s.lod2_triangles == 0 {
        return Err(VatError::InvalidValue {
            what: "LOD2 triangle target",
            detail: "0 leaves nothing to draw; it must be at least 1".into(),
        });
    }
    Ok(())
}

/// Equal array lengths, triangles in range, finite positions and normals, valid textures.
fn validate_source(source: &LodSource) -> Result<()> {
    let n = source.positions.len();
    crate::error::check_len("LOD source normals", n, source.normals.len())?;
    crate::error::check_len("LOD source UVs", n, source.uvs.len())?;
    crate::error::check_len("LOD source bones", n, source.bones.len())?;
    if source.surfaces.iter().all(|s| s.indices.len() < 3) {
        return Err(no_triangles("no surface has a triangle"));
    }
    for (s, surface) in source.surfaces.iter().enumerate() {
        if surface.indices.len() % 3 != 0 {
            return Err(VatError::InvalidValue {
                what: "LOD source triangles",
                detail: format!(
                    "surface {s} has {} indices, not a multiple of 3",
                    surface.indices.len()
                ),
            });
        }
        if let Some((i, v)) = surface
            .indices
            .iter()
            .enumerate()
            .find(|(_, &v)| v as usize >= n)
        {
            return Err(VatError::InvalidValue {
                what: "LOD source triangles",
                detail: format!("surface {s} index {i} is vertex {v}, but there are {n} vertices"),
            });
        }
    }
    let bad = |what: &str, list: &[glam::Vec3]| {
        list.iter()
            .position(|p| !p.is_finite())
            .map(|v| VatError::NonFinite {
                what: format!("LOD source {what} of vertex {v}"),
            })
    };
    if let Some(e) = bad("position", &source.positions).or(bad("normal", &source.normals)) {
        return Err(e);
    }
    validate_textures(source)
}

/// One texture list per surface (or none at all), each image `width * height * 4` bytes.
fn validate_textures(source: &LodSource) -> Result<()> {
    let (t, s) = (source.textures.len(), source.surfaces.len());
    if t != 0 && t != s {
        return Err(VatError::InvalidValue {
            what: "LOD source textures",
            detail: format!("{t} texture lists for {s} surfaces; give one per surface, or none"),
        });
    }
    for (s, list) in source.textures.iter().enumerate() {
        for (k, image) in list.iter().enumerate() {
            let want = image.width as usize * image.height as usize * 4;
            if want == 0 || image.rgba8.len() != want {
                return Err(VatError::InvalidValue {
                    what: "LOD source textures",
                    detail: format!(
                        "image {k} of surface {s} is {} x {} with {} bytes; it needs {want} \
                         (RGBA8) and a size of at least 1 x 1",
                        image.width,
                        image.height,
                        image.rgba8.len()
                    ),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
