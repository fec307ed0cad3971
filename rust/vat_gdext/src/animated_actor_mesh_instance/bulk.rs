//! `AnimatedActorMeshInstance`'s bulk calls: whole frames of actors, model lists and blends from
//! packed arrays.

use super::*;
use crate::crowd::looks::PlacedBounds;
use crate::workers;

#[godot_api(secondary)]
impl AnimatedActorMeshInstance {
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
        let (origin, stride) = (self.core.clock.origin(), self.stride());
        let frame = self.frame.get_mut();
        frame.apply_blends(&blends, origin, stride, "set_actor_blends");
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
        let points = convert::vec3_slice(positions.as_slice());
        let origin = self.core.clock.origin() as f32;
        let (stride, full) = (self.stride(), self.core.full_transform);
        let frame = self.frame.get_mut();
        if !frame.actor_room(n, full, "set_actors") {
            return;
        }
        let clip_count = frame.clip_count;
        let gpu = frame.gpu.as_mut().expect("ensured");
        let out = &mut gpu.records_mut(n)[..n * stride];
        let clips = (!clips.is_empty()).then_some(clips.as_slice());
        let starts = (!start_times.is_empty()).then_some(start_times.as_slice());
        let yaws = yaws.as_slice();
        let packed = workers::install_for(n, || {
            crowd::pack_actors_bulk(
                out,
                points,
                yaws,
                clips,
                starts,
                crowd::BulkOptions {
                    n_clips: clip_count,
                    time_origin: origin,
                    full_transform: full,
                },
            )
        });
        let placed = match packed {
            Ok(placed) => placed,
            Err(e) => {
                godot_error!("vat_crowd: set_actors: {e}; this frame's actors were not changed");
                return;
            }
        };
        frame.set_actor_count(n);
        frame.placed = PlacedBounds::of_positions(&placed);
        frame.ends.set_bulk(n, clips, starts);
    }

    /// Moves this frame's actors without touching their animation: `placements[i]` is actor
    /// `i`'s `(x, y, z, yaw)` (yaw in radians about +Y), the layout of the actor's record, so
    /// the array is copied as it is. One entry per actor (`get_actor_count()`); clips, times,
    /// speeds, scales, cross-fades and model lists are kept, so a frame where only positions
    /// changed uploads 16 bytes per actor and no animation state. Set the actors first with
    /// `set_actors` (or `add_actor`); needs `full_transform` off (use `set_actor_transforms`).
    /// If any entry is not finite, or the length is not the actor count, it reports the first
    /// problem and changes nothing.
    #[func]
    fn set_actor_placements(&mut self, placements: PackedVector4Array) {
        main_thread_only!("AnimatedActorMeshInstance", "set_actor_placements");
        self.sync_models();
        if self.core.full_transform {
            godot_error!(
                "vat_crowd: set_actor_placements: the actors have full transforms \
                 (full_transform = true); use set_actor_transforms; nothing changed"
            );
            return;
        }
        if !self.ensure_gpu() {
            return;
        }
        let frame = self.frame.get_mut();
        let n = frame.actor_count;
        let gpu = frame.gpu.as_mut().expect("ensured");
        let placements = convert::vec4_slice(placements.as_slice());
        match gpu.move_actors(n, placements) {
            Ok(positions) => frame.placed = frame.placed.moved(&positions),
            Err(e) => godot_error!("vat_crowd: set_actor_placements: {e}; nothing changed"),
        }
    }

    /// Makes actor `actor_ids[i]` play clip `clips[i]` from `start_times[i]` (crowd seconds),
    /// without a cross-fade (add one with `set_actor_blends`), keeping its placement, speed,
    /// scale and custom data: the call for the few actors that switch clips in a frame. If any
    /// entry is bad (an actor or clip out of range, a time that is not finite, arrays of
    /// different lengths) it reports the first and changes nothing.
    #[func]
    fn set_actor_clips(
        &mut self,
        actor_ids: PackedInt32Array,
        clips: PackedInt32Array,
        start_times: PackedFloat32Array,
    ) {
        main_thread_only!("AnimatedActorMeshInstance", "set_actor_clips");
        self.sync_models();
        if !self.ensure_gpu() {
            return;
        }
        let (stride, origin) = (self.stride(), self.core.clock.origin() as f32);
        let frame = self.frame.get_mut();
        let (n, clip_count) = (frame.actor_count, frame.clip_count);
        let gpu = frame.gpu.as_mut().expect("ensured");
        let ids = actor_ids.as_slice();
        let records = if gpu.tracks(n, stride) {
            &mut gpu.actors.states_mut(ids, n)[..n * stride]
        } else {
            &mut gpu.records_mut(n)[..n * stride]
        };
        let changed = vat_core::crowd::set_clips_bulk(
            records,
            stride,
            ids,
            clips.as_slice(),
            start_times.as_slice(),
            clip_count,
            origin,
        );
        match changed {
            Ok(changes) => {
                frame.ends.set_changes(&changes);
            }
            Err(e) => godot_error!("vat_crowd: set_actor_clips: {e}; nothing changed"),
        }
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
        if !self.core.full_transform {
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
        let origin = self.core.clock.origin() as f32;
        let frame = self.frame.get_mut();
        if !frame.actor_room(n, true, "set_actor_transforms") {
            return;
        }
        let clip_count = frame.clip_count;
        let gpu = frame.gpu.as_mut().expect("ensured");
        let out = &mut gpu.records_mut(n)[..n * crowd::ACTOR_FLOATS_FULL];
        let clips = (!clips.is_empty()).then_some(clips.as_slice());
        let starts = (!start_times.is_empty()).then_some(start_times.as_slice());
        let transforms = transforms.as_slice();
        let packed = workers::install_for(n, || {
            crowd::pack_actor_transforms_bulk(out, transforms, clips, starts, clip_count, origin)
        });
        match packed {
            Ok(placed) => {
                frame.set_actor_count(n);
                frame.ends.set_bulk(n, clips, starts);
                frame.placed = PlacedBounds::of_transforms(&placed);
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
        let gd = self.to_gd().upcast::<Node3D>();
        let owner = move || gd.clone();
        let (setup, frame) = self.parts(&owner);
        let (ids, look) = (actor_ids.as_slice(), (variation, tint));
        frame.fill_model_actors(&setup, model_index, ids, look, false, "set_model_actors");
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
        let gd = self.to_gd().upcast::<Node3D>();
        let owner = move || gd.clone();
        let (setup, frame) = self.parts(&owner);
        let (ids, look) = (actor_ids.as_slice(), (variation, tint));
        frame.fill_model_actors(&setup, model_index, ids, look, true, "add_model_actors");
    }

    /// Sets the custom data (`inst.custom` in shaders: health, selection glow, hit flash) of
    /// actors `actor_ids` (indices into this frame's actors) to `values`. An actor keeps its value
    /// until it is set again (`add_actor` sets it too); actors never set read 0. If any entry is
    /// bad (an id out of range, a value that is not finite, arrays of different lengths) it
    /// reports the first and changes nothing. Values equal to those stored are not uploaded again.
    #[func]
    fn set_actor_custom(&mut self, actor_ids: PackedInt32Array, values: PackedColorArray) {
        main_thread_only!("AnimatedActorMeshInstance", "set_actor_custom");
        self.sync_models();
        if !self.ensure_gpu() {
            return;
        }
        let frame = self.frame.get_mut();
        let n = frame.actor_count;
        let gpu = frame.gpu.as_mut().expect("ensured");
        let had = gpu.custom.is_some();
        let texture = gpu.custom_mut(n);
        let written = vat_core::crowd::write_custom_bulk(
            texture.floats_mut_untracked(),
            actor_ids.as_slice(),
            convert::rgba_slice(values.as_slice()),
            n,
        );
        match written {
            Ok(true) => texture.mark_changed(),
            Ok(false) => {}
            Err(e) => {
                if !had {
                    // Nothing was stored: do not keep a texture made only for a refused call.
                    gpu.custom = None;
                }
                godot_error!("vat_crowd: set_actor_custom: {e}; nothing changed");
            }
        }
    }
}
