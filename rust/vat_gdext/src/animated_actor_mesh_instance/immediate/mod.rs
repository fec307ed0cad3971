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
use vat_core::clock::CrowdClock;
use vat_core::crowd::FinishTracker;
use vat_core::crowd::{self, ActorState, LookTable};

use crate::convert;
use crate::crowd::gpu::{report_once, CrowdGpu};
use crate::crowd::looks::PlacedBounds;
use crate::vertex_animation::VertexAnimation;
use crate::workers;

mod add;
mod equipment;
pub use add::NewActor;

/// This frame's actors and model instances, and the GPU objects built for the models.
#[derive(Default)]
pub struct Frame {
    /// The GPU objects, built on first use for the models of the time.
    pub gpu: Option<CrowdGpu>,
    /// The last GPU setup error reported (each is reported once).
    gpu_error: Option<String>,
    /// Clips in the models' shared clip table.
    pub clip_count: u32,
    /// Actors added this frame.
    pub actor_count: usize,
    /// Per model, its instances this frame.
    pub model_counts: Vec<usize>,
    /// Per model, one past the highest actor index its instances use (0 for none).
    model_reach: Vec<usize>,
    /// Per model, the looks (tint and variation) its instances use this frame.
    pub looks: Vec<LookTable>,
    /// Per model, its texture variations (1 without any).
    variation_counts: Vec<u32>,
    /// Bounds of this frame's actors, for culling.
    pub placed: PlacedBounds,
    /// Each actor's playback and the end times due, for `get_finished_actors`.
    pub ends: FinishTracker,
    /// The models (by instance id) the GPU objects were built for, to notice edits made in place
    /// (`models.append(x)` changes the array the getter returns without calling the setter).
    built_models: Vec<InstanceId>,
    /// Equipment sets by id (`set_equipment`); kept across frames.
    equipment: Vec<Option<Vec<equipment::Equip>>>,
}

/// What the frame reads from its node: the properties that shape the GPU objects and the
/// records, and the node itself (asked for only when the GPU objects are built).
pub struct Setup<'a> {
    /// The node's `models`.
    pub models: &'a Array<Option<Gd<VertexAnimation>>>,
    /// The node's `material_overrides`.
    pub overrides: &'a Array<Option<Gd<Material>>>,
    /// The node's `cast_shadow`.
    pub cast_shadow: i32,
    /// The node's `full_transform`.
    pub full_transform: bool,
    /// The node's `gpu_driven`.
    pub gpu_driven: bool,
    /// The crowd clock (start times are stored relative to its origin).
    pub clock: &'a CrowdClock,
    /// The node, to own the GPU objects and name it in errors.
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
            crate::crowd::core::shadow_setting(setup.cast_shadow),
            setup.full_transform,
            setup.gpu_driven,
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
        let records = if gpu.tracks(n, stride) {
            &mut gpu.actors.states_mut(blends.actor_ids, n)[..n * stride]
        } else {
            &mut gpu.records_mut(n)[..n * stride]
        };
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
            gpu.records_mut(n)[..n * stride]
                .chunks_exact_mut(stride)
                .for_each(|a| a[4] -= delta);
        }
    }
}
