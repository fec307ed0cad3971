//! One MultiMeshInstance3D of a crowd model: the mesh of one level of detail, drawn in the view or
//! for shadows only, over its own instance list (written by the crowd frame).

use godot::classes::geometry_instance_3d::ShadowCastingSetting;
use godot::classes::image::Format;
use godot::classes::multi_mesh::{PhysicsInterpolationQuality, TransformFormat};
use godot::classes::node::{InternalMode, PhysicsInterpolationMode};
use godot::classes::rendering_server::MultimeshTransformFormat;
use godot::classes::{
    ArrayMesh, ImageTexture, MultiMesh, MultiMeshInstance3D, Node3D, RenderingServer,
    ShaderMaterial,
};
use godot::prelude::*;

use super::data_texture::DataTexture;

/// Tints of `lod_debug_colors`, by level (later levels repeat the list): pure colours, the same
/// in linear and sRGB, so a test can find them on screen.
pub const LOD_COLORS: [Color; 6] = [
    Color::from_rgb(0.0, 1.0, 0.0),
    Color::from_rgb(1.0, 1.0, 0.0),
    Color::from_rgb(1.0, 0.0, 0.0),
    Color::from_rgb(0.0, 0.0, 1.0),
    Color::from_rgb(1.0, 0.0, 1.0),
    Color::from_rgb(0.0, 1.0, 1.0),
];

/// One (model, level, view or shadow) MultiMesh.
pub struct Slot {
    instance: Gd<MultiMeshInstance3D>,
    multimesh: Gd<MultiMesh>,
    /// One per surface of the level's mesh.
    pub materials: Vec<Gd<ShaderMaterial>>,
    /// This slot's model-instance texels.
    indices: DataTexture,
    mm_capacity: usize,
    /// Instances drawn now.
    pub count: usize,
    /// The level of detail it draws.
    pub level: u8,
    /// Shadows only.
    pub shadow: bool,
    /// Vertices of its mesh.
    pub vertices: i64,
    /// Drawn by the GPU frame: the MultiMesh is allocated with indirect drawing and a compute
    /// pass writes its instances and counts (see `gpu_frame`).
    pub indirect: bool,
    /// Its materials are its level's view slot's (a shadow slot of the GPU frame): whoever sets
    /// a parameter on every slot's materials may skip this one's.
    pub shared_materials: bool,
    /// Its mesh (kept for indirect MultiMeshes, which are given it through the RenderingServer).
    mesh: Gd<ArrayMesh>,
    /// What this slot last gave its node and MultiMesh, so a frame that changes nothing makes no
    /// engine call: the node's visibility and the culling box. Only the slot sets them (the node
    /// is an internal child).
    shown: bool,
    aabb: Aabb,
    /// The visible instance count last set (CPU frame; `None` after the MultiMesh grew).
    visible_count: Option<usize>,
}

/// What a [`Slot`] draws and how.
pub struct SlotKind {
    /// The level of detail.
    pub level: u8,
    /// Shadows only.
    pub shadow: bool,
    /// Drawn by the GPU frame (see [`Slot::indirect`]).
    pub indirect: bool,
    /// Its materials are another slot's (see [`Slot::shared_materials`]).
    pub shared_materials: bool,
}

/// Meta key under which an indirect slot's node keeps its mesh alive.
const MESH_META: &str = "_vat_mesh";

/// Instances an indirect MultiMesh holds at first (it grows from the GPU frame's counts).
const INDIRECT_MIN_CAPACITY: usize = 256;
/// Room an indirect MultiMesh is given before any count is read back: its model's instances up to
/// this many (1 MiB of instance data), so crowds of that size never wait for a read-back.
pub const INDIRECT_START_CAPACITY: usize = 16_384;

/// A MultiMesh allocated for the GPU frame: 3x4 transforms and custom data (the actor and look),
/// with indirect drawing, then given `mesh` (in that order: Godot makes the indirect command
/// buffer when the mesh is set).
fn indirect_multimesh(mesh: &Gd<ArrayMesh>, capacity: usize) -> Gd<MultiMesh> {
    let multimesh = MultiMesh::new_gd();
    let mut rs = RenderingServer::singleton();
    rs.multimesh_allocate_data_ex(
        multimesh.get_rid(),
        capacity as i32,
        MultimeshTransformFormat::TRANSFORM_3D,
    )
    .color_format(false)
    .custom_data_format(true)
    .use_indirect(true)
    .done();
    rs.multimesh_set_mesh(multimesh.get_rid(), mesh.get_rid());
    multimesh
}

impl Slot {
    /// A slot drawing `mesh` (a level's mesh, duplicated so it carries `materials`) as an internal
    /// child of `owner`.
    pub fn new(
        owner: &mut Gd<Node3D>,
        mesh: &Gd<ArrayMesh>,
        materials: Vec<Gd<ShaderMaterial>>,
        kind: SlotKind,
        max_texture_size: u32,
    ) -> Self {
        let SlotKind {
            level,
            shadow,
            indirect,
            shared_materials,
        } = kind;
        let mut mesh: Gd<ArrayMesh> = mesh.duplicate_resource();
        let mut vertices = 0i64;
        for s in 0..mesh.get_surface_count() {
            // `materials` is in this mesh's surface order (see gpu::lod0_surface_of).
            if let Some(m) = materials.get(s as usize).or(materials.last()) {
                mesh.surface_set_material(s, m);
            }
            vertices += i64::from(mesh.surface_get_array_len(s));
        }
        let multimesh = if indirect {
            indirect_multimesh(&mesh, INDIRECT_MIN_CAPACITY)
        } else {
            let mut multimesh = MultiMesh::new_gd();
            multimesh.set_transform_format(TransformFormat::TRANSFORM_3D);
            multimesh.set_physics_interpolation_quality(PhysicsInterpolationQuality::FAST);
            multimesh.set_mesh(&mesh);
            multimesh
        };
        let mut instance = MultiMeshInstance3D::new_alloc();
        instance.set_multimesh(&multimesh);
        if indirect {
            // The MultiMesh was given the mesh through the RenderingServer, so the resource does
            // not hold it: the node does, for as long as it draws it.
            instance.set_meta(MESH_META, &mesh.to_variant());
        }
        instance.set_physics_interpolation_mode(PhysicsInterpolationMode::OFF);
        // An indirect MultiMesh draws what its command says: its count is never set here.
        instance.set_visible(indirect);
        if shadow {
            instance.set_cast_shadows_setting(ShadowCastingSetting::SHADOWS_ONLY);
        }
        owner
            .add_child_ex(&instance)
            .internal(InternalMode::BACK)
            .done();
        Self {
            instance,
            shown: indirect,
            aabb: Aabb::default(),
            visible_count: None,
            multimesh,
            materials,
            indices: DataTexture::new(Format::RGBA8, 4, 1, 0, max_texture_size),
            mm_capacity: if indirect { INDIRECT_MIN_CAPACITY } else { 0 },
            count: 0,
            level,
            shadow,
            vertices,
            indirect,
            shared_materials,
            mesh,
        }
    }

    /// The indirect MultiMesh's RenderingServer RID.
    pub fn multimesh_rid(&self) -> Rid {
        self.multimesh.get_rid()
    }

    /// Instances its MultiMesh holds.
    pub fn capacity(&self) -> usize {
        self.mm_capacity
    }

    /// Surfaces of its mesh.
    pub fn surfaces(&self) -> u32 {
        self.mesh.get_surface_count().max(0) as u32
    }

    /// The indirect command buffer of its MultiMesh (a rendering-device RID), which Godot does not
    /// free with the MultiMesh: whoever replaces or frees the MultiMesh frees it.
    pub fn command_buffer(&self) -> Rid {
        RenderingServer::singleton().multimesh_get_command_buffer_rd_rid(self.multimesh.get_rid())
    }

    /// Gives an indirect slot room for `wanted` instances (doubling; a new MultiMesh, since
    /// re-allocating one drops its command buffer). Returns the old command buffer to free, if
    /// it grew.
    pub fn grow_indirect(&mut self, wanted: usize) -> Option<Rid> {
        if !self.indirect || wanted <= self.mm_capacity {
            return None;
        }
        let old = self.command_buffer();
        let mut cap = self.mm_capacity.max(INDIRECT_MIN_CAPACITY);
        while cap < wanted {
            cap *= 2;
        }
        let aabb = self.aabb;
        self.multimesh = indirect_multimesh(&self.mesh, cap);
        self.multimesh.set_custom_aabb(aabb);
        self.instance.set_multimesh(&self.multimesh);
        self.instance.set_custom_aabb(aabb);
        self.mm_capacity = cap;
        Some(old)
    }

    /// Bytes its instance list has handed to the engine so far.
    pub fn sent_bytes(&self) -> u64 {
        self.indices.sent_bytes()
    }

    /// Writes this frame's instances (texels as `u32::from_le_bytes`), marking the texture for
    /// upload only if a texel changed.
    pub fn write(&mut self, list: &[u32]) {
        let n = list.len();
        self.indices.reserve(n);
        let bytes = &mut self.indices.bytes_mut_untracked()[..n * 4];
        let mut changed = false;
        for (dst, t) in bytes.chunks_exact_mut(4).zip(list) {
            let new = t.to_le_bytes();
            changed |= *dst != new;
            dst.copy_from_slice(&new);
        }
        if changed {
            self.indices.mark_changed();
        }
        self.count = n;
    }

    /// Uploads the list if it changed, grows the MultiMesh, sets the visible count and the
    /// culling box, and binds textures that are new objects (its list, `looks`).
    pub fn submit(&mut self, aabb: Aabb, looks: Option<&Gd<ImageTexture>>) {
        if self.indirect {
            self.set_aabb(aabb);
            // A shared set of materials took the looks through the slot that owns it.
            if let Some(t) = looks.filter(|_| !self.shared_materials) {
                for m in self.materials.iter_mut() {
                    m.set_shader_parameter("vat_looks", &t.to_variant());
                }
            }
            return;
        }
        let indices = self.indices.upload();
        let count = self.count;
        if count > self.mm_capacity {
            let mut cap = self.mm_capacity.max(1024);
            while cap < count {
                cap *= 2;
            }
            self.mm_capacity = cap;
            // Instances start with all-zero transforms; identity once per growth makes
            // MODEL_MATRIX the node's own transform, and the shader places each instance from
            // its actor texel.
            self.multimesh.set_instance_count(cap as i32);
            let identity: PackedFloat32Array = std::iter::repeat_n(
                [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
                cap,
            )
            .flatten()
            .collect();
            self.multimesh.set_buffer(&identity);
            self.visible_count = None;
        }
        self.set_aabb(aabb);
        if self.visible_count != Some(count) {
            self.visible_count = Some(count);
            self.multimesh.set_visible_instance_count(count as i32);
        }
        self.show(count > 0);
        for m in self.materials.iter_mut() {
            if let Some(t) = &indices {
                m.set_shader_parameter("vat_models", &t.to_variant());
            }
            if let Some(t) = looks {
                m.set_shader_parameter("vat_looks", &t.to_variant());
            }
        }
    }

    /// Shows or hides an indirect slot (a view slot under Shadows Only draws nothing).
    pub fn show_indirect(&mut self, on: bool) {
        if self.indirect {
            self.show(on);
        }
    }

    /// Shows or hides the node, when that changed.
    fn show(&mut self, on: bool) {
        if self.shown != on {
            self.shown = on;
            self.instance.set_visible(on);
        }
    }

    /// Gives the MultiMesh and the node `aabb` as their culling box, when it changed.
    fn set_aabb(&mut self, aabb: Aabb) {
        if self.aabb != aabb {
            self.aabb = aabb;
            self.multimesh.set_custom_aabb(aabb);
            self.instance.set_custom_aabb(aabb);
        }
    }

    /// Sets the view slot's shadow casting (shadow slots always cast shadows only).
    pub fn set_cast_shadow(&mut self, setting: ShadowCastingSetting) {
        if !self.shadow {
            self.instance.set_cast_shadows_setting(setting);
        }
    }

    /// Frees the child node (an indirect slot's command buffer goes with the GPU frame).
    pub fn free(self) {
        let mut inst = self.instance;
        if inst.is_instance_valid() {
            inst.queue_free();
        }
    }
}
