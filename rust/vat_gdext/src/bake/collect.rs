//! Finds the MeshInstance3Ds of a character and turns their meshes into `vat_core` sources.

use godot::classes::mesh::{ArrayType, BlendShapeMode, PrimitiveType};
use godot::classes::{
    ArrayMesh, BoneAttachment3D, Material, Mesh, MeshInstance3D, Node, Skeleton3D, Skin,
};
use godot::prelude::*;
use vat_core::bake::{BlendMode, BlendShape, MeshSource, SkinBinding};

use crate::convert;

/// One surface of a source mesh, kept so the combined render mesh can reuse its arrays and material.
pub struct SourceSurface {
    /// The surface arrays exactly as the source mesh stores them.
    pub arrays: VarArray,
    /// The material Godot would draw the surface with (override, then mesh material).
    pub material: Option<Gd<Material>>,
    /// Primitive type of the surface.
    pub primitive: PrimitiveType,
    /// Surface name, if any.
    pub name: GString,
    /// Number of vertices.
    pub vertex_count: usize,
    /// The source surface's format bits (`Mesh.ARRAY_FORMAT_*`, custom channel formats included);
    /// 0 for meshes that are not ArrayMeshes (primitive meshes have no custom channels).
    pub format: u64,
}

/// A skinned mesh's link to its skeleton: which bone each skin bind follows and its bind pose.
pub struct SkinLink {
    /// The skeleton the mesh instance is bound to.
    pub skeleton: Gd<Skeleton3D>,
    /// Bone index for each bind.
    pub bind_bones: Vec<i32>,
    /// Bind pose for each bind.
    pub bind_poses: Vec<glam::Affine3A>,
}

/// A mesh instance to bake, with its data converted for the core.
pub struct SourceMesh {
    /// The node in the instantiated character.
    pub node: Gd<MeshInstance3D>,
    /// Skinning link, if the mesh is skinned.
    pub skin: Option<SkinLink>,
    /// Surfaces in order.
    pub surfaces: Vec<SourceSurface>,
    /// Core representation (all surfaces concatenated).
    pub source: MeshSource,
    /// Per vertex: the tangent (xyz) and bitangent sign (w) of the source's TANGENT array; a
    /// surface without one has +X and +1.
    pub tangents: Vec<glam::Vec4>,
}

/// Everything of a character that takes part in the bake.
pub struct Character {
    /// Meshes in depth-first scene order.
    pub meshes: Vec<SourceMesh>,
    /// Bone attachments to refresh after each seek.
    pub attachments: Vec<Gd<BoneAttachment3D>>,
    /// Skeletons to refresh after each seek.
    pub skeletons: Vec<Gd<Skeleton3D>>,
}

impl Character {
    /// Total vertex count of the combined mesh.
    pub fn vertex_count(&self) -> usize {
        self.meshes.iter().map(|m| m.source.positions.len()).sum()
    }

    /// Whether some surface's material uses a normal map (a BaseMaterial3D with normal mapping
    /// on, or a ShaderMaterial whose code writes NORMAL_MAP): only then are tangents baked.
    pub fn uses_normal_map(&self) -> bool {
        use godot::classes::base_material_3d::Feature;
        use godot::classes::{BaseMaterial3D, ShaderMaterial};
        self.meshes
            .iter()
            .flat_map(|m| &m.surfaces)
            .filter_map(|s| s.material.clone())
            .any(|m| match m.clone().try_cast::<BaseMaterial3D>() {
                Ok(b) => b.get_feature(Feature::NORMAL_MAPPING),
                Err(_) => m.try_cast::<ShaderMaterial>().is_ok_and(|sm| {
                    sm.get_shader()
                        .is_some_and(|sh| sh.get_code().to_string().contains("NORMAL_MAP"))
                }),
            })
    }

    /// Per mesh, each vertex's tangent direction (for [`vat_core::bake::tangent_sources`]).
    pub fn tangent_directions(&self) -> Vec<Vec<glam::Vec3>> {
        self.meshes
            .iter()
            .map(|m| m.tangents.iter().map(|t| t.truncate()).collect())
            .collect()
    }

    /// Every vertex's bitangent sign, in the combined mesh's order.
    pub fn tangent_signs(&self) -> Vec<f32> {
        self.meshes
            .iter()
            .flat_map(|m| m.tangents.iter().map(|t| t.w))
            .collect()
    }

    /// Whether any surface has a normal array. Godot draws a mesh without one with its renderer's
    /// default normal (a glTF without NORMAL arrives so), so such a character bakes without
    /// normals and its crowd keeps the mesh's own (absent) normals, as Godot's render does.
    pub fn has_normals(&self) -> bool {
        self.meshes.iter().flat_map(|m| &m.surfaces).any(|s| {
            s.arrays
                .get(ArrayType::NORMAL.ord() as usize)
                .is_some_and(|a| !a.is_nil())
        })
    }
}

/// Collects the character under `root` (which must be inside the scene tree). `subset` lists
/// mesh paths relative to `root`; empty means every visible MeshInstance3D.
pub fn collect(
    root: &Gd<Node>,
    subset: &[NodePath],
    scene_name: &str,
) -> Result<Character, String> {
    let mut nodes = Vec::new();
    let mut attachments = Vec::new();
    let mut skeletons = Vec::new();
    walk(root, &mut nodes, &mut attachments, &mut skeletons);

    let chosen: Vec<Gd<MeshInstance3D>> = if subset.is_empty() {
        nodes
            .into_iter()
            .filter(|n| n.is_visible_in_tree() && has_surfaces(n))
            .collect()
    } else {
        let mut chosen = Vec::new();
        for path in subset {
            let node = root
                .get_node_or_null(path)
                .ok_or_else(|| format!("mesh path '{path}' was not found in '{scene_name}'"))?;
            let mi = node
                .try_cast::<MeshInstance3D>()
                .map_err(|_| format!("'{path}' in '{scene_name}' is not a MeshInstance3D"))?;
            if !has_surfaces(&mi) {
                return Err(format!(
                    "MeshInstance3D '{path}' in '{scene_name}' has no mesh"
                ));
            }
            chosen.push(mi);
        }
        // Depth-first order, whatever order the paths were listed in.
        let order: Vec<_> = {
            let mut all = Vec::new();
            walk(root, &mut all, &mut Vec::new(), &mut Vec::new());
            all
        };
        order.into_iter().filter(|n| chosen.contains(n)).collect()
    };
    if chosen.is_empty() {
        return Err(format!(
            "'{scene_name}' has no visible MeshInstance3D with a mesh to bake"
        ));
    }
    let meshes = chosen
        .into_iter()
        .map(|mi| source_mesh(root, mi, scene_name))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Character {
        meshes,
        attachments,
        skeletons,
    })
}

fn has_surfaces(mi: &Gd<MeshInstance3D>) -> bool {
    mi.get_mesh().is_some_and(|m| m.get_surface_count() > 0)
}

fn walk(
    node: &Gd<Node>,
    meshes: &mut Vec<Gd<MeshInstance3D>>,
    attachments: &mut Vec<Gd<BoneAttachment3D>>,
    skeletons: &mut Vec<Gd<Skeleton3D>>,
) {
    if let Ok(mi) = node.clone().try_cast::<MeshInstance3D>() {
        meshes.push(mi);
    } else if let Ok(att) = node.clone().try_cast::<BoneAttachment3D>() {
        attachments.push(att);
    } else if let Ok(skel) = node.clone().try_cast::<Skeleton3D>() {
        skeletons.push(skel);
    }
    for child in node.get_children().iter_shared() {
        walk(&child, meshes, attachments, skeletons);
    }
}

fn source_mesh(
    root: &Gd<Node>,
    mi: Gd<MeshInstance3D>,
    scene_name: &str,
) -> Result<SourceMesh, String> {
    let path = root.get_path_to(&mi).to_string();
    let mesh: Gd<Mesh> = mi.get_mesh().expect("checked by has_surfaces");
    let mut surfaces = Vec::new();
    let mut positions = Vec::new();
    let mut normals = Vec::new();
    let mut tangents = Vec::new();
    // Per surface: (bone indices, weights, influences) when it has skin arrays.
    let mut skin_arrays: Vec<Option<(PackedInt32Array, PackedFloat32Array, usize)>> = Vec::new();

    for s in 0..mesh.get_surface_count() {
        let arrays = mesh.surface_get_arrays(s);
        let verts = array_at::<PackedVector3Array>(&arrays, ArrayType::VERTEX).unwrap_or_default();
        let n = verts.len();
        let norms = array_at::<PackedVector3Array>(&arrays, ArrayType::NORMAL).unwrap_or_default();
        positions.extend(convert::vec3s(&verts));
        let tans = array_at::<PackedFloat32Array>(&arrays, ArrayType::TANGENT).unwrap_or_default();
        if tans.len() == n * 4 {
            let t = tans.as_slice();
            tangents.extend(
                t.chunks_exact(4).map(|c| {
                    glam::Vec4::new(c[0], c[1], c[2], if c[3] < 0.0 { -1.0 } else { 1.0 })
                }),
            );
        } else {
            tangents.extend(std::iter::repeat_n(glam::Vec4::new(1.0, 0.0, 0.0, 1.0), n));
        }
        if norms.len() == n {
            normals.extend(convert::vec3s(&norms));
        } else {
            normals.extend(std::iter::repeat_n(glam::Vec3::Y, n));
        }
        let surface_bones =
            array_at::<PackedInt32Array>(&arrays, ArrayType::BONES).unwrap_or_default();
        let surface_weights =
            array_at::<PackedFloat32Array>(&arrays, ArrayType::WEIGHTS).unwrap_or_default();
        // 4 or 8 influences per vertex, as the arrays say (any Mesh, not only ArrayMesh).
        let per_vertex = if n > 0 && surface_bones.len() == n * 8 {
            8
        } else {
            4
        };
        skin_arrays.push((!surface_bones.is_empty()).then_some((
            surface_bones,
            surface_weights,
            per_vertex,
        )));
        surfaces.push(SourceSurface {
            arrays,
            material: mi.get_active_material(s),
            primitive: mesh
                .clone()
                .try_cast::<ArrayMesh>()
                .map_or(PrimitiveType::TRIANGLES, |am| {
                    am.surface_get_primitive_type(s)
                }),
            name: mesh
                .clone()
                .try_cast::<ArrayMesh>()
                .map(|am| am.surface_get_name(s))
                .unwrap_or_default(),
            vertex_count: n,
            format: mesh
                .clone()
                .try_cast::<ArrayMesh>()
                .map_or(0, |am| am.surface_get_format(s).ord()),
        });
    }

    let blend_mode = match mesh.clone().try_cast::<ArrayMesh>() {
        Ok(am) if am.get_blend_shape_mode() == BlendShapeMode::RELATIVE => BlendMode::Relative,
        _ => BlendMode::Normalized,
    };
    let blend_shapes = blend_shapes(&mi, &mesh, &surfaces, blend_mode);

    let influences = skin_arrays.iter().flatten().map(|a| a.2).max().unwrap_or(0);
    let skin = if influences > 0 {
        skin_link(&mi, &path, scene_name)?
    } else {
        None
    };
    let skin_binding = skin.as_ref().map(|link| {
        let mut bones = Vec::with_capacity(positions.len() * influences);
        let mut weights = Vec::with_capacity(positions.len() * influences);
        for (surface, arrays) in surfaces.iter().zip(&skin_arrays) {
            match arrays {
                // Widen 4 influences to 8 with zero weights when surfaces differ.
                Some((b, w, k)) if b.len() == surface.vertex_count * k && w.len() == b.len() => {
                    let (b, w) = (b.as_slice(), w.as_slice());
                    for v in 0..surface.vertex_count {
                        for j in 0..influences {
                            let (bone, weight) = if j < *k {
                                (b[v * k + j], w[v * k + j])
                            } else {
                                (0, 0.0)
                            };
                            bones.push(bone.max(0) as u32);
                            weights.push(weight);
                        }
                    }
                }
                // A surface without (valid) weights stays where the mesh has it.
                _ => {
                    bones.extend(std::iter::repeat_n(0, surface.vertex_count * influences));
                    weights.extend(std::iter::repeat_n(0.0, surface.vertex_count * influences));
                }
            }
        }
        SkinBinding {
            bones,
            weights,
            influences,
            bind_count: link.bind_bones.len(),
        }
    });
    let source = MeshSource {
        name: path.clone(),
        positions,
        normals,
        skin: skin_binding,
        blend_shapes,
        blend_mode,
    };
    Ok(SourceMesh {
        node: mi,
        skin,
        surfaces,
        source,
        tangents,
    })
}

/// Blend shapes of all surfaces, concatenated in surface order like the vertices.
fn blend_shapes(
    mi: &Gd<MeshInstance3D>,
    mesh: &Gd<Mesh>,
    surfaces: &[SourceSurface],
    mode: BlendMode,
) -> Vec<BlendShape> {
    let count = mi.get_blend_shape_count().max(0) as usize;
    let mut shapes: Vec<BlendShape> = (0..count)
        .map(|_| BlendShape {
            positions: Vec::new(),
            normals: Vec::new(),
        })
        .collect();
    for (s, surface) in surfaces.iter().enumerate() {
        let per_surface = mesh.surface_get_blend_shape_arrays(s as i32);
        for (i, shape) in shapes.iter_mut().enumerate() {
            let arrays = per_surface.get(i);
            let verts = arrays
                .as_ref()
                .and_then(|a| array_at::<PackedVector3Array>(a, ArrayType::VERTEX))
                .unwrap_or_default();
            let norms = arrays
                .as_ref()
                .and_then(|a| array_at::<PackedVector3Array>(a, ArrayType::NORMAL))
                .unwrap_or_default();
            // A surface without data for this shape is unchanged by it: the rest value in
            // normalised mode, a zero delta in relative mode.
            let rest = |t: ArrayType| -> Vec<glam::Vec3> {
                match mode {
                    BlendMode::Normalized => array_at::<PackedVector3Array>(&surface.arrays, t)
                        .map(|a| convert::vec3s(&a))
                        .filter(|v| v.len() == surface.vertex_count)
                        .unwrap_or_else(|| vec![glam::Vec3::Y; surface.vertex_count]),
                    BlendMode::Relative => vec![glam::Vec3::ZERO; surface.vertex_count],
                }
            };
            if verts.len() == surface.vertex_count {
                shape.positions.extend(convert::vec3s(&verts));
            } else {
                shape.positions.extend(rest(ArrayType::VERTEX));
            }
            if norms.len() == surface.vertex_count {
                shape.normals.extend(convert::vec3s(&norms));
            } else {
                shape.normals.extend(rest(ArrayType::NORMAL));
            }
        }
    }
    shapes
}

fn skin_link(
    mi: &Gd<MeshInstance3D>,
    path: &str,
    scene_name: &str,
) -> Result<Option<SkinLink>, String> {
    let skeleton_path = mi.get_skeleton_path();
    let Some(skeleton) = mi
        .get_node_or_null(&skeleton_path)
        .and_then(|n| n.try_cast::<Skeleton3D>().ok())
    else {
        godot_warn!(
            "vat_crowd: mesh '{path}' in '{scene_name}' has bone weights but no Skeleton3D at '{skeleton_path}'; baking it unskinned"
        );
        return Ok(None);
    };
    let mut skeleton_mut = skeleton.clone();
    // Godot itself binds a skin-less skinned mesh with one made from the rest pose.
    let skin: Gd<Skin> = match mi.get_skin() {
        Some(s) => s,
        None => skeleton_mut
            .create_skin_from_rest_transforms()
            .ok_or_else(|| {
                format!("could not create a rest skin for '{path}' in '{scene_name}'")
            })?,
    };
    let bone_count = skeleton.get_bone_count();
    let mut bind_bones = Vec::new();
    let mut bind_poses = Vec::new();
    for i in 0..skin.get_bind_count() {
        let name = skin.get_bind_name(i);
        // Like Godot's skin binding: a bind name wins over a bind bone index.
        let bone = if name.is_empty() {
            skin.get_bind_bone(i)
        } else {
            skeleton.find_bone(&name.to_string())
        };
        if bone < 0 || bone >= bone_count {
            return Err(format!(
                "skin bind {i} of mesh '{path}' in '{scene_name}' names bone '{name}' (index {bone}), which the skeleton does not have"
            ));
        }
        bind_bones.push(bone);
        bind_poses.push(convert::affine(skin.get_bind_pose(i)));
    }
    Ok(Some(SkinLink {
        skeleton,
        bind_bones,
        bind_poses,
    }))
}

/// Reads one typed entry of a surface array, `None` if absent or of another type.
pub fn array_at<T: FromGodot>(arrays: &VarArray, which: ArrayType) -> Option<T> {
    arrays
        .get(which.ord() as usize)
        .and_then(|v| v.try_to::<T>().ok())
}

#[allow(unused_imports)]
use godot::obj::EngineEnum as _;
