//! The queries and helpers both crowd nodes share beyond their properties: the submit
//! statistics, the per-level counts of the last frame, and the frame request and billboard
//! camera built from the crowd core. Written into each node by `crowd_node!`.

/// Writes the shared queries and helpers for crowd node `$class` (named `$name` in errors).
macro_rules! crowd_queries {
    ($class:ident, $name:literal) => {
        #[godot_api(secondary)]
        impl $class {
            /// CPU time of the last `submit()` that uploaded data, in microseconds.
            #[func]
            fn get_last_submit_usec(&self) -> i64 {
                main_thread_only!($name, "get_last_submit_usec");
                self.core.last_submit_usec
            }

            /// Bytes the last `submit()` handed to the engine in texture updates: placements,
            /// states (whole, or the recent-state layers that changed), custom data, looks and
            /// the instance lists that changed; 0 when nothing changed. See
            /// docs/performance.md, "Bytes per frame".
            #[func]
            fn get_last_submit_bytes(&self) -> i64 {
                main_thread_only!($name, "get_last_submit_bytes");
                self.core.last_submit_bytes
            }

            /// Actors drawn in the view at each level of detail in the last frame (index 0 is
            /// LOD0); culled actors and those kept only for their shadows are not counted.
            #[func]
            fn get_lod_counts(&self) -> PackedInt32Array {
                main_thread_only!($name, "get_lod_counts");
                $crate::crowd::core::CrowdNode::gpu_ref(self, "get_lod_counts")
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
                $crate::crowd::core::CrowdNode::gpu_ref(self, "get_lod_instance_count")
                    .map_or(0, |g| {
                        g.slot_count(model as usize, lod as usize, shadow) as i32
                    })
            }

            /// Vertices the last frame drew in the view: each model's drawn instances times the
            /// vertices of their level's mesh (shadow passes not counted).
            #[func]
            fn get_drawn_vertex_count(&self) -> i64 {
                main_thread_only!($name, "get_drawn_vertex_count");
                $crate::crowd::core::CrowdNode::gpu_ref(self, "get_drawn_vertex_count")
                    .map_or(0, |g| g.drawn_vertices())
            }

            /// Vertices the last frame gives each shadow split at most: the instances of every
            /// MultiMesh that casts (the view's, unless the shadow-only ones carry every shadow)
            /// times the vertices of their level's mesh. 0 when nothing casts.
            #[func]
            fn get_drawn_shadow_vertex_count(&self) -> i64 {
                main_thread_only!($name, "get_drawn_shadow_vertex_count");
                $crate::crowd::core::CrowdNode::gpu_ref(self, "get_drawn_shadow_vertex_count")
                    .map_or(0, |g| g.shadow_vertices())
            }
        }

        impl $class {
            /// Points the shader's billboard at the current camera (in this node's space), or
            /// turns it off.
            pub(crate) fn update_billboard(&mut self) {
                let camera = self.core.billboard_camera(&self.base());
                if let Some(gpu) = $crate::crowd::core::CrowdNode::gpu_mut(self) {
                    gpu.set_billboard(camera);
                }
            }

            /// The crowd frame's inputs for `actors` actor records of `stride` floats.
            pub(crate) fn frame_request(
                &mut self,
                actors: usize,
                stride: usize,
            ) -> $crate::crowd::gpu::FrameRequest {
                let node = self.to_gd().upcast::<Node3D>();
                self.core.frame_request(&node, actors, stride)
            }
        }
    };
}

pub(crate) use crowd_queries;
