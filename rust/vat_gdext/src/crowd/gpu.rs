//! One crowd's GPU objects: a MultiMeshInstance3D per model over shared actor data.
//!
//! Texel formats (see `vat_core::crowd` for the bit layout):
//! - actors: RGBA32F, `ACTOR_TEXELS` (2) texels = 32 bytes per actor (`ACTOR_TEXELS_FULL`, 4, with
//!   full transforms; see `vat_core::crowd::record_texels`), shared by all its models;
//! - model instances: RGBA8, 4 bytes each (actor index in rgb, look in a), one texture per model;
//! - looks: RGBA32F, 2 texels per distinct (tint, variation), one texture per model.

use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::image::Format;
use godot::classes::multi_mesh::{PhysicsInterpolationQuality, TransformFormat};
use godot::classes::node::{InternalMode, PhysicsInterpolationMode};
use godot::classes::rendering_device::Limit;
use godot::classes::{
    ArrayMesh, EditorInterface, Engine, Material, MultiMesh, MultiMeshInstance3D, Node3D,
    RenderingServer, ShaderMaterial,
};
use godot::prelude::*;
use vat_core::crowd::{record_texels, LookTable};
use vat_core::encode::Bounds;
use vat_core::layout::MAX_LOOKS;

use super::data_texture::DataTexture;
use super::material;
use crate::convert;
use crate::vertex_animation::VertexAnimation;

/// Prints a crowd node's setup error once, and again only when it changes, so a misconfigured
/// node that is asked every frame does not flood the log.
pub fn report_once(last: &mut Option<String>, node: &str, error: String) {
    if last.as_deref() != Some(error.as_str()) {
        godot_error!("vat_crowd: {node}: {error}");
        *last = Some(error);
    }
}

/// The largest 2D texture the renderer takes, in texels per side: the rendering device's limit
/// (Forward+, Mobile), else (Compatibility, headless) the size every desktop GPU takes, which is
/// also the most we create (`vat_core::layout::MAX_TEXTURE_SIZE`).
pub fn renderer_max_texture_size() -> u32 {
    let fallback = vat_core::layout::MAX_TEXTURE_SIZE;
    RenderingServer::singleton()
        .get_rendering_device()
        .map_or(fallback, |rd| {
            let limit = rd.limit_get(Limit::MAX_TEXTURE_SIZE_2D);
            u32::try_from(limit).unwrap_or(u32::MAX).min(fallback)
        })
}

/// The most layers a texture array may have on this renderer: the rendering device's limit
/// (Forward+, Mobile), else (Compatibility, headless) 2048, what desktop GPUs take (OpenGL ES and
/// Vulkan guarantee only 256).
pub fn renderer_max_texture_layers() -> u32 {
    const FALLBACK: u32 = 2048;
    RenderingServer::singleton()
        .get_rendering_device()
        .map_or(FALLBACK, |rd| {
            u32::try_from(rd.limit_get(Limit::MAX_TEXTURE_ARRAY_LAYERS)).unwrap_or(FALLBACK)
        })
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

/// GPU objects of one model (body, sword, …) of a crowd.
pub struct ModelGpu {
    instance: Gd<MultiMeshInstance3D>,
    multimesh: Gd<MultiMesh>,
    materials: Vec<Gd<ShaderMaterial>>,
    /// Model-instance texels (actor index + look).
    pub indices: DataTexture,
    looks: DataTexture,
    /// Bounds of the model over all frames.
    pub bounds: Bounds,
    mm_capacity: usize,
}

/// All GPU objects of a crowd.
pub struct CrowdGpu {
    /// Actor records, 8 f32 each.
    pub actors: DataTexture,
    /// One per model.
    pub models: Vec<ModelGpu>,
    /// The camera the materials' billboard points at (None: billboard off, the shader default).
    billboard: Option<Vector3>,
    /// The renderer's largest texture side ([`renderer_max_texture_size`]), which with
    /// `vat_core::crowd::item_limit` bounds how many actors and instances the crowd may hold.
    pub max_texture_size: u32,
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
    ) -> Result<Self, String> {
        let max_texture_size = renderer_max_texture_size();
        let mut models = Vec::new();
        for (i, animation) in animations.iter().enumerate() {
            let override_material = override_materials.get(i).and_then(|m| m.as_ref());
            let mut model = ModelGpu::new(
                owner,
                animation,
                override_material,
                cast_shadow,
                max_texture_size,
            )
            .map_err(|e| format!("model {i}: {e}"))?;
            for m in model.materials.iter_mut() {
                m.set_shader_parameter("vat_full_transform", &full_transform.to_variant());
            }
            models.push(model);
        }
        Ok(Self {
            actors: DataTexture::new(
                Format::RGBAF,
                16,
                record_texels(full_transform) as usize,
                0,
                max_texture_size,
            ),
            models,
            billboard: None,
            max_texture_size,
        })
    }

    /// Uploads this frame's data (one `ImageTexture.update()` per data texture that changed) and
    /// sets each model's visible count, culling bounds and the crowd clock.
    pub fn submit(
        &mut self,
        counts: &[usize],
        bounds: &[Bounds],
        shader_time: f32,
        interpolate: bool,
    ) {
        let actors_tex = self.actors.upload();
        for (m, model) in self.models.iter_mut().enumerate() {
            model.submit(
                counts[m],
                &bounds[m],
                actors_tex.as_ref(),
                shader_time,
                interpolate,
            );
        }
    }

    /// Updates only the crowd clock (nothing else changed this frame).
    pub fn set_time(&mut self, shader_time: f32, interpolate: bool) {
        for m in self.materials_mut() {
            m.set_shader_parameter("vat_time", &shader_time.to_variant());
            m.set_shader_parameter("vat_interpolate", &interpolate.to_variant());
        }
    }

    /// Every model's materials.
    fn materials_mut(&mut self) -> impl Iterator<Item = &mut Gd<ShaderMaterial>> {
        self.models.iter_mut().flat_map(|m| m.materials.iter_mut())
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

    /// Frees the child nodes.
    pub fn free(self) {
        for model in self.models {
            let mut inst = model.instance;
            if inst.is_instance_valid() {
                inst.queue_free();
            }
        }
    }
}

/// Refuses a model whose vertex animation texture (vertices x frames texels, at most 16384 wide)
/// is larger than the renderer takes: created anyway, it would fail to upload and draw nothing.
fn check_vat_size(animation: &Gd<VertexAnimation>, max_texture_size: u32) -> Result<(), String> {
    let a = animation.bind();
    let Some(texture) = a.get_position_texture() else {
        return Ok(());
    };
    let (w, h) = (texture.get_width(), texture.get_height());
    if w.max(h) as u32 > max_texture_size {
        return Err(format!(
            "its vertex animation texture ({} vertices x {} frames) is {w} x {h} texels, larger \
             than the {max_texture_size} x {max_texture_size} this renderer takes; bake fewer \
             frames (lower fps, fewer clips) or a simpler mesh",
            a.get_vertex_count(),
            a.get_frame_count()
        ));
    }
    Ok(())
}

impl ModelGpu {
    fn new(
        owner: &mut Gd<Node3D>,
        animation: &Gd<VertexAnimation>,
        override_material: Option<&Gd<Material>>,
        cast_shadow: ShadowCastingSetting,
        max_texture_size: u32,
    ) -> Result<Self, String> {
        if !animation.bind().is_baked() {
            return Err(format!(
                "VertexAnimation '{}' is not baked",
                animation.get_path()
            ));
        }
        check_vat_size(animation, max_texture_size)?;
        let mut materials = material::surface_materials(animation, override_material)?;
        for m in materials.iter_mut() {
            material::bind_animation(m, animation);
        }
        // A per-crowd copy of the mesh carries this crowd's materials (they hold its data textures).
        let source_mesh = animation.bind().get_mesh().expect("baked");
        let mut mesh: Gd<ArrayMesh> = source_mesh.duplicate_resource();
        for (s, m) in materials.iter().enumerate() {
            mesh.surface_set_material(s as i32, m);
        }
        let mut multimesh = MultiMesh::new_gd();
        multimesh.set_transform_format(TransformFormat::TRANSFORM_3D);
        multimesh.set_physics_interpolation_quality(PhysicsInterpolationQuality::FAST);
        multimesh.set_mesh(&mesh);
        let mut instance = MultiMeshInstance3D::new_alloc();
        instance.set_multimesh(&multimesh);
        instance.set_cast_shadows_setting(cast_shadow);
        instance.set_physics_interpolation_mode(PhysicsInterpolationMode::OFF);
        owner
            .add_child_ex(&instance)
            .internal(InternalMode::BACK)
            .done();
        let bounds = convert::bounds(animation.bind().get_bounds());
        Ok(Self {
            instance,
            multimesh,
            materials,
            indices: DataTexture::new(Format::RGBA8, 4, 1, 0, max_texture_size),
            looks: DataTexture::new(Format::RGBAF, 16, 2, MAX_LOOKS as usize, max_texture_size),
            bounds,
            mm_capacity: 0,
        })
    }

    /// Writes the look table (tint, variation pairs) into the looks texture bytes; the texture is
    /// uploaded again only if the table changed.
    pub fn set_looks(&mut self, looks: &LookTable) {
        let mut packed = Vec::new();
        looks.pack(&mut packed);
        let bytes = self.looks.bytes_mut_untracked();
        let mut changed = false;
        for (dst, f) in bytes.chunks_exact_mut(4).zip(&packed) {
            let new = f.to_ne_bytes();
            changed |= *dst != new;
            dst.copy_from_slice(&new);
        }
        if changed {
            self.looks.mark_changed();
        }
    }

    fn submit(
        &mut self,
        count: usize,
        bounds: &Bounds,
        actors: Option<&Gd<godot::classes::ImageTexture>>,
        shader_time: f32,
        interpolate: bool,
    ) {
        let indices_tex = self.indices.upload();
        let looks_tex = self.looks.upload();
        if count > self.mm_capacity {
            let mut cap = self.mm_capacity.max(1024);
            while cap < count {
                cap *= 2;
            }
            self.mm_capacity = cap;
            // Instances start with all-zero transforms; identity once per growth makes MODEL_MATRIX
            // the node's own transform, and the shader places each instance from its actor texel.
            self.multimesh.set_instance_count(cap as i32);
            let identity: PackedFloat32Array = std::iter::repeat_n(
                [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
                cap,
            )
            .flatten()
            .collect();
            self.multimesh.set_buffer(&identity);
        }
        let aabb = convert::to_aabb(bounds);
        self.multimesh.set_custom_aabb(aabb);
        self.instance.set_custom_aabb(aabb);
        self.multimesh.set_visible_instance_count(count as i32);
        for m in self.materials.iter_mut() {
            if let Some(t) = actors {
                m.set_shader_parameter("vat_actors", &t.to_variant());
            }
            if let Some(t) = &indices_tex {
                m.set_shader_parameter("vat_models", &t.to_variant());
            }
            if let Some(t) = &looks_tex {
                m.set_shader_parameter("vat_looks", &t.to_variant());
            }
            m.set_shader_parameter("vat_time", &shader_time.to_variant());
            m.set_shader_parameter("vat_interpolate", &interpolate.to_variant());
        }
    }

    /// Sets the shadow casting mode.
    pub fn set_cast_shadow(&mut self, setting: ShadowCastingSetting) {
        self.instance.set_cast_shadows_setting(setting);
    }
}
