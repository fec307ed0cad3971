//! Bone textures: a baked model whose animation is one transform per bone per frame, skinned in
//! the vertex shader, instead of one position per vertex per frame (`VertexAnimation.storage`).
//!
//! In the order a bone bake runs:
//! * [`build_rig`] turns the bake's inputs (the same [`MeshSource`](crate::bake::MeshSource)s and
//!   per-frame [`MeshFrame`](crate::bake::MeshFrame)s the vertex bake skins) into a [`BoneRig`]:
//!   a palette of distinct root-space transforms per frame (every skin bind a vertex uses, with
//!   its mesh node's transform folded in; a rigid mesh's node transform; equal sequences shared),
//!   and each vertex's rest position, normal, tangent and palette influences. It refuses, with
//!   the reason ([`Refusal`]), what a palette cannot draw: animated blend shapes;
//! * [`encode_bones`] packs the rig, over the stored columns
//!   ([`ColumnSource`](crate::lod_mesh::ColumnSource)s: a vertex, or a LOD vertex bound to a
//!   triangle), into two textures ([`EncodedBones`]): the bone texture (three
//!   rows of an affine transform per palette entry per frame, half or float) and the skin table
//!   (per column: rest position, rest normal and tangent, influences);
//! * [`decode_column`] / [`decode_frame`] skin a column from those bytes exactly as the shader
//!   library does, for the bake's own check against the vertex bake and for
//!   `VertexAnimation.decode_frame`.
//!
//! * [`share_palette`] re-expresses a rig over another bake's palette ([`decode_matrices`] of its
//!   bone texture): equipment baked from the same scene and clips draws with the body's bone
//!   texture instead of one of its own.
//!
//! Skinning follows Godot's GPU skinning (`skeleton.glsl`): the weighted sum of the influences'
//! matrices, applied to the rest position, normal and tangent (directions renormalized).

mod rig;
mod share;
mod texture;

pub use rig::{
    build_rig, BoneRig, Refusal, RigVertex, MAX_INFLUENCES, REMAINDER_TOLERANCE, WEIGHT_EPSILON,
};
pub use share::{decode_matrices, share_palette};
pub use texture::{
    decode_column, decode_frame, encode_bones, layouts, pack_direction, pack_influence,
    skin_texels, texture_bytes, unpack_direction, unpack_influence, EncodedBones, BONE_ROWS,
    MAX_PALETTE, SKIN_TEXEL_BYTES,
};

#[cfg(test)]
mod tests;
