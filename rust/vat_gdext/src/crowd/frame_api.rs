//! The culling and LOD API both crowd nodes share: [`frame_api!`] expands, for one node class,
//! the per-frame counts, the billboard camera and the request that feeds the crowd frame (the property accessors must
//! be in each class's primary `#[godot_api]` block, so they are written there, each one line
//! over [`accessors`] helpers). The class must have the fields `culling`, `culling_camera`, `lod_bias`, `max_lod`,
//! `force_lod`, `shadow_lod`, `lod_debug_colors`, `lod_interpolate`, `cast_shadow`, `billboard`,
//! `clock` and `view_error`, and the methods `gpu_ref(&self, what)` (the GPU objects for a
//! `&self` call named `what`, as an `Option` of something that derefs to `CrowdGpu`) and
//! `gpu_mut(&mut self)`.

/// Expands the shared culling and LOD API for `$class` (its name as a string literal in `$name`).
macro_rules! frame_api {
    ($class:ident, $name:literal) => {
        #[godot_api(secondary)]
        impl $class {
            /// Actors drawn in the view at each level of detail in the last frame (index 0 is
            /// LOD0); culled actors and those kept only for their shadows are not counted.
            #[func]
            fn get_lod_counts(&self) -> PackedInt32Array {
                main_thread_only!($name, "get_lod_counts");
                self.gpu_ref("get_lod_counts")
                    .map_or_else(PackedInt32Array::new, |g| {
                        g.lod_counts().iter().map(|&c| c as i32).collect()
                    })
            }

            /// Instances of model `model` drawn in the view at level `lod` in the last frame
            /// (`shadow`: those drawn into the shadow maps only, from that level: actors outside
            /// the view that cast into it, and every actor that casts while the view's
            /// MultiMeshes cast none, with `shadow_lod` or when some actors in the view are
            /// beyond every shadow's reach).
            #[func]
            fn get_lod_instance_count(
                &self,
                model: i32,
                lod: i32,
                #[opt(default = false)] shadow: bool,
            ) -> i32 {
                main_thread_only!($name, "get_lod_instance_count");
                if model < 0 || lod < 0 {
                    return 0;
                }
                self.gpu_ref("get_lod_instance_count").map_or(0, |g| {
                    g.slot_count(model as usize, lod as usize, shadow) as i32
                })
            }

            /// Vertices the last frame drew in the view: each model's drawn instances times the
            /// vertices of their level's mesh (shadow passes not counted).
            #[func]
            fn get_drawn_vertex_count(&self) -> i64 {
                main_thread_only!($name, "get_drawn_vertex_count");
                self.gpu_ref("get_drawn_vertex_count")
                    .map_or(0, |g| g.drawn_vertices())
            }

            /// Vertices the last frame gives each shadow split at most: the instances of every
            /// MultiMesh that casts (the view's, unless the shadow-only ones carry every shadow)
            /// times the vertices of their level's mesh. 0 when nothing casts.
            #[func]
            fn get_drawn_shadow_vertex_count(&self) -> i64 {
                main_thread_only!($name, "get_drawn_shadow_vertex_count");
                self.gpu_ref("get_drawn_shadow_vertex_count")
                    .map_or(0, |g| g.shadow_vertices())
            }
        }

        impl $class {
            /// Points the shader's billboard at the current camera (in this node's space), or
            /// turns it off.
            pub(crate) fn update_billboard(&mut self) {
                let camera = if self.billboard {
                    $crate::crowd::gpu::crowd_camera(&self.base())
                } else {
                    None
                };
                if let Some(gpu) = self.gpu_mut() {
                    gpu.set_billboard(camera);
                }
            }

            /// The crowd frame's inputs for `actors` actor records of `stride` floats: the culling
            /// camera's view (none outside the tree or without a camera), the properties.
            pub(crate) fn frame_request(
                &mut self,
                actors: usize,
                stride: usize,
            ) -> $crate::crowd::gpu::FrameRequest {
                use godot::classes::geometry_instance_3d::ShadowCastingSetting;
                let node = self.to_gd().upcast::<godot::classes::Node3D>();
                let cast = $crate::animated_actor_mesh_instance::shadow_setting(self.cast_shadow);
                let mut view = None;
                if node.is_inside_tree() {
                    match $crate::crowd::view::culling_camera(&node, &self.culling_camera) {
                        Ok(camera) => {
                            self.view_error = None;
                            view = camera.filter(|c| c.is_inside_tree()).map(|c| {
                                let shadows = cast != ShadowCastingSetting::OFF && self.culling;
                                $crate::crowd::view::view_of(&node, &c, shadows)
                            });
                        }
                        Err(e) => {
                            let name = node.get_name().to_string();
                            $crate::crowd::gpu::report_once(&mut self.view_error, &name, e);
                        }
                    }
                }
                $crate::crowd::gpu::FrameRequest {
                    view,
                    props: $crate::crowd::view::FrameProps {
                        culling: self.culling,
                        lod_bias: self.lod_bias,
                        max_lod: self.max_lod,
                        force_lod: self.force_lod,
                        shadow_lod: self.shadow_lod,
                        debug_colors: self.lod_debug_colors,
                        interpolate_far: self.lod_interpolate,
                    },
                    cast,
                    actors,
                    stride,
                    billboard: self.billboard,
                }
            }
        }
    };
}

pub(crate) use frame_api;

/// The checks behind the level and bias setters, shared by both nodes.
pub mod accessors {
    /// `lod_bias` if `value` passes, else an error naming `node` and the kept value.
    pub fn bias(node: &str, value: f32, keeps: f32) -> f32 {
        if crate::crowd::view::check_bias(node, f64::from(value), keeps) {
            value
        } else {
            keeps
        }
    }

    /// A level property (`what`) if `value` passes (-1 or a level), else an error naming `node`
    /// and the kept value.
    pub fn level(node: &str, what: &str, value: i32, keeps: i32) -> i32 {
        if crate::crowd::view::check_level(node, what, value, keeps) {
            value
        } else {
            keeps
        }
    }
}
