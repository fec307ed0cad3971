//! `AnimatedActorMeshInstance`'s immediate-mode calls: `begin()`, then per actor `add_actor()`
//! and `add_model()`, then `submit()`. The per-actor calls take `&self` and reach the frame
//! through its `RefCell` (see `immediate`).

use super::immediate::{borrow_frame, read_frame, NewActor};
use super::*;

const NODE: &str = "AnimatedActorMeshInstance";

#[godot_api(secondary)]
impl AnimatedActorMeshInstance {
    /// Starts a new frame: forgets every actor and model instance added before.
    #[func]
    pub(super) fn begin(&mut self) {
        main_thread_only!("AnimatedActorMeshInstance", "begin");
        self.sync_models();
        self.frame.get_mut().clear();
    }

    /// Adds an actor at `transform` (the whole transform with `full_transform`, else its position,
    /// yaw about +Y and uniform scale) playing
    /// `clip` since `start_time` (crowd seconds; NAN means now) at `speed`, with `custom` as its
    /// custom data (`inst.custom` in shaders). Returns its index for
    /// this frame, or -1 with an error if the transform is not finite, the clip is out of range,
    /// the speed is not finite or beyond +-65504 (an actor stores it as an f16), the start time is
    /// not finite or beyond +-2^32 s, `custom` is not finite, or the crowd is full.
    #[func]
    pub(super) fn add_actor(
        &self,
        transform: Transform3D,
        #[opt(default = 0)] clip: i32,
        #[opt(default = f64::NAN)] start_time: f64,
        #[opt(default = 1.0)] speed: f64,
        #[opt(default = Color::from_rgba(0.0, 0.0, 0.0, 0.0))] custom: Color,
    ) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "add_actor", -1);
        let actor = NewActor {
            transform,
            clip,
            start_time,
            speed,
            custom,
        };
        self.add_actor_with(actor, None)
    }

    /// Adds `actor` (with equipment set `equipment`'s models, if given) for `add_actor` and
    /// `add_equipped_actor`; returns its index or -1.
    fn add_actor_with(&self, actor: NewActor, equipment: Option<i32>) -> i32 {
        let what = if equipment.is_some() {
            "add_equipped_actor"
        } else {
            "add_actor"
        };
        let Some(mut frame) = borrow_frame(&self.frame, NODE, what) else {
            return -1;
        };
        let owner = || self.to_gd().upcast::<Node3D>();
        let setup = self.setup(&owner);
        match equipment {
            Some(id) => frame.add_equipped_actor(&setup, id, actor),
            None => frame.add_actor(&setup, actor),
        }
    }

    /// Makes `actor` (added this frame) cross-fade from `prev_clip`, which it had been playing
    /// since `prev_start_time`, into its clip over `blend_time` seconds from its start time.
    #[func]
    fn set_actor_blend(&self, actor: i32, prev_clip: i32, prev_start_time: f64, blend_time: f64) {
        main_thread_only!("AnimatedActorMeshInstance", "set_actor_blend");
        let checked = vat_core::crowd::crowd_time(prev_start_time, "previous start time")
            .and_then(|_| vat_core::crowd::blend_time(blend_time, "blend time"));
        if let Err(e) = checked {
            godot_error!("vat_crowd: set_actor_blend: {e}; nothing changed");
            return;
        }
        let Some(mut frame) = borrow_frame(&self.frame, NODE, "set_actor_blend") else {
            return;
        };
        // The previous start is passed relative to the clock's origin, as the records store
        // start times, so the f64 argument keeps its precision after hours of play.
        let origin = self.core.clock.origin();
        let blends = crowd::BulkBlends {
            actor_ids: &[actor],
            prev_clips: &[prev_clip],
            prev_start_times: &[(prev_start_time - origin) as f32],
            blend_times: &[blend_time as f32],
        };
        frame.apply_blends(&blends, 0.0, self.stride(), "set_actor_blend");
    }

    /// Attaches model `model_index` to the actor added last, with a texture `variation` and a `tint`.
    #[func]
    pub(super) fn add_model(
        &self,
        model_index: i32,
        #[opt(default = 0)] variation: i32,
        #[opt(default = Color::WHITE)] tint: Color,
    ) {
        main_thread_only!("AnimatedActorMeshInstance", "add_model");
        let Some(mut frame) = borrow_frame(&self.frame, NODE, "add_model") else {
            return;
        };
        let owner = || self.to_gd().upcast::<Node3D>();
        frame.add_model(&self.setup(&owner), model_index, variation, tint);
    }

    /// Defines (or replaces) equipment set `equipment` (0 to 4095): the models an actor added
    /// with `add_equipped_actor` carries, with a texture variation and a tint per model
    /// (`variations` and `tints` may be empty: variation 0, white). Kept across frames. Returns
    /// false with one error naming the problem (an id, model or variation out of range, arrays
    /// of different lengths, a tint that is not finite), and then nothing changes.
    #[func]
    fn set_equipment(
        &self,
        equipment: i32,
        models: PackedInt32Array,
        #[opt(default = &PackedInt32Array::new())] variations: PackedInt32Array,
        #[opt(default = &PackedColorArray::new())] tints: PackedColorArray,
    ) -> bool {
        main_thread_only!("AnimatedActorMeshInstance", "set_equipment", false);
        let Some(mut frame) = borrow_frame(&self.frame, NODE, "set_equipment") else {
            return false;
        };
        let owner = || self.to_gd().upcast::<Node3D>();
        let set = frame.set_equipment(
            &self.setup(&owner),
            equipment,
            models.as_slice(),
            variations.as_slice(),
            tints.as_slice(),
        );
        match set {
            Ok(()) => true,
            Err(e) => {
                godot_error!(
                    "vat_crowd: set_equipment({equipment}): {e}; equipment {equipment} not changed"
                );
                false
            }
        }
    }

    /// Forgets every equipment set (`set_equipment`).
    #[func]
    fn clear_equipment(&self) {
        main_thread_only!("AnimatedActorMeshInstance", "clear_equipment");
        if let Some(mut frame) = borrow_frame(&self.frame, NODE, "clear_equipment") {
            frame.clear_equipment();
        }
    }

    /// `add_actor` followed by `add_model` for every model of equipment set `equipment` (see
    /// `set_equipment`), in one call: an actor with three models costs one call from a script
    /// instead of four. Returns the actor's index, or -1 with an error (as `add_actor`, or an
    /// equipment set that was not defined; no actor is added then).
    #[func]
    fn add_equipped_actor(
        &self,
        transform: Transform3D,
        equipment: i32,
        #[opt(default = 0)] clip: i32,
        #[opt(default = f64::NAN)] start_time: f64,
        #[opt(default = 1.0)] speed: f64,
        #[opt(default = Color::from_rgba(0.0, 0.0, 0.0, 0.0))] custom: Color,
    ) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "add_equipped_actor", -1);
        let actor = NewActor {
            transform,
            clip,
            start_time,
            speed,
            custom,
        };
        self.add_actor_with(actor, Some(equipment))
    }

    /// Pushes this frame's actors and models to the GPU: one texture update per data texture.
    #[func]
    pub(super) fn submit(&mut self) {
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
        let time = self.core.clock.shader_time();
        let interpolate = self.core.interpolate;
        let actors = self.frame.get_mut().actor_count;
        let request = self.frame_request(actors, self.stride());
        let frame = self.frame.get_mut();
        let gpu = frame.gpu.as_mut().expect("ensured");
        let sent = gpu.sent_bytes();
        let mut bounds = Vec::with_capacity(gpu.models.len());
        for (m, model) in gpu.models.iter_mut().enumerate() {
            model.set_looks(&frame.looks[m]);
            bounds.push(frame.placed.for_model(&model.bounds));
        }
        gpu.submit(&frame.model_counts, &bounds, time, interpolate, &request);
        self.core.last_submit_bytes = (gpu.sent_bytes() - sent) as i64;
        frame.ends.finish(actors, self.core.clock.time());
        self.update_billboard();
        self.core.last_submit_usec = started.elapsed().as_micros() as i64;
    }

    /// Actors added this frame.
    #[func]
    fn get_actor_count(&self) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "get_actor_count");
        read_frame(&self.frame, NODE, "get_actor_count").map_or(0, |f| f.actor_count as i32)
    }

    /// Instances of model `model_index` this frame.
    #[func]
    fn get_model_instance_count(&self, model_index: i32) -> i32 {
        main_thread_only!("AnimatedActorMeshInstance", "get_model_instance_count");
        read_frame(&self.frame, NODE, "get_model_instance_count").map_or(0, |f| {
            f.model_counts
                .get(model_index as usize)
                .map_or(0, |c| *c as i32)
        })
    }
}
