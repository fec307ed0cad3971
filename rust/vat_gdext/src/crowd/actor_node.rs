//! `AnimatedActorMeshInstance`'s helpers that Godot does not see: GPU setup, limits, model
//! lists, blends and the clock rebase. A child module of the node's file (see its `#[path]`).

use super::*;
use crate::workers;

impl AnimatedActorMeshInstance {
    /// Runs the crowd frame again if the camera, the node or a culling or LOD property changed
    /// since it last ran (called every process frame).
    pub(super) fn refresh_frame(&mut self) {
        if self.gpu.is_none() {
            return;
        }
        let request = self.frame_request(self.actor_count, self.stride());
        if let Some(gpu) = &mut self.gpu {
            gpu.refresh(&request);
        }
    }

    /// Sets this frame's actor count from a bulk call. A model list that indexes actors beyond
    /// it would draw stale records, so it is dropped (the usual order, `set_actors` then
    /// `set_model_actors`, sets it again).
    pub(super) fn set_actor_count(&mut self, n: usize) {
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
    pub(super) fn apply_blends(&mut self, blends: &crowd::BulkBlends, origin: f64, what: &str) {
        let (n, stride, clip_count) = (self.actor_count, self.stride(), self.clip_count);
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

    /// True if a frame of `n` actors fits (the 24-bit actor index, the renderer's texture size);
    /// else reports the limit. Needs the GPU objects.
    pub(super) fn actor_room(&self, n: usize, what: &str) -> bool {
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
    pub(super) fn model_room(&self, m: usize, n: usize, what: &str) -> bool {
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
    pub(super) fn stride(&self) -> usize {
        crowd::record_floats(self.full_transform)
    }

    /// Rebuilds the GPU objects (dropping this frame's actors) if `models` no longer holds what
    /// they were built for, as after `models.append(x)`; returns whether it did.
    pub(super) fn sync_models(&mut self) -> bool {
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

    pub(super) fn reset_gpu(&mut self) {
        if let Some(gpu) = self.gpu.take() {
            gpu.free();
        }
        self.gpu_error = None;
        self.begin();
    }

    /// Builds the GPU objects on first use; reports a bad model set once.
    pub(super) fn ensure_gpu(&mut self) -> bool {
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

    pub(super) fn build_gpu(&mut self) -> Result<(), String> {
        // The same checks the editor shows as configuration warnings; the first one is the error.
        if let Some(problem) = crate::editor::model_problems(&self.models)
            .into_iter()
            .next()
        {
            return Err(problem);
        }
        let models: Vec<Gd<VertexAnimation>> = self.models.iter_shared().flatten().collect();
        let first = models[0].bind().clips();
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

    /// Writes one instance of model `model_index` per actor id, with one look, either replacing
    /// the model's instances (and look table) or after them; nothing changes on an error.
    pub(super) fn fill_model_actors(
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
    pub(super) fn model_for_look(
        &mut self,
        model_index: i32,
        variation: i32,
        what: &str,
    ) -> Option<usize> {
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

    pub(super) fn look_for(
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
    pub(super) fn rebase_if_needed(&mut self, old_origin: f64) {
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
