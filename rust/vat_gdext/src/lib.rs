//! vat_crowd's GDExtension: thin Godot classes over `vat_core`.
//!
//! Each Godot class lives in its own file; every conversion between Godot and glam types lives
//! in [`convert`]. The baking pipeline (reading a character scene and sampling its poses) is in
//! [`bake`], the GPU side of crowds (MultiMeshes, materials, data textures) in [`crowd`].

use godot::prelude::*;

mod animated_actor_mesh_instance;
mod animated_mesh_instance;
mod bake;
#[cfg(feature = "bench")]
mod bench;
mod convert;
mod crowd;
mod editor;
mod limits;
mod save;
mod vertex_animation;
mod vertex_animation_baker;
mod workers;

struct VatCrowdExtension;

#[gdextension]
unsafe impl ExtensionLibrary for VatCrowdExtension {
    fn on_stage_deinit(stage: InitStage) {
        // Before Godot unloads the library: no worker thread may still be in its code.
        if stage == InitStage::Scene {
            workers::shutdown();
            crowd::lights::unwatch();
        }
    }
}
