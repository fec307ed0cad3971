//! The GPU side shared by `AnimatedMeshInstance` and `AnimatedActorMeshInstance`: one
//! MultiMeshInstance3D per model, the materials that run the VAT shader, and the per-instance
//! data textures, each updated with exactly one `ImageTexture.update()` per submit.
//!
//! What both crowd nodes share and nothing else: [`core`] (the properties, clock, preview and
//! submit statistics both hold, and the API over them), the GPU objects ([`gpu`] and its data
//! textures, materials, instance lists), the crowd frame's view of a camera ([`view`]) and of
//! the shadowed lights ([`lights`]), and the main-thread rule every call applies ([`guard`]).
//! Each node's own code lives in its own folder.

pub mod core;
pub mod data_texture;
pub mod gpu;
mod gpu_driven;
mod gpu_frame;
mod gpu_records;
pub mod guard;
pub mod lights;
pub mod looks;
pub mod material;
pub mod model_data;
mod model_gpu;
pub mod native_material;
pub mod node_api;
pub mod node_queries;
pub mod preview;
pub mod recent;
pub mod slot;
pub mod view;
