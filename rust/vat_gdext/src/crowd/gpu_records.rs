//! A crowd's actor records on their way to the GPU: the placement, state and recent-state
//! textures made from them at each upload (a split of every record, or only what the battle
//! frame's calls wrote: see `vat_core::crowd::RecentStates::apply_listed`), and the placement
//! writer that fills the placement texture directly.

use godot::prelude::*;
use vat_core::bounds::Bounds;
use vat_core::crowd::split_records;

use super::data_texture::Written;
use super::gpu::{CrowdGpu, FrameRequest};

impl CrowdGpu {
    /// Brings the placement and state textures up to what was written since the last upload:
    /// a split of every record (comparing as it writes) after any writer but the battle frame's,
    /// else only the listed actors' states (the placements are in place already). Then uploads
    /// the textures that changed and binds new texture objects (after growth) to every material.
    pub(super) fn upload_records(&mut self, request: &FrameRequest, custom: bool) {
        let n = request
            .actors
            .min(self.actors.floats().len() / request.stride.max(1));
        let mut fresh: Vec<(&str, Variant)> = Vec::new();
        let (mut layers, mut layer_count) = (0, 0);
        let written = match self.actors.take_written() {
            // The actor count changed under the listed writes (a `begin()` since): split.
            Written::Listed { moved, .. } if !self.textures_track(n) => Written::All { moved },
            w => w,
        };
        match written {
            Written::Nothing => {}
            Written::All { moved: wrote } => {
                self.catch_up();
                self.placements.reserve(n);
                let regrown = self.states.reserve(n);
                let records = self.actors.floats();
                let placements = self.placements.floats_mut_untracked();
                let states = self.states.floats_mut_untracked();
                let stride = request.stride;
                let recent = &mut self.recent.states;
                let (moved, resend) = crate::workers::install_for(n, || {
                    if stride == 8 {
                        let c = recent.split(records, n, placements, states, regrown);
                        (layers, layer_count) = (c.layers, c.layer_count);
                        (c.placements, c.states)
                    } else {
                        let c = split_records(records, stride, n, placements, states);
                        (c.placements, c.states)
                    }
                });
                self.mark_changed(moved || wrote, resend);
            }
            Written::Listed { moved, listed } => {
                // Only yaw-and-scale records are written this way, and only while the
                // textures track this crowd (see `move_actors` and `RecordStore::states_mut`).
                let c = self.recent.states.apply_listed(
                    self.actors.floats(),
                    n,
                    self.placements.floats_mut_untracked(),
                    self.states.floats_mut_untracked(),
                    &listed,
                    moved,
                );
                (layers, layer_count) = (c.layers, c.layer_count);
                self.mark_changed(c.placements, c.states);
            }
        }
        if let Some(t) = self.placements.upload() {
            fresh.push(("vat_placements", t.to_variant()));
        }
        if let Some(t) = self.states.upload() {
            fresh.push(("vat_states", t.to_variant()));
        }
        if let Some(t) = self.recent.upload(layers, layer_count) {
            fresh.push(("vat_recent_states", t.to_variant()));
        }
        if custom {
            if let Some(c) = &mut self.custom {
                // Every actor the shader may read has a texel (0 until set).
                c.reserve(n);
                if let Some(t) = c.upload() {
                    fresh.push(("vat_custom", t.to_variant()));
                }
            }
        }
        for (name, t) in fresh {
            let has_custom = name == "vat_custom";
            for m in self.materials_mut() {
                m.set_shader_parameter(name, &t);
                if has_custom {
                    m.set_shader_parameter("vat_has_custom", &true.to_variant());
                }
            }
        }
    }

    /// Marks the placement and state textures for upload.
    fn mark_changed(&mut self, placements: bool, states: bool) {
        if placements {
            self.placements.mark_changed();
        }
        if states {
            self.states.mark_changed();
        }
    }

    /// True when the records of `n` actors may be written by `move_actors` and
    /// `RecordStore::states_mut` without a split: yaw-and-scale records, nothing written that
    /// calls for one, and the textures and recent-state slots last made for `n` actors.
    pub fn tracks(&self, n: usize, stride: usize) -> bool {
        stride == vat_core::crowd::ACTOR_FLOATS && self.actors.is_split() && self.textures_track(n)
    }

    /// The textures and recent-state slots were last made for `n` actors.
    fn textures_track(&self, n: usize) -> bool {
        self.placements.capacity() >= n
            && self.states.capacity() >= n
            && self.recent.states.tracks(n)
    }

    /// Moves every one of the `n` actors (yaw-and-scale records) to `placements` (`x, y, z,
    /// yaw`), keeping their states; returns the positions' bounds. Where the textures track the
    /// crowd ([`CrowdGpu::tracks`]) the placements go straight into the placement texture (the
    /// records catch up when something reads them), so the next upload sends it without a
    /// split.
    pub fn move_actors(
        &mut self,
        n: usize,
        placements: &[[f32; 4]],
    ) -> Result<Bounds, vat_core::error::VatError> {
        let floats = vat_core::crowd::ACTOR_FLOATS;
        if !self.tracks(n, floats) {
            let records = &mut self.records_mut(n)[..n * floats];
            let moved = || vat_core::crowd::move_actors_bulk(records, placements);
            return crate::workers::install_for(n, moved);
        }
        let texels = self.placements.floats_mut_untracked();
        let states = &self.recent.states;
        let (bounds, changed) =
            states.move_actors(n, placements, texels, &crate::workers::PoolHelpers)?;
        self.actors.note_moved(n, changed);
        Ok(bounds)
    }

    /// The records of (at least) `n` actors, caught up, to write anywhere: the next upload
    /// splits them all.
    pub fn records_mut(&mut self, n: usize) -> &mut [f32] {
        self.catch_up();
        self.actors.reserve(n);
        self.actors.floats_mut()
    }

    /// Brings the records' placements up to the placement writer's (see `move_actors`): call it
    /// before writing through `actors.floats_mut()` (as `records_mut` does).
    pub fn catch_up(&mut self) {
        let behind = std::mem::take(&mut self.actors.behind);
        if behind > 0 {
            let texels = self.placements.floats();
            let records = self.actors.floats_mut_catching_up();
            vat_core::crowd::catch_up_placements(
                &mut records[..behind * vat_core::crowd::ACTOR_FLOATS],
                &texels[..behind * 4],
            );
        }
    }
}
