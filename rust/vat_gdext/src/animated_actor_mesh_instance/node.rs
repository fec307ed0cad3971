//! `AnimatedActorMeshInstance`'s helpers that Godot does not see: the way to its frame (see
//! `crowd::immediate`), GPU setup and the clock rebase.

use std::cell::Ref;

use super::immediate::{read_frame, Frame, Setup};
use super::*;

/// The node's fields the frame reads, borrowed field by field (so `parts` can lend the frame
/// beside them).
macro_rules! setup_of {
    ($node:expr, $owner:expr) => {
        Setup {
            models: &$node.models,
            overrides: &$node.material_overrides,
            cast_shadow: $node.core.cast_shadow,
            full_transform: $node.core.full_transform,
            gpu_driven: $node.core.gpu_driven,
            clock: &$node.core.clock,
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

    /// Floats per actor record.
    pub(super) fn stride(&self) -> usize {
        crowd::record_floats(self.core.full_transform)
    }

    /// Rebuilds the GPU objects (dropping this frame's actors) if `models` no longer holds what
    /// they were built for, as after `models.append(x)`; returns whether it did.
    pub(super) fn sync_models(&mut self) -> bool {
        let gd = self.to_gd().upcast::<Node3D>();
        let owner = move || gd.clone();
        let (setup, frame) = self.parts(&owner);
        frame.sync_models(&setup)
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
}

impl CrowdNode for AnimatedActorMeshInstance {
    /// None also after reporting that another call on the node holds the frame.
    fn gpu_ref(&self, what: &str) -> Option<impl std::ops::Deref<Target = CrowdGpu> + '_> {
        let frame = read_frame(&self.frame, "AnimatedActorMeshInstance", what)?;
        Ref::filter_map(frame, |f| f.gpu.as_ref()).ok()
    }

    fn gpu_mut(&mut self) -> Option<&mut CrowdGpu> {
        self.frame.get_mut().gpu.as_mut()
    }

    /// Also forgets this frame's actors.
    fn reset_gpu(&mut self) {
        self.frame.get_mut().reset_gpu();
    }

    fn refresh_frame(&mut self) {
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

    /// Shifts every stored start time so poses do not jump.
    fn clock_rebased(&mut self, old_origin: f64) {
        let delta = (self.core.clock.origin() - old_origin) as f32;
        if delta == 0.0 {
            return;
        }
        let stride = self.stride();
        self.frame.get_mut().rebase(delta, stride);
    }
}
