//! The API both crowd nodes share, declared once: [`crowd_node!`] writes a crowd node's class
//! (its shared properties, grouped in the inspector as Models, Playback, Look, Culling and LOD,
//! Shadows and Preview, each backed by the node's [`CrowdCore`](super::core::CrowdCore)), its
//! primary `#[godot_api]` block (the shared accessors beside the node's own, since gdext takes
//! property accessors only from that block) and, through `crowd_queries!` (in `node_queries`),
//! the shared queries. The node supplies its own
//! properties and accessors and implements [`CrowdNode`](super::core::CrowdNode); its other
//! methods live in its own `#[godot_api(secondary)]` blocks.

/// Writes crowd node `$class` (named `$name` in errors) from its doc comment, its own
/// properties (`models`, shown first; `playback`, shown with the clock), its private state and
/// the accessors of its own properties.
macro_rules! crowd_node {
    (
        $(#[$($doc:tt)*])*
        class $class:ident = $name:literal;
        models { $($models:tt)* }
        playback { $($playback:tt)* }
        state { $($state:tt)* }
        accessors { $($accessors:tt)* }
    ) => {
        $(#[$($doc)*])*
        #[derive(GodotClass)]
        #[class(tool, init, base = Node3D)]
        pub struct $class {
            #[export_group(name = "Models")]
            $($models)*

            /// Stops the crowd clock.
            #[export_group(name = "Playback")]
            #[export]
            #[var(get = get_paused, set = set_paused)]
            paused: PhantomVar<bool>,
            /// Multiplies the clock's advance per frame (finite, within +-65504; other values
            /// are refused with an error). 1 by default.
            #[export]
            #[var(get = get_speed_scale, set = set_speed_scale)]
            speed_scale: PhantomVar<f64>,
            /// Blend between the two nearest baked frames (off: snap to the nearest lower frame).
            #[export]
            #[var(get = get_interpolate, set = set_interpolate)]
            interpolate: PhantomVar<bool>,
            /// The crowd clock in seconds (kept in double precision; the shader sees it
            /// rebased). Shown in the inspector but never saved in scenes; in the editor it
            /// stands still except while the preview (`preview_count`) shows.
            #[var(get = get_time, set = set_time, usage_flags = [EDITOR])]
            time: PhantomVar<f64>,
            $($playback)*

            /// Turn every actor about its up axis to face the current camera each frame (in the
            /// editor, the 3D editor viewport's camera), also in the shadow pass so shadows match
            /// what is seen; the actor's own yaw is added on top.
            #[export_group(name = "Look")]
            #[export]
            #[var(get = get_billboard, set = set_billboard)]
            billboard: PhantomVar<bool>,
            /// Store each actor's whole 3x4 transform (any rotation, non-uniform scale or shear:
            /// units on slopes, tumbling debris) at 64 bytes per actor. Off (the default):
            /// position, yaw about +Y and uniform scale only, at 32 bytes. Changing it rebuilds
            /// the crowd's GPU objects.
            #[export]
            #[var(get = get_full_transform, set = set_full_transform)]
            full_transform: PhantomVar<bool>,
            /// Cull and pick every actor's level in a compute pass on the GPU, which writes the
            /// MultiMeshes' instances and indirect draw counts: the CPU then only uploads the
            /// records that changed. On by default; it takes effect in Forward+ and Mobile
            /// (Compatibility has no compute passes and keeps the CPU frame), and only with
            /// shaders that read instances through `VAT_INSTANCE` (the shipped one does; a
            /// `material_override` calling `vat_instance(INSTANCE_ID)` keeps the CPU frame, with
            /// a warning). `is_gpu_driven_active()` says which frame runs. With it, the LOD
            /// counts and drawn-vertex queries come from a read-back one or two frames late.
            /// Changing it rebuilds the crowd's GPU objects.
            #[export]
            #[var(get = get_gpu_driven, set = set_gpu_driven)]
            gpu_driven: PhantomVar<bool>,

            /// Leave out actors whose placed bounds (their clip's, scaled and turned) miss the
            /// culling camera's view; an actor outside whose shadow can fall into the view
            /// (toward a shadowed DirectionalLight3D, within its shadow distance, or within the
            /// range of a shadowed omni or spot light that reaches the view) still casts it.
            /// Without a camera nothing is culled.
            #[export_group(name = "Culling and LOD")]
            #[export]
            #[var(get = get_culling, set = set_culling)]
            culling: PhantomVar<bool>,
            /// The Camera3D to cull against and pick levels of detail for. Empty: the viewport's
            /// current camera (in the editor, the 3D editor viewport's camera).
            #[export]
            #[var(get = get_culling_camera, set = set_culling_camera)]
            culling_camera: PhantomVar<NodePath>,
            /// Levels of detail added to every actor's (positive: coarser sooner; finite).
            #[export]
            #[var(get = get_lod_bias, set = set_lod_bias)]
            lod_bias: PhantomVar<f32>,
            /// The highest level of detail any actor draws (-1: no limit).
            #[export]
            #[var(get = get_max_lod, set = set_max_lod)]
            max_lod: PhantomVar<i32>,
            /// Draw every actor at this level (clamped to each model's last) whatever its
            /// distance (-1: off).
            #[export]
            #[var(get = get_force_lod, set = set_force_lod)]
            force_lod: PhantomVar<i32>,
            /// Keep frame interpolation beyond LOD1 (off: LOD2 and further snap to baked
            /// frames, half the texture fetches).
            #[export]
            #[var(get = get_lod_interpolate, set = set_lod_interpolate)]
            lod_interpolate: PhantomVar<bool>,
            /// Tint each level of detail a distinct colour (LOD0 green, LOD1 yellow, LOD2 red,
            /// LOD3 blue, ...), to see where levels switch.
            #[export]
            #[var(get = get_lod_debug_colors, set = set_lod_debug_colors)]
            lod_debug_colors: PhantomVar<bool>,

            /// Shadow casting of every model (GeometryInstance3D.ShadowCastingSetting).
            #[export_group(name = "Shadows")]
            #[export(enum = (Off = 0, On = 1, DoubleSided = 2, ShadowsOnly = 3))]
            #[var(get = get_cast_shadow, set = set_cast_shadow)]
            cast_shadow: PhantomVar<i32>,
            /// Draw every shadow from at least this level (an actor drawn coarser casts from its
            /// own) through shadow-only MultiMeshes; the levels drawn in the view then cast none
            /// (-1: off, each level casts its own).
            #[export]
            #[var(get = get_shadow_lod, set = set_shadow_lod)]
            shadow_lod: PhantomVar<i32>,

            /// How many actors the editor shows (each carrying every model), in a grid centred
            /// on the node playing `preview_clip`, so the bake can be seen without running the
            /// game (0: no preview; at most 10000). Only in the editor: a game never shows them,
            /// and they are never saved with the scene. While it shows, the preview replaces
            /// actors a `@tool` script adds (set 0 to drive the node from one), and the crowd
            /// clock runs; otherwise it stands still there.
            #[export_group(name = "Preview")]
            #[export(range = (0.0, 100.0, 1.0, or_greater))]
            #[var(get = get_preview_count, set = set_preview_count)]
            preview_count: PhantomVar<i32>,
            /// The clip the editor preview plays: a clip's name, or its index. Empty: the first
            /// clip, whose name the inspector shows greyed in the empty field.
            #[export]
            #[var(get = get_preview_clip, set = set_preview_clip)]
            preview_clip: PhantomVar<GString>,

            /// The state both crowd nodes hold.
            core: $crate::crowd::core::CrowdCore,
            $($state)*
            base: Base<Node3D>,
        }

        #[godot_api]
        impl $class {
            $($accessors)*

            /// Whether the crowd clock stands still.
            #[func]
            fn get_paused(&self) -> bool {
                main_thread_only!($name, "get_paused");
                self.core.paused
            }

            /// Stops (true) or runs the crowd clock.
            #[func]
            fn set_paused(&mut self, paused: bool) {
                main_thread_only!($name, "set_paused");
                self.core.paused = paused;
            }

            /// The clock's speed multiplier.
            #[func]
            fn get_speed_scale(&self) -> f64 {
                main_thread_only!($name, "get_speed_scale");
                self.core.speed_scale
            }

            /// Sets the clock's speed multiplier; one that is not finite or beyond +-65504 is
            /// refused with an error.
            #[func]
            fn set_speed_scale(&mut self, scale: f64) {
                main_thread_only!($name, "set_speed_scale");
                self.core.set_speed_scale($name, scale);
            }

            /// Whether poses blend between the two nearest baked frames.
            #[func]
            fn get_interpolate(&self) -> bool {
                main_thread_only!($name, "get_interpolate");
                self.core.interpolate
            }

            /// Turns blending between baked frames on or off.
            #[func]
            fn set_interpolate(&mut self, interpolate: bool) {
                main_thread_only!($name, "set_interpolate");
                self.core.interpolate = interpolate;
            }

            /// The crowd clock in seconds.
            #[func]
            fn get_time(&self) -> f64 {
                main_thread_only!($name, "get_time");
                self.core.clock.time()
            }

            /// Sets the crowd clock (for deterministic rendering, or to jump). A time that is
            /// not finite or beyond +-2^32 s is refused with an error (the clock keeps its time).
            #[func]
            fn set_time(&mut self, time: f64) {
                main_thread_only!($name, "set_time");
                let (taken, rebased) = self.core.set_time($name, time);
                if let Some(old_origin) = rebased {
                    $crate::crowd::core::CrowdNode::clock_rebased(self, old_origin);
                }
                if taken {
                    $crate::crowd::core::CrowdNode::time_set(self);
                }
            }

            /// Whether actors turn toward the camera.
            #[func]
            fn get_billboard(&self) -> bool {
                main_thread_only!($name, "get_billboard");
                self.core.billboard
            }

            /// Turns actors toward the camera (true) or not.
            #[func]
            fn set_billboard(&mut self, billboard: bool) {
                main_thread_only!($name, "set_billboard");
                self.core.billboard = billboard;
            }

            /// Whether records store the whole 3x4 transform.
            #[func]
            fn get_full_transform(&self) -> bool {
                main_thread_only!($name, "get_full_transform");
                self.core.full_transform
            }

            /// Switches between full 3x4 transforms and position + yaw + scale, and rebuilds the
            /// GPU objects (the retained node keeps its instances and redraws them the new way;
            /// the actor node drops this frame's actors). Refused with an error when the
            /// instances would not fit the renderer's textures.
            #[func]
            fn set_full_transform(&mut self, full: bool) {
                main_thread_only!($name, "set_full_transform");
                if full == self.core.full_transform {
                    return;
                }
                if let Err(e) = $crate::crowd::core::CrowdNode::full_transform_fits(self, full) {
                    godot_error!("vat_crowd: {}.set_full_transform: {e}; it stays {}", $name, !full);
                    return;
                }
                self.core.full_transform = full;
                $crate::crowd::core::CrowdNode::reset_gpu(self);
            }

            /// Whether the crowd frame should run on the GPU where it can (see
            /// `is_gpu_driven_active`).
            #[func]
            fn get_gpu_driven(&self) -> bool {
                main_thread_only!($name, "get_gpu_driven");
                self.core.gpu_driven
            }

            /// Asks for the GPU-driven frame (true) or the CPU frame (false), and rebuilds the
            /// GPU objects.
            #[func]
            fn set_gpu_driven(&mut self, on: bool) {
                main_thread_only!($name, "set_gpu_driven");
                if on == self.core.gpu_driven {
                    return;
                }
                self.core.gpu_driven = on;
                $crate::crowd::core::CrowdNode::reset_gpu(self);
            }

            /// True when the GPU-driven frame draws this crowd: `gpu_driven` is on, the renderer
            /// has a rendering device (Forward+ or Mobile), the compute pass compiled and every
            /// material reads instances through `VAT_INSTANCE`. False before the crowd's GPU
            /// objects exist (its first submit or process frame).
            #[func]
            fn is_gpu_driven_active(&self) -> bool {
                main_thread_only!($name, "is_gpu_driven_active");
                $crate::crowd::core::CrowdNode::gpu_ref(self, "is_gpu_driven_active")
                    .is_some_and(|g| g.gpu_driven_active())
            }

            /// Engine callback (connected, deferred, to the `changed` signal of every drawn
            /// VertexAnimation and of the body whose bone texture one draws with): when one was
            /// baked again, the crowd is built again from the new bake on its next use, as after
            /// setting the models (the actor node drops the frame's actors). Other changes are
            /// ignored.
            #[func]
            fn _vat_animation_changed(&mut self) {
                if !$crate::crowd::guard::on_main_thread($name, "_vat_animation_changed") {
                    return;
                }
                let stale = $crate::crowd::core::CrowdNode::gpu_ref(self, "_vat_animation_changed")
                    .is_some_and(|g| g.is_stale());
                if stale {
                    $crate::crowd::core::CrowdNode::reset_gpu(self);
                }
            }

            /// Whether actors outside the culling camera's view are left out.
            #[func]
            fn get_culling(&self) -> bool {
                main_thread_only!($name, "get_culling");
                self.core.lod.culling
            }

            /// Turns culling on or off.
            #[func]
            fn set_culling(&mut self, culling: bool) {
                main_thread_only!($name, "set_culling");
                self.core.lod.culling = culling;
            }

            /// The camera culled against (empty: the viewport's current camera).
            #[func]
            fn get_culling_camera(&self) -> NodePath {
                main_thread_only!($name, "get_culling_camera");
                self.core.culling_camera.clone()
            }

            /// Sets the camera to cull against, relative to this node (empty: the viewport's
            /// current camera). A path that names no Camera3D is reported when the frame runs.
            #[func]
            fn set_culling_camera(&mut self, camera: NodePath) {
                main_thread_only!($name, "set_culling_camera");
                self.core.culling_camera = camera;
            }

            /// Levels of detail added to every actor's (positive: coarser sooner).
            #[func]
            fn get_lod_bias(&self) -> f32 {
                main_thread_only!($name, "get_lod_bias");
                self.core.lod.lod_bias
            }

            /// Sets `lod_bias`; a value that is not finite is refused with an error.
            #[func]
            fn set_lod_bias(&mut self, bias: f32) {
                main_thread_only!($name, "set_lod_bias");
                self.core.set_lod_bias($name, bias);
            }

            /// The highest level any actor draws (-1: no limit).
            #[func]
            fn get_max_lod(&self) -> i32 {
                main_thread_only!($name, "get_max_lod");
                self.core.lod.max_lod
            }

            /// Sets `max_lod` (-1 or a level; other values are refused with an error).
            #[func]
            fn set_max_lod(&mut self, level: i32) {
                main_thread_only!($name, "set_max_lod");
                let keeps = self.core.lod.max_lod;
                self.core.lod.max_lod =
                    $crate::crowd::core::CrowdCore::level($name, "max_lod", level, keeps);
            }

            /// The level every actor draws whatever its distance (-1: off).
            #[func]
            fn get_force_lod(&self) -> i32 {
                main_thread_only!($name, "get_force_lod");
                self.core.lod.force_lod
            }

            /// Sets `force_lod` (-1 or a level; other values are refused with an error).
            #[func]
            fn set_force_lod(&mut self, level: i32) {
                main_thread_only!($name, "set_force_lod");
                let keeps = self.core.lod.force_lod;
                self.core.lod.force_lod =
                    $crate::crowd::core::CrowdCore::level($name, "force_lod", level, keeps);
            }

            /// Whether frames interpolate beyond LOD1.
            #[func]
            fn get_lod_interpolate(&self) -> bool {
                main_thread_only!($name, "get_lod_interpolate");
                self.core.lod.interpolate_far
            }

            /// Keeps frame interpolation beyond LOD1 (true) or snaps there (false).
            #[func]
            fn set_lod_interpolate(&mut self, on: bool) {
                main_thread_only!($name, "set_lod_interpolate");
                self.core.lod.interpolate_far = on;
            }

            /// Whether each level of detail is tinted its own colour.
            #[func]
            fn get_lod_debug_colors(&self) -> bool {
                main_thread_only!($name, "get_lod_debug_colors");
                self.core.lod.debug_colors
            }

            /// Tints each level of detail its own colour (true) or not.
            #[func]
            fn set_lod_debug_colors(&mut self, on: bool) {
                main_thread_only!($name, "set_lod_debug_colors");
                self.core.lod.debug_colors = on;
            }

            /// Shadow casting of every model.
            #[func]
            fn get_cast_shadow(&self) -> i32 {
                main_thread_only!($name, "get_cast_shadow");
                self.core.cast_shadow
            }

            /// Sets the shadow casting of every model (the crowd frame applies it to the view and
            /// shadow MultiMeshes).
            #[func]
            fn set_cast_shadow(&mut self, setting: i32) {
                main_thread_only!($name, "set_cast_shadow");
                self.core.cast_shadow = setting;
                $crate::crowd::core::CrowdNode::refresh_frame(self);
            }

            /// The level shadows are drawn from (-1: off, each level casts its own).
            #[func]
            fn get_shadow_lod(&self) -> i32 {
                main_thread_only!($name, "get_shadow_lod");
                self.core.lod.shadow_lod
            }

            /// Sets `shadow_lod` (-1 or a level; other values are refused with an error).
            #[func]
            fn set_shadow_lod(&mut self, level: i32) {
                main_thread_only!($name, "set_shadow_lod");
                let keeps = self.core.lod.shadow_lod;
                self.core.lod.shadow_lod =
                    $crate::crowd::core::CrowdCore::level($name, "shadow_lod", level, keeps);
            }

            /// Instances (actors) the editor preview shows (0: none).
            #[func]
            fn get_preview_count(&self) -> i32 {
                main_thread_only!($name, "get_preview_count");
                self.core.preview_count
            }

            /// Sets `preview_count` (0 to 10000; other values are refused with an error).
            #[func]
            fn set_preview_count(&mut self, count: i32) {
                main_thread_only!($name, "set_preview_count");
                let keeps = self.core.preview_count;
                self.core.preview_count =
                    $crate::crowd::preview::checked_count($name, count, keeps);
            }

            /// The clip the editor preview plays, as set (empty: the first clip).
            #[func]
            fn get_preview_clip(&self) -> GString {
                main_thread_only!($name, "get_preview_clip");
                self.core.preview_clip.clone()
            }

            /// Sets the clip the editor preview plays: a clip's name, or its index; empty: the
            /// first clip. A clip the bake lacks is reported while the preview runs.
            #[func]
            fn set_preview_clip(&mut self, clip: GString) {
                main_thread_only!($name, "set_preview_clip");
                let shape_changes = clip.is_empty() != self.core.preview_clip.is_empty();
                self.core.preview_clip = clip;
                if shape_changes {
                    // The field switches between the greyed first clip and the suggestions.
                    self.base_mut().notify_property_list_changed();
                }
            }
        }

        $crate::crowd::node_queries::crowd_queries!($class, $name);
    };
}

pub(crate) use crowd_node;
