//! `AnimatedActorMeshInstance`: actors with equipment, filled in immediate mode every frame.

use std::time::Instant;

use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::{INode3D, Material, Node3D};
use godot::obj::EngineEnum;
use godot::prelude::*;
use vat_core::clock::{clock_runs, CrowdClock};
use vat_core::crowd::{self, ActorState, LookTable};
use vat_core::validate;

use crate::convert;
use crate::crowd::frame_api::accessors;
use crate::crowd::gpu::{report_once, CrowdGpu};
use crate::crowd::guard::main_thread_only;
use crate::crowd::looks::PlacedBounds;
use crate::editor;
use crate::vertex_animation::VertexAnimation;

// The helpers Godot does not see live in a child module (so they keep private access).
#[path = "crowd/actor_bulk.rs"]
mod actor_bulk;
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
    gpu: Option<CrowdGpu>,
    gpu_error: Option<String>,
    clip_count: u32,
    actor_count: usize,
    model_counts: Vec<usize>,
    /// Per model, one past the highest actor index its instances use (0 for none).
    model_reach: Vec<usize>,
    looks: Vec<LookTable>,
    variation_counts: Vec<u32>,
    placed: PlacedBounds,
    /// Each actor's playback and the end times due, for `get_finished_actors`.
    ends: vat_core::clip_end::FinishTracker,
    /// The models (by instance id) the GPU objects were built for, to notice edits made in place
    /// (`models.append(x)` changes the array the getter returns without calling the setter).
    built_models: Vec<InstanceId>,
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
        if let Some(gpu) = &mut self.gpu {
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
        if let Err(e) = validate::crowd_time(time, "time") {
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
        match validate::speed(scale, "speed_scale") {
            Ok(_) => self.speed_scale = scale,
            Err(e) => godot_error!(
                "vat_crowd: AnimatedActorMeshInstance.speed_scale: {e}; it stays {}",
                self.speed_scale
            ),
        }
    }

    /// Starts a new frame: forgets every actor and model instance added before.
    #[func]
    fn begin(&mut self) {
        main_thread_only!("AnimatedActorMeshInstance", "begin");
        self.sync_models();
        self.actor_count = 0;
        self.model_counts.iter_mut().for_each(|c| *c = 0);
        self.model_reach.iter_mut().for_each(|r| *r = 0);
        self.looks.iter_mut().for_each(|l| l.clear());
        self.placed = PlacedBounds::default();
    }

    /// Adds an actor at `transform` (the whole transform with `full_transform`, else its position,
    /// yaw about +Y and uniform scale) playing
    /// `clip` since `start_time` (crowd seconds; NAN means now) at `speed`, with `custom` as its
    /// custom data (`inst.custom` in shaders). Returns its index for
    /// this frame, or -1 with an error if the transform is not finite, the clip is out of range,
    /// the speed is not finite or beyond +-65504 (an actor stores it as an f16), the start time is
    /// not finite or beyond +-2^32 s, `custom` is not finite, or the crowd is full.
    #[func]
    fn add_actor(
        &mut self,
        transform: Transform3D,
        #[opt(default = 0)] clip: i32,
        #[opt(default = f64::NAN)] start_time: f64,
        #[opt(default = 1.0)] speed: f64,
        #[opt(default = Color::from_rgba(0.0, 0.0, 0.0, 0.0))] custom: Color,
    ) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "add_actor", -1);
        if !self.ensure_gpu() {
            return -1;
        }
        let Some((position, yaw, scale)) = convert::actor_pose(transform) else {
            godot_error!(
                "vat_crowd: add_actor: transform is not finite ({transform:?}); actor skipped"
            );
            return -1;
        };
        if clip < 0 || clip as u32 >= self.clip_count {
            godot_error!("vat_crowd: add_actor: clip {clip} out of range (the models have {} clips); actor skipped", self.clip_count);
            return -1;
        }
        let checked = validate::speed(speed, "speed").and_then(|speed| {
            if start_time.is_nan() {
                return Ok((speed, self.clock.time()));
            }
            Ok((speed, validate::crowd_time(start_time, "start time")?))
        });
        let (speed, start) = match checked {
            Ok(v) => v,
            Err(e) => {
                godot_error!("vat_crowd: add_actor: {e} (NAN means now); actor skipped");
                return -1;
            }
        };
        let custom = convert::rgba(custom);
        if !custom.iter().all(|c| c.is_finite()) {
            godot_error!("vat_crowd: add_actor: custom {custom:?} is not finite; actor skipped");
            return -1;
        }
        if !self.actor_room(self.actor_count + 1, "add_actor") {
            return -1;
        }
        let state = ActorState {
            position,
            yaw,
            scale,
            clip: clip as u32,
            prev_clip: clip as u32,
            start_time: self.clock.local(start),
            speed,
            ..ActorState::default()
        };
        let index = self.actor_count;
        let stride = self.stride();
        let cols = self.full_transform.then(|| convert::basis_cols(transform));
        let gpu = self.gpu.as_mut().expect("ensured");
        gpu.actors.reserve(index + 1);
        let rec = &mut gpu.actors.floats_mut()[index * stride..(index + 1) * stride];
        crowd::pack_actor_record(&state, cols, rec);
        // Custom data costs nothing until some actor has some.
        if gpu.custom.is_some() || custom != [0.0; 4] {
            let texture = gpu.custom_mut(index + 1);
            let written = vat_core::crowd_custom::write_custom_bulk(
                texture.floats_mut_untracked(),
                &[index as i32],
                &[custom],
                index + 1,
            );
            if written.unwrap_or(true) {
                texture.mark_changed();
            }
        }
        self.placed.add_actor(position, scale, cols);
        self.ends.set(index, clip as u32, start, speed);
        self.actor_count += 1;
        index as i32
    }

    /// Makes `actor` (added this frame) cross-fade from `prev_clip`, which it had been playing
    /// since `prev_start_time`, into its clip over `blend_time` seconds from its start time.
    #[func]
    fn set_actor_blend(
        &mut self,
        actor: i32,
        prev_clip: i32,
        prev_start_time: f64,
        blend_time: f64,
    ) {
        main_thread_only!("AnimatedActorMeshInstance", "set_actor_blend");
        let checked = validate::crowd_time(prev_start_time, "previous start time")
            .and_then(|_| validate::blend_time(blend_time, "blend time"));
        if let Err(e) = checked {
            godot_error!("vat_crowd: set_actor_blend: {e}; nothing changed");
            return;
        }
        // The previous start is passed relative to the clock's origin, as the records store
        // start times, so the f64 argument keeps its precision after hours of play.
        let origin = self.clock.origin();
        let blends = crowd::BulkBlends {
            actor_ids: &[actor],
            prev_clips: &[prev_clip],
            prev_start_times: &[(prev_start_time - origin) as f32],
            blend_times: &[blend_time as f32],
        };
        self.apply_blends(&blends, 0.0, "set_actor_blend");
    }

    /// Attaches model `model_index` to the actor added last, with a texture `variation` and a `tint`.
    #[func]
    fn add_model(
        &mut self,
        model_index: i32,
        #[opt(default = 0)] variation: i32,
        #[opt(default = Color::WHITE)] tint: Color,
    ) {
        main_thread_only!("AnimatedActorMeshInstance", "add_model");
        if self.actor_count == 0 {
            godot_error!("vat_crowd: add_model called before any add_actor this frame; ignored");
            return;
        }
        let Some(look) = self.look_for(model_index, variation, tint, "add_model") else {
            return;
        };
        let m = model_index as usize;
        if !self.model_room(m, self.model_counts[m] + 1, "add_model") {
            return;
        }
        let gpu = self.gpu.as_mut().expect("actors exist");
        let slot = self.model_counts[m];
        let indices = &mut gpu.models[m].indices;
        indices.reserve(slot + 1);
        indices.bytes_mut()[slot * 4..slot * 4 + 4].copy_from_slice(&crowd::pack_model_instance(
            (self.actor_count - 1) as u32,
            look,
        ));
        self.model_counts[m] += 1;
        self.model_reach[m] = self.model_reach[m].max(self.actor_count);
    }

    /// Pushes this frame's actors and models to the GPU: one texture update per data texture.
    #[func]
    fn submit(&mut self) {
        main_thread_only!("AnimatedActorMeshInstance", "submit");
        let started = Instant::now();
        if self.sync_models() {
            // This frame's actors were for the old models and are gone; say so once.
            godot_error!(
                "vat_crowd: submit: the models array was changed in place since the last begin(); \
                 the crowd was rebuilt for the new models and this frame's actors were dropped"
            );
        }
        if !self.ensure_gpu() {
            return;
        }
        let time = self.clock.shader_time();
        let interpolate = self.interpolate;
        let request = self.frame_request(self.actor_count, self.stride());
        let gpu = self.gpu.as_mut().expect("ensured");
        let sent = gpu.sent_bytes();
        let mut bounds = Vec::with_capacity(gpu.models.len());
        for (m, model) in gpu.models.iter_mut().enumerate() {
            model.set_looks(&self.looks[m]);
            bounds.push(self.placed.for_model(&model.bounds));
        }
        gpu.submit(&self.model_counts, &bounds, time, interpolate, &request);
        self.last_submit_bytes = (gpu.sent_bytes() - sent) as i64;
        self.ends.finish(self.actor_count, self.clock.time());
        self.update_billboard();
        self.last_submit_usec = started.elapsed().as_micros() as i64;
    }

    /// Actors added this frame.
    #[func]
    fn get_actor_count(&self) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "get_actor_count");
        self.actor_count as i32
    }

    /// Instances of model `model_index` this frame.
    #[func]
    fn get_model_instance_count(&self, model_index: i32) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "get_model_instance_count");
        self.model_counts
            .get(model_index as usize)
            .map_or(0, |c| *c as i32)
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
