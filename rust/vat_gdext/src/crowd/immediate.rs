//! The immediate-mode frame of `AnimatedActorMeshInstance`: what `begin()`, `add_actor()`,
//! `add_model()` and the bulk calls fill and `submit()` sends, with the GPU objects it is sent
//! to.
//!
//! The node keeps a [`Frame`] in a `RefCell` so that its per-actor calls can take `&self`:
//! gdext guards a `&mut self` call with an exclusive borrow that costs about as much as the
//! rest of `add_model()`, paid several times per actor. The node's `&mut self` calls reach the
//! frame with `RefCell::get_mut` (no check); its `&self` calls with [`borrow_frame`], which
//! reports a call made while another is under way (from a callback that call caused, e.g. a
//! script `Logger` that calls back on an error) instead of panicking.

use std::cell::{Ref, RefCell, RefMut};

use godot::classes::{Material, Node3D};
use godot::prelude::*;
use vat_core::clip_end::FinishTracker;
use vat_core::clock::CrowdClock;
use vat_core::crowd::{self, ActorState, LookTable};
use vat_core::validate;

use crate::convert;
use crate::crowd::gpu::{report_once, CrowdGpu};
use crate::crowd::looks::PlacedBounds;
use crate::vertex_animation::VertexAnimation;
use crate::workers;

/// This frame's actors and model instances, and the GPU objects built for the models.
#[derive(Default)]
pub struct Frame {
    pub gpu: Option<CrowdGpu>,
    gpu_error: Option<String>,
    pub clip_count: u32,
    pub actor_count: usize,
    pub model_counts: Vec<usize>,
    /// Per model, one past the highest actor index its instances use (0 for none).
    model_reach: Vec<usize>,
    pub looks: Vec<LookTable>,
    variation_counts: Vec<u32>,
    pub placed: PlacedBounds,
    /// Each actor's playback and the end times due, for `get_finished_actors`.
    pub ends: FinishTracker,
    /// The models (by instance id) the GPU objects were built for, to notice edits made in place
    /// (`models.append(x)` changes the array the getter returns without calling the setter).
    built_models: Vec<InstanceId>,
}

/// What the frame reads from its node: the properties that shape the GPU objects and the
/// records, and the node itself (asked for only when the GPU objects are built).
pub struct Setup<'a> {
    pub models: &'a Array<Option<Gd<VertexAnimation>>>,
    pub overrides: &'a Array<Option<Gd<Material>>>,
    pub cast_shadow: i32,
    pub full_transform: bool,
    pub clock: &'a CrowdClock,
    pub owner: &'a dyn Fn() -> Gd<Node3D>,
}

impl Setup<'_> {
    /// Floats per actor record.
    pub fn stride(&self) -> usize {
        crowd::record_floats(self.full_transform)
    }
}

/// The frame for a `&self` call named `what` on `node`, or `None` after reporting that another
/// call on the node holds it.
pub fn borrow_frame<'a>(
    cell: &'a RefCell<Frame>,
    node: &str,
    what: &str,
) -> Option<RefMut<'a, Frame>> {
    match cell.try_borrow_mut() {
        Ok(frame) => Some(frame),
        Err(_) => {
            report_busy(node, what);
            None
        }
    }
}

/// The frame for a reading `&self` call (see [`borrow_frame`]).
pub fn read_frame<'a>(cell: &'a RefCell<Frame>, node: &str, what: &str) -> Option<Ref<'a, Frame>> {
    match cell.try_borrow() {
        Ok(frame) => Some(frame),
        Err(_) => {
            report_busy(node, what);
            None
        }
    }
}

fn report_busy(node: &str, what: &str) {
    godot_error!(
        "vat_crowd: {node}.{what}() was called while another call on the same node was under \
         way (from a callback that call caused) and did nothing"
    );
}

impl Frame {
    /// Forgets every actor and model instance (the GPU objects stay).
    pub fn clear(&mut self) {
        self.actor_count = 0;
        self.model_counts.iter_mut().for_each(|c| *c = 0);
        self.model_reach.iter_mut().for_each(|r| *r = 0);
        self.looks.iter_mut().for_each(|l| l.clear());
        self.placed = PlacedBounds::default();
    }

    /// Frees the GPU objects (they are built again on next use) and forgets the frame.
    pub fn reset_gpu(&mut self) {
        if let Some(gpu) = self.gpu.take() {
            gpu.free();
        }
        self.gpu_error = None;
        self.clear();
    }

    /// Rebuilds the GPU objects (dropping this frame's actors) if `models` no longer holds what
    /// they were built for, as after `models.append(x)`; returns whether it did.
    pub fn sync_models(&mut self, setup: &Setup) -> bool {
        if self.gpu.is_none() {
            return false;
        }
        let same = setup.models.len() == self.built_models.len()
            && setup
                .models
                .iter_shared()
                .zip(&self.built_models)
                .all(|(m, id)| m.is_some_and(|m| m.instance_id() == *id));
        if !same {
            self.reset_gpu();
        }
        !same
    }

    /// Builds the GPU objects on first use; reports a bad model set once.
    pub fn ensure_gpu(&mut self, setup: &Setup) -> bool {
        if self.gpu.is_some() {
            return true;
        }
        match self.build_gpu(setup) {
            Ok(()) => true,
            Err(e) => {
                let name = (setup.owner)().get_name().to_string();
                report_once(&mut self.gpu_error, &name, e);
                false
            }
        }
    }

    fn build_gpu(&mut self, setup: &Setup) -> Result<(), String> {
        // The same checks the editor shows as configuration warnings; the first one is the error.
        if let Some(problem) = crate::editor::model_problems(setup.models)
            .into_iter()
            .next()
        {
            return Err(problem);
        }
        let models: Vec<Gd<VertexAnimation>> = setup.models.iter_shared().flatten().collect();
        let first = models[0].bind().clips();
        let overrides: Vec<Option<Gd<Material>>> = setup.overrides.iter_shared().collect();
        let mut owner = (setup.owner)();
        let gpu = CrowdGpu::new(
            &mut owner,
            &models,
            &overrides,
            crate::animated_actor_mesh_instance::shadow_setting(setup.cast_shadow),
            setup.full_transform,
        )?;
        self.clip_count = first.len() as u32;
        self.ends.reset(first);
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

    /// Sets this frame's actor count from a bulk call. A model list that indexes actors beyond
    /// it would draw stale records, so it is dropped (the usual order, `set_actors` then
    /// `set_model_actors`, sets it again).
    pub fn set_actor_count(&mut self, n: usize) {
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

    /// True if a frame of `n` actors fits (the 24-bit actor index, the renderer's texture size);
    /// else reports the limit. Needs the GPU objects.
    pub fn actor_room(&self, n: usize, full_transform: bool, what: &str) -> bool {
        let Some(gpu) = &self.gpu else {
            return false;
        };
        let texels = crowd::record_texels(full_transform);
        match crowd::check_item_count("actors", n, texels, gpu.max_texture_size) {
            Ok(()) => true,
            Err(e) => {
                godot_error!("vat_crowd: {what}: {e}; this frame's actors were not changed");
                false
            }
        }
    }

    /// True if model `m` can hold `n` instances (one texel each); else reports the limit.
    pub fn model_room(&self, m: usize, n: usize, what: &str) -> bool {
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

    /// Applies cross-fades to this frame's actors, or reports why not (nothing changed).
    /// `origin` puts the records' stored start times (relative to the clock's origin) in the
    /// time frame of `blends`' previous start times: the clock's origin when those are crowd
    /// seconds, 0 when they are already relative to it.
    pub fn apply_blends(
        &mut self,
        blends: &crowd::BulkBlends,
        origin: f64,
        stride: usize,
        what: &str,
    ) {
        let (n, clip_count) = (self.actor_count, self.clip_count);
        let Some(gpu) = self.gpu.as_mut() else {
            godot_error!("vat_crowd: {what}: no actors this frame");
            return;
        };
        let records = &mut gpu.actors.floats_mut()[..n * stride];
        let applied = workers::install_for(blends.actor_ids.len(), || {
            crowd::apply_blends_bulk(records, stride, blends, clip_count, origin)
        });
        if let Err(e) = applied {
            godot_error!("vat_crowd: {what}: {e}; nothing changed");
        }
    }

    /// After the clock's origin moved by `delta` seconds, shifts every stored start time so
    /// poses do not jump.
    pub fn rebase(&mut self, delta: f32, stride: usize) {
        let n = self.actor_count;
        if let Some(gpu) = &mut self.gpu {
            gpu.actors.floats_mut()[..n * stride]
                .chunks_exact_mut(stride)
                .for_each(|a| a[4] -= delta);
        }
    }
}

/// One `add_actor()` call's arguments.
pub struct NewActor {
    pub transform: Transform3D,
    pub clip: i32,
    /// Crowd seconds; NAN means now.
    pub start_time: f64,
    pub speed: f64,
    pub custom: Color,
}

impl Frame {
    /// Adds an actor (see `AnimatedActorMeshInstance.add_actor`); returns its index for this
    /// frame, or -1 after reporting why not.
    pub fn add_actor(&mut self, setup: &Setup, actor: NewActor) -> i32 {
        if !self.ensure_gpu(setup) {
            return -1;
        }
        let NewActor {
            transform,
            clip,
            start_time,
            speed,
            custom,
        } = actor;
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
        let clock = setup.clock;
        let checked = validate::speed(speed, "speed").and_then(|speed| {
            if start_time.is_nan() {
                return Ok((speed, clock.time()));
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
        if !self.actor_room(self.actor_count + 1, setup.full_transform, "add_actor") {
            return -1;
        }
        let state = ActorState {
            position,
            yaw,
            scale,
            clip: clip as u32,
            prev_clip: clip as u32,
            start_time: clock.local(start),
            speed,
            ..ActorState::default()
        };
        let index = self.actor_count;
        let stride = setup.stride();
        let cols = setup.full_transform.then(|| convert::basis_cols(transform));
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

    /// Attaches model `model_index` to the actor added last (see
    /// `AnimatedActorMeshInstance.add_model`), or reports why not.
    pub fn add_model(&mut self, setup: &Setup, model_index: i32, variation: i32, tint: Color) {
        if self.actor_count == 0 {
            godot_error!("vat_crowd: add_model called before any add_actor this frame; ignored");
            return;
        }
        let Some(look) = self.look_for(setup, model_index, variation, tint, "add_model") else {
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

    /// Writes one instance of model `model_index` per actor id, with one look, either replacing
    /// the model's instances (and look table) or after them; nothing changes on an error.
    pub fn fill_model_actors(
        &mut self,
        setup: &Setup,
        model_index: i32,
        actor_ids: &[i32],
        look: (i32, Color),
        append: bool,
        what: &str,
    ) {
        let (variation, tint) = look;
        let Some(m) = self.model_for_look(setup, model_index, variation, what) else {
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
        let out = &mut indices.bytes_mut_untracked()[first * 4..(first + n) * 4];
        let packed = workers::install_for(n, || {
            crowd::pack_model_instances_bulk(out, actor_ids, look, actor_count)
        });
        let packed = match packed {
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
    fn model_for_look(
        &mut self,
        setup: &Setup,
        model_index: i32,
        variation: i32,
        what: &str,
    ) -> Option<usize> {
        if !self.ensure_gpu(setup) {
            return None;
        }
        if model_index >= 0
            && model_index as usize >= self.model_counts.len()
            && self.sync_models(setup)
        {
            // `models` grew in place (e.g. `models.append(x)`): rebuilt for the new models.
            if !self.ensure_gpu(setup) {
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
        setup: &Setup,
        model_index: i32,
        variation: i32,
        tint: Color,
        what: &str,
    ) -> Option<u8> {
        let m = self.model_for_look(setup, model_index, variation, what)?;
        match self.looks[m].index_of(convert::rgba(tint), variation as u32) {
            Ok(look) => Some(look),
            Err(e) => {
                godot_error!("vat_crowd: {what}: {e}");
                None
            }
        }
    }
}
