//! One crowd's GPU objects: per model, a MultiMeshInstance3D per level of detail (and one per
//! level for shadows only) over shared actor data, fed by the crowd frame
//! (`vat_core::crowd`), which culls and picks levels.
//!
//! Texel formats (see `vat_core::crowd` for the bit layout):
//! - actors: RGBA32F, `ACTOR_TEXELS` (2) texels = 32 bytes per actor (`ACTOR_TEXELS_FULL`, 4, with
//!   full transforms; see `vat_core::crowd::record_texels`), shared by all its models;
//! - model instances: RGBA8, 4 bytes each (actor index in rgb, look in a), one texture per slot
//!   (model, level, view or shadow);
//! - looks: RGBA32F, 2 texels per distinct (tint, variation), one texture per model.

use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::image::Format;
use godot::classes::{EditorInterface, Engine, Material, Node3D, ShaderMaterial};
use godot::prelude::*;
use vat_core::bounds::Bounds;
use vat_core::crowd::{
    placement_floats, record_texels, Actors, CrowdFrame, CrowdShape, FrameSettings, View,
    STATE_FLOATS,
};

use super::data_texture::{DataTexture, RecordStore};
use super::model_data::crowd_shape;
use super::model_gpu::ModelGpu;
use super::recent::RecentTexture;
use super::slot::{Slot, LOD_COLORS};
use super::view::FrameProps;
use crate::convert;
use crate::limits::renderer_max_texture_size;
use crate::vertex_animation::VertexAnimation;

/// Prints a crowd node's setup error once, and again only when it changes, so a misconfigured
/// node that is asked every frame does not flood the log.
pub fn report_once(last: &mut Option<String>, node: &str, error: String) {
    if last.as_deref() != Some(error.as_str()) {
        godot_error!("vat_crowd: {node}: {error}");
        *last = Some(error);
    }
}

/// The current camera's position in `node`'s space, if it is in a tree with a 3D camera: in the
/// editor, the first 3D editor viewport's camera (what the user is looking through), else the
/// node's viewport's current camera.
pub fn crowd_camera(node: &Node3D) -> Option<Vector3> {
    let camera = if Engine::singleton().is_editor_hint() {
        EditorInterface::singleton()
            .get_editor_viewport_3d()?
            .get_camera_3d()?
    } else {
        node.get_viewport()?.get_camera_3d()?
    };
    Some(node.get_global_transform().affine_inverse() * camera.get_global_position())
}

/// The crowd frame's inputs the node gathers each frame.
pub struct FrameRequest {
    /// The culling camera's view (None: no camera, nothing culled).
    pub view: Option<View>,
    /// The node's culling and LOD properties.
    pub props: FrameProps,
    /// The node's `cast_shadow`.
    pub cast: ShadowCastingSetting,
    /// Actors in the actor texture.
    pub actors: usize,
    /// Floats per actor record.
    pub stride: usize,
    /// Actors turn toward the camera.
    pub billboard: bool,
}

/// All GPU objects of a crowd.
pub struct CrowdGpu {
    /// Actor records (8 f32 each, 16 with full transforms), on the CPU.
    pub actors: RecordStore,
    /// The records' placements, uploaded when one moved.
    pub(super) placements: DataTexture,
    /// The records' animation states, uploaded whole when one changed (full transforms) or when
    /// the recent-state slots are folded back into it.
    pub(super) states: DataTexture,
    /// States changed since `states` was last sent, for yaw-and-scale records.
    pub(super) recent: RecentTexture,
    /// One per model.
    pub models: Vec<ModelGpu>,
    /// The animations drawn, with the bake generations built from
    /// (`VertexAnimation::bake_generation`).
    built_from: Vec<(Gd<VertexAnimation>, (u64, u64))>,
    /// The camera the materials' billboard points at (None: billboard off, the shader default).
    billboard: Option<Vector3>,
    /// The renderer's largest texture side ([`crate::limits::renderer_max_texture_size`]), which with
    /// `vat_core::crowd::item_limit` bounds how many actors and instances the crowd may hold.
    pub max_texture_size: u32,
    /// Per-actor custom data (RGBA32F, one texel per actor), made on first use.
    pub custom: Option<DataTexture>,
    frame: CrowdFrame,
    pub(super) shape: CrowdShape,
    /// What the lists were last built from (view, settings without the time).
    pub(super) last_run: Option<(Option<View>, FrameSettings)>,
    /// The GPU-driven frame, when it draws this crowd (see `gpu_driven`).
    pub(super) driven: Option<super::gpu_driven::Driven>,
    /// Properties last applied to materials.
    applied: Option<(FrameProps, ShadowCastingSetting)>,
    /// The shadow casting last given to the view MultiMeshes.
    view_cast: Option<ShadowCastingSetting>,
    time: f32,
    interpolate: bool,
    /// What `set_time` sets every frame.
    time_params: TimeParams,
}

/// The names `set_time` sets (made once: a name from a string is a lookup in Godot's table),
/// and the interpolation flags it last set (`interpolate`, `lod_interpolate`).
struct TimeParams {
    time: StringName,
    interpolate: StringName,
    flags: Option<(bool, bool)>,
}

impl TimeParams {
    fn new() -> Self {
        Self {
            time: StringName::from("vat_time"),
            interpolate: StringName::from("vat_interpolate"),
            flags: None,
        }
    }
}

impl CrowdGpu {
    /// Creates the MultiMeshInstance3Ds as internal children of `owner`, for actor records with
    /// or without full transforms.
    pub fn new(
        owner: &mut Gd<Node3D>,
        animations: &[Gd<VertexAnimation>],
        override_materials: &[Option<Gd<Material>>],
        cast_shadow: ShadowCastingSetting,
        full_transform: bool,
        gpu_driven: bool,
    ) -> Result<Self, String> {
        let max_texture_size = renderer_max_texture_size();
        let indirect = gpu_driven && super::gpu_driven::can_drive(override_materials);
        let mut models = Vec::new();
        for (i, animation) in animations.iter().enumerate() {
            let override_material = override_materials.get(i).and_then(|m| m.as_ref());
            let model = ModelGpu::new(
                owner,
                animation,
                override_material,
                full_transform,
                max_texture_size,
                indirect,
            )
            .map_err(|e| format!("model {i}: {e}"))?;
            models.push(model);
        }
        let mut gpu = Self {
            actors: RecordStore::new(record_texels(full_transform) as usize),
            placements: DataTexture::new(
                Format::RGBAF,
                16,
                placement_floats(full_transform) / 4,
                0,
                max_texture_size,
            ),
            states: DataTexture::new(Format::RGBAF, 16, STATE_FLOATS / 4, 0, max_texture_size),
            recent: RecentTexture::new(),
            models,
            billboard: None,
            max_texture_size,
            custom: None,
            frame: {
                let mut frame = CrowdFrame::new();
                frame.set_helpers(std::sync::Arc::new(crate::workers::PoolHelpers));
                frame
            },
            shape: crowd_shape(animations),
            last_run: None,
            driven: indirect.then(super::gpu_driven::Driven::new),
            built_from: animations
                .iter()
                .map(|a| (a.clone(), a.bind().bake_generation()))
                .collect(),
            applied: None,
            view_cast: None,
            time: 0.0,
            interpolate: true,
            time_params: TimeParams::new(),
        };
        gpu.apply(&FrameProps::default(), cast_shadow);
        gpu.register_commands();
        watch_bakes(owner, animations);
        Ok(gpu)
    }

    /// Whether a drawn animation (or the body it draws bones from) was baked again since this
    /// was built.
    pub fn is_stale(&self) -> bool {
        self.built_from
            .iter()
            .any(|(a, generation)| a.bind().bake_generation() != *generation)
    }

    /// Uploads this frame's data (one `ImageTexture.update()` per data texture that changed),
    /// runs the crowd frame over it, and sets each slot's list, visible count and culling box.
    /// `counts[m]` instances of model `m` were written; `bounds[m]` holds them all.
    pub fn submit(
        &mut self,
        counts: &[usize],
        bounds: &[Bounds],
        shader_time: f32,
        interpolate: bool,
        request: &FrameRequest,
    ) {
        for (m, model) in self.models.iter_mut().enumerate() {
            model.count = counts[m];
            model.culling = bounds[m].settled(&model.culling);
        }
        self.set_time(shader_time, interpolate);
        self.last_run = None;
        self.upload_records(request, true);
        self.run_frame(request, true);
    }

    /// Runs the crowd frame again if the view or the settings changed since it last ran (the
    /// camera or the node moved, a property changed), and uploads the lists that changed.
    pub fn refresh(&mut self, request: &FrameRequest) {
        // A clock rebase rewrites start times between submits.
        self.upload_records(request, false);
        self.run_frame(request, false);
    }

    fn run_frame(&mut self, request: &FrameRequest, data_changed: bool) {
        self.apply(&request.props, request.cast);
        let casts = request.cast != ShadowCastingSetting::OFF;
        let settings = request.props.settings(casts, request.billboard, self.time);
        let key = (
            request.view.clone(),
            FrameSettings {
                time: 0.0,
                ..settings
            },
        );
        if self.driven.is_some() {
            self.run_driven(request, key, settings, data_changed);
            return;
        }
        if !data_changed && self.last_run.as_ref() == Some(&key) {
            return;
        }
        let stride = request.stride.max(1);
        let n = request.actors.min(self.actors.floats().len() / stride);
        let texels = self.placements.floats();
        // Yaw-and-scale records: the placements as the texture holds them (current after the
        // upload; the records' own may be behind the placement writer), the states from the
        // records. Full transforms: the records, caught up.
        let actors = if stride == vat_core::crowd::ACTOR_FLOATS && texels.len() >= n * 4 {
            Actors::texels_and_records(&texels[..n * 4], &self.actors.floats()[..n * stride], n)
        } else {
            self.catch_up();
            Actors::interleaved(&self.actors.floats()[..n * stride], stride, n)
        };
        let lists: Vec<&[u32]> = self
            .models
            .iter()
            .map(|m| m.indices.texels(m.count))
            .collect();
        // The frame runs here; from its parallel threshold the pool's threads help while they
        // are free (`CrowdGpu::new` set them), so a pool held off the cores delays nothing.
        self.frame
            .run(&actors, &lists, &self.shape, key.0.as_ref(), &settings);
        self.last_run = Some(key);
        // The view MultiMeshes cast their own shadows unless the shadow lists carry them all
        // (shadow_lod, or actors in view beyond the shadows' reach).
        let view_cast = if self.frame.splits_shadows() {
            ShadowCastingSetting::OFF
        } else {
            request.cast
        };
        self.set_view_cast(view_cast);
        for (m, model) in self.models.iter_mut().enumerate() {
            let levels = model.slots.len() / 2;
            let looks = model.looks.upload();
            let aabb = convert::to_aabb(&model.culling);
            for slot in model.slots.iter_mut() {
                let level = usize::from(slot.level);
                let list = if slot.shadow {
                    self.frame.shadow_list(m, level)
                } else {
                    self.frame.view_list(m, level)
                };
                debug_assert!(level < levels);
                slot.write(list);
                slot.submit(aabb, looks.as_ref());
            }
        }
    }

    /// Gives the view MultiMeshes `view_cast` as their shadow casting, when it changed.
    pub(super) fn set_view_cast(&mut self, view_cast: ShadowCastingSetting) {
        if self.view_cast != Some(view_cast) {
            self.view_cast = Some(view_cast);
            for slot in self.models.iter_mut().flat_map(|m| m.slots.iter_mut()) {
                slot.set_cast_shadow(view_cast);
            }
        }
    }

    /// The placement, state and recent-state textures' RenderingServer RIDs (None before their
    /// first upload).
    pub(super) fn texture_rids(&self) -> [Option<Rid>; 3] {
        [
            self.placements.texture_rid(),
            self.states.texture_rid(),
            self.recent.texture_rid(),
        ]
    }

    /// The custom data texture, made (all zero) on first use, with room for `actors` actors.
    pub fn custom_mut(&mut self, actors: usize) -> &mut DataTexture {
        let max = self.max_texture_size;
        let texture = self
            .custom
            .get_or_insert_with(|| DataTexture::new(Format::RGBAF, 16, 1, 0, max));
        texture.reserve(actors);
        texture
    }

    /// Bytes every texture update of this crowd has handed to the engine so far (actor data,
    /// recent states, custom data, looks and instance lists).
    pub fn sent_bytes(&self) -> u64 {
        let models: u64 = self
            .models
            .iter()
            .map(|m| m.looks.sent_bytes() + m.slots.iter().map(Slot::sent_bytes).sum::<u64>())
            .sum();
        self.placements.sent_bytes()
            + self.driven.as_ref().map_or(0, |d| d.sent_bytes())
            + self.states.sent_bytes()
            + self.recent.sent_bytes()
            + self.custom.as_ref().map_or(0, DataTexture::sent_bytes)
            + models
    }

    /// Actors drawn in the view per level by the last frame (with the GPU frame, the last one
    /// read back).
    pub fn lod_counts(&self) -> &[u32] {
        match &self.driven {
            Some(d) => d.lod_counts(),
            None => self.frame.lod_counts(),
        }
    }

    /// Vertices the view slots draw (instances times their mesh's vertices), shadows not counted.
    pub fn drawn_vertices(&self) -> i64 {
        self.models
            .iter()
            .flat_map(|m| m.slots.iter())
            .filter(|s| !s.shadow)
            .map(|s| s.count as i64 * s.vertices)
            .sum()
    }

    /// Vertices each shadow split draws at most (the instances of every MultiMesh that casts
    /// times its mesh's vertices; a split whose volume misses a MultiMesh's box skips it).
    pub fn shadow_vertices(&self) -> i64 {
        let views_cast = self.driven.is_none()
            && self
                .view_cast
                .is_some_and(|c| c != ShadowCastingSetting::OFF);
        self.models
            .iter()
            .flat_map(|m| m.slots.iter())
            .filter(|s| s.shadow || views_cast)
            .map(|s| s.count as i64 * s.vertices)
            .sum()
    }

    /// Instances of model `model` drawn in the view at `level`, or for shadows only.
    pub fn slot_count(&self, model: usize, level: usize, shadow: bool) -> usize {
        self.models.get(model).map_or(0, |m| {
            m.slots
                .iter()
                .find(|s| usize::from(s.level) == level && s.shadow == shadow)
                .map_or(0, |s| s.count)
        })
    }

    /// Applies properties that live in materials, when they changed.
    fn apply(&mut self, props: &FrameProps, cast: ShadowCastingSetting) {
        if self.applied == Some((*props, cast)) {
            return;
        }
        self.applied = Some((*props, cast));
        // A new cast setting the frame's key cannot see (On to DoubleSided both cast) must still
        // reach the MultiMeshes: run the frame again.
        self.last_run = None;
        for slot in material_owners(&mut self.models) {
            let tint = if props.debug_colors {
                LOD_COLORS[usize::from(slot.level) % LOD_COLORS.len()]
            } else {
                Color::WHITE
            };
            for m in slot.materials.iter_mut() {
                m.set_shader_parameter("vat_lod_tint", &tint.to_variant());
            }
        }
        self.set_time(self.time, self.interpolate);
    }

    /// Updates only the crowd clock (nothing else changed this frame). Frame interpolation stays
    /// on up to LOD1 and, with `lod_interpolate`, beyond.
    /// Called every frame, so it reuses its parameter names and sets `vat_interpolate` only when
    /// it changed.
    pub fn set_time(&mut self, shader_time: f32, interpolate: bool) {
        self.time = shader_time;
        self.interpolate = interpolate;
        let far = self.applied.is_some_and(|(p, _)| p.interpolate_far);
        let flags = Some((interpolate, far));
        let set_flags = self.time_params.flags != flags;
        self.time_params.flags = flags;
        let time = shader_time.to_variant();
        let names = &self.time_params;
        for slot in material_owners(&mut self.models) {
            let on = (interpolate && (slot.level <= 1 || far)).to_variant();
            for m in slot.materials.iter_mut() {
                m.set_shader_parameter(&names.time, &time);
                if set_flags {
                    m.set_shader_parameter(&names.interpolate, &on);
                }
            }
        }
    }

    /// Every model's materials, each once.
    pub(super) fn materials_mut(&mut self) -> impl Iterator<Item = &mut Gd<ShaderMaterial>> {
        material_owners(&mut self.models).flat_map(|s| s.materials.iter_mut())
    }

    /// Turns every actor toward `camera` (a position in the crowd node's space) about its up
    /// axis, or stops doing so with `None`.
    /// Touches the materials only when that changed, as nodes call it every frame.
    pub fn set_billboard(&mut self, camera: Option<Vector3>) {
        if camera == self.billboard {
            return;
        }
        self.billboard = camera;
        for m in self.materials_mut() {
            m.set_shader_parameter("vat_billboard", &camera.is_some().to_variant());
            if let Some(c) = camera {
                m.set_shader_parameter("vat_camera", &c.to_variant());
            }
        }
    }

    /// Frees the child nodes (the GPU frame's objects on the rendering device go when it drops).
    pub fn free(self) {
        for model in self.models {
            for slot in model.slots {
                slot.free();
            }
        }
    }
}

/// The slots of `models` that own their materials, so that a parameter set through them reaches
/// every material once (a GPU-frame shadow slot shares its view slot's: see
/// `Slot::shared_materials`).
fn material_owners(models: &mut [ModelGpu]) -> impl Iterator<Item = &mut Slot> {
    models
        .iter_mut()
        .flat_map(|m| m.slots.iter_mut())
        .filter(|s| !s.shared_materials)
}

/// Connects `owner`'s `_vat_animation_changed` (deferred: a bake may finish on another thread)
/// to the `changed` signal of each of `animations` and of its `bone_source`, once each.
/// Connections to animations the node no longer draws stay until it is freed; their changes
/// leave it alone (`is_stale` looks only at what it draws).
fn watch_bakes(owner: &Gd<Node3D>, animations: &[Gd<VertexAnimation>]) {
    let callable = Callable::from_object_method(owner, "_vat_animation_changed");
    let sources = animations.iter().filter_map(|a| a.bind().get_bone_source());
    for animation in animations.iter().cloned().chain(sources) {
        let mut resource = animation.upcast::<godot::classes::Resource>();
        if !resource.is_connected("changed", &callable) {
            resource.connect_flags(
                "changed",
                &callable,
                godot::classes::object::ConnectFlags::DEFERRED,
            );
        }
    }
}
