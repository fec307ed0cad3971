//! Materials that draw a baked character with the VAT shader.

use godot::classes::base_material_3d::{Feature, ShadingMode, TextureParam};
use godot::classes::{BaseMaterial3D, Material, Shader, ShaderMaterial};
use godot::prelude::*;

use super::native_material::{self, Lookup};
use crate::vertex_animation::VertexAnimation;

/// Where `cargo xtask build` puts the shipped shader inside the addon.
pub const DEFAULT_SHADER: &str = "res://addons/vat_crowd/shaders/vat_crowd.gdshader";

/// One ShaderMaterial per surface of `animation`'s mesh. With `override_material` (a
/// ShaderMaterial whose shader includes vat_crowd.gdshaderinc) every surface gets its own copy of
/// it; otherwise each surface's source material with the VAT stage (see [`default_material`]).
pub fn surface_materials(
    animation: &Gd<VertexAnimation>,
    override_material: Option<&Gd<Material>>,
) -> Result<Vec<Gd<ShaderMaterial>>, String> {
    let anim = animation.bind();
    let mesh = anim
        .get_mesh()
        .ok_or_else(|| "the VertexAnimation is not baked (no mesh)".to_string())?;
    let mut out = Vec::new();
    for s in 0..mesh.get_surface_count() {
        let material = match override_material {
            Some(m) => {
                let shader_mat = m.clone().try_cast::<ShaderMaterial>().map_err(|_| {
                    "material_override must be a ShaderMaterial using vat_crowd.gdshaderinc"
                        .to_string()
                })?;
                shader_mat.duplicate_resource()
            }
            None => default_material(mesh.surface_get_material(s))?,
        };
        out.push(material);
    }
    Ok(out)
}

/// The parts of a source material's render state that are render modes or sampler hints in a
/// shader (not uniforms): the default shader is specialised for each combination a character uses.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct RenderState {
    /// `BaseMaterial3D.cull_mode` (0 back, 1 front, 2 disabled).
    cull: i32,
    /// `shading_mode` is Unshaded.
    unshaded: bool,
    /// `BaseMaterial3D.texture_filter` (0 nearest ... 5 linear mipmap anisotropic).
    filter: i32,
}

impl RenderState {
    fn of(base: &Gd<BaseMaterial3D>) -> Self {
        Self {
            cull: base.get_cull_mode().ord(),
            unshaded: base.get_shading_mode() == ShadingMode::UNSHADED,
            filter: base.get_texture_filter().ord(),
        }
    }

    /// The default shader's code with this state's render modes and albedo filter.
    fn specialise(&self, code: &str) -> Result<String, String> {
        let cull = ["cull_back", "cull_front", "cull_disabled"]
            .get(self.cull as usize)
            .copied()
            .unwrap_or("cull_back");
        let filter = [
            "filter_nearest",
            "filter_linear",
            "filter_nearest_mipmap",
            "filter_linear_mipmap",
            "filter_nearest_mipmap_anisotropic",
            "filter_linear_mipmap_anisotropic",
        ]
        .get(self.filter as usize)
        .copied()
        .unwrap_or("filter_linear_mipmap");
        let render_mode = format!("cull_back{}", if self.unshaded { ", unshaded" } else { "" });
        let albedo = "uniform sampler2D albedo_texture : source_color, filter_linear_mipmap,";
        if !code.contains("cull_back") || !code.contains(albedo) {
            return Err(format!(
                "{DEFAULT_SHADER} lacks the render mode or albedo sampler the materials adapt"
            ));
        }
        Ok(code
            .replacen("cull_back", &render_mode.replace("cull_back", cull), 1)
            .replacen(albedo, &albedo.replace("filter_linear_mipmap", filter), 1))
    }
}

thread_local! {
    /// One specialised default shader per render state, shared by every crowd while one uses it.
    /// Held weakly (by instance id): the materials own the shaders, so none outlives its users
    /// or the engine.
    static SHADERS: std::cell::RefCell<std::collections::HashMap<RenderState, InstanceId>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// The shipped default shader, specialised for `state` (the file itself for the default state).
fn default_shader(state: RenderState) -> Result<Gd<Shader>, String> {
    let cached = SHADERS.with(|m| m.borrow().get(&state).copied());
    if let Some(s) = cached.and_then(|id| Gd::<Shader>::try_from_instance_id(id).ok()) {
        return Ok(s);
    }
    let file = try_load::<Shader>(DEFAULT_SHADER).map_err(|e| {
        format!("could not load {DEFAULT_SHADER} (is the addon installed and built?): {e}")
    })?;
    let shader = if state == FILE_STATE {
        file
    } else {
        let mut s = Shader::new_gd();
        s.set_code(&state.specialise(&file.get_code().to_string())?);
        s
    };
    SHADERS.with(|m| m.borrow_mut().insert(state, shader.instance_id()));
    Ok(shader)
}

/// The state the shipped shader file is written for: cull back, lit, linear mipmaps.
const FILE_STATE: RenderState = RenderState {
    cull: 0,
    unshaded: false,
    filter: 3,
};

/// Meta key marking a material made by [`default_material`] (not a user's override).
const DEFAULT_META: &str = "vat_crowd_default";

/// The default material for a surface whose source material is `source`: Godot's own shader for
/// it with the VAT stage ([`native_material`]), or the shipped shader with the source's main
/// values where that code is not (yet) there.
fn default_material(source: Option<Gd<Material>>) -> Result<Gd<ShaderMaterial>, String> {
    if let Some(shader_material) = source
        .clone()
        .and_then(|s| s.try_cast::<ShaderMaterial>().ok())
    {
        if let Some(mut m) = native_material::from_shader_material(&shader_material) {
            m.set_meta(DEFAULT_META, &true.to_variant());
            return Ok(m);
        }
    }
    let base = source.and_then(|s| s.try_cast::<BaseMaterial3D>().ok());
    let pending = match &base {
        Some(b) => match native_material::lookup(b) {
            Lookup::Ready(mut m) => {
                m.set_meta(DEFAULT_META, &true.to_variant());
                return Ok(m);
            }
            Lookup::Pending => true,
            Lookup::Unavailable => false,
        },
        None => false,
    };
    let m = shipped_material(base.as_ref())?;
    if let (true, Some(b)) = (pending, &base) {
        native_material::wait_for(&m, b);
    }
    Ok(m)
}

/// The shipped shader with `base`'s albedo, roughness, metallic, specular, vertex colour,
/// emission and UV1 values.
fn shipped_material(base: Option<&Gd<BaseMaterial3D>>) -> Result<Gd<ShaderMaterial>, String> {
    let state = base.map_or(FILE_STATE, RenderState::of);
    let shader = default_shader(state)?;
    let mut m = ShaderMaterial::new_gd();
    m.set_shader(&shader);
    m.set_meta(DEFAULT_META, &true.to_variant());
    if let Some(base) = base {
        m.set_shader_parameter("albedo_color", &base.get_albedo().to_variant());
        if let Some(tex) = base.get_texture(TextureParam::ALBEDO) {
            m.set_shader_parameter("albedo_texture", &tex.to_variant());
            m.set_shader_parameter("use_albedo_texture", &true.to_variant());
        }
        m.set_shader_parameter("roughness", &base.get_roughness().to_variant());
        m.set_shader_parameter("metallic", &base.get_metallic().to_variant());
        m.set_shader_parameter("specular", &base.get_specular().to_variant());
        m.set_shader_parameter(
            "use_vertex_color",
            &base
                .get_flag(godot::classes::base_material_3d::Flags::ALBEDO_FROM_VERTEX_COLOR)
                .to_variant(),
        );
        m.set_shader_parameter(
            "vertex_color_is_srgb",
            &base
                .get_flag(godot::classes::base_material_3d::Flags::SRGB_VERTEX_COLOR)
                .to_variant(),
        );
        if base.get_feature(Feature::EMISSION) {
            let e = base.get_emission() * base.get_emission_energy_multiplier();
            m.set_shader_parameter("emission", &e.to_variant());
        }
        m.set_shader_parameter("uv1_scale", &base.get_uv1_scale().to_variant());
        m.set_shader_parameter("uv1_offset", &base.get_uv1_offset().to_variant());
    }
    Ok(m)
}

/// Binds the baked data of `animation` to `material`.
pub fn bind_animation(material: &mut Gd<ShaderMaterial>, animation: &Gd<VertexAnimation>) {
    let a = animation.bind();
    material.set_shader_parameter("vat_positions", &a.get_position_texture().to_variant());
    material.set_shader_parameter("vat_normals", &a.get_normal_texture().to_variant());
    material.set_shader_parameter("vat_has_normals", &a.normals_baked().to_variant());
    material.set_shader_parameter("vat_tangents", &a.get_tangent_texture().to_variant());
    material.set_shader_parameter("vat_has_tangents", &a.tangents_baked().to_variant());
    let bones = a.get_baked_storage() == crate::bake::bones::STORAGE_BONES;
    material.set_shader_parameter("vat_storage_bones", &bones.to_variant());
    material.set_shader_parameter("vat_bones", &a.drawn_bone_texture().to_variant());
    material.set_shader_parameter("vat_skin", &a.get_skin_texture().to_variant());
    let skin_texels = vat_core::bones::skin_texels(a._get_bone_influences().max(0) as usize) as i32;
    material.set_shader_parameter("vat_skin_texels", &skin_texels.to_variant());
    material.set_shader_parameter("vat_clips", &a.get_clip_texture().to_variant());
    material.set_shader_parameter("vat_vertex_count", &a.get_vertex_count().to_variant());
    material.set_shader_parameter("vat_column_channel", &a.get_column_channel().to_variant());
    material.set_shader_parameter("vat_offset", &a.get_encoding_offset().to_variant());
    material.set_shader_parameter("vat_scale", &a.get_encoding_scale().to_variant());
    if let Some(v) = a.get_variations() {
        material.set_shader_parameter("vat_variations", &v.to_variant());
        // Variations stand in for the albedo texture, so only textured surfaces take them (a
        // soldier's tunic changes colour, its bare hands do not).
        let textured = material
            .get_shader_parameter("use_albedo_texture")
            .try_to::<bool>()
            .unwrap_or(false);
        let custom = !material.has_meta(DEFAULT_META);
        material.set_shader_parameter("use_variations", &(textured || custom).to_variant());
    }
}
