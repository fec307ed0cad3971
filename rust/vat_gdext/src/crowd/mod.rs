//! The GPU side shared by `AnimatedMeshInstance` and `AnimatedActorMeshInstance`: one
//! MultiMeshInstance3D per model, the materials that run the VAT shader, and the per-instance
//! data textures, each updated with exactly one `ImageTexture.update()` per submit.
//!
//! `actor_node.rs`, `actor_frame.rs`, `actor_bulk.rs`, `retained_node.rs` and `retained_bulk.rs`
//! here are not modules of `crowd`: they are the node files' own child modules (declared with `#[path]` in
//! `animated_actor_mesh_instance.rs` and `animated_mesh_instance.rs`), split off to keep each
//! file short while keeping access to the node's private fields. `guard` holds the main-thread
//! rule both nodes apply to every call; `immediate` the actor node's frame, which its per-actor
//! calls reach through `&self`.

pub mod data_texture;
#[macro_use]
pub mod frame_api;
pub mod gpu;
pub mod guard;
pub mod immediate;
pub mod looks;
pub mod material;
pub mod model_data;
pub mod preview;
pub mod recent;
pub mod retained;
pub mod slot;
pub mod view;
