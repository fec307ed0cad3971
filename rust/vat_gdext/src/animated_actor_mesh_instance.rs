//! `AnimatedActorMeshInstance`: actors with equipment, filled in immediate mode every frame.

use std::time::Instant;

use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::{INode3D, Material, Node3D};
use godot::obj::EngineEnum;
use godot::prelude::*;
use vat_core::clock::CrowdClock;
use vat_core::crowd::{self, ActorState, LookTable};
use vat_core::validate;

use crate::convert;
use crate::crowd::gpu::{crowd_camera, report_once, CrowdGpu};
use crate::crowd::guard::main_thread_only;
use crate::crowd::looks::PlacedBounds;
use crate::vertex_animation::VertexAnimation;

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
    /// The crowd clock in seconds (kept in double precision; the shader sees it rebased).
    #[export]
    #[var(get = get_time, set = set_time)]
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

    clock: CrowdClock,
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
    /// The models (by instance id) the GPU objects were built for, to notice edits made in place
    /// (`models.append(x)` changes the array the getter returns without calling the setter).
    built_models: Vec<InstanceId>,
    last_submit_usec: i64,
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
            Ok(()) => self.reset_gpu(),
            Err(e) => godot_error!("vat_crowd: AnimatedActorMeshInstance: {e}; nothing changed"),
        }
        true
    }

    fn process(&mut self, delta: f64) {
        if !self.paused {
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
    }
}

#[godot_api]
impl AnimatedActorMeshInstance {
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
        let s = shadow_setting(setting);
        if let Some(gpu) = &mut self.gpu {
            for m in gpu.models.iter_mut() {
                m.set_cast_shadow(s);
            }
        }
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
    /// `clip` since `start_time` (crowd seconds; NAN means now) at `speed`. Returns its index for
    /// this frame, or -1 with an error if the transform is not finite, the clip is out of range,
    /// the speed is not finite or beyond +-65504 (an actor stores it as an f16), the start time is
    /// not finite or beyond +-2^32 s, or the crowd is full.
    #[func]
    fn add_actor(
        &mut self,
        transform: Transform3D,
        #[opt(default = 0)] clip: i32,
        #[opt(default = f64::NAN)] start_time: f64,
        #[opt(default = 1.0)] speed: f64,
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
        self.placed.add_actor(position, scale, cols);
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

    /// The bulk form of `set_actor_blend`, for actors set this frame (e.g. by `set_actors`):
    /// entry `i` makes actor `actor_ids[i]` cross-fade from `prev_clips[i]`, which it had played
    /// since `prev_start_times[i]` (crowd seconds), into its clip over `blend_times[i]` seconds
    /// from its start time. List only the actors that switch clips. If any entry is bad (an
    /// actor or clip out of range, a time that is not finite, arrays of different lengths) it
    /// reports the first and changes nothing.
    #[func]
    fn set_actor_blends(
        &mut self,
        actor_ids: PackedInt32Array,
        prev_clips: PackedInt32Array,
        prev_start_times: PackedFloat32Array,
        blend_times: PackedFloat32Array,
    ) {
        main_thread_only!("AnimatedActorMeshInstance", "set_actor_blends");
        let blends = crowd::BulkBlends {
            actor_ids: actor_ids.as_slice(),
            prev_clips: prev_clips.as_slice(),
            prev_start_times: prev_start_times.as_slice(),
            blend_times: blend_times.as_slice(),
        };
        let origin = self.clock.origin();
        self.apply_blends(&blends, origin, "set_actor_blends");
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

    /// Replaces this frame's actors: one per position, with yaw (radians), clip (empty: 0) and
    /// start time (crowd seconds; empty: 0). Scale 1, speed 1. A model list that indexes actors
    /// beyond the new count is emptied; set it again with `set_model_actors`.
    #[func]
    fn set_actors(
        &mut self,
        positions: PackedVector3Array,
        yaws: PackedFloat32Array,
        clips: PackedInt32Array,
        start_times: PackedFloat32Array,
    ) {
        main_thread_only!("AnimatedActorMeshInstance", "set_actors");
        self.sync_models();
        if !self.ensure_gpu() {
            return;
        }
        let n = positions.len();
        if !self.actor_room(n, "set_actors") {
            return;
        }
        let points = convert::vec3_slice(positions.as_slice());
        let origin = self.clock.origin() as f32;
        let clip_count = self.clip_count;
        let (stride, full) = (self.stride(), self.full_transform);
        let gpu = self.gpu.as_mut().expect("ensured");
        gpu.actors.reserve(n);
        let out = &mut gpu.actors.floats_mut()[..n * stride];
        let clips = (!clips.is_empty()).then_some(clips.as_slice());
        let starts = (!start_times.is_empty()).then_some(start_times.as_slice());
        let placed = match crowd::pack_actors_bulk(
            out,
            points,
            yaws.as_slice(),
            clips,
            starts,
            crowd::BulkOptions {
                n_clips: clip_count,
                time_origin: origin,
                full_transform: full,
            },
        ) {
            Ok(placed) => placed,
            Err(e) => {
                godot_error!("vat_crowd: set_actors: {e}; this frame's actors were not changed");
                return;
            }
        };
        self.set_actor_count(n);
        self.placed = PlacedBounds::of_positions(&placed);
    }

    /// Replaces this frame's actors, one per whole transform: 12 floats each, in the layout of
    /// `MultiMesh.buffer` for 3D transforms (the 3x4 matrix row by row: `basis.x.x, basis.y.x,
    /// basis.z.x, origin.x, basis.x.y, …`), so code that fills a MultiMesh buffer can feed it.
    /// Clips (empty: 0) and start times (crowd seconds; empty: 0) as in `set_actors`. Needs
    /// `full_transform` (without it an actor stores only position, yaw and scale).
    #[func]
    fn set_actor_transforms(
        &mut self,
        transforms: PackedFloat32Array,
        clips: PackedInt32Array,
        start_times: PackedFloat32Array,
    ) {
        main_thread_only!("AnimatedActorMeshInstance", "set_actor_transforms");
        self.sync_models();
        if !self.full_transform {
            godot_error!(
                "vat_crowd: set_actor_transforms: needs full_transform = true; this frame's \
                 actors were not changed (use set_actors for positions and yaws)"
            );
            return;
        }
        if !self.ensure_gpu() {
            return;
        }
        let n = transforms.len() / crowd::TRANSFORM_FLOATS;
        if !self.actor_room(n, "set_actor_transforms") {
            return;
        }
        let origin = self.clock.origin() as f32;
        let clip_count = self.clip_count;
        let gpu = self.gpu.as_mut().expect("ensured");
        gpu.actors.reserve(n);
        let out = &mut gpu.actors.floats_mut()[..n * crowd::ACTOR_FLOATS_FULL];
        let clips = (!clips.is_empty()).then_some(clips.as_slice());
        let starts = (!start_times.is_empty()).then_some(start_times.as_slice());
        match crowd::pack_actor_transforms_bulk(
            out,
            transforms.as_slice(),
            clips,
            starts,
            clip_count,
            origin,
        ) {
            Ok(placed) => {
                self.set_actor_count(n);
                self.placed = PlacedBounds::of_transforms(&placed);
            }
            Err(e) => godot_error!(
                "vat_crowd: set_actor_transforms: {e}; this frame's actors were not changed"
            ),
        }
    }

    /// Replaces model `model_index`'s instances this frame: one per entry of `actor_ids` (indices
    /// into this frame's actors), all with the same `variation` and `tint`. The model's look
    /// table starts afresh, so tints may change freely from frame to frame. A list equal to last
    /// frame's is not uploaded again.
    #[func]
    fn set_model_actors(
        &mut self,
        model_index: i32,
        actor_ids: PackedInt32Array,
        #[opt(default = 0)] variation: i32,
        #[opt(default = Color::WHITE)] tint: Color,
    ) {
        main_thread_only!("AnimatedActorMeshInstance", "set_model_actors");
        let ids = actor_ids.as_slice();
        self.fill_model_actors(model_index, ids, variation, tint, false, "set_model_actors");
    }

    /// Appends instances to model `model_index` this frame, after those of `set_model_actors`,
    /// earlier `add_model_actors` or `add_model` calls: one per entry of `actor_ids`, all with
    /// `variation` and `tint`. Call it once per look (e.g. per team colour) to give one model
    /// several looks in bulk (at most 256 distinct looks per model per frame).
    #[func]
    fn add_model_actors(
        &mut self,
        model_index: i32,
        actor_ids: PackedInt32Array,
        #[opt(default = 0)] variation: i32,
        #[opt(default = Color::WHITE)] tint: Color,
    ) {
        main_thread_only!("AnimatedActorMeshInstance", "add_model_actors");
        let ids = actor_ids.as_slice();
        self.fill_model_actors(model_index, ids, variation, tint, true, "add_model_actors");
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
        let gpu = self.gpu.as_mut().expect("ensured");
        let mut bounds = Vec::with_capacity(gpu.models.len());
        for (m, model) in gpu.models.iter_mut().enumerate() {
            model.set_looks(&self.looks[m]);
            bounds.push(self.placed.for_model(&model.bounds));
        }
        gpu.submit(&self.model_counts, &bounds, time, interpolate);
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
}

impl AnimatedActorMeshInstance {
    /// Points the shader's billboard at the current camera (in this node's space), or turns it off.
    fn update_billboard(&mut self) {
        let camera = if self.billboard {
            crowd_camera(&self.base())
        } else {
            None
        };
        if let Some(gpu) = &mut self.gpu {
            gpu.set_billboard(camera);
        }
    }

    /// Sets this frame's actor count from a bulk call. A model list that indexes actors beyond
    /// it would draw stale records, so it is dropped (the usual order, `set_actors` then
    /// `set_model_actors`, sets it again).
    fn set_actor_count(&mut self, n: usize) {
        self.actor_count = n;
        for (count, reach) in self
            .model_counts
            .iter_mut()
            .zip(self.model_reach.iter_mut())
        {
            if *reach > n {
                (*count, *reach) = (0, 0);
            }
        }
    }

    /// Applies cross-fades to this frame's actors, or reports why not (nothing changed).
    /// `origin` puts the records' stored start times (relative to the clock's origin) in the
    /// time frame of `blends`' previous start times: the clock's origin when those are crowd
    /// seconds, 0 when they are already relative to it.
    fn apply_blends(&mut self, blends: &crowd::BulkBlends, origin: f64, what: &str) {
        let (n, stride, clip_count) = (self.actor_count, self.stride(), self.clip_count);
        let Some(gpu) = self.gpu.as_mut() else {
            godot_error!("vat_crowd: {what}: no actors this frame");
            return;
        };
        let records = &mut gpu.actors.floats_mut()[..n * stride];
        if let Err(e) = crowd::apply_blends_bulk(records, stride, blends, clip_count, origin) {
            godot_error!("vat_crowd: {what}: {e}; nothing changed");
        }
    }

    /// True if a frame of `n` actors fits (the 24-bit actor index, the renderer's texture size);
    /// else reports the limit. Needs the GPU objects.
    fn actor_room(&self, n: usize, what: &str) -> bool {
        let Some(gpu) = &self.gpu else {
            return false;
        };
        let texels = crowd::record_texels(self.full_transform);
        match crowd::check_item_count("actors", n, texels, gpu.max_texture_size) {
            Ok(()) => true,
            Err(e) => {
                godot_error!("vat_crowd: {what}: {e}; this frame's actors were not changed");
                false
            }
        }
    }

    /// True if model `m` can hold `n` instances (one texel each); else reports the limit.
    fn model_room(&self, m: usize, n: usize, what: &str) -> bool {
        let Some(gpu) = &self.gpu else {
            return false;
        };
        match crowd::check_item_count("model instances", n, 1, gpu.max_texture_size) {
            Ok(()) => true,
            Err(e) => {
                godot_error!("vat_crowd: {what}(model {m}): {e}; model not changed");
                false
            }
        }
    }

    /// Floats per actor record.
    fn stride(&self) -> usize {
        crowd::record_floats(self.full_transform)
    }

    /// Rebuilds the GPU objects (dropping this frame's actors) if `models` no longer holds what
    /// they were built for, as after `models.append(x)`; returns whether it did.
    fn sync_models(&mut self) -> bool {
        if self.gpu.is_none() {
            return false;
        }
        let same = self.models.len() == self.built_models.len()
            && self
                .models
                .iter_shared()
                .zip(&self.built_models)
                .all(|(m, id)| m.is_some_and(|m| m.instance_id() == *id));
        if !same {
            self.reset_gpu();
        }
        !same
    }

    fn reset_gpu(&mut self) {
        if let Some(gpu) = self.gpu.take() {
            gpu.free();
        }
        self.gpu_error = None;
        self.begin();
    }

    /// Builds the GPU objects on first use; reports a bad model set once.
    fn ensure_gpu(&mut self) -> bool {
        if self.gpu.is_some() {
            return true;
        }
        match self.build_gpu() {
            Ok(()) => true,
            Err(e) => {
                let name = self.base().get_name().to_string();
                report_once(&mut self.gpu_error, &name, e);
                false
            }
        }
    }

    fn build_gpu(&mut self) -> Result<(), String> {
        let models: Vec<Gd<VertexAnimation>> = self
            .models
            .iter_shared()
            .enumerate()
            .map(|(i, m)| m.ok_or_else(|| format!("models[{i}] is empty")))
            .collect::<Result<_, _>>()?;
        if models.is_empty() {
            return Err("no models are set".into());
        }
        let first = models[0].bind().clips();
        for (i, m) in models.iter().enumerate() {
            let b = m.bind();
            if !b.is_baked() {
                return Err(format!("models[{i}] ('{}') is not baked", m.get_path()));
            }
            let clips = b.clips();
            let same = clips.len() == first.len()
                && clips.iter().zip(&first).all(|(a, c)| {
                    a.name == c.name && a.frame_count == c.frame_count && a.looped == c.looped
                });
            if !same {
                return Err(format!(
                    "models[{i}] ('{}') has a different clip table than models[0]; bake all models from the same skeleton and clips",
                    m.get_path()
                ));
            }
        }
        let overrides: Vec<Option<Gd<Material>>> = self.material_overrides.iter_shared().collect();
        let mut owner = self.to_gd().upcast::<Node3D>();
        let gpu = CrowdGpu::new(
            &mut owner,
            &models,
            &overrides,
            shadow_setting(self.cast_shadow),
            self.full_transform,
        )?;
        self.clip_count = first.len() as u32;
        self.built_models = models.iter().map(|m| m.instance_id()).collect();
        self.model_counts = vec![0; models.len()];
        self.model_reach = vec![0; models.len()];
        self.looks = (0..models.len()).map(|_| LookTable::new()).collect();
        self.variation_counts = models
            .iter()
            .map(|m| {
                m.bind()
                    .get_variations()
                    .map_or(1, |v| v.get_layers().max(1) as u32)
            })
            .collect();
        self.gpu = Some(gpu);
        Ok(())
    }

    /// Writes one instance of model `model_index` per actor id, with one look, either replacing
    /// the model's instances (and look table) or after them; nothing changes on an error.
    fn fill_model_actors(
        &mut self,
        model_index: i32,
        actor_ids: &[i32],
        variation: i32,
        tint: Color,
        append: bool,
        what: &str,
    ) {
        let Some(m) = self.model_for_look(model_index, variation, what) else {
            return;
        };
        // A replaced list gets a fresh look table, adopted only if the call succeeds.
        let mut fresh = LookTable::new();
        let table = if append {
            &mut self.looks[m]
        } else {
            &mut fresh
        };
        let look = match table.index_of(convert::rgba(tint), variation as u32) {
            Ok(look) => look,
            Err(e) => {
                godot_error!("vat_crowd: {what}: {e}");
                return;
            }
        };
        let first = if append { self.model_counts[m] } else { 0 };
        let n = actor_ids.len();
        if !self.model_room(m, first + n, what) {
            return;
        }
        let actor_count = self.actor_count as u32;
        let gpu = self.gpu.as_mut().expect("checked");
        let indices = &mut gpu.models[m].indices;
        indices.reserve(first + n);
        let packed = match crowd::pack_model_instances_bulk(
            &mut indices.bytes_mut_untracked()[first * 4..(first + n) * 4],
            actor_ids,
            look,
            actor_count,
        ) {
            Ok(packed) => packed,
            Err(e) => {
                godot_error!("vat_crowd: {what}(model {model_index}): {e}; model not changed");
                return;
            }
        };
        // The same list as last frame (steady equipment) is not uploaded again.
        if packed.changed {
            indices.mark_changed();
        }
        if !append {
            self.looks[m] = fresh;
        }
        self.model_reach[m] = if append {
            self.model_reach[m].max(packed.reach)
        } else {
            packed.reach
        };
        self.model_counts[m] = first + n;
    }

    /// Checks that model `model_index` exists and has `variation`; returns the model's index.
    fn model_for_look(&mut self, model_index: i32, variation: i32, what: &str) -> Option<usize> {
        if !self.ensure_gpu() {
            return None;
        }
        if model_index >= 0 && model_index as usize >= self.model_counts.len() && self.sync_models()
        {
            // `models` grew in place (e.g. `models.append(x)`): rebuilt for the new models.
            if !self.ensure_gpu() {
                return None;
            }
        }
        if model_index < 0 || model_index as usize >= self.model_counts.len() {
            godot_error!(
                "vat_crowd: {what}: model index {model_index} out of range ({} models)",
                self.model_counts.len()
            );
            return None;
        }
        let m = model_index as usize;
        if variation < 0 || variation as u32 >= self.variation_counts[m] {
            godot_error!(
                "vat_crowd: {what}: variation {variation} out of range (model {model_index} has {})",
                self.variation_counts[m]
            );
            return None;
        }
        Some(m)
    }

    fn look_for(
        &mut self,
        model_index: i32,
        variation: i32,
        tint: Color,
        what: &str,
    ) -> Option<u8> {
        let m = self.model_for_look(model_index, variation, what)?;
        match self.looks[m].index_of(convert::rgba(tint), variation as u32) {
            Ok(look) => Some(look),
            Err(e) => {
                godot_error!("vat_crowd: {what}: {e}");
                None
            }
        }
    }

    /// After the clock's origin moved, shifts every stored start time so poses do not jump.
    fn rebase_if_needed(&mut self, old_origin: f64) {
        let delta = (self.clock.origin() - old_origin) as f32;
        if delta == 0.0 {
            return;
        }
        let (n, stride) = (self.actor_count, self.stride());
        if let Some(gpu) = &mut self.gpu {
            gpu.actors.floats_mut()[..n * stride]
                .chunks_exact_mut(stride)
                .for_each(|a| a[4] -= delta);
        }
    }
}

/// Maps the exported int to Godot's enum (invalid values mean On).
pub fn shadow_setting(v: i32) -> ShadowCastingSetting {
    ShadowCastingSetting::try_from_ord(v).unwrap_or(ShadowCastingSetting::ON)
}
