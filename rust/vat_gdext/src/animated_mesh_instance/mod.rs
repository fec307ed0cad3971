//! `AnimatedMeshInstance`: a crowd of one baked character with retained instances.

use std::time::Instant;

use godot::classes::{INode3D, Material, Node3D};
use godot::prelude::*;
use vat_core::crowd;
use vat_core::crowd::IdSlots;

use crate::convert;
use crate::crowd::core::CrowdNode;
use crate::crowd::gpu::{report_once, CrowdGpu};
use crate::crowd::guard::main_thread_only;
use crate::crowd::node_api::crowd_node;
use crate::editor;
use crate::vertex_animation::VertexAnimation;
use retained::{Instance, RetainedPacker};

// The helpers Godot does not see live in child modules (so they keep private access).
mod bulk;
mod node;
mod preview;
mod queries;
mod retained;

use node::play;

crowd_node! {
    /// Draws many instances of one baked `VertexAnimation`. Instances are retained: add them
    /// once, change them when needed; the node submits changes once per frame (`auto_submit`)
    /// with one texture update per data texture.
    class AnimatedMeshInstance = "AnimatedMeshInstance";
    models {
        /// The baked character to draw.
        #[export]
        #[var(get = get_animation, set = set_animation)]
        animation: Option<Gd<VertexAnimation>>,
        /// A ShaderMaterial (whose shader includes vat_crowd.gdshaderinc) used instead of the
        /// shipped one.
        #[export]
        #[var(get = get_material_override, set = set_material_override)]
        material_override: Option<Gd<Material>>,
    }
    playback {
        /// Submit changes automatically at the end of each frame's processing.
        #[export]
        #[init(val = true)]
        auto_submit: bool,
    }
    state {
        gpu: Option<CrowdGpu>,
        gpu_error: Option<String>,
        clip_count: u32,
        variation_count: u32,
        instances: IdSlots<Instance>,
        packer: RetainedPacker,
        dirty: bool,
    }
    accessors {
        /// The baked character drawn.
        #[func]
        fn get_animation(&self) -> Option<Gd<VertexAnimation>> {
            main_thread_only!("AnimatedMeshInstance", "get_animation");
            self.animation.clone()
        }

        /// Sets the baked character (instances are kept; their clips must exist in it).
        #[func]
        fn set_animation(&mut self, animation: Option<Gd<VertexAnimation>>) {
            main_thread_only!("AnimatedMeshInstance", "set_animation");
            self.animation = animation;
            self.reset_gpu();
            self.base_mut().update_configuration_warnings();
            self.base_mut().notify_property_list_changed();
        }

        /// The material override.
        #[func]
        fn get_material_override(&self) -> Option<Gd<Material>> {
            main_thread_only!("AnimatedMeshInstance", "get_material_override");
            self.material_override.clone()
        }

        /// Sets the material override.
        #[func]
        fn set_material_override(&mut self, material: Option<Gd<Material>>) {
            main_thread_only!("AnimatedMeshInstance", "set_material_override");
            self.material_override = material;
            self.reset_gpu();
        }
    }
}

#[godot_api]
impl INode3D for AnimatedMeshInstance {
    fn process(&mut self, delta: f64) {
        let previewing = self.update_preview();
        if let Some(old_origin) = self.core.advance(delta, previewing) {
            self.clock_rebased(old_origin);
        }
        if self.auto_submit && self.animation.is_some() {
            self.submit();
        } else {
            self.update_billboard();
            self.refresh_frame();
        }
    }

    fn get_configuration_warnings(&self) -> PackedStringArray {
        self.configuration_warnings()
    }

    fn on_validate_property(&self, property: &mut godot::register::info::PropertyInfo) {
        crate::crowd::preview::suggest_clips(
            property,
            self.animation.as_ref(),
            &self.core.preview_clip,
        );
    }
}

#[godot_api(secondary)]
impl AnimatedMeshInstance {
    /// The configuration warnings the editor shows for this node (empty when it is set up right),
    /// for scripts and tests: Godot does not expose `Node._get_configuration_warnings` to them.
    #[func(rename = get_configuration_warnings)]
    fn configuration_warnings(&self) -> PackedStringArray {
        editor::to_packed(editor::animation_warnings(self.animation.as_ref()))
    }

    /// Adds an instance at `transform` (the whole transform with `full_transform`, else its
    /// position, yaw about +Y and uniform scale) playing `clip` from now, with a `tint` and
    /// texture `variation`. Returns its id, or -1 with an error.
    #[func]
    fn add_instance(
        &mut self,
        transform: Transform3D,
        #[opt(default = 0)] clip: i32,
        #[opt(default = Color::WHITE)] tint: Color,
        #[opt(default = 0)] variation: i32,
    ) -> i32 {
        main_thread_only!("AnimatedMeshInstance", "add_instance", -1);
        if !self.ensure_gpu() {
            return -1;
        }
        let Some((position, yaw, scale)) = convert::actor_pose(transform) else {
            godot_error!(
                "vat_crowd: add_instance: transform is not finite ({transform:?}); not added"
            );
            return -1;
        };
        if !self.clip_ok(clip, "add_instance")
            || !self.variation_ok(variation, "add_instance")
            || !self.room_for(1, "add_instance")
        {
            return -1;
        }
        let inst = Instance {
            position,
            yaw,
            scale,
            basis: convert::basis_cols(transform),
            clip: clip as u32,
            prev_clip: clip as u32,
            start: self.core.clock.time(),
            speed: 1.0,
            prev_elapsed: 0.0,
            blend_time: 0.0,
            tint: convert::rgba(tint),
            variation: variation as u32,
        };
        self.push(inst)
    }

    /// Moves instance `id`.
    #[func]
    fn set_instance_transform(&mut self, id: i32, transform: Transform3D) {
        main_thread_only!("AnimatedMeshInstance", "set_instance_transform");
        let Some(slot) = self.slot_of(id, "set_instance_transform") else {
            return;
        };
        let Some((position, yaw, scale)) = convert::actor_pose(transform) else {
            godot_error!(
                "vat_crowd: set_instance_transform({id}): transform is not finite; unchanged"
            );
            return;
        };
        let inst = self.instances.slot_mut(slot);
        (inst.position, inst.yaw, inst.scale) = (position, yaw, scale);
        inst.basis = convert::basis_cols(transform);
        self.dirty = true;
    }

    /// Instance `id`'s transform as last set (the whole basis, even where only its yaw and scale
    /// are drawn because `full_transform` is off), or the identity after an error for an unknown id.
    #[func]
    fn get_instance_transform(&self, id: i32) -> Transform3D {
        main_thread_only!("AnimatedMeshInstance", "get_instance_transform");
        let Some(slot) = self.slot_of(id, "get_instance_transform") else {
            return Transform3D::IDENTITY;
        };
        let inst = &self.instances.items()[slot];
        let [x, y, z] = inst.basis.map(convert::to_vector3);
        Transform3D::new(
            Basis::from_cols(x, y, z),
            convert::to_vector3(inst.position),
        )
    }

    /// Makes instance `id` play `clip` from now at `speed`, cross-fading from what it played over
    /// `blend_time` seconds.
    #[func]
    fn play_animation(
        &mut self,
        id: i32,
        clip: i32,
        #[opt(default = 0.0)] blend_time: f64,
        #[opt(default = 1.0)] speed: f64,
    ) {
        main_thread_only!("AnimatedMeshInstance", "play_animation");
        let Some(slot) = self.slot_of(id, "play_animation") else {
            return;
        };
        let Some(playing) = self.playing(clip, blend_time, speed, "play_animation") else {
            return;
        };
        let now = self.core.clock.time();
        play(self.instances.slot_mut(slot), now, playing);
        self.dirty = true;
    }

    /// Sets the tint of instance `id`.
    #[func]
    fn set_instance_tint(&mut self, id: i32, tint: Color) {
        main_thread_only!("AnimatedMeshInstance", "set_instance_tint");
        let Some(slot) = self.slot_of(id, "set_instance_tint") else {
            return;
        };
        self.instances.slot_mut(slot).tint = convert::rgba(tint);
        self.dirty = true;
    }

    /// Sets the texture variation of instance `id`.
    #[func]
    fn set_instance_variation(&mut self, id: i32, variation: i32) {
        main_thread_only!("AnimatedMeshInstance", "set_instance_variation");
        let Some(slot) = self.slot_of(id, "set_instance_variation") else {
            return;
        };
        if self.variation_ok(variation, "set_instance_variation") {
            self.instances.slot_mut(slot).variation = variation as u32;
            self.dirty = true;
        }
    }

    /// Removes instance `id`; the other ids stay valid.
    #[func]
    fn remove_instance(&mut self, id: i32) {
        main_thread_only!("AnimatedMeshInstance", "remove_instance");
        if self.slot_of(id, "remove_instance").is_some() {
            self.instances.remove(i64::from(id));
            self.dirty = true;
        }
    }

    /// Removes every instance.
    #[func]
    fn clear(&mut self) {
        main_thread_only!("AnimatedMeshInstance", "clear");
        self.instances.clear();
        self.dirty = true;
    }

    /// Live instances.
    #[func]
    fn get_instance_count(&self) -> i32 {
        main_thread_only!("AnimatedMeshInstance", "get_instance_count");
        self.instances.len() as i32
    }

    /// Pushes the instances to the GPU (only the clock if nothing changed).
    #[func]
    fn submit(&mut self) {
        main_thread_only!("AnimatedMeshInstance", "submit");
        if !self.ensure_gpu() {
            return;
        }
        let sent = self.gpu.as_ref().map_or(0, |g| g.sent_bytes());
        let started = Instant::now();
        let time = self.core.clock.shader_time();
        let interpolate = self.core.interpolate;
        if !self.dirty {
            if let Some(gpu) = &mut self.gpu {
                gpu.set_time(time, interpolate);
            }
            self.update_billboard();
            self.refresh_frame();
            self.core.last_submit_bytes =
                self.gpu.as_ref().map_or(0, |g| g.sent_bytes() - sent) as i64;
            return;
        }
        let n = self.instances.len();
        let changes = self.instances.take_changes();
        let request = self.frame_request(n, crowd::record_floats(self.core.full_transform));
        let gpu = self.gpu.as_mut().expect("ensured");
        let bounds = [self.packer.pack(
            &self.instances,
            changes,
            &self.core.clock,
            self.core.full_transform,
            gpu,
        )];
        gpu.submit(&[n], &bounds, time, interpolate, &request);
        self.core.last_submit_bytes = (gpu.sent_bytes() - sent) as i64;
        self.update_billboard();
        self.dirty = false;
        self.core.last_submit_usec = started.elapsed().as_micros() as i64;
    }
}
