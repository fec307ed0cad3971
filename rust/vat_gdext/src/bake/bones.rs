//! The storage a bake uses (`VertexAnimation.storage`): vertex textures, or bone textures built
//! by `vat_core::bones` from the same inputs, and the check that they draw what the vertex bake
//! draws.

use godot::classes::image::Format;
use godot::classes::{ArrayMesh, ImageTexture};
use godot::prelude::*;
use rayon::prelude::*;
use vat_core::bake::{EncodedVat, MeshFrame, MeshSource, Precision};
use vat_core::bones::{build_rig, encode_bones, EncodedBones};
use vat_core::lod_mesh::{ColumnSource, SilhouetteReport, MAX_HOLES_PCT, MAX_LOSS_PCT};

use super::collect::Character;
use super::lod::BoundLevel;
use super::output::{data_texture, GodotBytes};

/// `storage` values.
pub const STORAGE_VERTICES: i32 = 0;
/// See [`STORAGE_VERTICES`].
pub const STORAGE_BONES: i32 = 1;
/// See [`STORAGE_VERTICES`].
pub const STORAGE_AUTO: i32 = 2;
/// Auto picks bones where they take at most this share of the vertex textures' bytes.
const AUTO_BYTES_SHARE: usize = 4;
/// Largest distance, as a share of the bounds' diagonal, between a column skinned from the bone
/// textures and the vertex bake's, at any checked frame: a vertex column differs by the two
/// encodings' rounding (well under 0.5%), a LOD2 column bound to a triangle also by skinning one
/// blended point with the triangle's blended weights instead of blending three skinned points.
pub const MAX_BONE_ERROR_SHARE: f32 = 0.01;
/// How far a LOD column bound to a triangle may lie from its full blend of its corners'
/// influences, as a share of the bounds' diagonal, to keep fewer of them
/// (`vat_core::bones::encode_bones`): 1.5 mm on a 1.8 m character's 2.5 m diagonal, under a pixel
/// wherever the crowd draws LOD2.
const BOUND_TOLERANCE_SHARE: f32 = 6e-4;
/// Frames the check compares (spread over all frames; all of them when fewer).
const CHECKED_FRAMES: usize = 96;

/// What the bake stores.
pub enum Storage {
    /// Vertex textures; why (one sentence for the summary).
    Vertices(String),
    /// Bone textures; why, and the largest error against the vertex bake (share of the diagonal).
    /// With a bone source, `bones.bones` is the source's bone texture, which is not stored again.
    Bones {
        bones: EncodedBones,
        why: String,
        error: f32,
        shared: bool,
        /// The hole check of the bound LOD level as bone storage draws it: the level's index
        /// among the kept levels, and the report. A level that fails it is dropped by the
        /// caller ([`bound_level_dropped`]): bone storage without its coarsest level still
        /// beats vertex storage by far more than that level saves.
        bound_report: Option<(usize, SilhouetteReport)>,
    },
}

/// A body's bone texture that a bake of equipment draws with (`bone_source`, or the first
/// target of a `VertexAnimationBaker`).
pub struct SourceBones {
    /// The body's name, for messages.
    pub name: String,
    /// Its bone texture as stored (bytes, precision, translation decoding, palette).
    pub bones: EncodedBones,
    /// Only offered (a baker's first target): a bake that cannot draw with it stores its own
    /// bone texture instead of failing.
    pub offered: bool,
}

/// Largest distance, as a share of the bounds' diagonal, between a transform of equipment and
/// the body's bone it is matched to (times the constant grip), at any rest point and frame: the
/// body's half-precision texture rounds its transforms by about this much.
const SHARE_TOLERANCE_SHARE: f32 = 2e-3;

/// The inputs of a bone bake beside the vertex bake.
pub struct BoneInputs<'a> {
    pub character: &'a Character,
    pub sources: &'a [MeshSource],
    pub frames: &'a [Vec<MeshFrame>],
    /// The stored columns, in texture order.
    pub columns: &'a [ColumnSource],
    /// The stored vertex bake (over `columns`).
    pub vat: &'a EncodedVat<GodotBytes>,
    /// Bytes of every vertex texture the vertex bake would store.
    pub vertex_bytes: usize,
    /// The body whose bone texture to draw with (`bone_source`), if any.
    pub source: Option<&'a SourceBones>,
    /// The kept LOD level bound to triangles (LOD2), checked again as bone storage draws it.
    pub bound_level: Option<&'a BoundLevel>,
}

/// Picks the storage for `storage` (0, 1 or 2): `Err` for `STORAGE_BONES` on a character a bone
/// texture cannot draw (named), or for a setting out of range.
pub fn choose(storage: i32, inputs: &BoneInputs) -> Result<Storage, String> {
    let forced = match storage {
        STORAGE_VERTICES => return Ok(Storage::Vertices("storage is Vertices".into())),
        STORAGE_BONES => true,
        STORAGE_AUTO => false,
        s => {
            return Err(format!(
                "storage is {s}; it must be 0 (Vertices), 1 (Bones) or 2 (Auto)"
            ))
        }
    };
    let refuse = |why: String| {
        if forced {
            Err(format!("storage is Bones, but {why}"))
        } else {
            Ok(Storage::Vertices(format!("Auto: {why}")))
        }
    };
    let tangents = inputs.character.tangent_directions();
    let rig =
        match build_rig(inputs.sources, inputs.frames, &tangents).map_err(|e| e.to_string())? {
            Ok(rig) => rig,
            Err(refusal) => {
                let name = |m: usize, s: usize| blend_shape_name(inputs.character, m, s);
                return refuse(refusal.message(inputs.sources, &name));
            }
        };
    let diagonal = inputs.vat.bounds.size().length();
    let mut unshared = None;
    let (rig, params, source) = match inputs.source {
        None => (rig, inputs.vat.params, None),
        Some(source) => {
            let matrices = vat_core::bones::decode_matrices(&source.bones);
            match vat_core::bones::share_palette(
                &rig,
                &matrices,
                source.bones.palette as usize,
                SHARE_TOLERANCE_SHARE * diagonal,
            ) {
                Ok(shared) => {
                    let params = vat_core::bake::EncodingParams {
                        precision: source.bones.precision,
                        offset: source.bones.offset,
                        scale: source.bones.scale,
                        ..inputs.vat.params
                    };
                    (shared, params, Some(source))
                }
                Err(e) if source.offered => {
                    unshared = Some(format!(
                        "; it cannot draw with the bone texture of '{}' ({e}), so it stores its own",
                        source.name
                    ));
                    (rig, inputs.vat.params, None)
                }
                Err(e) => {
                    return Err(format!(
                        "it cannot draw with the bone texture of bone_source '{}': {e}",
                        source.name
                    ))
                }
            }
        }
    };
    let mut bones = encode_bones(
        &rig,
        inputs.columns,
        &params,
        BOUND_TOLERANCE_SHARE * diagonal,
    )
    .map_err(|e| e.to_string())?;
    let shared = source.is_some();
    if let Some(source) = source {
        // What the shader reads: the body's own bytes, not a copy encoded here.
        bones.bones = source.bones.bones.clone();
        bones.bone_layout = source.bones.bone_layout;
    }
    let bone_bytes = if shared { 0 } else { bones.bones.len() } + bones.skin.len();
    let size = if let Some(source) = source {
        format!(
            "draws with the {} bone transforms of '{}', storing only its skin table ({bone_bytes} bytes against {} for vertex textures)",
            rig.palette, source.name, inputs.vertex_bytes
        )
    } else {
        format!(
            "{} bone transforms x {} frames take {bone_bytes} bytes against {} for vertex textures ({:.1}x smaller){}",
            rig.palette,
            rig.frames,
            inputs.vertex_bytes,
            inputs.vertex_bytes as f64 / bone_bytes.max(1) as f64,
            unshared.as_deref().unwrap_or("")
        )
    };
    if !forced && bone_bytes * AUTO_BYTES_SHARE > inputs.vertex_bytes {
        return refuse(format!("{size}, less than {AUTO_BYTES_SHARE}x"));
    }
    let (error, at) = worst_error(&bones, inputs.vat);
    if error > MAX_BONE_ERROR_SHARE {
        return refuse(format!(
            "skinned from bone textures, {at} lies {:.3}% of the bounds' diagonal from the vertex bake (at most {:.1}% allowed)",
            error * 100.0,
            MAX_BONE_ERROR_SHARE * 100.0
        ));
    }
    let bound_report = inputs
        .bound_level
        .map(|level| (level.kept, bound_check(&bones, level)));
    let why = if forced {
        format!("storage is Bones: {size}")
    } else {
        format!("Auto: {size}")
    };
    Ok(Storage::Bones {
        bones,
        why,
        error,
        shared,
        bound_report,
    })
}

/// Why bone storage drops kept level `kept` of `owner`, whose bound columns fail the hole check
/// as bone textures draw them (`report`), or `None` when it passes.
pub fn bound_level_dropped(kept: usize, report: &SilhouetteReport, owner: &str) -> Option<String> {
    (!report.passes()).then(|| {
        format!(
            "LOD{kept} of '{owner}' dropped in bone storage: skinned from the bone textures it fails the hole check, holes {:.2}% (limit {MAX_HOLES_PCT}%), loss {:.2}% (limit {MAX_LOSS_PCT}%) in view {} of pose {}; its columns stay in the skin table unused",
            report.holes_pct, report.loss_pct, report.worst_view, report.worst_pose
        )
    })
}

/// The hole check of `level` with its vertices skinned from `bones` at each checked pose's frame,
/// as the shader skins them: a column bound to a triangle skins one point at the blend of its
/// corners' rest data with their blended influences, which the vertex bake's check (three
/// skinned corners blended) did not see.
fn bound_check(bones: &EncodedBones, level: &BoundLevel) -> SilhouetteReport {
    let placed: Vec<Vec<glam::Vec3>> = level
        .frames
        .par_iter()
        .map(|&f| {
            level
                .columns
                .iter()
                .map(|&c| vat_core::bones::decode_column(bones, f, c).0)
                .collect()
        })
        .collect();
    level.check(&placed)
}

/// The largest distance between the bone bake's and the vertex bake's columns over the checked
/// frames, as a share of the diagonal, and where.
fn worst_error(bones: &EncodedBones, vat: &EncodedVat<GodotBytes>) -> (f32, String) {
    // Borrowed bytes are shared across threads.
    let vat = &vat.borrowed();
    let frames = vat.layout.frame_count as usize;
    let step = frames.div_ceil(CHECKED_FRAMES).max(1);
    let diagonal = vat.bounds.size().length().max(f32::MIN_POSITIVE);
    let checked: Vec<usize> = (0..frames).step_by(step).chain([frames - 1]).collect();
    let worst = checked
        .par_iter()
        .map(|&f| {
            let want = vat_core::bake::decode_frame(vat, f as u32);
            let (got, _, _) = vat_core::bones::decode_frame(bones, f as u32);
            want.iter()
                .zip(&got)
                .enumerate()
                .map(|(c, (a, b))| (a.distance(*b), f, c))
                .fold((0.0f32, 0, 0), |m, x| if x.0 > m.0 { x } else { m })
        })
        .reduce(|| (0.0, 0, 0), |a, b| if b.0 > a.0 { b } else { a });
    (
        worst.0 / diagonal,
        format!("column {} at baked frame {}", worst.2, worst.1),
    )
}

/// The palette entries and influences per vertex (4 or 8) a bone bake of `character` takes,
/// before sampling: one entry per skin bind some vertex uses (binds to the same skeleton bone with
/// the same bind pose from meshes at the same place share one), one per rigid mesh and one per
/// skinned mesh whose weights do not all sum to 1. At least the bake's: sampling may find entries
/// that move alike (meshes under one bone attachment) and share them.
pub fn estimate_palette(character: &Character) -> (usize, usize) {
    use std::collections::HashSet;
    let bits = |a: &glam::Affine3A| a.to_cols_array().map(f32::to_bits);
    let mut entries: HashSet<(i64, i32, [u32; 12], [u32; 12])> = HashSet::new();
    let mut widest = 0;
    for (m, mesh) in character.meshes.iter().enumerate() {
        let place = bits(&crate::convert::affine(mesh.node.get_global_transform()));
        let node = (-(m as i64) - 1, -1, place, place);
        let (Some(link), Some(skin)) = (&mesh.skin, &mesh.source.skin) else {
            entries.insert(node);
            widest = widest.max(1);
            continue;
        };
        let skeleton = link.skeleton.instance_id().to_i64();
        let slots = skin
            .bones
            .chunks_exact(skin.influences)
            .zip(skin.weights.chunks_exact(skin.influences));
        for (bones, weights) in slots {
            let mut used = 0;
            let mut total = 0.0;
            for (&b, &w) in bones
                .iter()
                .zip(weights)
                .filter(|(_, &w)| w >= vat_core::bones::WEIGHT_EPSILON)
            {
                let bind = b as usize;
                let bone = link.bind_bones.get(bind).copied().unwrap_or(-1);
                let pose = link.bind_poses.get(bind).map_or([0; 12], bits);
                entries.insert((skeleton, bone, pose, place));
                used += 1;
                total += w;
            }
            if (1.0f32 - total).abs() > vat_core::bones::REMAINDER_TOLERANCE {
                entries.insert(node);
                used += 1;
            }
            widest = widest.max(used);
        }
    }
    (entries.len(), if widest > 4 { 8 } else { 4 })
}

/// The name of blend shape `s` of mesh `m`, or its number.
fn blend_shape_name(character: &Character, m: usize, s: usize) -> String {
    character
        .meshes
        .get(m)
        .and_then(|mesh| mesh.node.get_mesh())
        .and_then(|mesh| mesh.try_cast::<ArrayMesh>().ok())
        .filter(|mesh| (s as i32) < mesh.get_blend_shape_count())
        .map_or(format!("#{s}"), |mesh| {
            mesh.get_blend_shape_name(s as i32).to_string()
        })
}

/// The bone texture (RGBAH or RGBAF).
pub fn bone_texture(bones: &EncodedBones) -> Gd<ImageTexture> {
    let format = match bones.precision {
        Precision::Half => Format::RGBAH,
        Precision::Float => Format::RGBAF,
    };
    let b = bones.bone_layout;
    data_texture(b.width, b.height, format, &bones.bones)
}

/// The skin table (RGBAF).
pub fn skin_texture(bones: &EncodedBones) -> Gd<ImageTexture> {
    let s = bones.skin_layout;
    data_texture(s.width, s.height, Format::RGBAF, &bones.skin)
}
