//! Engine-free core of vat_crowd: everything between a sampled skeletal animation and the bytes a
//! crowd shader reads, with no Godot dependency.
//!
//! Data flows through the modules in this order:
//! * [`clip`]: plan which frames each clip bakes and how the shader samples them.
//! * [`skin`]: skin every frame on the CPU with Godot's semantics.
//! * [`skin_encode`]: both in one go, straight into texture bytes (what a bake runs).
//! * [`mod@encode`]: pack the frames into vertex animation texture bytes (f16 or f32, octahedral
//!   normals) and decode them as the shader does.
//! * [`crowd`]: pack per-actor and per-instance records into data textures.
//! * [`motion`]: tell a frozen bake from a moving one; root velocity and in-place offsets.
//! * [`lod_mesh`]: the crowd LOD chain cut by vertex count (weld, simplify, remesh, bind).
//! * [`lod_distance`]: the LOD formula the bake and the crowd nodes share.
//! * [`clock`]: keep the shader's f32 time small with an f64 clock that rebases.
//! * [`clip_end`]: clip times and finished clips from the clock and the clip table (game queries).
//! * [`preview`]: the editor preview's clip and grid.
//!
//! [`baked`] checks that a stored bake's fields agree before anything reads them.
//! [`layout`] holds the constants the shader shares; [`half`] the f16 conversions; [`octahedral`]
//! the normal encoding; [`bounds`] boxes; [`error`] the one error type. All functions are deterministic; the heavy ones use rayon.

#![deny(missing_docs)]

pub mod baked;
pub mod bounds;
pub mod clip;
pub mod clip_end;
pub mod clock;
pub mod crowd;
pub mod crowd_bulk;
pub mod crowd_custom;
pub mod crowd_frame;
mod crowd_frame_fast;
pub mod crowd_move;
pub mod crowd_recent;
pub mod crowd_split;
pub mod encode;
pub mod error;
pub mod half;
pub mod layout;
pub mod lod_distance;
pub mod lod_mesh;
pub mod motion;
pub mod octahedral;
pub mod preview;
pub mod skin;
pub mod skin_encode;
pub mod slots;
pub mod validate;

pub use bounds::Bounds;
pub use clip::{find_clip, pack_clip_table, plan_clips, sample, total_frames, Clip, ClipSpec};
pub use clock::{CrowdClock, REBASE_INTERVAL};
pub use crowd::{
    check_transform, crowd_bounds, data_rows, grow_capacity, pack_actor, pack_actor_states_bulk,
    pack_actors_bulk, pack_model_instance, pack_model_instances_bulk, unpack_actor, ActorState,
    LookTable,
};
pub use encode::{
    bytes_per_vertex_frame, decode_frame, decode_frame_normals, decode_position, encode,
    oct_decode, oct_encode, oct_encode_f16, EncodedVat, EncodingParams, Precision, VatLayout,
};
pub use error::{Result, VatError};
pub use half::{f16_to_f32, f32_to_f16, pack_half2, unpack_half2};
pub use skin::{
    bounds_of, skin_frames, validate, BlendMode, BlendShape, MeshFrame, MeshSource, SkinBinding,
    SkinnedFrames,
};
pub use skin_encode::{skin_encode, SkinEncoder};
