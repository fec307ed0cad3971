//! The frame's per-actor and per-model writes: `add_actor`, `add_model` and the model lists of
//! `set_model_actors` / `add_model_actors`, with the checks they share.

use super::*;

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
        let checked = vat_core::crowd::speed(speed, "speed").and_then(|speed| {
            if start_time.is_nan() {
                return Ok((speed, clock.time()));
            }
            Ok((
                speed,
                vat_core::crowd::crowd_time(start_time, "start time")?,
            ))
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
        let rec = &mut gpu.records_mut(index + 1)[index * stride..(index + 1) * stride];
        crowd::pack_actor_record(&state, cols, rec);
        // Custom data costs nothing until some actor has some.
        if gpu.custom.is_some() || custom != [0.0; 4] {
            let texture = gpu.custom_mut(index + 1);
            let written = vat_core::crowd::write_custom_bulk(
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
        self.push_instance(model_index as usize, look, "add_model");
    }

    /// Attaches an instance of model `m` with look `look` to the actor added last, or reports
    /// (as `what`) that the model is full.
    pub(super) fn push_instance(&mut self, m: usize, look: u8, what: &str) {
        if !self.model_room(m, self.model_counts[m] + 1, what) {
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

    /// Checks that model `model_index` exists and has `variation`; returns the model's index,
    /// else reports (as `what`) why not.
    fn model_for_look(
        &mut self,
        setup: &Setup,
        model_index: i32,
        variation: i32,
        what: &str,
    ) -> Option<usize> {
        match self.check_model_look(setup, model_index, variation) {
            Ok(m) => Some(m),
            Err(why) => {
                if let Some(why) = why {
                    godot_error!("vat_crowd: {what}: {why}");
                }
                None
            }
        }
    }

    /// [`Frame::model_for_look`] without the report: `Err(Some(why))` for a model or variation
    /// out of range, `Err(None)` when the GPU objects could not be built (reported once by
    /// [`Frame::ensure_gpu`]).
    pub(super) fn check_model_look(
        &mut self,
        setup: &Setup,
        model_index: i32,
        variation: i32,
    ) -> Result<usize, Option<String>> {
        if !self.ensure_gpu(setup) {
            return Err(None);
        }
        if model_index >= 0
            && model_index as usize >= self.model_counts.len()
            && self.sync_models(setup)
        {
            // `models` grew in place (e.g. `models.append(x)`): rebuilt for the new models.
            if !self.ensure_gpu(setup) {
                return Err(None);
            }
        }
        if model_index < 0 || model_index as usize >= self.model_counts.len() {
            return Err(Some(format!(
                "model index {model_index} out of range ({} models)",
                self.model_counts.len()
            )));
        }
        let m = model_index as usize;
        if variation < 0 || variation as u32 >= self.variation_counts[m] {
            return Err(Some(format!(
                "variation {variation} out of range (model {model_index} has {})",
                self.variation_counts[m]
            )));
        }
        Ok(m)
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
