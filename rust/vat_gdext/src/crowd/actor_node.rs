//! `AnimatedActorMeshInstance`'s helpers that Godot does not see: the way to its frame (see
//! `crowd::immediate`), GPU setup and the clock rebase. A child module of the node's file (see
//! its `#[path]`).

use std::cell::Ref;

use super::*;
use crate::crowd::immediate::{read_frame, Frame, Setup};

/// The node's fields the frame reads, borrowed field by field (so `parts` can lend the frame
/// beside them).
macro_rules! setup_of {
    ($node:expr, $owner:expr) => {
        Setup {
            models: &$node.models,
            overrides: &$node.material_overrides,
            cast_shadow: $node.cast_shadow,
            full_transform: $node.full_transform,
            clock: &$node.clock,
            owner: $owner,
        }
    };
}

impl AnimatedActorMeshInstance {
    /// What the frame reads from the node, for a `&self` call (`owner` gives the node).
    pub(super) fn setup<'a>(&'a self, owner: &'a dyn Fn() -> Gd<Node3D>) -> Setup<'a> {
        setup_of!(self, owner)
    }

    /// What the frame reads from the node, and the frame, for a `&mut self` call: gdext runs no
    /// other call on the node meanwhile, so no borrow of the frame can be out.
    pub(super) fn parts<'a>(
        &'a mut self,
        owner: &'a dyn Fn() -> Gd<Node3D>,
    ) -> (Setup<'a>, &'a mut Frame) {
        let setup = setup_of!(self, owner);
        (setup, self.frame.get_mut())
    }

    /// The crowd's GPU objects for a `&self` call named `what` (none before they are built, or
    /// after reporting that another call on the node holds the frame).
    pub(crate) fn gpu_ref(&self, what: &str) -> Option<Ref<'_, CrowdGpu>> {
        let frame = read_frame(&self.frame, "AnimatedActorMeshInstance", what)?;
        Ref::filter_map(frame, |f| f.gpu.as_ref()).ok()
    }

    /// The crowd's GPU objects, for a `&mut self` call.
    pub(crate) fn gpu_mut(&mut self) -> Option<&mut CrowdGpu> {
        self.frame.get_mut().gpu.as_mut()
    }

    /// Runs the crowd frame again if the camera, the node or a culling or LOD property changed
    /// since it last ran (called every process frame).
    pub(super) fn refresh_frame(&mut self) {
        let frame = self.frame.get_mut();
        if frame.gpu.is_none() {
            return;
        }
        let actors = frame.actor_count;
        let request = self.frame_request(actors, self.stride());
        if let Some(gpu) = self.gpu_mut() {
            gpu.refresh(&request);
        }
    }

    /// Floats per actor record.
    pub(super) fn stride(&self) -> usize {
        crowd::record_floats(self.full_transform)
    }

    /// Rebuilds the GPU objects (dropping this frame's actors) if `models` no longer holds what
    /// they were built for, as after `models.append(x)`; returns whether it did.
    pub(super) fn sync_models(&mut self) -> bool {
        let gd = self.to_gd().upcast::<Node3D>();
        let owner = move || gd.clone();
        let (setup, frame) = self.parts(&owner);
        frame.sync_models(&setup)
    }

    /// Frees the GPU objects (built again on next use) and forgets this frame's actors.
    pub(super) fn reset_gpu(&mut self) {
        self.frame.get_mut().reset_gpu();
    }

    /// Builds the GPU objects on first use; reports a bad model set once.
    pub(super) fn ensure_gpu(&mut self) -> bool {
        if self.frame.get_mut().gpu.is_some() {
            return true;
        }
        let gd = self.to_gd().upcast::<Node3D>();
        let owner = move || gd.clone();
        let (setup, frame) = self.parts(&owner);
        frame.ensure_gpu(&setup)
    }

    /// After the clock's origin moved, shifts every stored start time so poses do not jump.
    pub(super) fn rebase_if_needed(&mut self, old_origin: f64) {
        let delta = (self.clock.origin() - old_origin) as f32;
        if delta == 0.0 {
            return;
        }
        let stride = self.stride();
        self.frame.get_mut().rebase(delta, stride);
    }
}
