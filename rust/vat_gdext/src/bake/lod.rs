//! The LOD chain of a bake: built by `vat_core::lod_mesh` from the full bake, checked by
//! silhouettes over several poses of every clip, then stored as one VAT over the kept levels'
//! columns and one ArrayMesh per kept level.

use std::time::Instant;

use godot::classes::image::Format;
use godot::classes::{ArrayMesh, Image, Texture2D};
use godot::prelude::*;
use vat_core::bake::EncodedVat;
use vat_core::clip::Clip;
use vat_core::lod_mesh::{
    apply_columns_in, build_checked_chain_keeping_masks, check_placed_silhouettes_against,
    check_silhouettes, silhouette_image, ColumnSource, LodChain, LodSettings, LodSource,
    SilhouetteReport, SourceMasks,
};

use super::collect::Character;
use super::lod_source;
use super::output::{godot_bytes, GodotBytes};
use crate::convert;

pub use vat_core::lod_mesh::{MAX_HOLES_PCT, MAX_LOSS_PCT};

/// One kept level's figures.
pub struct LevelStats {
    /// Level number in the built chain (0, 1, 2), before any level was dropped.
    pub built_level: usize,
    /// Vertices of the level's mesh.
    pub vertices: usize,
    /// Triangles of the level's mesh.
    pub triangles: usize,
    /// VAT columns the level reads.
    pub columns: usize,
    /// The silhouette check's result over every pose.
    pub report: SilhouetteReport,
    /// The worst view of the worst pose: the source's mask left, the level's right (L8).
    pub image: Gd<Image>,
    /// The same check of the level as bone storage draws it, where it differs (bound columns
    /// skinned from bone textures); set by the storage step.
    pub bone_report: Option<SilhouetteReport>,
}

/// What a LOD bake stores.
pub struct LodBake {
    /// The VAT over the kept levels' columns.
    pub vat: EncodedVat<GodotBytes>,
    /// The tangent VAT over the same columns (its normals are the tangents), where baked.
    pub tangents: Option<EncodedVat<GodotBytes>>,
    /// One mesh per kept level, LOD0 first.
    pub meshes: Vec<Gd<ArrayMesh>>,
    /// Its figures.
    pub summary: LodSummary,
    /// The kept level whose columns are bound to triangles (LOD2), for checking it again where
    /// it is drawn another way (bone storage).
    pub bound_level: Option<BoundLevel>,
}

/// A kept level with columns bound to triangles, and what its hole check needs: the chain, its
/// source and the poses the chain was checked in.
pub struct BoundLevel {
    /// The source the chain was built from.
    pub source: LodSource,
    /// The chain (levels before any was dropped).
    pub chain: LodChain,
    /// The level in `chain`.
    pub level: usize,
    /// Its index among the kept levels (`LodSummary::levels`).
    pub kept: usize,
    /// Each of its vertices' stored column, in the level's vertex order.
    pub columns: Vec<u32>,
    /// Source-vertex positions in each checked pose.
    pub poses: Vec<Vec<glam::Vec3>>,
    /// The source's silhouettes in those poses, rendered while the chain was built.
    pub masks: SourceMasks,
    /// The baked frame of each pose.
    pub frames: Vec<u32>,
}

impl BoundLevel {
    /// The level's hole check with its vertices at `placed[pose]` (the level's vertex order).
    pub fn check(&self, placed: &[Vec<glam::Vec3>]) -> SilhouetteReport {
        check_placed_silhouettes_against(
            &self.masks,
            &self.source,
            &self.chain,
            self.level,
            &self.poses,
            placed,
        )
    }
}

/// The figures of a LOD bake, for `get_bake_stats()`.
pub struct LodSummary {
    /// Per kept level.
    pub levels: Vec<LevelStats>,
    /// Vertices of the source (the combined mesh without LOD).
    pub source_vertices: usize,
    /// Texture bytes of the full bake.
    pub bytes_before: usize,
    /// Texture bytes over the kept columns.
    pub bytes_after: usize,
    /// Time to build, check and store the chain.
    pub ms: f64,
    /// One line per level left out, or built above its target.
    pub notes: Vec<String>,
    /// Where each stored VAT column comes from, in texture order.
    pub columns: Vec<ColumnSource>,
}

/// Checks what can be checked before building the chain: settings out of range, a character
/// without triangles, a voxel size larger than the character. One message naming the setting (the caller adds the character).
pub fn check_settings(
    settings: &LodSettings,
    source_triangles: usize,
    extent: f32,
) -> Result<(), String> {
    if source_triangles == 0 {
        return Err("the character has no triangles to build LOD meshes from (turn lod_enabled off to bake it without LODs)".into());
    }
    if !(settings.lod1_ratio > 0.0 && settings.lod1_ratio <= 1.0) {
        return Err(format!(
            "lod1_ratio is {}; it must lie in (0, 1]",
            settings.lod1_ratio
        ));
    }
    if settings.lod2_triangles == 0 {
        return Err("lod2_triangles is 0; it must be at least 1".into());
    }
    let v = settings.voxel_size;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!(
            "lod_voxel_size is {v}; it must be 0 (automatic) or positive"
        ));
    }
    if v > 0.0 && v >= extent {
        return Err(format!(
            "lod_voxel_size is {v}, not below the character's largest extent {extent}: the LOD2 remesh would be empty"
        ));
    }
    Ok(())
}

/// Builds, checks and stores the LOD chain of `character` from its full bake `vat`.
///
/// `Err` (nothing changed) for bad settings ([`check_settings`]). A character with no more
/// triangles than the LOD2 target, or a chain the core cannot build for it, gives `Ok(Err(why))`
/// after one warning: the bake goes on without LOD meshes. A level past [`MAX_HOLES_PCT`] or [`MAX_LOSS_PCT`] is dropped with one warning naming
/// it and its figures; LOD0 failing drops the whole chain (`Ok(Err(why))`).
pub fn bake_lod(
    character: &Character,
    vat: &EncodedVat<GodotBytes>,
    tangents: Option<&EncodedVat<GodotBytes>>,
    clips: &[Clip],
    settings: &LodSettings,
    variations: &[Option<Gd<Texture2D>>],
    owner: &str,
) -> Result<Result<LodBake, String>, String> {
    let t0 = Instant::now();
    let mut source = lod_source::lod_source(character, vat);
    let triangles: usize = source.surfaces.iter().map(|s| s.indices.len() / 3).sum();
    check_settings(settings, triangles, vat.bounds.size().max_element())?;
    if settings.lod2_triangles as usize >= triangles {
        // A character this small gains nothing from LODs; the defaults must still bake it, and
        // nothing went wrong, so this is a note (also in the stats' `lod_notes`), not a warning.
        let why = format!(
            "'{owner}' has {triangles} triangles, not more than lod2_triangles ({}): baked without LOD meshes",
            settings.lod2_triangles
        );
        godot_print!("vat_crowd: {why}");
        return Ok(Err(why));
    }
    source.textures = lod_source::surface_images(character, variations);
    let frames = lod_source::pose_frames(clips);
    let poses = lod_source::poses(vat, &frames);
    let (chain, reports, masks) = match build_checked_chain_keeping_masks(&source, settings, &poses)
    {
        Ok(built) => built,
        Err(e) => {
            let why = format!(
                "the LOD chain of '{owner}' could not be built ({e}); baked without LOD meshes"
            );
            godot_warn!("vat_crowd: {why}");
            return Ok(Err(why));
        }
    };
    let mut kept = Vec::new();
    let mut notes = Vec::new();
    if let [_, lod1] = &chain.levels[..] {
        // Not a problem: a small piece's LOD1 is already below LOD2's target.
        let why = format!(
            "LOD2 of '{owner}' not built: its LOD1 has {} triangles, not more than lod2_triangles ({}); LOD1 is its coarsest level",
            lod1.triangle_count(),
            settings.lod2_triangles
        );
        godot_print!("vat_crowd: {why}");
        notes.push(why);
    }
    for level in 0..chain.levels.len() {
        // The chain checked every level over these poses while it was built (LOD0 from the
        // same source masks).
        let report = match reports.get(level) {
            Some(Some(report)) => *report,
            _ => check_silhouettes(&source, &chain, level, &poses),
        };
        if !report.passes() {
            let why = format!(
                "LOD{level} of '{owner}' dropped: holes {:.2}% (limit {MAX_HOLES_PCT}%), loss {:.2}% (limit {MAX_LOSS_PCT}%) in view {} of pose {} of {}",
                report.holes_pct,
                report.loss_pct,
                report.worst_view,
                report.worst_pose,
                poses.len()
            );
            if level == 0 {
                let why = format!("{why}; baked without LOD meshes");
                godot_warn!("vat_crowd: {why}");
                return Ok(Err(why));
            }
            godot_warn!("vat_crowd: {why}");
            notes.push(why);
            continue;
        }
        let triangles = chain.levels[level].triangle_count();
        if level == 2 && triangles > settings.lod2_triangles as usize {
            // Not a problem: the chain aimed higher because the target opened holes.
            let why = format!(
                "LOD2 of '{owner}' has {triangles} triangles: at lod2_triangles ({}) it failed the silhouette check, so the chain aimed higher",
                settings.lod2_triangles
            );
            godot_print!("vat_crowd: {why}");
            notes.push(why);
        }
        let pose = poses
            .get(report.worst_pose as usize)
            .map_or(&source.positions[..], |p| &p[..]);
        let image = mask_image(&silhouette_image(
            &source,
            &chain,
            level,
            pose,
            report.worst_view,
        ));
        kept.push((level, report, image));
    }
    let (columns, remap) = kept_columns(&chain, kept.iter().map(|k| k.0));
    // Straight into Godot arrays, so the textures (219 MB for KayKit's knight over its LOD
    // columns) are not copied after; the tangents need only their normals.
    let new_vat = apply_columns_in(vat, &columns, true, godot_bytes)
        .map_err(|e| format!("the LOD VAT of '{owner}' could not be written: {e}"))?;
    let new_tangents = match tangents {
        Some(t) => Some(
            apply_columns_in(t, &columns, false, godot_bytes)
                .map_err(|e| format!("the LOD tangents of '{owner}' could not be written: {e}"))?,
        ),
        None => None,
    };
    let first_tangents = new_tangents
        .as_ref()
        .map(|t| vat_core::bake::decode_frame_normals(t, 0));
    let first = vat_core::bake::decode_frame(&new_vat, 0);
    let first_normals = if new_vat.params.normals {
        vat_core::bake::decode_frame_normals(&new_vat, 0)
    } else {
        Vec::new()
    };
    let channel = super::output::free_custom_channel(character)?;
    let aabb = convert::to_aabb(&new_vat.bounds);
    let mut meshes = Vec::new();
    let mut levels = Vec::new();
    let mut bound_level = None;
    for (kept_index, (level, report, image)) in kept.into_iter().enumerate() {
        let mut lod = chain.levels[level].clone();
        for v in &mut lod.vertices {
            v.column = remap[v.column as usize];
        }
        let bound = lod
            .vertices
            .iter()
            .any(|v| matches!(columns[v.column as usize], ColumnSource::Bound { .. }));
        let mut used: Vec<u32> = lod.vertices.iter().map(|v| v.column).collect();
        if bound && bound_level.is_none() {
            bound_level = Some((level, kept_index, used.clone()));
        }
        used.sort_unstable();
        used.dedup();
        meshes.push(super::lod_mesh::level_mesh(
            character,
            &lod,
            &first,
            &first_normals,
            first_tangents.as_deref(),
            channel,
            aabb,
        )?);
        levels.push(LevelStats {
            built_level: level,
            vertices: lod.vertices.len(),
            triangles: lod.triangle_count(),
            columns: used.len(),
            report,
            image,
            bone_report: None,
        });
    }
    let summary = LodSummary {
        bytes_before: vat.positions.len()
            + vat.normals.len()
            + tangents.map_or(0, |t| t.normals.len()),
        bytes_after: new_vat.positions.len()
            + new_vat.normals.len()
            + new_tangents.as_ref().map_or(0, |t| t.normals.len()),
        levels,
        source_vertices: source.positions.len(),
        ms: t0.elapsed().as_secs_f64() * 1000.0,
        notes,
        columns,
    };
    let bound_level = bound_level.map(|(level, kept, columns)| BoundLevel {
        source,
        chain,
        level,
        kept,
        columns,
        poses,
        frames,
        masks,
    });
    Ok(Ok(LodBake {
        vat: new_vat,
        tangents: new_tangents,
        meshes,
        summary,
        bound_level,
    }))
}

/// The columns the kept levels read, in the chain's order, and for every chain column its new
/// index (`u32::MAX` for a dropped one).
fn kept_columns(
    chain: &LodChain,
    levels: impl Iterator<Item = usize>,
) -> (Vec<ColumnSource>, Vec<u32>) {
    let mut used = vec![false; chain.columns.len()];
    for level in levels {
        for v in &chain.levels[level].vertices {
            used[v.column as usize] = true;
        }
    }
    let mut remap = vec![u32::MAX; chain.columns.len()];
    let mut columns = Vec::new();
    for (i, c) in chain.columns.iter().enumerate() {
        if used[i] {
            remap[i] = columns.len() as u32;
            columns.push(*c);
        }
    }
    (columns, remap)
}

/// The two masks side by side (source left, level right) as one L8 image.
fn mask_image(masks: &vat_core::lod_mesh::SilhouetteImage) -> Gd<Image> {
    let n = masks.size as usize;
    let mut bytes = Vec::with_capacity(n * n * 2);
    for row in 0..n {
        bytes.extend_from_slice(&masks.original[row * n..row * n + n]);
        bytes.extend_from_slice(&masks.candidate[row * n..row * n + n]);
    }
    Image::create_from_data(
        (n * 2) as i32,
        n as i32,
        false,
        Format::L8,
        &PackedByteArray::from(bytes.as_slice()),
    )
    .expect("mask sizes match")
}
