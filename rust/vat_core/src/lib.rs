//! Engine-free core of vat_crowd: everything between a sampled skeletal animation and the bytes a
//! crowd shader reads, with no Godot dependency.
//!
//! The crate is three rooms over a floor of shared codecs and types. Each room keeps its files
//! private behind one `pub use` list, so every public item has exactly one path.
//!
//! Rooms, in the order data flows through them:
//! * [`bake`]: skin every frame on the CPU with Godot's semantics, encode the frames into vertex
//!   animation texture bytes (f16 or f32, octahedral normals) and decode them as the shader does,
//!   both fused as a bake runs them; tell a frozen bake from a moving one (root velocity,
//!   in-place offsets); check that a stored bake's fields agree before anything reads them.
//! * [`lod_mesh`]: the crowd LOD chain cut by vertex count (weld, simplify, remesh, bind).
//! * [`crowd`]: pack per-actor and per-instance records into data textures (single and bulk
//!   calls), run the crowd frame (culling, LOD levels, placement and state uploads, recent
//!   states), answer game queries (clip times, finished clips), hand out retained crowds' ids and
//!   lay out the editor preview.
//!
//! Shared by the rooms (and the crowd nodes):
//! * [`clip`]: plan which frames each clip bakes and how the shader samples them.
//! * [`lod_distance`]: the LOD formula the bake and the crowd nodes share.
//! * [`clock`]: keep the shader's f32 time small with an f64 clock that rebases.
//! * [`shader_splice`]: splice the VAT stage into Godot's own material code.
//! * [`helped`]: the parallel loop the crowd frame runs on the calling thread, pool threads
//!   helping while they are free.
//! * [`layout`] holds the constants the shader shares; [`half`] the f16 conversions;
//!   [`octahedral`] the normal encoding; [`bounds`] boxes; [`error`] the one error type.
//!
//! All functions are deterministic; the heavy ones use rayon.

#![deny(missing_docs)]

pub mod bake;
pub mod bones;
pub mod bounds;
pub mod clip;
pub mod clock;
pub mod crowd;
pub mod error;
pub mod half;
pub mod helped;
pub mod layout;
pub mod lod_distance;
pub mod lod_mesh;
pub mod octahedral;
pub mod shader_splice;
