//! The bake room: everything that turns a sampled skeletal animation into vertex animation
//! texture bytes, and checks a stored bake before anything reads it.
//!
//! In the order a bake runs:
//! * skinning: [`skin_frames`] skins every frame on the CPU with Godot's semantics
//!   ([`MeshSource`], [`SkinBinding`], [`BlendShape`], [`MeshFrame`] in, [`SkinnedFrames`] out),
//!   after [`validate`] has checked the static mesh data;
//! * encoding: [`encode`] packs the frames into texture bytes (f16 or f32 positions, octahedral
//!   normals, see [`EncodingParams`] and [`VatLayout`]) and [`decode_frame`] reads them back as
//!   the shader does; [`SkinEncoder`] / [`skin_encode`] do both in one go, straight into texture
//!   bytes (what a bake runs);
//! * motion checks: [`frames_vary`] tells a frozen bake from a moving one; [`average_velocity`]
//!   and [`in_place_offset`] are the root motion a bake keeps or takes out;
//! * playback checks: [`interpolation_sag`] estimates how far blending two baked frames strays
//!   from a clip's motion (a fast turn drawn along its chord);
//! * stored-bake checks: [`check`] tells whether a stored bake's fields ([`StoredBake`]) agree
//!   before anything reads them.
//!
//! The clip plan ([`crate::clip`]), bounds, half floats and the octahedral normal codec live at
//! the crate root, as the crowd room and the LOD chain use them too.
//!
//! The files are private; every public item has its one path here (`vat_core::bake::...`).

pub(crate) mod encode;
mod motion;
mod sag;
mod skin;
mod skin_encode;
mod skin_math;
mod stored;
mod validate;

pub use encode::{
    bytes_per_vertex_frame, decode_frame, decode_frame_normals, decode_position, encode,
    EncodedVat, EncodingParams, Precision, VatLayout,
};
pub use motion::{
    average_velocity, frames_vary, horizontal, in_place_offset, travels, SAME_POSE_TOLERANCE,
};
pub use sag::interpolation_sag;
pub(crate) use skin::check_frame;
pub use skin::{
    bounds_of, skin_frames, tangent_sources, BlendMode, BlendShape, MeshFrame, MeshSource,
    SkinBinding, SkinnedFrames,
};
pub use skin_encode::{skin_encode, SkinEncoder};
pub use stored::{
    check, position_texel_bytes, StoredBake, StoredBones, StoredTexture, CUSTOM_CHANNELS,
    NORMAL_TEXEL_BYTES, STORED_BOUNDS_STRIDE, STORED_CLIP_STRIDE,
};
pub use validate::validate;

/// The skinning tests' helpers (a seeded random source, random meshes), for other rooms' tests.
#[cfg(test)]
pub(crate) use skin::tests as skin_tests;
