//! Encoding baked frames into vertex animation texture bytes, and decoding them as the shader does.
//!
//! # Layout
//!
//! Linear: the texel of `(frame, vertex)` is `i = frame * vertex_count + vertex`, at
//! `x = i % width`, `y = i / width`. This is also the index into [`SkinnedFrames`], so encoding
//! is a straight map over the baked arrays. Texels past the last frame are zero padding.
//!
//! # Position formats
//!
//! The texture stores `s = (p - offset) / scale`; the shader decodes `p = offset + s * scale`.
//! * [`Precision::Half`] (Godot `FORMAT_RGBAH`, 4 x f16 LE, a = 1.0): `offset = bounds.min`,
//!   `scale = bounds extent` per axis (1 on a flat axis), so `s` lies in `[0, 1]` where f16
//!   spacing is at most 2^-11. Error bound per axis: `|decoded - p| <= 2^-12 * extent`, plus
//!   a few f32 ulps of the coordinates' magnitude from the two f32 operations.
//! * [`Precision::Float`] (`FORMAT_RGBAF`, 4 x f32 LE, a = 1.0): `offset = 0`, `scale = 1`, exact.
//!
//! # Normal format
//!
//! Optional second texture, same layout, `FORMAT_RGH`: the octahedral encoding of the unit normal
//! ([`oct_encode`](crate::octahedral::oct_encode), in `[-1, 1]^2`) as 2 x f16 LE. Worst angular error after f16 rounding is below
//! 0.05 degrees (tested).

use glam::{Vec2, Vec3};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bake::skin::SkinnedFrames;
use crate::bounds::serde_vec3;
use crate::bounds::Bounds;
use crate::clip::{total_frames, Clip};
use crate::error::{check_len, Result, VatError};
#[cfg(target_arch = "x86_64")]
use crate::half::F16c;
use crate::half::{f16_to_f32, f32_to_f16, HalfLanes, SoftHalf};
use crate::layout::{MAX_TEXTURE_SIZE, VAT_MAX_WIDTH};
use crate::octahedral::{oct_decode, oct_encode_f16_into};

/// Texels encoded per rayon task; large enough to amortise scheduling, small enough to balance.
const ENCODE_CHUNK: usize = 16 * 1024;
/// f16 bit pattern of 1.0 (the alpha of every half position texel).
const HALF_ONE: u16 = 0x3c00;
/// Bytes of one normal texel (`FORMAT_RGH`); a tangent texel is one too.
pub const NORMAL_TEXEL_BYTES: usize = 4;

/// Storage precision of positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Precision {
    /// Normalised to the bounds, 4 x f16 per texel (8 bytes).
    Half,
    /// Raw, 4 x f32 per texel (16 bytes).
    Float,
}

/// Where each (frame, vertex) lies in the texture (linear layout, see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VatLayout {
    /// Vertices per frame.
    pub vertex_count: u32,
    /// Frames over all clips.
    pub frame_count: u32,
    /// Texture width: `min(texels, VAT_MAX_WIDTH)`, at least 1.
    pub width: u32,
    /// Texture height: `ceil(texels / width)`, at least 1.
    pub height: u32,
}

impl VatLayout {
    /// Sizes the texture for `vertex_count * frame_count` texels; [`VatError::TooLarge`] if the
    /// height would exceed [`MAX_TEXTURE_SIZE`].
    pub fn new(vertex_count: u32, frame_count: u32) -> Result<Self> {
        let texels = u64::from(vertex_count) * u64::from(frame_count);
        let width = texels.clamp(1, u64::from(VAT_MAX_WIDTH));
        let height = texels.div_ceil(width).max(1);
        if height > u64::from(MAX_TEXTURE_SIZE) {
            return Err(VatError::TooLarge {
                vertices: vertex_count as usize,
                frames: frame_count as usize,
                texels,
                max_texels: u64::from(VAT_MAX_WIDTH) * u64::from(MAX_TEXTURE_SIZE),
            });
        }
        Ok(Self {
            vertex_count,
            frame_count,
            width: width as u32,
            height: height as u32,
        })
    }

    /// Linear texel index of `(frame, vertex)`.
    pub fn index(&self, frame: u32, vertex: u32) -> usize {
        frame as usize * self.vertex_count as usize + vertex as usize
    }

    /// Texel coordinates `(x, y)` of `(frame, vertex)`.
    pub fn texel(&self, frame: u32, vertex: u32) -> (u32, u32) {
        let i = self.index(frame, vertex) as u64;
        let w = u64::from(self.width);
        ((i % w) as u32, (i / w) as u32)
    }

    /// Texels in the texture including padding (`width * height`).
    pub fn texel_count(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Texels holding data (`vertex_count * frame_count`).
    pub fn used_texels(&self) -> usize {
        self.vertex_count as usize * self.frame_count as usize
    }
}

/// How stored values map back to positions: `p = offset + s * scale`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EncodingParams {
    /// Position storage precision.
    pub precision: Precision,
    /// Added after scaling.
    #[serde(with = "serde_vec3")]
    pub offset: Vec3,
    /// Per-axis multiplier of the stored value.
    #[serde(with = "serde_vec3")]
    pub scale: Vec3,
    /// Whether a normal texture was encoded.
    pub normals: bool,
}

impl EncodingParams {
    /// Parameters for `precision` over `bounds` (non-empty for [`Precision::Half`]).
    pub fn for_bounds(precision: Precision, bounds: &Bounds, normals: bool) -> Self {
        let (offset, scale) = match precision {
            Precision::Float => (Vec3::ZERO, Vec3::ONE),
            Precision::Half => {
                // A flat axis keeps scale 1 so the division is defined and s = 0 there.
                let extent = bounds.size();
                let scale = Vec3::select(extent.cmpgt(Vec3::ZERO), extent, Vec3::ONE);
                (bounds.min, scale)
            }
        };
        Self {
            precision,
            offset,
            scale,
            normals,
        }
    }
}

/// Bytes per (vertex, frame) over both textures: Half 8, Float 16, plus 4 with normals.
pub fn bytes_per_vertex_frame(precision: Precision, normals: bool) -> usize {
    position_texel_bytes(precision) + if normals { NORMAL_TEXEL_BYTES } else { 0 }
}

pub(crate) fn position_texel_bytes(precision: Precision) -> usize {
    match precision {
        Precision::Half => 8,
        Precision::Float => 16,
    }
}

/// A baked model's textures and the data needed to play them. The bytes are a `Vec<u8>` unless
/// they live elsewhere (e.g. in the engine's own arrays, encoded there by
/// [`crate::bake::skin_encode::SkinEncoder::encode_into`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedVat<B = Vec<u8>> {
    /// Texture size and texel mapping.
    pub layout: VatLayout,
    /// Decoding parameters.
    pub params: EncodingParams,
    /// Position texture bytes, `width * height` texels (`FORMAT_RGBAH` or `FORMAT_RGBAF`).
    pub positions: B,
    /// Normal texture bytes (`FORMAT_RGH`, same layout); empty without normals.
    pub normals: B,
    /// Bounds of every vertex in every frame (root space).
    pub bounds: Bounds,
    /// Bounds per clip, in clip order, over that clip's frames.
    pub clip_bounds: Vec<Bounds>,
}

impl<B: AsRef<[u8]>> EncodedVat<B> {
    /// The same VAT over borrowed bytes (which threads share whatever `B` is), without the clip
    /// bounds.
    pub fn borrowed(&self) -> EncodedVat<&[u8]> {
        EncodedVat {
            layout: self.layout,
            params: self.params,
            positions: self.positions.as_ref(),
            normals: self.normals.as_ref(),
            bounds: self.bounds,
            clip_bounds: Vec::new(),
        }
    }
}

/// Encodes `skinned` (whose frames are `clips` laid out consecutively) into texture bytes.
///
/// Errors: [`VatError::NoClips`], [`VatError::NoMeshes`] (zero vertices), [`VatError::BadLength`]
/// if the arrays or the clips' total frames disagree with `skinned`'s counts,
/// [`VatError::NonFinite`] for a NaN/infinite position or normal, [`VatError::TooLarge`].
/// Rayon-parallel and byte-identical on every run.
pub fn encode(
    skinned: &SkinnedFrames,
    clips: &[Clip],
    precision: Precision,
    normals: bool,
) -> Result<EncodedVat> {
    let layout = check_inputs(skinned, clips, normals)?;
    // Normals need no global fact, so they are encoded in the same pass that checks each frame
    // and measures its bounds; positions need the bounds of every frame first.
    let mut normal_bytes = if normals {
        vec![0u8; layout.texel_count() * NORMAL_TEXEL_BYTES]
    } else {
        Vec::new()
    };
    let frame_bounds = scan_frames(skinned, normals.then_some(&mut normal_bytes[..]))?;
    let bounds = frame_bounds.iter().fold(Bounds::empty(), |a, b| a.union(b));
    let clip_bounds = clip_bounds(&frame_bounds, clips);
    let params = EncodingParams::for_bounds(precision, &bounds, normals);
    let positions = encode_positions(&skinned.positions, &layout, &params);
    Ok(EncodedVat {
        layout,
        params,
        positions,
        normals: normal_bytes,
        bounds,
        clip_bounds,
    })
}

fn check_inputs(skinned: &SkinnedFrames, clips: &[Clip], normals: bool) -> Result<VatLayout> {
    check_frame_count(skinned.vertex_count, skinned.frame_count, clips)?;
    let texels = skinned.vertex_count * skinned.frame_count;
    check_len("baked positions", texels, skinned.positions.len())?;
    if normals {
        check_len("baked normals", texels, skinned.normals.len())?;
    }
    layout_for(skinned.vertex_count, skinned.frame_count)
}

/// [`VatError::NoClips`], [`VatError::NoMeshes`], or [`VatError::BadLength`] when the clips'
/// total frames is not `frame_count`.
pub(crate) fn check_frame_count(
    vertex_count: usize,
    frame_count: usize,
    clips: &[Clip],
) -> Result<()> {
    if clips.is_empty() {
        return Err(VatError::NoClips);
    }
    if vertex_count == 0 {
        return Err(VatError::NoMeshes);
    }
    check_len(
        "baked frames (sum of clip frame counts)",
        total_frames(clips) as usize,
        frame_count,
    )
}

/// The layout of `vertex_count * frame_count` texels, or [`VatError::TooLarge`].
pub(crate) fn layout_for(vertex_count: usize, frame_count: usize) -> Result<VatLayout> {
    let too_large = || VatError::TooLarge {
        vertices: vertex_count,
        frames: frame_count,
        texels: (vertex_count as u64).saturating_mul(frame_count as u64),
        max_texels: u64::from(VAT_MAX_WIDTH) * u64::from(MAX_TEXTURE_SIZE),
    };
    let vertices = u32::try_from(vertex_count).map_err(|_| too_large())?;
    let frames = u32::try_from(frame_count).map_err(|_| too_large())?;
    VatLayout::new(vertices, frames)
}

/// The union of each clip's frame bounds, in clip order.
pub(crate) fn clip_bounds(frame_bounds: &[Bounds], clips: &[Clip]) -> Vec<Bounds> {
    clips
        .iter()
        .map(|c| {
            let frames =
                &frame_bounds[c.first_frame as usize..(c.first_frame + c.frame_count) as usize];
            frames.iter().fold(Bounds::empty(), |a, b| a.union(b))
        })
        .collect()
}

/// Per frame, in parallel: the bounds of its positions, and (with `normal_bytes`) its normals
/// encoded into their texels. The lowest frame with a non-finite position or normal is an error.
fn scan_frames(skinned: &SkinnedFrames, normal_bytes: Option<&mut [u8]>) -> Result<Vec<Bounds>> {
    let vc = skinned.vertex_count;
    let frames = skinned.positions.par_chunks(vc).enumerate();
    let per_frame: Vec<std::result::Result<Bounds, String>> = match normal_bytes {
        Some(bytes) => frames
            .zip(skinned.normals.par_chunks(vc))
            .zip(bytes.par_chunks_mut(vc * NORMAL_TEXEL_BYTES))
            .map(|(((f, ps), ns), out)| {
                let bounds = scan_frame(f, ps, Some(ns))?;
                oct_encode_f16_into(ns, out);
                Ok(bounds)
            })
            .collect(),
        None => frames.map(|(f, ps)| scan_frame(f, ps, None)).collect(),
    };
    per_frame
        .into_iter()
        .map(|r| r.map_err(|what| VatError::NonFinite { what }))
        .collect()
}

/// The bounds of one frame's positions, or what in it is not finite (positions first).
fn scan_frame(f: usize, ps: &[Vec3], ns: Option<&[Vec3]>) -> std::result::Result<Bounds, String> {
    if !all_finite(ps) {
        let v = ps.iter().position(|p| !p.is_finite()).unwrap_or(0);
        return Err(format!("baked position of vertex {v} at frame {f}"));
    }
    if let Some(ns) = ns.filter(|ns| !all_finite(ns)) {
        let v = ns.iter().position(|n| !n.is_finite()).unwrap_or(0);
        return Err(format!("baked normal of vertex {v} at frame {f}"));
    }
    Ok(Bounds::from_points(ps))
}

/// Whether every coordinate is finite, by an exponent test on the bits that vectorises.
fn all_finite(points: &[Vec3]) -> bool {
    const EXPONENT: u32 = 0x7f80_0000;
    let mut any_special = 0u32;
    for p in points {
        for c in p.to_array() {
            any_special |= u32::from(c.to_bits() & EXPONENT == EXPONENT);
        }
    }
    any_special == 0
}

fn encode_positions(positions: &[Vec3], layout: &VatLayout, params: &EncodingParams) -> Vec<u8> {
    let bpt = position_texel_bytes(params.precision);
    let mut bytes = vec![0u8; layout.texel_count() * bpt];
    let used = &mut bytes[..positions.len() * bpt];
    used.par_chunks_mut(ENCODE_CHUNK * bpt)
        .zip(positions.par_chunks(ENCODE_CHUNK))
        .for_each(|(out, ps)| encode_position_texels(ps, params, out));
    bytes
}

/// The texels of `ps` into `out` (exactly their bytes), as `params` says.
pub(crate) fn encode_position_texels(ps: &[Vec3], params: &EncodingParams, out: &mut [u8]) {
    match params.precision {
        Precision::Half => encode_half(ps, params.offset, params.scale, out),
        Precision::Float => {
            for (texel, &p) in out.chunks_exact_mut(16).zip(ps) {
                for (dst, v) in texel.chunks_exact_mut(4).zip([p.x, p.y, p.z, 1.0]) {
                    dst.copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
}

/// [`encode_half_positions`] with 8-lane vectors where the CPU has them, and the F16C
/// conversions where it has those too (same bits either way).
fn encode_half(ps: &[Vec3], offset: Vec3, scale: Vec3, out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        if std::arch::is_x86_feature_detected!("f16c") {
            // SAFETY: the CPU has AVX2 and F16C (checked just above).
            unsafe { encode_half_positions_f16c(ps, offset, scale, out) };
        } else {
            // SAFETY: the CPU has AVX2 (checked just above).
            unsafe { encode_half_positions_avx2(ps, offset, scale, out) };
        }
        return;
    }
    encode_half_positions::<SoftHalf>(ps, offset, scale, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn encode_half_positions_avx2(ps: &[Vec3], offset: Vec3, scale: Vec3, out: &mut [u8]) {
    encode_half_positions::<SoftHalf>(ps, offset, scale, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
fn encode_half_positions_f16c(ps: &[Vec3], offset: Vec3, scale: Vec3, out: &mut [u8]) {
    encode_half_positions::<F16c>(ps, offset, scale, out);
}

/// `s = clamp((p - offset) / scale, 0, 1)` as three f16 and an f16 1.0 per 8-byte texel.
///
/// Eight texels (24 coordinates) at a time, with the offset and scale repeated to match, so the
/// arithmetic and the f16 conversion run as vector operations; the bits are those of the
/// per-coordinate formula.
#[inline(always)]
fn encode_half_positions<H: HalfLanes>(ps: &[Vec3], offset: Vec3, scale: Vec3, out: &mut [u8]) {
    const TEXELS: usize = 8;
    const COORDS: usize = 3 * TEXELS;
    let (mut offsets, mut scales) = ([0.0; COORDS], [1.0; COORDS]);
    for k in 0..COORDS {
        (offsets[k], scales[k]) = (offset[k % 3], scale[k % 3]);
    }
    let mut blocks = ps.chunks_exact(TEXELS);
    let mut outs = out.chunks_exact_mut(TEXELS * 8);
    for (block, out) in (&mut blocks).zip(&mut outs) {
        let mut coords = [0.0; COORDS];
        for (dst, p) in coords.chunks_exact_mut(3).zip(block) {
            dst.copy_from_slice(&p.to_array());
        }
        let stored: [f32; COORDS] =
            std::array::from_fn(|k| ((coords[k] - offsets[k]) / scales[k]).clamp(0.0, 1.0));
        let halves = H::to_f16(&stored);
        for (t, dst) in out.chunks_exact_mut(8).enumerate() {
            let [x, y, z] = [halves[3 * t], halves[3 * t + 1], halves[3 * t + 2]];
            let bits = u64::from(x) | u64::from(y) << 16 | u64::from(z) << 32;
            dst.copy_from_slice(&(bits | u64::from(HALF_ONE) << 48).to_le_bytes());
        }
    }
    for (texel, &p) in outs
        .into_remainder()
        .chunks_exact_mut(8)
        .zip(blocks.remainder())
    {
        let [x, y, z] = [0, 1, 2].map(|k| half_coordinate(p[k], offset[k], scale[k]));
        let bits = u64::from(x) | u64::from(y) << 16 | u64::from(z) << 32;
        texel.copy_from_slice(&(bits | u64::from(HALF_ONE) << 48).to_le_bytes());
    }
}

/// One stored coordinate: `clamp((c - offset) / scale, 0, 1)` as f16 bits.
#[inline(always)]
fn half_coordinate(c: f32, offset: f32, scale: f32) -> u16 {
    f32_to_f16(((c - offset) / scale).clamp(0.0, 1.0))
}

fn read_half(bytes: &[u8], at: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([bytes[at], bytes[at + 1]]))
}

fn read_f32(bytes: &[u8], at: usize) -> f32 {
    f32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// The position of `vertex` at `frame`, decoded from the bytes exactly as the shader does
/// (f16 -> f32, then `offset + s * scale`). Panics if either index is out of range.
pub fn decode_position<B: AsRef<[u8]>>(vat: &EncodedVat<B>, frame: u32, vertex: u32) -> Vec3 {
    assert!(frame < vat.layout.frame_count && vertex < vat.layout.vertex_count);
    let i = vat.layout.index(frame, vertex);
    let p = &vat.params;
    let positions = vat.positions.as_ref();
    let s = match p.precision {
        Precision::Half => {
            let at = i * 8;
            Vec3::new(
                read_half(positions, at),
                read_half(positions, at + 2),
                read_half(positions, at + 4),
            )
        }
        Precision::Float => {
            let at = i * 16;
            Vec3::new(
                read_f32(positions, at),
                read_f32(positions, at + 4),
                read_f32(positions, at + 8),
            )
        }
    };
    p.offset + s * p.scale
}

/// Every vertex position of `frame`, decoded as by [`decode_position`].
pub fn decode_frame<B: AsRef<[u8]>>(vat: &EncodedVat<B>, frame: u32) -> Vec<Vec3> {
    (0..vat.layout.vertex_count)
        .map(|v| decode_position(vat, frame, v))
        .collect()
}

/// Every vertex normal of `frame`, decoded as the shader does; empty without normals.
/// Panics if `frame` is out of range.
pub fn decode_frame_normals<B: AsRef<[u8]>>(vat: &EncodedVat<B>, frame: u32) -> Vec<Vec3> {
    let normals = vat.normals.as_ref();
    if normals.is_empty() {
        return Vec::new();
    }
    assert!(frame < vat.layout.frame_count);
    (0..vat.layout.vertex_count)
        .map(|v| decode_normal(vat, frame, v))
        .collect()
}

/// The normal of `vertex` at `frame`, decoded as the shader does. Panics if either is out of
/// range or the VAT has no normals.
pub fn decode_normal<B: AsRef<[u8]>>(vat: &EncodedVat<B>, frame: u32, vertex: u32) -> Vec3 {
    assert!(frame < vat.layout.frame_count && vertex < vat.layout.vertex_count);
    let normals = vat.normals.as_ref();
    let at = vat.layout.index(frame, vertex) * NORMAL_TEXEL_BYTES;
    oct_decode(Vec2::new(
        read_half(normals, at),
        read_half(normals, at + 2),
    ))
}

#[cfg(test)]
mod tests;
