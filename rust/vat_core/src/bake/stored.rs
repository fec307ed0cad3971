//! Whether a baked model's stored fields fit together.
//!
//! A baked model is stored as separate fields (textures, counts, tables). A script, a hand-edited
//! `.tres` or a file from an older version can set them to values that disagree: a clip table
//! pointing past the last frame, a texture of the wrong size, a NaN scale. [`check`] tells, before
//! anything reads them, whether every later read is in range; the binding draws an inconsistent
//! model as nothing and says once what is wrong, instead of panicking or drawing garbage.

use crate::bake::encode::VatLayout;
pub use crate::bake::encode::NORMAL_TEXEL_BYTES;
use crate::layout::MAX_CLIPS;

/// Floats per clip in a stored clip table: first frame, frame count, fps, duration, looped.
pub const STORED_CLIP_STRIDE: usize = 5;
/// Floats per clip in a stored clip bounds table: min xyz, max xyz.
pub const STORED_BOUNDS_STRIDE: usize = 6;
/// Custom vertex channels a mesh has (CUSTOM0-CUSTOM3), one of which holds the VAT column.
pub const CUSTOM_CHANNELS: i64 = 4;

/// A texture as stored: its size and bytes per texel (from its format).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredTexture {
    /// Width in texels.
    pub width: i64,
    /// Height in texels.
    pub height: i64,
    /// Bytes per texel of its format (0 for a format the field does not allow).
    pub bytes_per_texel: usize,
}

/// Every stored field of a baked model that a read depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredBake<'a> {
    /// Vertices per frame.
    pub vertex_count: i64,
    /// Frames over all clips.
    pub frame_count: i64,
    /// Vertices of the combined mesh (LOD0; None: no mesh). Not `vertex_count`: the VAT has one
    /// column per vertex that some LOD draws, so welded seams share a column and LOD2's bound
    /// columns have no LOD0 vertex.
    pub mesh_vertices: Option<usize>,
    /// The position texture (None: missing).
    pub positions: Option<StoredTexture>,
    /// The normal texture (None: normals not baked).
    pub normals: Option<StoredTexture>,
    /// The tangent texture (None: tangents not baked); laid out and encoded as the normals.
    pub tangents: Option<StoredTexture>,
    /// 0 half, 1 float.
    pub precision: i64,
    /// Number of clip names.
    pub clip_names: usize,
    /// The clip table, [`STORED_CLIP_STRIDE`] floats per clip.
    pub clip_table: &'a [f32],
    /// The clip bounds table, [`STORED_BOUNDS_STRIDE`] floats per clip.
    pub clip_bounds: &'a [f32],
    /// Entries of the root velocity table (0 allowed: resources from before root motion).
    pub root_velocities: usize,
    /// Decoding offset and scale.
    pub offset: [f32; 3],
    /// See `offset`.
    pub scale: [f32; 3],
    /// Custom channel holding the VAT column.
    pub column_channel: i64,
    /// A bone bake's fields (`storage` BONES); None for a vertex bake.
    pub bones: Option<StoredBones>,
}

/// The stored fields of a bone bake ([`crate::bones`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredBones {
    /// Palette entries per frame.
    pub bone_count: i64,
    /// Influences per column: 4 or 8.
    pub influences: i64,
    /// The bone texture (None: missing).
    pub bones: Option<StoredTexture>,
    /// The skin table (None: missing).
    pub skin: Option<StoredTexture>,
}

/// Bytes per texel of the position texture for `precision` (RGBAH or RGBAF), `None` for an
/// unknown precision.
pub fn position_texel_bytes(precision: i64) -> Option<usize> {
    match precision {
        0 => Some(8),
        1 => Some(16),
        _ => None,
    }
}

/// `Ok` when every field agrees with the others, else one sentence saying the first thing wrong.
pub fn check(b: &StoredBake) -> Result<(), String> {
    let (v, f) = (b.vertex_count, b.frame_count);
    if v <= 0 || f <= 0 || v > i64::from(u32::MAX) || f > i64::from(u32::MAX) {
        return Err(format!(
            "vertex_count {v} and frame_count {f} must both be positive"
        ));
    }
    let layout = VatLayout::new(v as u32, f as u32).map_err(|e| e.to_string())?;
    match b.mesh_vertices {
        None => return Err("it has no mesh".into()),
        Some(0) => return Err("its mesh has no vertices".into()),
        _ => {}
    }
    let texel = position_texel_bytes(b.precision).ok_or_else(|| {
        format!(
            "baked_precision {} is neither 0 (half) nor 1 (float)",
            b.precision
        )
    })?;
    let want = |what: &str, t: Option<StoredTexture>, bytes: usize| {
        texture_fits(
            what,
            t,
            &layout,
            bytes,
            &format!("{v} vertices x {f} frames"),
        )
    };
    if let Some(bones) = b.bones {
        check_bones(&bones, v, f, texel)?;
    } else {
        want("position", b.positions, texel)?;
    }
    if b.normals.is_some() {
        want("normal", b.normals, NORMAL_TEXEL_BYTES)?;
    }
    if b.tangents.is_some() {
        if b.normals.is_none() {
            return Err("it has a tangent texture but no normal texture".into());
        }
        want("tangent", b.tangents, NORMAL_TEXEL_BYTES)?;
    }
    let clips = b.clip_names;
    if clips == 0 || clips > MAX_CLIPS as usize {
        return Err(format!("it has {clips} clips (1 to {MAX_CLIPS} allowed)"));
    }
    if b.clip_table.len() != clips * STORED_CLIP_STRIDE {
        return Err(format!(
            "its clip table has {} numbers but {clips} clips need {}",
            b.clip_table.len(),
            clips * STORED_CLIP_STRIDE
        ));
    }
    if b.clip_bounds.len() != clips * STORED_BOUNDS_STRIDE {
        return Err(format!(
            "its clip bounds table has {} numbers but {clips} clips need {}",
            b.clip_bounds.len(),
            clips * STORED_BOUNDS_STRIDE
        ));
    }
    if b.root_velocities != 0 && b.root_velocities != clips {
        return Err(format!(
            "it has {} root velocities for {clips} clips",
            b.root_velocities
        ));
    }
    for (i, c) in b.clip_table.chunks_exact(STORED_CLIP_STRIDE).enumerate() {
        let [first, count, fps, duration, looped] = [c[0], c[1], c[2], c[3], c[4]];
        let whole = |x: f32| x.is_finite() && x >= 0.0 && x.fract() == 0.0;
        if !(whole(first)
            && whole(count)
            && count >= 1.0
            && f64::from(first) + f64::from(count) <= f as f64)
        {
            return Err(format!(
                "clip {i} covers frames {first} to {first} + {count}, outside the {f} baked frames"
            ));
        }
        if !(fps.is_finite() && fps >= 0.0 && duration.is_finite() && duration >= 0.0) {
            return Err(format!("clip {i} has fps {fps} and duration {duration}"));
        }
        if looped != 0.0 && looped != 1.0 {
            return Err(format!("clip {i} has looped flag {looped} (0 or 1)"));
        }
    }
    if let Some(x) = b.clip_bounds.iter().find(|x| !x.is_finite()) {
        return Err(format!("its clip bounds table holds {x}"));
    }
    if !b.offset.iter().chain(&b.scale).all(|x| x.is_finite()) {
        return Err(format!(
            "its encoding offset {:?} or scale {:?} is not finite",
            b.offset, b.scale
        ));
    }
    if !(0..CUSTOM_CHANNELS).contains(&b.column_channel) {
        return Err(format!(
            "column_channel {} is not a custom channel (0 to 3)",
            b.column_channel
        ));
    }
    Ok(())
}

/// `Ok` when texture `t` (called `what`) is there with `layout`'s size and `bytes` per texel, else
/// one sentence saying how it differs from what `counts` need.
fn texture_fits(
    what: &str,
    t: Option<StoredTexture>,
    layout: &VatLayout,
    bytes: usize,
    counts: &str,
) -> Result<(), String> {
    let t = t.ok_or_else(|| format!("its {what} texture is missing"))?;
    if (t.width, t.height) != (i64::from(layout.width), i64::from(layout.height))
        || t.bytes_per_texel != bytes
    {
        return Err(format!(
            "its {what} texture is {}x{} with {} bytes per texel, but {counts} need {}x{} with {bytes}",
            t.width, t.height, t.bytes_per_texel, layout.width, layout.height
        ));
    }
    Ok(())
}

/// A bone bake's textures against its counts: `columns` skin table columns, `frames` frames,
/// `texel` bytes per bone texel.
fn check_bones(b: &StoredBones, columns: i64, frames: i64, texel: usize) -> Result<(), String> {
    let (count, influences) = (b.bone_count, b.influences);
    if !(1..=i64::from(u32::MAX) / 3).contains(&count) || !matches!(influences, 4 | 8) {
        return Err(format!(
            "bone_count {count} must be positive and bone_influences {influences} 4 or 8"
        ));
    }
    let (bone_layout, skin_layout) = crate::bones::layouts(
        count as usize,
        frames as usize,
        columns as usize,
        influences as usize,
    )
    .map_err(|e| e.to_string())?;
    let counts = format!("{count} bones x {frames} frames");
    texture_fits("bone", b.bones, &bone_layout, texel, &counts)?;
    let counts = format!("{columns} columns x {influences} influences");
    texture_fits(
        "skin",
        b.skin,
        &skin_layout,
        crate::bones::SKIN_TEXEL_BYTES,
        &counts,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: [f32; 10] = [0.0, 30.0, 30.0, 1.0, 1.0, 30.0, 1.0, 0.0, 0.0, 0.0];
    const BOUNDS: [f32; 12] = [0.0; 12];

    fn good() -> StoredBake<'static> {
        let layout = VatLayout::new(100, 31).unwrap();
        let tex = |bytes| StoredTexture {
            width: i64::from(layout.width),
            height: i64::from(layout.height),
            bytes_per_texel: bytes,
        };
        StoredBake {
            vertex_count: 100,
            frame_count: 31,
            mesh_vertices: Some(100),
            positions: Some(tex(8)),
            normals: Some(tex(4)),
            tangents: Some(tex(4)),
            precision: 0,
            clip_names: 2,
            clip_table: &TABLE,
            clip_bounds: &BOUNDS,
            root_velocities: 2,
            offset: [0.0; 3],
            scale: [1.0; 3],
            column_channel: 0,
            bones: None,
        }
    }

    #[test]
    fn a_consistent_bake_passes() {
        assert_eq!(check(&good()), Ok(()));
        let old = StoredBake {
            root_velocities: 0,
            normals: None,
            tangents: None,
            ..good()
        };
        assert_eq!(
            check(&old),
            Ok(()),
            "older resources and no normals are fine"
        );
    }

    #[test]
    fn tangents_are_checked_like_normals() {
        let mut small = good().tangents.unwrap();
        small.height -= 1;
        let wrong = StoredBake {
            tangents: Some(small),
            ..good()
        };
        assert!(check(&wrong).unwrap_err().contains("tangent texture"));
        let alone = StoredBake {
            normals: None,
            ..good()
        };
        assert_eq!(
            check(&alone),
            Err("it has a tangent texture but no normal texture".into())
        );
    }

    #[test]
    fn every_tampered_field_is_named() {
        let table_past_end = [0.0, 30.0, 30.0, 1.0, 1.0, 30.0, 5.0, 0.0, 0.0, 0.0];
        let nan = [f32::NAN; 12];
        let cases: Vec<(StoredBake, &str)> = vec![
            (
                StoredBake {
                    frame_count: 0,
                    ..good()
                },
                "must both be positive",
            ),
            (
                StoredBake {
                    vertex_count: -5,
                    ..good()
                },
                "must both be positive",
            ),
            (
                StoredBake {
                    vertex_count: 99_999_999,
                    ..good()
                },
                "more than the",
            ),
            (
                StoredBake {
                    mesh_vertices: Some(0),
                    ..good()
                },
                "mesh has no vertices",
            ),
            (
                StoredBake {
                    frame_count: 5,
                    ..good()
                },
                "texture is",
            ),
            (
                StoredBake {
                    mesh_vertices: None,
                    ..good()
                },
                "no mesh",
            ),
            (
                StoredBake {
                    precision: 7,
                    ..good()
                },
                "baked_precision 7",
            ),
            (
                StoredBake {
                    positions: None,
                    ..good()
                },
                "position texture is missing",
            ),
            (
                StoredBake {
                    normals: Some(StoredTexture {
                        width: 4,
                        height: 4,
                        bytes_per_texel: 4,
                    }),
                    ..good()
                },
                "normal texture is 4x4",
            ),
            (
                StoredBake {
                    clip_bounds: &[],
                    ..good()
                },
                "clip bounds table has 0",
            ),
            (
                StoredBake {
                    clip_table: &TABLE[..5],
                    ..good()
                },
                "clip table has 5",
            ),
            (
                StoredBake {
                    clip_table: &table_past_end,
                    ..good()
                },
                "outside the 31",
            ),
            (
                StoredBake {
                    clip_bounds: &nan,
                    ..good()
                },
                "holds NaN",
            ),
            (
                StoredBake {
                    scale: [f32::NAN, 1.0, 1.0],
                    ..good()
                },
                "not finite",
            ),
            (
                StoredBake {
                    column_channel: 4,
                    ..good()
                },
                "column_channel 4",
            ),
            (
                StoredBake {
                    root_velocities: 1,
                    ..good()
                },
                "1 root velocities",
            ),
            (
                StoredBake {
                    clip_names: 0,
                    clip_table: &[],
                    clip_bounds: &[],
                    ..good()
                },
                "0 clips",
            ),
        ];
        for (bake, words) in cases {
            let e = check(&bake).expect_err(words);
            assert!(e.contains(words), "{e:?} should say {words:?}");
        }
    }

    #[test]
    fn a_bone_bake_needs_its_two_textures_sized_for_its_counts() {
        let (bone_layout, skin_layout) = crate::bones::layouts(40, 31, 100, 4).unwrap();
        let sized = |l: VatLayout, bytes| StoredTexture {
            width: i64::from(l.width),
            height: i64::from(l.height),
            bytes_per_texel: bytes,
        };
        let bones = StoredBones {
            bone_count: 40,
            influences: 4,
            bones: Some(sized(bone_layout, 8)),
            skin: Some(sized(skin_layout, 16)),
        };
        let ok = StoredBake {
            positions: None,
            normals: None,
            tangents: None,
            bones: Some(bones),
            ..good()
        };
        assert_eq!(check(&ok), Ok(()));
        let cases = [
            (
                StoredBones {
                    bones: None,
                    ..bones
                },
                "bone texture is missing",
            ),
            (
                StoredBones {
                    influences: 8,
                    ..bones
                },
                "skin texture is",
            ),
            (
                StoredBones {
                    bone_count: 41,
                    ..bones
                },
                "bone texture is",
            ),
            (
                StoredBones {
                    bone_count: 0,
                    ..bones
                },
                "bone_count 0",
            ),
            (
                StoredBones {
                    influences: 5,
                    ..bones
                },
                "bone_influences 5",
            ),
        ];
        for (b, want) in cases {
            let err = check(&StoredBake {
                bones: Some(b),
                ..ok.clone()
            })
            .unwrap_err();
            assert!(err.contains(want), "{err}");
        }
    }
}
