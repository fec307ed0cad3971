//! `AnimatedActorMeshInstance`: actors with equipment, filled in immediate mode every frame.

use std::cell::RefCell;
use std::time::Instant;

use godot::classes::{INode3D, Material, Node3D};
use godot::prelude::*;
use vat_core::crowd;

use crate::convert;
use crate::crowd::core::CrowdNode;
use crate::crowd::gpu::CrowdGpu;
use crate::crowd::guard::main_thread_only;
use crate::crowd::node_api::crowd_node;
use crate::editor;
use crate::vertex_animation::VertexAnimation;
use immediate::Frame;

// The helpers Godot does not see live in child modules (so they keep private access).
mod bulk;
mod frame;
mod immediate;
mod node;
mod preview;
mod queries;

crowd_node! {
    /// Draws crowds of actors, each carrying several models (body, sword, shield…) that share
    /// the actor's transform and animation state. Every frame: `begin()`, then `add_actor()`
    /// followed by `add_model()` for each model it carries, then `submit()`; or the bulk calls
    /// `set_actors()` and `set_model_actors()` followed by `submit()`. A submit costs one texture
    /// update per data texture, whatever the crowd size. Unlike `AnimatedMeshInstance` it has no
    /// `auto_submit`: the game fills each frame and knows when it is complete, and a submit of a
    /// half-filled frame would draw actors missing.
    class AnimatedActorMeshInstance = "AnimatedActorMeshInstance";
    models {
        /// The models actors can carry, baked from the same skeleton and clips (same clip
        /// table).
        #[export]
        #[var(get = get_models, set = set_models)]
        models: Array<Option<Gd<VertexAnimation>>>,
        /// Per model, an optional ShaderMaterial (whose shader includes vat_crowd.gdshaderinc)
        /// used instead of the shipped shader.
        #[export]
        #[var(get = get_material_overrides, set = set_material_overrides)]
        material_overrides: Array<Option<Gd<Material>>>,
    }
    playback {}
    state {
        /// This frame's actors and models and the GPU objects, behind a `RefCell` so the
        /// per-actor calls can take `&self` (see `immediate`).
        frame: RefCell<Frame>,
    }
    accessors {
        /// The models actors can carry.
        #[func]
        fn get_models(&self) -> Array<Option<Gd<VertexAnimation>>> {
            main_thread_only!("AnimatedActorMeshInstance", "get_models");
            self.models.clone()
        }

        /// Sets the models and rebuilds the crowd's GPU objects. Assigning the property through
        /// an untyped receiver also takes an untyped `Array` whose elements are all
        /// VertexAnimations (or null), as Godot's own typed-array properties do (see `on_set`).
        #[func]
        fn set_models(&mut self, models: Array<Option<Gd<VertexAnimation>>>) {
            main_thread_only!("AnimatedActorMeshInstance", "set_models");
            self.models = models;
            self.reset_gpu();
            self.base_mut().update_configuration_warnings();
            self.base_mut().notify_property_list_changed();
        }

        /// The per-model material overrides.
        #[func]
        fn get_material_overrides(&self) -> Array<Option<Gd<Material>>> {
            main_thread_only!("AnimatedActorMeshInstance", "get_material_overrides");
            self.material_overrides.clone()
        }

        /// Sets the per-model material overrides and rebuilds the crowd's GPU objects (an
        /// untyped `Array` of Materials or nulls is taken too, as for `models`).
        #[func]
        fn set_material_overrides(&mut self, materials: Array<Option<Gd<Material>>>) {
            main_thread_only!("AnimatedActorMeshInstance", "set_material_overrides");
            self.material_overrides = materials;
            self.reset_gpu();
        }
    }
}

#[godot_api]
impl INode3D for AnimatedActorMeshInstance {
    /// `models` and `material_overrides` from an untyped receiver (`$Army.models = [body, sword]`)
    /// arrive as untyped arrays, which the typed setters cannot take: Godot asks the extension
    /// first, so they are converted here element by element, and a wrong element is refused by
    /// its index (nothing changes). Every other property goes on to the registered setters.
    fn on_set(&mut self, property: StringName, value: Variant) -> bool {
        let models = property == "models";
        if !models && property != "material_overrides" {
            return false;
        }
        if !crate::crowd::guard::on_main_thread("AnimatedActorMeshInstance", "set") {
            return true;
        }
        let Ok(array) = value.try_to::<AnyArray>() else {
            // Not an array at all: Godot's own setter reports the type mismatch.
            return false;
        };
        let result = if models {
            convert::typed_objects::<VertexAnimation>(&array, "models").map(|m| self.models = m)
        } else {
            convert::typed_objects::<Material>(&array, "material_overrides")
                .map(|m| self.material_overrides = m)
        };
        match result {
            Ok(()) => {
                self.reset_gpu();
                if models {
                    self.base_mut().update_configuration_warnings();
                    self.base_mut().notify_property_list_changed();
                }
            }
            Err(e) => godot_error!("vat_crowd: AnimatedActorMeshInstance: {e}; nothing changed"),
        }
        true
    }

    fn process(&mut self, delta: f64) {
        let previewing = self.update_preview();
        if let Some(old_origin) = self.core.advance(delta, previewing) {
            self.clock_rebased(old_origin);
        }
        let (time, interpolate) = (self.core.clock.shader_time(), self.core.interpolate);
        if let Some(gpu) = self.gpu_mut() {
            gpu.set_time(time, interpolate);
        }
        self.update_billboard();
        self.refresh_frame();
    }

    fn get_configuration_warnings(&self) -> PackedStringArray {
        self.configuration_warnings()
    }

    fn on_validate_property(&self, property: &mut godot::register::info::PropertyInfo) {
        crate::crowd::preview::suggest_clips(
            property,
            self.models.iter_shared().flatten().next().as_ref(),
            &self.core.preview_clip,
        );
    }
}

#[godot_api(secondary)]
impl AnimatedActorMeshInstance {
    /// The configuration warnings the editor shows for this node (empty when it is set up right),
    /// for scripts and tests: Godot does not expose `Node._get_configuration_warnings` to them.
    #[func(rename = get_configuration_warnings)]
    fn configuration_warnings(&self) -> PackedStringArray {
        let problems = editor::model_problems(&self.models);
        editor::to_packed(
            problems
                .into_iter()
                .map(|p| format!("{p}: nothing is drawn until the models are fixed."))
                .collect(),
        )
    }
}
