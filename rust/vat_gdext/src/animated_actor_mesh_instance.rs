//! `AnimatedActorMeshInstance`: actors with equipment, filled in immediate mode every frame.

use std::cell::RefCell;
use std::time::Instant;

use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::{INode3D, Material, Node3D};
use godot::obj::EngineEnum;
use godot::prelude::*;
use vat_core::clock::{clock_runs, CrowdClock};
use vat_core::crowd;

use crate::convert;
use crate::crowd::frame_api::accessors;
use crate::crowd::gpu::CrowdGpu;
use crate::crowd::guard::main_thread_only;
use crate::crowd::immediate::Frame;
use crate::editor;
use crate::vertex_animation::VertexAnimation;

// The helpers Godot does not see live in a child module (so they keep private access).
#[path = "crowd/actor_bulk.rs"]
mod actor_bulk;
#[path = "crowd/actor_frame.rs"]
mod actor_frame;
#[path = "crowd/actor_node.rs"]
mod actor_node;
#[path = "crowd/queries.rs"]
mod queries;

#[path = "crowd/actor_preview.rs"]
mod actor_preview;

crate::crowd::frame_api::frame_api!(AnimatedActorMeshInstance, "AnimatedActorMeshInstance");

/// Draws crowds of actors, each carrying several models (body, sword, shield…) that share the
/// actor's transform and animation state. Every frame: `begin()`, then `add_actor()` followed by
/// `add_model()` for each model it carries, then `submit()`; or the bulk calls `set_actors()` and
/// `set_model_actors()` followed by `submit()`. A submit costs one texture update per data texture,
/// whatever the crowd size.
#[derive(GodotClass)]
#[class(tool, init, base = Node3D)]
pub struct AnimatedActorMeshInstance {
    /// The models actors can carry, baked from the same skeleton and clips (same clip table).
    #[export]
    #[var(get = get_models, set = set_models)]
    models: Array<Option<Gd<VertexAnimation>>>,
    /// Per model, an optional ShaderMaterial (whose shader includes vat_crowd.gdshaderinc) used
    /// instead of the shipped shader.
    #[export]
    #[var(get = get_material_overrides, set = set_material_overrides)]
    material_overrides: Array<Option<Gd<Material>>>,
    /// Shadow casting of every model (GeometryInstance3D.ShadowCastingSetting).
    #[export(enum = (Off = 0, On = 1, DoubleSided = 2, ShadowsOnly = 3))]
    #[var(get = get_cast_shadow, set = set_cast_shadow)]
    #[init(val = 1)]
    cast_shadow: i32,
    /// The crowd clock in seconds (kept in double precision; the shader sees it rebased). Shown
    /// in the inspector but never saved in scenes; in the editor it stands still except while the
    /// preview (`preview_count`) shows.
    #[var(get = get_time, set = set_time, usage_flags = [EDITOR])]
    time: PhantomVar<f64>,
    /// Stops the crowd clock.
    #[export]
    paused: bool,
    /// Blend between the two nearest baked frames (off: snap to the nearest lower frame).
    #[export]
    #[init(val = true)]
    interpolate: bool,
    /// Turn every actor about its up axis to face the current camera each frame (in the editor,
    /// the 3D editor viewport's camera), also in the shadow pass so shadows match what is seen;
    /// the actor's own yaw is added on top.
    #[export]
    billboard: bool,
    /// Store each actor's whole 3x4 transform (any rotation, non-uniform scale or shear: units on
    /// slopes, tumbling debris) at 64 bytes per actor. Off (the default): position, yaw about +Y
    /// and uniform scale only, at 32 bytes. Changing it rebuilds the crowd's GPU objects.
    #[export]
    #[var(get = get_full_transform, set = set_full_transform)]
    full_transform: bool,
    /// Multiplies the clock's advance per frame (finite, within +-65504; other values are
    /// refused with an error).
    #[export]
    #[var(get = get_speed_scale, set = set_speed_scale)]
    #[init(val = 1.0)]
    speed_scale: f64,

    /// Leave out actors whose placed bounds (their clip's, scaled and turned) miss the culling
    /// camera's view; an actor outside whose shadow can fall into the view (toward a shadowed
    /// DirectionalLight3D, within its shadow distance, or within the range of a shadowed omni or
    /// spot light that reaches the view) still casts it. Without a camera nothing is culled.
    #[export]
    #[init(val = true)]
    culling: bool,
    /// The Camera3D to cull against and pick levels of detail for. Empty: the viewport's current
    /// camera (in the editor, the 3D editor viewport's camera).
    #[export]
    culling_camera: NodePath,
    /// Levels of detail added to every actor's (positive: coarser sooner; finite).
    #[export]
    #[var(get = get_lod_bias, set = set_lod_bias)]
    lod_bias: f32,
    /// The highest level of detail any actor draws (-1: no limit).
    #[export]
    #[var(get = get_max_lod, set = set_max_lod)]
    #[init(val = -1)]
    max_lod: i32,
    /// Draw every actor at this level (clamped to each model's last) whatever its distance
    /// (-1: off).
    #[export]
    #[var(get = get_force_lod, set = set_force_lod)]
    #[init(val = -1)]
    force_lod: i32,
    /// Draw every shadow from at least this level (an actor drawn coarser casts from its own)
    /// through shadow-only MultiMeshes; the levels drawn in the view then cast none (-1: off,
    /// each level casts its own).
    #[export]
    #[var(get = get_shadow_lod, set = set_shadow_lod)]
    #[init(val = -1)]
    shadow_lod: i32,
    /// Tint each level of detail a distinct colour (LOD0 green, LOD1 yellow, LOD2 red, LOD3
    /// blue, ...), to see where levels switch.
    #[export]
    lod_debug_colors: bool,
    /// Keep frame interpolation beyond LOD1 (off: LOD2 and further snap to baked frames, half
    /// the texture fetches).
    #[export]
    lod_interpolate: bool,

    /// How many actors the editor shows, each carrying every model, in a grid centred on the node
    /// playing `preview_clip`, so the bake can be seen without running the game (0: no preview;
    /// at most 10000). Only in the editor: a game never shows them, and they are never saved with
    /// the scene. While it shows, the preview replaces actors a `@tool` script adds (set 0 to
    /// drive the node from one), and the crowd clock runs; otherwise it stands still there.
    #[export(range = (0.0, 100.0, 1.0, or_greater))]
    #[var(get = get_preview_count, set = set_preview_count)]
    #[init(val = 1)]
    preview_count: i32,
    /// The clip the editor preview plays: a clip's name, or its index; empty: the first clip.
    #[export]
    preview_clip: GString,

    clock: CrowdClock,
    /// The editor preview shown now, if any.
    preview: Option<crate::crowd::preview::Shown>,
    /// The last preview_clip error reported.
    preview_error: Option<String>,
    /// The last culling-camera error reported.
    view_error: Option<String>,
    /// This frame's actors and models and the GPU objects, behind a `RefCell` so the per-actor
    /// calls can take `&self` (see `crowd::immediate`).
    frame: RefCell<Frame>,
    last_submit_usec: i64,
    last_submit_bytes: i64,
    base: Base<Node3D>,
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
        if clock_runs(self.paused, editor::in_editor(), previewing) {
            let dt = delta * self.speed_scale;
            let old_origin = self.clock.origin();
            self.clock.advance(dt);
            self.rebase_if_needed(old_origin);
        }
        let (time, interpolate) = (self.clock.shader_time(), self.interpolate);
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
        );
    }
}

#[godot_api]
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

    /// The models actors can carry.
    #[func]
    fn get_models(&self) -> Array<Option<Gd<VertexAnimation>>> {
        main_thread_only!("AnimatedActorMeshInstance", "get_models");
        self.models.clone()
    }

    /// The per-model material overrides.
    #[func]
    fn get_material_overrides(&self) -> Array<Option<Gd<Material>>> {
        main_thread_only!("AnimatedActorMeshInstance", "get_material_overrides");
        self.material_overrides.clone()
    }

    /// Shadow casting of every model.
    #[func]
    fn get_cast_shadow(&self) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "get_cast_shadow");
        self.cast_shadow
    }

    /// Sets the models and rebuilds the crowd's GPU objects. Assigning the property through an
    /// untyped receiver also takes an untyped `Array` whose elements are all VertexAnimations (or
    /// null), as Godot's own typed-array properties do (see `on_set`).
    #[func]
    fn set_models(&mut self, models: Array<Option<Gd<VertexAnimation>>>) {
        main_thread_only!("AnimatedActorMeshInstance", "set_models");
        self.models = models;
        self.reset_gpu();
        self.base_mut().update_configuration_warnings();
        self.base_mut().notify_property_list_changed();
    }

    /// Sets the per-model material overrides and rebuilds the crowd's GPU objects (an untyped
    /// `Array` of Materials or nulls is taken too, as for `models`).
    #[func]
    fn set_material_overrides(&mut self, materials: Array<Option<Gd<Material>>>) {
        main_thread_only!("AnimatedActorMeshInstance", "set_material_overrides");
        self.material_overrides = materials;
        self.reset_gpu();
    }

    /// Sets the shadow casting of every model.
    #[func]
    fn set_cast_shadow(&mut self, setting: i32) {
        main_thread_only!("AnimatedActorMeshInstance", "set_cast_shadow");
        self.cast_shadow = setting;
        // The crowd frame applies it to the view and shadow MultiMeshes.
        self.refresh_frame();
    }

    /// Levels of detail added to every actor's (positive: coarser sooner).
    #[func]
    fn get_lod_bias(&self) -> f32 {
        main_thread_only!("AnimatedActorMeshInstance", "get_lod_bias");
        self.lod_bias
    }

    /// Sets `lod_bias`; a value that is not finite is refused with an error.
    #[func]
    fn set_lod_bias(&mut self, bias: f32) {
        main_thread_only!("AnimatedActorMeshInstance", "set_lod_bias");
        self.lod_bias = accessors::bias("AnimatedActorMeshInstance", bias, self.lod_bias);
    }

    /// The highest level any actor draws (-1: no limit).
    #[func]
    fn get_max_lod(&self) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "get_max_lod");
        self.max_lod
    }

    /// Sets `max_lod` (-1 or a level; other values are refused with an error).
    #[func]
    fn set_max_lod(&mut self, level: i32) {
        main_thread_only!("AnimatedActorMeshInstance", "set_max_lod");
        self.max_lod =
            accessors::level("AnimatedActorMeshInstance", "max_lod", level, self.max_lod);
    }

    /// The level every actor draws whatever its distance (-1: off).
    #[func]
    fn get_force_lod(&self) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "get_force_lod");
        self.force_lod
    }

    /// Sets `force_lod` (-1 or a level; other values are refused with an error).
    #[func]
    fn set_force_lod(&mut self, level: i32) {
        main_thread_only!("AnimatedActorMeshInstance", "set_force_lod");
        self.force_lod = accessors::level(
            "AnimatedActorMeshInstance",
            "force_lod",
            level,
            self.force_lod,
        );
    }

    /// The level shadows are drawn from (-1: off, each level casts its own).
    #[func]
    fn get_shadow_lod(&self) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "get_shadow_lod");
        self.shadow_lod
    }

    /// Sets `shadow_lod` (-1 or a level; other values are refused with an error).
    #[func]
    fn set_shadow_lod(&mut self, level: i32) {
        main_thread_only!("AnimatedActorMeshInstance", "set_shadow_lod");
        self.shadow_lod = accessors::level(
            "AnimatedActorMeshInstance",
            "shadow_lod",
            level,
            self.shadow_lod,
        );
    }

    /// Whether actors store their whole 3x4 transform.
    #[func]
    fn get_full_transform(&self) -> bool {
        main_thread_only!("AnimatedActorMeshInstance", "get_full_transform");
        self.full_transform
    }

    /// Switches between full 3x4 transforms and position + yaw + scale; rebuilds the GPU objects
    /// (this frame's actors are dropped).
    #[func]
    fn set_full_transform(&mut self, full: bool) {
        main_thread_only!("AnimatedActorMeshInstance", "set_full_transform");
        if full != self.full_transform {
            self.full_transform = full;
            self.reset_gpu();
        }
    }

    /// Actors the editor preview shows (0: none).
    #[func]
    fn get_preview_count(&self) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "get_preview_count");
        self.preview_count
    }

    /// Sets `preview_count` (0 to 10000; other values are refused with an error).
    #[func]
    fn set_preview_count(&mut self, count: i32) {
        main_thread_only!("AnimatedActorMeshInstance", "set_preview_count");
        self.preview_count = crate::crowd::preview::checked_count(
            "AnimatedActorMeshInstance",
            count,
            self.preview_count,
        );
    }

    /// The crowd clock in seconds.
    #[func]
    fn get_time(&self) -> f64 {
        main_thread_only!("AnimatedActorMeshInstance", "get_time");
        self.clock.time()
    }

    /// Sets the crowd clock (e.g. for deterministic rendering). A time that is not finite or
    /// beyond +-2^32 s is refused with an error (the clock keeps its time).
    #[func]
    fn set_time(&mut self, time: f64) {
        main_thread_only!("AnimatedActorMeshInstance", "set_time");
        if let Err(e) = vat_core::crowd::crowd_time(time, "time") {
            godot_error!(
                "vat_crowd: AnimatedActorMeshInstance.time: {e}; the clock keeps {}",
                self.clock.time()
            );
            return;
        }
        let old_origin = self.clock.origin();
        self.clock.set_time(time);
        self.rebase_if_needed(old_origin);
    }

    /// The clock's speed multiplier.
    #[func]
    fn get_speed_scale(&self) -> f64 {
        main_thread_only!("AnimatedActorMeshInstance", "get_speed_scale");
        self.speed_scale
    }

    /// Sets the clock's speed multiplier; one that is not finite or beyond +-65504 is refused
    /// with an error.
    #[func]
    fn set_speed_scale(&mut self, scale: f64) {
        main_thread_only!("AnimatedActorMeshInstance", "set_speed_scale");
        match vat_core::crowd::speed(scale, "speed_scale") {
            Ok(_) => self.speed_scale = scale,
            Err(e) => godot_error!(
                "vat_crowd: AnimatedActorMeshInstance.speed_scale: {e}; it stays {}",
                self.speed_scale
            ),
        }
    }

    /// CPU time of the last `submit()` in microseconds.
    #[func]
    fn get_last_submit_usec(&self) -> i64 {
        main_thread_only!("AnimatedActorMeshInstance", "get_last_submit_usec");
        self.last_submit_usec
    }

    /// Bytes the last `submit()` handed to the engine in texture updates: placements, states
    /// (whole, or the recent-state layers that changed), custom data, looks and the instance
    /// lists that changed. See docs/performance.md, "Bytes per frame".
    #[func]
    fn get_last_submit_bytes(&self) -> i64 {
        main_thread_only!("AnimatedActorMeshInstance", "get_last_submit_bytes");
        self.last_submit_bytes
    }
}

/// Maps the exported int to Godot's enum (invalid values mean On).
pub fn shadow_setting(v: i32) -> ShadowCastingSetting {
    ShadowCastingSetting::try_from_ord(v).unwrap_or(ShadowCastingSetting::ON)
}
