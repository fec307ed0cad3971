//! One model's GPU objects within a crowd (body, sword, …): its slots (a MultiMeshInstance3D
//! per level of detail in the view and one per level for shadows only, each with materials that
//! hold its instance list), its model-instance texels and its looks texture.

use godot::classes::image::Format;
use godot::classes::{Material, Node3D, ShaderMaterial};
use godot::prelude::*;
use vat_core::bounds::Bounds;
use vat_core::crowd::{LookTable, MAX_LEVELS};
use vat_core::layout::MAX_LOOKS;

use super::data_texture::DataTexture;
use super::material;
use super::model_data::InstanceList;
use super::slot::{Slot, SlotKind};
use crate::convert;
use crate::vertex_animation::VertexAnimation;

/// GPU objects of one model (body, sword, …) of a crowd: a slot per level of detail in the view,
/// and one per level for shadows only.
pub struct ModelGpu {
    /// `levels` view slots, then `levels` shadow slots.
    pub(super) slots: Vec<Slot>,
    /// Model-instance texels (actor index + look) written by the node.
    pub indices: InstanceList,
    pub(super) looks: DataTexture,
    /// Bounds of the model over all frames.
    pub bounds: Bounds,
    /// Instances written this frame.
    pub(super) count: usize,
    /// Culling box of every slot: this frame's instances' bounds, settled
    /// ([`Bounds::settled`]) so that a moving crowd changes it rarely.
    pub(super) culling: Bounds,
}

/// Refuses a model whose vertex animation texture (vertices x frames texels, at most 16384 wide)
/// is larger than the renderer takes: created anyway, it would fail to upload and draw nothing.
fn check_vat_size(animation: &Gd<VertexAnimation>, max_texture_size: u32) -> Result<(), String> {
    let a = animation.bind();
    let textures = [
        a.get_position_texture(),
        a.drawn_bone_texture(),
        a.get_skin_texture(),
    ];
    for texture in textures.iter().flatten() {
        let (w, h) = (texture.get_width(), texture.get_height());
        if w.max(h) as u32 > max_texture_size {
            return Err(format!(
                "its animation texture ({} vertices x {} frames) is {w} x {h} texels, larger \
                 than the {max_texture_size} x {max_texture_size} this renderer takes; bake fewer \
                 frames (lower fps, fewer clips) or a simpler mesh",
                a.get_vertex_count(),
                a.get_frame_count()
            ));
        }
    }
    Ok(())
}

/// For each surface of a level's mesh, the LOD0 surface it draws as (a level leaves out source
/// surfaces that lost every triangle, so indices differ): the one with the same material, else
/// the same name, else the same index.
fn lod0_surface_of(
    lod0: &Gd<godot::classes::ArrayMesh>,
    mesh: &Gd<godot::classes::ArrayMesh>,
) -> Vec<usize> {
    let n0 = lod0.get_surface_count();
    (0..mesh.get_surface_count())
        .map(|s| {
            let material = mesh.surface_get_material(s);
            let name = mesh.surface_get_name(s);
            let by_material = material
                .as_ref()
                .and_then(|m| (0..n0).find(|&j| lod0.surface_get_material(j).as_ref() == Some(m)));
            let by_name =
                || (0..n0).find(|&j| !name.is_empty() && lod0.surface_get_name(j) == name);
            by_material.or_else(by_name).unwrap_or(s.min(n0 - 1).max(0)) as usize
        })
        .collect()
}

/// A new set of materials for `animation`'s level `level` (drawing `mesh`), in the mesh's surface
/// order.
fn level_materials(
    animation: &Gd<VertexAnimation>,
    override_material: Option<&Gd<Material>>,
    mesh: &Gd<godot::classes::ArrayMesh>,
    level: i32,
    full_transform: bool,
    indirect: bool,
) -> Result<Vec<Gd<ShaderMaterial>>, String> {
    let mut materials = material::surface_materials(animation, override_material)?;
    for m in materials.iter_mut() {
        material::bind_animation(m, animation);
        m.set_shader_parameter("vat_full_transform", &full_transform.to_variant());
        m.set_shader_parameter("vat_gpu_driven", &indirect.to_variant());
    }
    let lod0 = animation.bind().get_lod_mesh(0);
    Ok(match (&lod0, level) {
        (Some(lod0), 1..) => lod0_surface_of(lod0, mesh)
            .into_iter()
            .filter_map(|j| materials.get(j).cloned())
            .collect(),
        _ => materials,
    })
}

impl ModelGpu {
    /// The slots, instance list and looks of `animation` (with `override_material`, if any) on
    /// `owner`; refused when it is not baked or its VAT exceeds the renderer's texture size.
    pub(super) fn new(
        owner: &mut Gd<Node3D>,
        animation: &Gd<VertexAnimation>,
        override_material: Option<&Gd<Material>>,
        full_transform: bool,
        max_texture_size: u32,
        indirect: bool,
    ) -> Result<Self, String> {
        if !animation.bind().is_baked() {
            return Err(format!(
                "VertexAnimation '{}' is not baked",
                animation.get_path()
            ));
        }
        check_vat_size(animation, max_texture_size)?;
        let levels = animation.bind().get_lod_count().clamp(1, MAX_LEVELS as i32);
        let mut slots = Vec::new();
        let mut view_materials: Vec<Vec<Gd<ShaderMaterial>>> = Vec::new();
        for shadow in [false, true] {
            for level in 0..levels {
                let mesh = animation
                    .bind()
                    .get_lod_mesh(level)
                    .ok_or_else(|| format!("LOD {level} has no mesh"))?;
                // Each slot of the CPU frame has its own materials: they hold its instance list.
                // The GPU frame's slots hold none, so a level's shadow slot shares its view
                // slot's (every parameter is per level): half the clock uniforms set each frame
                // and half the materials the renderer updates.
                let shared = indirect && shadow;
                let materials = if shared {
                    view_materials[level as usize].clone()
                } else {
                    level_materials(
                        animation,
                        override_material,
                        &mesh,
                        level,
                        full_transform,
                        indirect,
                    )?
                };
                if !shadow {
                    view_materials.push(materials.clone());
                }
                slots.push(Slot::new(
                    owner,
                    &mesh,
                    materials,
                    SlotKind {
                        level: level as u8,
                        shadow,
                        indirect,
                        shared_materials: shared,
                    },
                    max_texture_size,
                ));
            }
        }
        let bounds = convert::bounds(animation.bind().get_bounds());
        Ok(Self {
            slots,
            indices: InstanceList::default(),
            looks: DataTexture::new(Format::RGBAF, 16, 2, MAX_LOOKS as usize, max_texture_size),
            bounds,
            count: 0,
            culling: Bounds::empty(),
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
}
