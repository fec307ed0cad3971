//! The GPU side shared by `AnimatedMeshInstance` and `AnimatedActorMeshInstance`: one
//! MultiMeshInstance3D per model, the materials that run the VAT shader, and the per-instance
//! data textures, each updated with exactly one `ImageTexture.update()` per submit.

pub mod data_texture;
pub mod gpu;
pub mod guard;
pub mod looks;
pub mod material;
pub mod retained;
