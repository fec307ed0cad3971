//! A bone rig as texture bytes, and the shader library's skinning of them on the CPU.
//!
//! **Bone texture** (`FORMAT_RGBAH` for half, `FORMAT_RGBAF` for float): one row per frame,
//! `palette * 3` texels wide: palette entry `e` at frame `f` is texels `(3e + row, f)`, linear
//! index `(f * palette + e) * 3 + row` (see [`layouts`]). Texel `row` is row `row` of the affine
//! transform: the basis row in `xyz`, the translation's coordinate in `w`, stored as
//! `(t - offset) / scale` with the vertex bake's [`EncodingParams`] (so half precision keeps
//! translations to the bounds as a half VAT keeps positions).
//!
//! **Skin table** (`FORMAT_RGBAF`): column `c` is `skin_texels` texels at linear index
//! `c * skin_texels + k` (one "frame" of `columns * skin_texels` "vertices"): `k = 0` the rest
//! position (`xyz`) and rest normal (`w`, packed: [`pack_direction`]); then per four influences
//! one texel of four packed (entry, weight) pairs ([`pack_influence`]); last, the rest tangent
//! (`x`, packed). Every packed value is an integer below 2^24, exact in an f32, so the shader
//! unpacks it with float arithmetic alone: the vertex shader reads two texels per vertex (three
//! with tangents, one more for eight influences).

use glam::{Affine3A, Vec3, Vec4};

use super::rig::{BoneRig, MAX_INFLUENCES};
use crate::bake::encode::position_texel_bytes;
use crate::bake::{EncodingParams, Precision, VatLayout};
use crate::error::{Result, VatError};
use crate::half::{f16_to_f32, f32_to_f16};
use crate::layout::MAX_TEXTURE_SIZE;
use crate::lod_mesh::ColumnSource;
use crate::octahedral::{oct_decode, oct_encode};

/// Texels per palette entry per frame in the bone texture.
pub const BONE_ROWS: usize = 3;
/// Bytes of one skin table texel (`FORMAT_RGBAF`).
pub const SKIN_TEXEL_BYTES: usize = 16;
/// Skin table texels besides the influences: rest position and normal, rest tangent.
const REST_TEXELS: usize = 2;
/// Most palette entries a packed influence can name.
pub const MAX_PALETTE: usize = 1 << 10;
/// Steps of a packed weight (14 bits).
const WEIGHT_STEPS: f32 = 16383.0;
/// Steps of a packed octahedral coordinate (12 bits).
const DIRECTION_STEPS: f32 = 4095.0;

/// An (entry, weight) pair as one exact f32: `entry * 16384 + round(weight * 16383)` (weight in
/// [0, 1], entry below [`MAX_PALETTE`]).
pub fn pack_influence(entry: u32, weight: f32) -> f32 {
    let q = (weight.clamp(0.0, 1.0) * WEIGHT_STEPS).round();
    (entry as f32) * (WEIGHT_STEPS + 1.0) + q
}

/// The (entry, weight) of [`pack_influence`].
pub fn unpack_influence(v: f32) -> (u32, f32) {
    let entry = (v / (WEIGHT_STEPS + 1.0)).floor();
    (
        entry as u32,
        (v - entry * (WEIGHT_STEPS + 1.0)) / WEIGHT_STEPS,
    )
}

/// A unit vector as one exact f32: its octahedral coordinates in 12 bits each
/// (`qx * 4096 + qy`); at most about 0.05 degrees off.
pub fn pack_direction(d: Vec3) -> f32 {
    let e = oct_encode(d);
    let q = |x: f32| ((x * 0.5 + 0.5).clamp(0.0, 1.0) * DIRECTION_STEPS).round();
    q(e.x) * (DIRECTION_STEPS + 1.0) + q(e.y)
}

/// The unit vector of [`pack_direction`].
pub fn unpack_direction(v: f32) -> Vec3 {
    let qx = (v / (DIRECTION_STEPS + 1.0)).floor();
    let qy = v - qx * (DIRECTION_STEPS + 1.0);
    let e = |q: f32| q / DIRECTION_STEPS * 2.0 - 1.0;
    oct_decode(glam::Vec2::new(e(qx), e(qy)))
}

/// A bone bake's textures and what reads them.
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedBones {
    /// Bone texture precision.
    pub precision: Precision,
    /// Translation decoding: `t = offset + stored * scale` (the vertex bake's parameters).
    pub offset: Vec3,
    /// See `offset`.
    pub scale: Vec3,
    /// Palette entries per frame.
    pub palette: u32,
    /// Influences per column: 4 or 8.
    pub influences: u32,
    /// Columns of the skin table.
    pub columns: u32,
    /// The bone texture's layout (`vertex_count` is `palette * 3`).
    pub bone_layout: VatLayout,
    /// The skin table's layout (`vertex_count` is `columns * skin_texels`, one frame).
    pub skin_layout: VatLayout,
    /// Bone texture bytes, `bone_layout.texel_count()` texels.
    pub bones: Vec<u8>,
    /// Skin table bytes, `skin_layout.texel_count()` texels of [`SKIN_TEXEL_BYTES`].
    pub skin: Vec<u8>,
}

impl EncodedBones {
    /// Skin table texels per column: 3 for four influences, 4 for eight.
    pub fn skin_texels(&self) -> u32 {
        skin_texels(self.influences as usize) as u32
    }

    /// Frames of the bone texture.
    pub fn frames(&self) -> u32 {
        self.bone_layout.frame_count
    }
}

/// Skin table texels per column for `influences` (4 or 8) per vertex: 3 or 4.
pub fn skin_texels(influences: usize) -> usize {
    REST_TEXELS + influences.div_ceil(4)
}

/// Bytes of one bone texel: the position texture's formats (RGBAH, RGBAF).
fn bone_texel_bytes(precision: Precision) -> usize {
    position_texel_bytes(precision)
}

/// The three rows of palette entry `entry` at frame `frame`, translation decoded (`w`).
pub(super) fn bone_rows(b: &EncodedBones, frame: usize, entry: usize) -> [Vec4; BONE_ROWS] {
    let bpt = bone_texel_bytes(b.precision);
    let i = (frame * b.palette as usize + entry) * BONE_ROWS;
    std::array::from_fn(|r| {
        let s = read_texel(&b.bones, (i + r) * bpt, b.precision);
        s.truncate().extend(b.offset[r] + s.w * b.scale[r])
    })
}

/// The layouts of the bone texture and the skin table for `palette` entries over `frames` frames
/// and `columns` columns with `influences` (4 or 8) each: [`VatError::TooLarge`] as for any
/// bake.
///
/// The bone texture is one row per frame, `palette * 3` texels wide, so the shader finds a bone's
/// rows with no division; the skin table puts whole columns in each row (its width a multiple of
/// `skin_texels`), so it divides once per vertex. Both keep the linear texel order the encoder and
/// decoder use (`y * width + x`).
pub fn layouts(
    palette: usize,
    frames: usize,
    columns: usize,
    influences: usize,
) -> Result<(VatLayout, VatLayout)> {
    let max = MAX_TEXTURE_SIZE as usize;
    let texels = skin_texels(influences);
    let too_large = |vertices: usize, frames: usize| VatError::TooLarge {
        vertices,
        frames,
        texels: (vertices as u64).saturating_mul(frames as u64),
        max_texels: (max * max) as u64,
    };
    if palette * BONE_ROWS > max || frames > max || palette == 0 || frames == 0 {
        return Err(too_large(palette * BONE_ROWS, frames));
    }
    let per_row = (max / texels).min(columns.max(1));
    let rows = columns.max(1).div_ceil(per_row);
    if rows > max {
        return Err(too_large(columns * texels, 1));
    }
    let per_row = columns.max(1).div_ceil(rows);
    let bones = VatLayout {
        vertex_count: (palette * BONE_ROWS) as u32,
        frame_count: frames as u32,
        width: (palette * BONE_ROWS) as u32,
        height: frames as u32,
    };
    let skin = VatLayout {
        vertex_count: (columns * texels) as u32,
        frame_count: 1,
        width: (per_row * texels) as u32,
        height: rows as u32,
    };
    Ok((bones, skin))
}

/// Bytes of both textures for a rig of `palette` entries over `frames` frames, `columns` columns
/// with `influences` (4 or 8) each, padding included: what [`encode_bones`] stores.
pub fn texture_bytes(
    precision: Precision,
    palette: usize,
    frames: usize,
    columns: usize,
    influences: usize,
) -> Result<usize> {
    let (bones, skin) = layouts(palette, frames, columns, influences)?;
    Ok(bones.texel_count() * bone_texel_bytes(precision) + skin.texel_count() * SKIN_TEXEL_BYTES)
}

/// Encodes `rig` over `columns` (the stored columns, in order: a rig vertex, or a LOD vertex bound
/// to three rig vertices of one mesh, which rests at their weighted rest data and is moved by
/// their weighted influences, the heaviest `rig.influences` kept and scaled to the same sum).
///
/// A bound column keeps the fewest of those (heaviest first, scaled to the same sum) that place it
/// within `bound_tolerance` of where all of them do at every frame (0 keeps them all). Bound
/// columns make up the coarsest level, which far actors draw by the thousand, and each influence
/// costs the vertex shader three texel reads per frame: on the demo's 30,000 soldiers, LOD2 with
/// up to four blended influences made whole frames 1.3x slower than vertex storage, with two at
/// most 1.0x.
///
/// Errors: [`VatError::NoMeshes`] for no columns or an empty palette,
/// [`VatError::IndexOutOfRange`] for a column naming a vertex the rig does not have,
/// [`VatError::NonFinite`] for a transform that is not finite, [`VatError::TooLarge`].
pub fn encode_bones(
    rig: &BoneRig,
    columns: &[ColumnSource],
    params: &EncodingParams,
    bound_tolerance: f32,
) -> Result<EncodedBones> {
    if columns.is_empty() || rig.palette == 0 {
        return Err(VatError::NoMeshes);
    }
    if let Some(f) = rig.matrices.iter().position(|m| !m.is_finite()) {
        return Err(VatError::NonFinite {
            what: format!(
                "bone transform {} at frame {}",
                f % rig.palette,
                f / rig.palette
            ),
        });
    }
    let (bone_layout, skin_layout) =
        layouts(rig.palette, rig.frames, columns.len(), rig.influences)?;
    let texels = skin_texels(rig.influences);
    let precision = params.precision;
    let bpt = bone_texel_bytes(precision);
    let mut bones = vec![0u8; bone_layout.texel_count() * bpt];
    for (i, m) in rig.matrices.iter().enumerate() {
        let rows = rows_of(m, params.offset, params.scale);
        for (r, row) in rows.iter().enumerate() {
            let at = (i * BONE_ROWS + r) * bpt;
            write_texel(&mut bones[at..at + bpt], *row, precision);
        }
    }
    let mut skin = vec![0u8; skin_layout.texel_count() * SKIN_TEXEL_BYTES];
    for (c, column) in columns.iter().enumerate() {
        let v = column_vertex(rig, *column, bound_tolerance)?;
        let mut out = vec![v.rest.extend(pack_direction(v.normal))];
        for group in v.influences[..rig.influences].chunks(4) {
            out.push(Vec4::from_array(std::array::from_fn(|k| {
                pack_influence(group[k].0, group[k].1)
            })));
        }
        out.push(Vec4::new(pack_direction(v.tangent), 0.0, 0.0, 0.0));
        let at = c * texels * SKIN_TEXEL_BYTES;
        for (k, texel) in out.iter().enumerate() {
            let at = at + k * SKIN_TEXEL_BYTES;
            write_texel(
                &mut skin[at..at + SKIN_TEXEL_BYTES],
                *texel,
                Precision::Float,
            );
        }
    }
    Ok(EncodedBones {
        precision,
        offset: params.offset,
        scale: params.scale,
        palette: rig.palette as u32,
        influences: rig.influences as u32,
        columns: columns.len() as u32,
        bone_layout,
        skin_layout,
        bones,
        skin,
    })
}

/// The three stored rows of `m`: basis row and encoded translation coordinate.
fn rows_of(m: &Affine3A, offset: Vec3, scale: Vec3) -> [Vec4; BONE_ROWS] {
    let basis = m.matrix3;
    let t = (Vec3::from(m.translation) - offset) / scale;
    [
        basis.row(0).extend(t.x),
        basis.row(1).extend(t.y),
        basis.row(2).extend(t.z),
    ]
}

fn write_texel(out: &mut [u8], v: Vec4, precision: Precision) {
    for (k, x) in v.to_array().into_iter().enumerate() {
        match precision {
            Precision::Half => out[k * 2..k * 2 + 2].copy_from_slice(&f32_to_f16(x).to_le_bytes()),
            Precision::Float => out[k * 4..k * 4 + 4].copy_from_slice(&x.to_le_bytes()),
        }
    }
}

fn read_texel(bytes: &[u8], at: usize, precision: Precision) -> Vec4 {
    Vec4::from_array(std::array::from_fn(|k| match precision {
        Precision::Half => {
            let b = at + k * 2;
            f16_to_f32(u16::from_le_bytes([bytes[b], bytes[b + 1]]))
        }
        Precision::Float => {
            let b = at + k * 4;
            f32::from_le_bytes([bytes[b], bytes[b + 1], bytes[b + 2], bytes[b + 3]])
        }
    }))
}

/// The rig vertex a column stores (a bound column's weighted blend of three).
fn column_vertex(
    rig: &BoneRig,
    column: ColumnSource,
    bound_tolerance: f32,
) -> Result<super::rig::RigVertex> {
    let get = |v: u32| {
        rig.vertices
            .get(v as usize)
            .copied()
            .ok_or(VatError::IndexOutOfRange {
                what: "source vertex of a bone-texture column",
                index: i64::from(v),
                len: rig.vertices.len(),
            })
    };
    let (vertices, weights) = match column {
        ColumnSource::Vertex(v) => return get(v),
        ColumnSource::Bound { vertices, weights } => (vertices, weights),
    };
    let vs = [get(vertices[0])?, get(vertices[1])?, get(vertices[2])?];
    let blend = |f: &dyn Fn(&super::rig::RigVertex) -> Vec3| {
        vs.iter().zip(weights).map(|(v, w)| f(v) * w).sum::<Vec3>()
    };
    let heaviest = (0..3).fold(0, |b, k| if weights[k] > weights[b] { k } else { b });
    let mut sums: Vec<(u32, f32)> = Vec::new();
    for (v, w) in vs.iter().zip(weights) {
        for &(e, iw) in v.influences.iter().filter(|(_, iw)| *iw != 0.0) {
            match sums.iter_mut().find(|(s, _)| *s == e) {
                Some(s) => s.1 += iw * w,
                None => sums.push((e, iw * w)),
            }
        }
    }
    let total: f32 = sums.iter().map(|s| s.1).sum();
    sums.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    sums.truncate(rig.influences);
    let rest = blend(&|v| v.rest);
    // The heaviest `k` of them, scaled to the same total.
    let top = |k: usize| {
        let kept: f32 = sums[..k].iter().map(|s| s.1).sum();
        let mut influences = [(0u32, 0.0f32); MAX_INFLUENCES];
        for (slot, (e, w)) in influences.iter_mut().zip(&sums[..k]) {
            *slot = (*e, if kept > 0.0 { w * total / kept } else { 0.0 });
        }
        influences
    };
    let all = top(sums.len());
    let place = |influences: &[(u32, f32)], f: usize| {
        let at = |e: u32| rig.matrices[f * rig.palette + e as usize];
        influences
            .iter()
            .filter(|i| i.1 != 0.0)
            .map(|&(e, w)| at(e).transform_point3(rest) * w)
            .sum::<Vec3>()
    };
    let fewest = (1..sums.len()).find(|&k| {
        let fewer = top(k);
        (0..rig.frames).all(|f| place(&fewer, f).distance(place(&all, f)) <= bound_tolerance)
    });
    let influences = fewest.map_or(all, top);
    Ok(super::rig::RigVertex {
        rest,
        normal: blend(&|v| v.normal)
            .try_normalize()
            .unwrap_or(vs[heaviest].normal),
        tangent: blend(&|v| v.tangent)
            .try_normalize()
            .unwrap_or(vs[heaviest].tangent),
        influences,
    })
}

/// Column `column` at frame `frame` as the shader library skins it: (position, normal, tangent),
/// root space. Panics if either is out of range.
pub fn decode_column(b: &EncodedBones, frame: u32, column: u32) -> (Vec3, Vec3, Vec3) {
    let texels = b.skin_texels() as usize;
    let base = column as usize * texels;
    let skin = |k: usize| read_texel(&b.skin, (base + k) * SKIN_TEXEL_BYTES, Precision::Float);
    let rest = skin(0);
    let groups = (b.influences as usize).div_ceil(4);
    let mut rows = [Vec4::ZERO; BONE_ROWS];
    let mut total = 0.0;
    for group in 0..groups {
        let packed = skin(1 + group);
        for k in 0..4 {
            let (entry, w) = unpack_influence(packed[k]);
            if w == 0.0 {
                continue;
            }
            let bone = bone_rows(b, frame as usize, entry as usize);
            for (row, r) in rows.iter_mut().zip(bone) {
                *row += r * w;
            }
            total += w;
        }
    }
    // The packed weights sum to 1 within their step; the rig's sum to 1 (see `build_rig`).
    if total > 0.0 {
        rows = rows.map(|r| r / total);
    }
    let p = rest.truncate().extend(1.0);
    let position = Vec3::new(rows[0].dot(p), rows[1].dot(p), rows[2].dot(p));
    let direction = |d: Vec3| {
        let d = d.extend(0.0);
        Vec3::new(rows[0].dot(d), rows[1].dot(d), rows[2].dot(d)).normalize_or_zero()
    };
    let normal = direction(unpack_direction(rest.w));
    let tangent = direction(unpack_direction(skin(1 + groups).x));
    (position, normal, tangent)
}

/// Every column at `frame`: (positions, normals, tangents). Panics if `frame` is out of range.
pub fn decode_frame(b: &EncodedBones, frame: u32) -> (Vec<Vec3>, Vec<Vec3>, Vec<Vec3>) {
    let mut out = (Vec::new(), Vec::new(), Vec::new());
    for c in 0..b.columns {
        let (p, n, t) = decode_column(b, frame, c);
        out.0.push(p);
        out.1.push(n);
        out.2.push(t);
    }
    out
}
