//! Skinning and encoding fused: every frame's bytes straight from the poses, with no skinned
//! intermediate.
//!
//! `encode(&skin_frames(..)?, ..)` holds every skinned position and normal in f32 (24 bytes per
//! vertex-frame, 19 MB for a 4,393-vertex character at 181 frames) between the two steps, and
//! filling that much fresh memory costs more than the arithmetic. Half precision needs the
//! bounds over all frames before the first position is stored, so this runs two passes over
//! per-thread buffers of one frame (which stay in cache):
//! 1. [`SkinEncoder::new`]: skin positions only and keep each frame's bounds; every error is
//!    found here.
//! 2. [`SkinEncoder::encode_into`]: skin positions and normals again and encode them into the
//!    caller's texture bytes.
//!
//! Both passes run the skinning of [`crate::bake::skin`] with the same operations, so the positions of
//! pass 2 are those whose bounds pass 1 measured, and the bytes equal
//! `encode(&skin_frames(..)?, ..)`'s (tested), errors included.

use glam::Vec3;
use rayon::prelude::*;

use crate::bake::encode::{
    check_frame_count, clip_bounds, encode_position_texels, layout_for, position_texel_bytes,
    EncodedVat, EncodingParams, Precision, VatLayout, NORMAL_TEXEL_BYTES,
};
use crate::bake::skin::{check_frame, MeshFrame, MeshSource};
use crate::bake::skin_math::{skin_frame, Influences, Scratch};
use crate::bake::validate::validate;
use crate::bounds::Bounds;
use crate::clip::Clip;
use crate::error::{Result, VatError};
use crate::octahedral::oct_encode_f16_into;

/// A bake whose frames are checked and measured, ready to encode into texture bytes.
pub struct SkinEncoder<'a> {
    meshes: &'a [MeshSource],
    frames: &'a [Vec<MeshFrame>],
    influences: Vec<Option<Influences>>,
    /// Texture size and texel mapping.
    pub layout: VatLayout,
    /// Decoding parameters.
    pub params: EncodingParams,
    /// Bounds of every vertex in every frame (root space).
    pub bounds: Bounds,
    /// Bounds per clip, in clip order, over that clip's frames.
    pub clip_bounds: Vec<Bounds>,
}

/// One frame's skinned vertices, reused by a worker thread from frame to frame.
#[derive(Default)]
struct FrameBuffers {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    scratch: Scratch,
}

impl FrameBuffers {
    fn sized(vertex_count: usize) -> Self {
        Self {
            positions: vec![Vec3::ZERO; vertex_count],
            normals: vec![Vec3::ZERO; vertex_count],
            scratch: Scratch::default(),
        }
    }
}

impl<'a> SkinEncoder<'a> {
    /// Checks every input and skins every frame's positions for the bounds (pass 1): the errors
    /// of [`crate::bake::skin::skin_frames`], then those of [`crate::bake::encode::encode`], in that order.
    pub fn new(
        meshes: &'a [MeshSource],
        frames: &'a [Vec<MeshFrame>],
        labels: &dyn Fn(usize) -> String,
        clips: &[Clip],
        precision: Precision,
        normals: bool,
    ) -> Result<Self> {
        validate(meshes)?;
        for (f, frame) in frames.iter().enumerate() {
            check_frame(meshes, frame, f, labels)?;
        }
        let vertex_count: usize = meshes.iter().map(|m| m.positions.len()).sum();
        let influences = Influences::of_meshes(meshes);
        let per_frame: Vec<std::result::Result<Bounds, (usize, usize)>> = frames
            .par_iter()
            .map_init(
                || FrameBuffers::sized(vertex_count),
                |buf, frame| {
                    let (ps, ns) = (&mut buf.positions, &mut buf.normals);
                    match skin_frame(meshes, &influences, frame, false, ps, ns, &mut buf.scratch) {
                        Some(bad) => Err(bad),
                        None => Ok(Bounds::from_points(ps)),
                    }
                },
            )
            .collect();
        let mut frame_bounds = Vec::with_capacity(frames.len());
        for (f, result) in per_frame.into_iter().enumerate() {
            match result {
                Ok(b) => frame_bounds.push(b),
                Err((m, v)) => {
                    let what = format!(
                        "skinned vertex {v} of mesh '{}' at {}",
                        meshes[m].name,
                        labels(f)
                    );
                    return Err(VatError::NonFinite { what });
                }
            }
        }
        check_frame_count(vertex_count, frames.len(), clips)?;
        let layout = layout_for(vertex_count, frames.len())?;
        let bounds = frame_bounds.iter().fold(Bounds::empty(), |a, b| a.union(b));
        Ok(Self {
            meshes,
            frames,
            influences,
            layout,
            params: EncodingParams::for_bounds(precision, &bounds, normals),
            bounds,
            clip_bounds: clip_bounds(&frame_bounds, clips),
        })
    }

    /// Bytes of the position texture, padding included.
    pub fn position_bytes(&self) -> usize {
        self.layout.texel_count() * position_texel_bytes(self.params.precision)
    }

    /// Bytes of the normal texture, padding included; 0 without normals.
    pub fn normal_bytes(&self) -> usize {
        if self.params.normals {
            self.layout.texel_count() * NORMAL_TEXEL_BYTES
        } else {
            0
        }
    }

    /// Skins every frame again and encodes it into `positions` and `normals` (pass 2), padding
    /// zeroed; the buffers' previous contents do not matter. Panics unless their lengths are
    /// [`Self::position_bytes`] and [`Self::normal_bytes`]. Rayon-parallel over frames.
    pub fn encode_into(&self, positions: &mut [u8], normals: &mut [u8]) {
        assert_eq!(positions.len(), self.position_bytes(), "position bytes");
        assert_eq!(normals.len(), self.normal_bytes(), "normal bytes");
        let vc = self.layout.vertex_count as usize;
        let used = self.layout.used_texels();
        let (pos_used, pos_pad) =
            positions.split_at_mut(used * position_texel_bytes(self.params.precision));
        pos_pad.fill(0);
        let pos_frames = pos_used.par_chunks_mut(vc * position_texel_bytes(self.params.precision));
        let frames = pos_frames.zip(self.frames.par_iter());
        let init = || FrameBuffers::sized(vc);
        if self.params.normals {
            let (nrm_used, nrm_pad) = normals.split_at_mut(used * NORMAL_TEXEL_BYTES);
            nrm_pad.fill(0);
            frames
                .zip(nrm_used.par_chunks_mut(vc * NORMAL_TEXEL_BYTES))
                .for_each_init(init, |buf, ((pos_out, frame), nrm_out)| {
                    self.skin(buf, frame, true);
                    encode_position_texels(&buf.positions, &self.params, pos_out);
                    oct_encode_f16_into(&buf.normals, nrm_out);
                });
        } else {
            frames.for_each_init(init, |buf, (pos_out, frame)| {
                self.skin(buf, frame, false);
                encode_position_texels(&buf.positions, &self.params, pos_out);
            });
        }
    }

    /// Pass 2 for the normal texture alone: skins every frame again and encodes only its normals
    /// into `normals` (padding zeroed), the bytes [`Self::encode_into`] would write there. For a
    /// texture skinned as normals are (tangents, see [`crate::bake::tangent_sources`]) whose
    /// positions another encoder already wrote. Panics without normals or unless the length is
    /// [`Self::normal_bytes`]. Rayon-parallel over frames.
    pub fn encode_normals_into(&self, normals: &mut [u8]) {
        assert!(self.params.normals, "an encoder without normals");
        assert_eq!(normals.len(), self.normal_bytes(), "normal bytes");
        let vc = self.layout.vertex_count as usize;
        let (nrm_used, nrm_pad) =
            normals.split_at_mut(self.layout.used_texels() * NORMAL_TEXEL_BYTES);
        nrm_pad.fill(0);
        nrm_used
            .par_chunks_mut(vc * NORMAL_TEXEL_BYTES)
            .zip(self.frames.par_iter())
            .for_each_init(
                || FrameBuffers::sized(vc),
                |buf, (nrm_out, frame)| {
                    self.skin(buf, frame, true);
                    oct_encode_f16_into(&buf.normals, nrm_out);
                },
            );
    }

    /// [`Self::encode_into`] new buffers.
    pub fn encode(self) -> EncodedVat {
        // Zeroed allocations come from fresh pages, so this costs no pass of its own.
        let mut positions = vec![0u8; self.position_bytes()];
        let mut normals = vec![0u8; self.normal_bytes()];
        self.encode_into(&mut positions, &mut normals);
        self.into_encoded(positions, normals)
    }

    /// The encoded VAT over the bytes [`Self::encode_into`] wrote, wherever they are held.
    pub fn into_encoded<B>(self, positions: B, normals: B) -> EncodedVat<B> {
        EncodedVat {
            layout: self.layout,
            params: self.params,
            positions,
            normals,
            bounds: self.bounds,
            clip_bounds: self.clip_bounds,
        }
    }

    fn skin(&self, buf: &mut FrameBuffers, frame: &[MeshFrame], normals: bool) {
        let (ps, ns) = (&mut buf.positions, &mut buf.normals);
        let bad = skin_frame(
            self.meshes,
            &self.influences,
            frame,
            normals,
            ps,
            ns,
            &mut buf.scratch,
        );
        debug_assert!(bad.is_none(), "pass 1 found every non-finite position");
    }
}

/// Skins and encodes every frame: the result (or error) of
/// `encode(&skin_frames(meshes, frames, labels)?, clips, precision, normals)`, without the skinned
/// intermediate. See [`SkinEncoder`] to encode into memory of your own.
pub fn skin_encode(
    meshes: &[MeshSource],
    frames: &[Vec<MeshFrame>],
    labels: &dyn Fn(usize) -> String,
    clips: &[Clip],
    precision: Precision,
    normals: bool,
) -> Result<EncodedVat> {
    Ok(SkinEncoder::new(meshes, frames, labels, clips, precision, normals)?.encode())
}

#[cfg(test)]
mod tests;
