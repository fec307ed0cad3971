//! `AnimatedMeshInstance`: a crowd of one baked character with retained instances.

use std::time::Instant;

use godot::classes::{INode3D, Material, Node3D};
use godot::prelude::*;
use vat_core::clock::{clock_runs, CrowdClock};
use vat_core::crowd;
use vat_core::crowd::IdSlots;

use crate::animated_actor_mesh_instance::shadow_setting;
use crate::convert;
use crate::crowd::frame_api::accessors;
use crate::crowd::gpu::{report_once, CrowdGpu};
use crate::crowd::guard::main_thread_only;
use crate::crowd::retained::{Instance, RetainedPacker};
use crate::editor;
use crate::vertex_animation::VertexAnimation;

// The helpers Godot does not see live in a child module (so they keep private access).
#[path = "crowd/retained_bulk.rs"]
mod retained_bulk;
#[path = "crowd/retained_node.rs"]
mod retained_node;
#[path = "crowd/retained_queries.rs"]
mod retained_queries;

#[path = "crowd/retained_preview.rs"]
mod retained_preview;

crate::crowd::frame_api::frame_api!(AnimatedMeshInstance, "AnimatedMeshInstance");
use retained_node::play;

/// Draws many instances of one baked `VertexAnimation`. Instances are retained: add them once,
/// change them when needed; the node submits changes once per frame (`auto_submit`) with one
/// texture update per data texture.
#[derive(GodotClass)]
#[class(tool, init, base = Node3D)]
pub struct AnimatedMeshInstance {
    /// The baked character to draw.
    #[export]
    #[var(get = get_animation, set = set_animation)]
    animation: Option<Gd<VertexAnimation>>,
    /// A ShaderMaterial (whose shader includes vat_crowd.gdshaderinc) used instead of the shipped one.
    #[export]
    #[var(get = get_material_override, set = set_material_override)]
    material_override: Option<Gd<Material>>,
    /// Shadow casting (GeometryInstance3D.ShadowCastingSetting).
    #[export(enum = (Off = 0, On = 1, DoubleSided = 2, ShadowsOnly = 3))]
    #[var(get = get_cast_shadow, set = set_cast_shadow)]
    #[init(val = 1)]
    cast_shadow: i32,
    /// The crowd clock in seconds (double precision; the shader sees it rebased). Shown in the
    /// inspector but never saved in scenes; in the editor it stands still except while the
    /// preview (`preview_count`) shows.
    #[var(get = get_time, set = set_time, usage_flags = [EDITOR])]
    time: PhantomVar<f64>,
    /// Stops the crowd clock.
    #[export]
    paused: bool,
    /// Blend between the two nearest baked frames.
    #[export]
    #[init(val = true)]
    interpolate: bool,
    /// Turn every instance about its up axis to face the current camera each frame (in the editor,
    /// the 3D editor viewport's camera), also in the shadow pass so shadows match what is seen;
    /// the instance's own yaw is added on top.
    #[export]
    billboard: bool,
    /// Store each instance's whole 3x4 transform (any rotation, non-uniform scale or shear) at
    /// 64 bytes per instance. Off (the default): position, yaw about +Y and uniform scale, at 32.
    #[export]
    #[var(get = get_full_transform, set = set_full_transform)]
    full_transform: bool,
    /// Submit changes automatically at the end of each frame's processing.
    #[export]
    #[init(val = true)]
    auto_submit: bool,

    /// Leave out actors whose placed bounds (their clip's, scaled and turned) miss the culling
    /// camera's view; an actor outside whose shadow can fall into the view (toward a shadowed
    /// DirectionalLight3D, within its shadow distance, or within the range of a shadowed omni or
    /// spot light that reaches the view) still casts it. Without a camera nothing is culled.
    #[export]
    #[init(val = true)]
    culling: bool,
    /// The Camera3D to cull against and pick levels of detail for. Empty: the viewport's current
    /// camera (in the editor, the 3D editor viewport's camera).
    #[export]
    culling_camera: NodePath,
    /// Levels of detail added to every actor's (positive: coarser sooner; finite).
    #[export]
    #[var(get = get_lod_bias, set = set_lod_bias)]
    lod_bias: f32,
    /// The highest level of detail any actor draws (-1: no limit).
    #[export]
    #[var(get = get_max_lod, set = set_max_lod)]
    #[init(val = -1)]
    max_lod: i32,
    /// Draw every actor at this level (clamped to each model's last) whatever its distance
    /// (-1: off).
    #[export]
    #[var(get = get_force_lod, set = set_force_lod)]
    #[init(val = -1)]
    force_lod: i32,
    /// Draw every shadow from at least this level (an actor drawn coarser casts from its own)
    /// through shadow-only MultiMeshes; the levels drawn in the view then cast none (-1: off,
    /// each level casts its own).
    #[export]
    #[var(get = get_shadow_lod, set = set_shadow_lod)]
    #[init(val = -1)]
    shadow_lod: i32,
    /// Tint each level of detail a distinct colour (LOD0 green, LOD1 yellow, LOD2 red, LOD3
    /// blue, ...), to see where levels switch.
    #[export]
    lod_debug_colors: bool,
    /// Keep frame interpolation beyond LOD1 (off: LOD2 and further snap to baked frames, half
    /// the texture fetches).
    #[export]
    lod_interpolate: bool,

    /// How many instances the editor shows, in a grid centred on the node playing
    /// `preview_clip`, so the bake can be seen without running the game (0: no preview; at most
    /// 10000). Only in the editor: a game never shows them, and they are never saved with the
    /// scene. While it shows, the preview replaces instances a `@tool` script adds (set 0 to
    /// drive the node from one), and the crowd clock runs; otherwise it stands still there.
    #[export(range = (0.0, 100.0, 1.0, or_greater))]
    #[var(get = get_preview_count, set = set_preview_count)]
    #[init(val = 1)]
    preview_count: i32,
    /// The clip the editor preview plays: a clip's name, or its index; empty: the first clip.
    #[export]
    preview_clip: GString,

    clock: CrowdClock,
    /// The editor preview shown now, if any.
    preview: Option<crate::crowd::preview::Shown>,
    /// The last preview_clip error reported.
    preview_error: Option<String>,
    /// The last culling-camera error reported.
    view_error: Option<String>,
    gpu: Option<CrowdGpu>,
    gpu_error: Option<String>,
    clip_count: u32,
    variation_count: u32,
    instances: IdSlots<Instance>,
    packer: RetainedPacker,
    dirty: bool,
    last_submit_usec: i64,
    last_submit_bytes: i64,
    base: Base<Node3D>,
}

#[godot_api]
impl INode3D for AnimatedMeshInstance {
    fn process(&mut self, delta: f64) {
        let previewing = self.update_preview();
        if clock_runs(self.paused, editor::in_editor(), previewing) {
            let old = self.clock.origin();
            self.clock.advance(delta);
            if self.clock.origin() != old {
                // Stored start times are relative to the origin: re-pack them all.
                self.instances.mark_all();
                self.dirty = true;
            }
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
        crate::crowd::preview::suggest_clips(property, self.animation.as_ref());
    }
}

#[godot_api]
impl AnimatedMeshInstance {
    /// The configuration warnings the editor shows for this node (empty when it is set up right),
    /// for scripts and tests: Godot does not expose `Node._get_configuration_warnings` to them.
    #[func(rename = get_configuration_warnings)]
    fn configuration_warnings(&self) -> PackedStringArray {
        editor::to_packed(editor::animation_warnings(self.animation.as_ref()))
    }

    /// The baked character drawn.
    #[func]
    fn get_animation(&self) -> Option<Gd<VertexAnimation>> {
        main_thread_only!("AnimatedMeshInstance", "get_animation");
        self.animation.clone()
    }

    /// The material override.
    #[func]
    fn get_material_override(&self) -> Option<Gd<Material>> {
        main_thread_only!("AnimatedMeshInstance", "get_material_override");
        self.material_override.clone()
    }

    /// Shadow casting.
    #[func]
    fn get_cast_shadow(&self) -> i32 {
        main_thread_only!("AnimatedMeshInstance", "get_cast_shadow");
        self.cast_shadow
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

    /// Sets the material override.
    #[func]
    fn set_material_override(&mut self, material: Option<Gd<Material>>) {
        main_thread_only!("AnimatedMeshInstance", "set_material_override");
        self.material_override = material;
        self.reset_gpu();
    }

    /// Sets shadow casting.
    #[func]
    fn set_cast_shadow(&mut self, setting: i32) {
        main_thread_only!("AnimatedMeshInstance", "set_cast_shadow");
        self.cast_shadow = setting;
        self.reset_gpu();
    }

    /// Levels of detail added to every actor's (positive: coarser sooner).
    #[func]
    fn get_lod_bias(&self) -> f32 {
        main_thread_only!("AnimatedMeshInstance", "get_lod_bias");
        self.lod_bias
    }

    /// Sets `lod_bias`; a value that is not finite is refused with an error.
    #[func]
    fn set_lod_bias(&mut self, bias: f32) {
        main_thread_only!("AnimatedMeshInstance", "set_lod_bias");
        self.lod_bias = accessors::bias("AnimatedMeshInstance", bias, self.lod_bias);
    }

    /// The highest level any actor draws (-1: no limit).
    #[func]
    fn get_max_lod(&self) -> i32 {
        main_thread_only!("AnimatedMeshInstance", "get_max_lod");
        self.max_lod
    }

    /// Sets `max_lod` (-1 or a level; other values are refused with an error).
    #[func]
    fn set_max_lod(&mut self, level: i32) {
        main_thread_only!("AnimatedMeshInstance", "set_max_lod");
        self.max_lod = accessors::level("AnimatedMeshInstance", "max_lod", level, self.max_lod);
    }

    /// The level every actor draws whatever its distance (-1: off).
    #[func]
    fn get_force_lod(&self) -> i32 {
        main_thread_only!("AnimatedMeshInstance", "get_force_lod");
        self.force_lod
    }

    /// Sets `force_lod` (-1 or a level; other values are refused with an error).
    #[func]
    fn set_force_lod(&mut self, level: i32) {
        main_thread_only!("AnimatedMeshInstance", "set_force_lod");
        self.force_lod =
            accessors::level("AnimatedMeshInstance", "force_lod", level, self.force_lod);
    }

    /// The level shadows are drawn from (-1: off, each level casts its own).
    #[func]
    fn get_shadow_lod(&self) -> i32 {
        main_thread_only!("AnimatedMeshInstance", "get_shadow_lod");
        self.shadow_lod
    }

    /// Sets `shadow_lod` (-1 or a level; other values are refused with an error).
    #[func]
    fn set_shadow_lod(&mut self, level: i32) {
        main_thread_only!("AnimatedMeshInstance", "set_shadow_lod");
        self.shadow_lod =
            accessors::level("AnimatedMeshInstance", "shadow_lod", level, self.shadow_lod);
    }

    /// Whether instances store their whole 3x4 transform.
    #[func]
    fn get_full_transform(&self) -> bool {
        main_thread_only!("AnimatedMeshInstance", "get_full_transform");
        self.full_transform
    }

    /// Switches between full 3x4 transforms and position + yaw + scale (instances are kept and
    /// redrawn the new way at the next submit).
    #[func]
    fn set_full_transform(&mut self, full: bool) {
        main_thread_only!("AnimatedMeshInstance", "set_full_transform");
        if full && !self.full_transform {
            if let Some(gpu) = &self.gpu {
                let texels = crowd::record_texels(true);
                let n = self.instances.len();
                if let Err(e) =
                    crowd::check_item_count("instances", n, texels, gpu.max_texture_size)
                {
                    godot_error!("vat_crowd: set_full_transform: {e}; full_transform stays off");
                    return;
                }
            }
        }
        if full != self.full_transform {
            self.full_transform = full;
            self.reset_gpu();
        }
    }

    /// Instances the editor preview shows (0: none).
    #[func]
    fn get_preview_count(&self) -> i32 {
        main_thread_only!("AnimatedMeshInstance", "get_preview_count");
        self.preview_count
    }

    /// Sets `preview_count` (0 to 10000; other values are refused with an error).
    #[func]
    fn set_preview_count(&mut self, count: i32) {
        main_thread_only!("AnimatedMeshInstance", "set_preview_count");
        self.preview_count =
            crate::crowd::preview::checked_count("AnimatedMeshInstance", count, self.preview_count);
    }

    /// The crowd clock in seconds.
    #[func]
    fn get_time(&self) -> f64 {
        main_thread_only!("AnimatedMeshInstance", "get_time");
        self.clock.time()
    }

    /// Sets the crowd clock (for deterministic rendering, or to jump). A time that is not finite
    /// or beyond +-2^32 s is refused with an error (the clock keeps its time).
    #[func]
    fn set_time(&mut self, time: f64) {
        main_thread_only!("AnimatedMeshInstance", "set_time");
        if let Err(e) = vat_core::crowd::crowd_time(time, "time") {
            godot_error!(
                "vat_crowd: AnimatedMeshInstance.time: {e}; the clock keeps {}",
                self.clock.time()
            );
            return;
        }
        let old = self.clock.origin();
        self.clock.set_time(time);
        if self.clock.origin() != old {
            self.instances.mark_all();
        }
        self.dirty = true;
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
            start: self.clock.time(),
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
        let now = self.clock.time();
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

    /// CPU time of the last submit that uploaded data, in microseconds.
    #[func]
    fn get_last_submit_usec(&self) -> i64 {
        main_thread_only!("AnimatedMeshInstance", "get_last_submit_usec");
        self.last_submit_usec
    }

    /// Bytes the last `submit()` handed to the engine in texture updates: instance data (see
    /// docs/performance.md, "Bytes per frame") and the instance lists that changed; 0 when
    /// nothing changed.
    #[func]
    fn get_last_submit_bytes(&self) -> i64 {
        main_thread_only!("AnimatedMeshInstance", "get_last_submit_bytes");
        self.last_submit_bytes
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
        let time = self.clock.shader_time();
        let interpolate = self.interpolate;
        if !self.dirty {
            if let Some(gpu) = &mut self.gpu {
                gpu.set_time(time, interpolate);
            }
            self.update_billboard();
            self.refresh_frame();
            self.last_submit_bytes = self.gpu.as_ref().map_or(0, |g| g.sent_bytes() - sent) as i64;
            return;
        }
        let n = self.instances.len();
        let changes = self.instances.take_changes();
        let request = self.frame_request(n, crowd::record_floats(self.full_transform));
        let gpu = self.gpu.as_mut().expect("ensured");
        let bounds = [self.packer.pack(
            &self.instances,
            changes,
            &self.clock,
            self.full_transform,
            gpu,
        )];
        gpu.submit(&[n], &bounds, time, interpolate, &request);
        self.last_submit_bytes = (gpu.sent_bytes() - sent) as i64;
        self.update_billboard();
        self.dirty = false;
        self.last_submit_usec = started.elapsed().as_micros() as i64;
    }
}
