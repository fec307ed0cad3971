//! Reading a character scene and sampling its poses: everything the baker needs from Godot.
//!
//! Godot does the posing (AnimationPlayer seeks, Skeleton3D bone poses, BoneAttachment3D and
//! animated node transforms, blend-shape values); `vat_core` does the skinning of every vertex
//! for every frame and the encoding. This module only moves data between the two.

pub mod bones;
pub mod collect;
pub mod lod;
pub mod lod_mesh;
pub mod lod_source;
pub mod output;
pub mod root_motion;
pub mod sample;
pub mod scene;
