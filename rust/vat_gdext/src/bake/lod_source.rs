//! The LOD chain's input read from a bake: the combined mesh as `vat_core::lod_mesh` sees it
//! ([`LodSource`]), the images each surface is drawn with, and the poses the silhouette check
//! runs over.

use godot::classes::base_material_3d::{CullMode, TextureParam};
use godot::classes::image::Format;
use godot::classes::mesh::{ArrayType, PrimitiveType};
use godot::classes::{BaseMaterial3D, BoneAttachment3D, Image, Node, Skeleton3D, Texture2D};
use godot::prelude::*;
use vat_core::bake::EncodedVat;
use vat_core::clip::Clip;
use vat_core::lod_mesh::{LodSource, SourceSurface, SurfaceTexture};

use super::collect::{array_at, Character};

/// Poses per clip the silhouette check runs over (first, middle and last frame).
pub const POSES_PER_CLIP: u32 = 3;

/// Builds the [`LodSource`] of a bake: the combined mesh's vertices in bake order (the VAT column
/// order), the reference pose decoded from frame 0 of `vat`, the first UV set, each vertex's
/// dominant bone (a rigid mesh on a BoneAttachment3D follows its attachment's bone) and the
/// surfaces with their cull mode. Bone indices run over every Skeleton3D of the character in
/// scene order, each skeleton's bones after the previous one's.
pub fn lod_source<B: AsRef<[u8]>>(character: &Character, vat: &EncodedVat<B>) -> LodSource {
    let positions = vat_core::bake::decode_frame(vat, 0);
    let normals = if vat.params.normals {
        vat_core::bake::decode_frame_normals(vat, 0)
    } else {
        character
            .meshes
            .iter()
            .flat_map(|m| m.source.normals.iter().copied())
            .collect()
    };
    let mut bone_names = Vec::new();
    let mut bone_base = Vec::new();
    for skeleton in &character.skeletons {
        bone_base.push((skeleton.clone(), bone_names.len() as u32));
        for b in 0..skeleton.get_bone_count() {
            bone_names.push(skeleton.get_bone_name(b).to_string());
        }
    }
    let global_bone = |skeleton: &Gd<Skeleton3D>, bone: i32| -> u32 {
        bone_base
            .iter()
            .find(|(s, _)| s == skeleton)
            .filter(|_| bone >= 0 && bone < skeleton.get_bone_count())
            .map_or(u32::MAX, |(_, base)| base + bone as u32)
    };

    let mut uvs = Vec::with_capacity(positions.len());
    let mut bones = Vec::with_capacity(positions.len());
    let mut surfaces = Vec::new();
    let mut base = 0u32;
    for mesh in &character.meshes {
        let rigid_bone = attachment_bone(&mesh.node).map_or(u32::MAX, |(s, b)| global_bone(&s, b));
        for surface in &mesh.surfaces {
            let n = surface.vertex_count;
            let uv = array_at::<PackedVector2Array>(&surface.arrays, ArrayType::TEX_UV)
                .filter(|a| a.len() == n);
            match uv {
                Some(a) => uvs.extend(a.as_slice().iter().map(|v| glam::Vec2::new(v.x, v.y))),
                None => uvs.extend(std::iter::repeat_n(glam::Vec2::ZERO, n)),
            }
            let indices = triangles(&surface.arrays, surface.primitive, n)
                .into_iter()
                .map(|i| i + base)
                .collect();
            let double_sided = surface
                .material
                .as_ref()
                .and_then(|m| m.clone().try_cast::<BaseMaterial3D>().ok())
                .is_some_and(|m| m.get_cull_mode() == CullMode::DISABLED);
            surfaces.push(SourceSurface {
                indices,
                double_sided,
            });
            base += n as u32;
        }
        match (&mesh.skin, &mesh.source.skin) {
            (Some(link), Some(skin)) => {
                let k = skin.influences;
                for v in 0..mesh.source.positions.len() {
                    let w = &skin.weights[v * k..v * k + k];
                    let b = &skin.bones[v * k..v * k + k];
                    let best = (0..k)
                        .filter(|&j| w[j] > 0.0)
                        .max_by(|&x, &y| w[x].total_cmp(&w[y]));
                    bones.push(best.map_or(rigid_bone, |j| {
                        link.bind_bones
                            .get(b[j] as usize)
                            .map_or(u32::MAX, |&bone| global_bone(&link.skeleton, bone))
                    }));
                }
            }
            _ => bones.extend(std::iter::repeat_n(rigid_bone, mesh.source.positions.len())),
        }
    }
    LodSource {
        positions,
        normals,
        uvs,
        bones,
        bone_names,
        surfaces,
        textures: Vec::new(),
    }
}

/// The skeleton and bone a rigid mesh follows: its nearest BoneAttachment3D ancestor's.
fn attachment_bone(node: &Gd<godot::classes::MeshInstance3D>) -> Option<(Gd<Skeleton3D>, i32)> {
    let mut at: Option<Gd<Node>> = node.get_parent();
    while let Some(n) = at {
        if let Ok(att) = n.clone().try_cast::<BoneAttachment3D>() {
            let skeleton = if att.get_use_external_skeleton() {
                att.get_node_or_null(&att.get_external_skeleton())
            } else {
                att.get_parent()
            }
            .and_then(|s| s.try_cast::<Skeleton3D>().ok())?;
            return Some((skeleton, att.get_bone_idx()));
        }
        if n.is_class("Skeleton3D") {
            return None;
        }
        at = n.get_parent();
    }
    None
}

/// A surface's triangles as surface-local vertex indices: its index array (or every vertex in
/// order) for triangle lists, strips unrolled with alternating winding, nothing for points and
/// lines. Indices past the vertex count are dropped with their triangle.
fn triangles(arrays: &VarArray, primitive: PrimitiveType, n: usize) -> Vec<u32> {
    let order: Vec<u32> = match array_at::<PackedInt32Array>(arrays, ArrayType::INDEX) {
        Some(i) if !i.is_empty() => i.as_slice().iter().map(|&v| v.max(0) as u32).collect(),
        _ => (0..n as u32).collect(),
    };
    let tris: Vec<[u32; 3]> = if primitive == PrimitiveType::TRIANGLES {
        order.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect()
    } else if primitive == PrimitiveType::TRIANGLE_STRIP {
        order
            .windows(3)
            .enumerate()
            .map(|(i, t)| {
                if i % 2 == 0 {
                    [t[0], t[1], t[2]]
                } else {
                    [t[1], t[0], t[2]]
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    tris.into_iter()
        .filter(|t| t.iter().all(|&v| (v as usize) < n))
        .flatten()
        .collect()
}

/// Per surface of `character` (in combined-mesh order), every image it may be drawn with: the
/// albedo texture of its StandardMaterial3D/ORMMaterial3D, then each of `variations` (a crowd
/// may draw any surface with any variation layer). Decompressed and converted to RGBA8.
pub fn surface_images(
    character: &Character,
    variations: &[Option<Gd<Texture2D>>],
) -> Vec<Vec<SurfaceTexture>> {
    let layers: Vec<SurfaceTexture> = variations.iter().flatten().filter_map(rgba8).collect();
    character
        .meshes
        .iter()
        .flat_map(|m| &m.surfaces)
        .map(|s| {
            let albedo = s
                .material
                .as_ref()
                .and_then(|m| m.clone().try_cast::<BaseMaterial3D>().ok())
                .and_then(|m| m.get_texture(TextureParam::ALBEDO))
                .and_then(|t| rgba8(&t));
            albedo.into_iter().chain(layers.iter().cloned()).collect()
        })
        .collect()
}

/// A texture's image as RGBA8 (without mipmaps), or `None` when it has no image data.
fn rgba8(texture: &Gd<Texture2D>) -> Option<SurfaceTexture> {
    let mut image: Gd<Image> = texture.get_image()?;
    if image.is_compressed() {
        image.decompress();
    }
    if image.has_mipmaps() {
        image.clear_mipmaps();
    }
    image.convert(Format::RGBA8);
    let (w, h) = (image.get_width(), image.get_height());
    let data = image.get_data();
    (w > 0 && h > 0 && data.len() == (w * h * 4) as usize).then(|| SurfaceTexture {
        width: w as u32,
        height: h as u32,
        rgba8: data.to_vec(),
    })
}

/// The baked frames the silhouette check runs over: the first, middle and last frame of every
/// clip (fewer for clips with fewer frames), as indices into the whole VAT.
pub fn pose_frames(clips: &[Clip]) -> Vec<u32> {
    let mut out = Vec::new();
    for c in clips {
        let last = c.frame_count.saturating_sub(1);
        let mut picked: Vec<u32> = (0..POSES_PER_CLIP)
            .map(|i| i * last / (POSES_PER_CLIP - 1))
            .collect();
        picked.dedup();
        out.extend(
            picked
                .into_iter()
                .filter(|&f| f < c.frame_count)
                .map(|f| c.first_frame + f),
        );
    }
    out
}

/// Source-vertex positions at each of `frames`, decoded from `vat` as the shader reads them.
pub fn poses<B: AsRef<[u8]>>(vat: &EncodedVat<B>, frames: &[u32]) -> Vec<Vec<glam::Vec3>> {
    frames
        .iter()
        .map(|&f| vat_core::bake::decode_frame(vat, f))
        .collect()
}

/// Writes `source` as JSON (serde) to `source_path` and `poses` as a JSON array of arrays of
/// `[x, y, z]` to `poses_path`. Only for `dump_lod_input` (feature `dev`).
#[cfg(feature = "dev")]
pub fn write_json(
    source: &LodSource,
    poses: &[Vec<glam::Vec3>],
    source_path: &str,
    poses_path: &str,
) -> Result<(), String> {
    let write = |path: &str, text: Result<String, serde_json::Error>| {
        let text = text.map_err(|e| format!("could not serialise '{path}': {e}"))?;
        std::fs::write(path, text).map_err(|e| format!("could not write '{path}': {e}"))
    };
    write(source_path, serde_json::to_string(source))?;
    let pose_arrays: Vec<Vec<[f32; 3]>> = poses
        .iter()
        .map(|p| p.iter().map(|v| v.to_array()).collect())
        .collect();
    write(poses_path, serde_json::to_string(&pose_arrays))
}
