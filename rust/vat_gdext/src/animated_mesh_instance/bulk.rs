//! `AnimatedMeshInstance`'s bulk calls: many instances added, moved or replayed from packed
//! arrays.

use super::*;

#[godot_api(secondary)]
impl AnimatedMeshInstance {
    /// Adds one instance per position with the given yaws (radians), all playing `clip` from now.
    /// Returns the first id; the ids are consecutive.
    #[func]
    fn add_instances(
        &mut self,
        positions: PackedVector3Array,
        yaws: PackedFloat32Array,
        #[opt(default = 0)] clip: i32,
    ) -> i32 {
        main_thread_only!("AnimatedMeshInstance", "add_instances", -1);
        if !self.ensure_gpu() || !self.clip_ok(clip, "add_instances") {
            return -1;
        }
        if yaws.len() != positions.len() {
            godot_error!(
                "vat_crowd: add_instances: {} positions but {} yaws; nothing added",
                positions.len(),
                yaws.len()
            );
            return -1;
        }
        let points = convert::vec3_slice(positions.as_slice());
        if let Some(i) = points
            .iter()
            .zip(yaws.as_slice())
            .position(|(p, y)| !p.is_finite() || !y.is_finite())
        {
            godot_error!("vat_crowd: add_instances: position/yaw {i} is not finite; nothing added");
            return -1;
        }
        if !self.room_for(points.len(), "add_instances") {
            return -1;
        }
        if self.instances.fresh_left() < points.len() {
            godot_error!(
                "vat_crowd: add_instances: {} consecutive ids are not left (ids of removed \
                 instances are not reused in runs; clear() starts them afresh); nothing added",
                points.len()
            );
            return -1;
        }
        // Consecutive ids need fresh ones, not recycled ones.
        let first = self.instances.next_fresh_id() as i32;
        let now = self.core.clock.time();
        for (p, y) in points.iter().zip(yaws.as_slice()) {
            let inst = Instance {
                position: *p,
                yaw: *y,
                scale: 1.0,
                basis: crowd::yaw_basis(*y),
                clip: clip as u32,
                prev_clip: clip as u32,
                start: now,
                speed: 1.0,
                prev_elapsed: 0.0,
                blend_time: 0.0,
                tint: [1.0; 4],
                variation: 0,
            };
            self.instances
                .insert_fresh(inst)
                .expect("checked fresh_left");
        }
        self.dirty = true;
        first
    }

    /// Sets positions and yaws of instances `first_id`, `first_id + 1`, … in one call. If any
    /// entry is bad (an unknown id, a value that is not finite) it reports the first and changes
    /// nothing.
    #[func]
    fn set_transforms(
        &mut self,
        positions: PackedVector3Array,
        yaws: PackedFloat32Array,
        #[opt(default = 0)] first_id: i32,
    ) {
        main_thread_only!("AnimatedMeshInstance", "set_transforms");
        if yaws.len() != positions.len() {
            godot_error!(
                "vat_crowd: set_transforms: {} positions but {} yaws; unchanged",
                positions.len(),
                yaws.len()
            );
            return;
        }
        let points = convert::vec3_slice(positions.as_slice());
        let finite = |i: usize| points[i].is_finite() && yaws[i].is_finite();
        let Some(slots) = self.slots_for(first_id, points.len(), finite, "set_transforms") else {
            return;
        };
        for ((slot, p), y) in slots.zip(points).zip(yaws.as_slice()) {
            let inst = self.instances.slot_mut(slot);
            inst.position = *p;
            inst.yaw = *y;
            inst.basis = crowd::yaw_basis(*y).map(|c| c * inst.scale);
        }
        self.dirty = true;
    }

    /// Sets whole transforms of instances `first_id`, `first_id + 1`, … in one call: 12 floats
    /// each, in the layout of `MultiMesh.buffer` for 3D transforms (the 3x4 matrix row by row:
    /// `basis.x.x, basis.y.x, basis.z.x, origin.x, basis.x.y, …`). Tilt, non-uniform scale and
    /// shear are drawn with `full_transform`; without it, as `set_instance_transform`, the yaw and
    /// the basis x axis' length as uniform scale. If any entry is bad (an unknown id, a value that
    /// is not finite) it reports the first and changes nothing.
    #[func]
    fn set_instance_transforms(
        &mut self,
        transforms: PackedFloat32Array,
        #[opt(default = 0)] first_id: i32,
    ) {
        main_thread_only!("AnimatedMeshInstance", "set_instance_transforms");
        let floats = transforms.as_slice();
        if !floats.len().is_multiple_of(crowd::TRANSFORM_FLOATS) {
            godot_error!(
                "vat_crowd: set_instance_transforms: {} floats is not 12 per instance; unchanged",
                floats.len()
            );
            return;
        }
        let poses: Vec<_> = floats
            .chunks_exact(crowd::TRANSFORM_FLOATS)
            .map(|r| {
                let t = convert::transform_from_rows(r);
                convert::actor_pose(t).map(|pose| (pose, convert::basis_cols(t)))
            })
            .collect();
        let finite = |i: usize| poses[i].is_some();
        let Some(slots) = self.slots_for(first_id, poses.len(), finite, "set_instance_transforms")
        else {
            return;
        };
        for (slot, pose) in slots.zip(poses) {
            let ((position, yaw, scale), basis) = pose.expect("checked");
            let inst = self.instances.slot_mut(slot);
            (inst.position, inst.yaw, inst.scale, inst.basis) = (position, yaw, scale, basis);
        }
        self.dirty = true;
    }

    /// `play_animation` for many instances at once. If any entry is bad (an unknown id; a clip,
    /// blend time or speed out of range) it reports the first and changes nothing; what it
    /// changes goes up at the next `submit()`.
    #[func]
    fn play_animations(
        &mut self,
        ids: PackedInt32Array,
        clip: i32,
        #[opt(default = 0.0)] blend_time: f64,
        #[opt(default = 1.0)] speed: f64,
    ) {
        main_thread_only!("AnimatedMeshInstance", "play_animations");
        let Some(playing) = self.playing(clip, blend_time, speed, "play_animations") else {
            return;
        };
        // Every id is checked before any instance changes.
        let Some(slots) = ids
            .as_slice()
            .iter()
            .map(|&id| self.slot_of(id, "play_animations"))
            .collect::<Option<Vec<usize>>>()
        else {
            return;
        };
        let now = self.core.clock.time();
        for slot in slots {
            play(self.instances.slot_mut(slot), now, playing);
        }
        self.dirty = true;
    }
}
