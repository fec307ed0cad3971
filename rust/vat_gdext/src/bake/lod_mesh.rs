//! One Godot ArrayMesh per LOD level: each level vertex interpolates every array of the source
//! (UV, UV2, colours, custom channels) with its `LodVertex` sources and weights, and carries its
//! VAT column in the column channel.

use godot::classes::mesh::{ArrayCustomFormat, ArrayType, PrimitiveType};
use godot::classes::ArrayMesh;
use godot::obj::EngineEnum;
use godot::prelude::*;
use vat_core::lod_mesh::{LodLevel, LodVertex};

use super::collect::{array_at, Character, SourceSurface};
use super::output::{custom_mask, custom_shift, surface_flags, CUSTOM_CHANNELS};
use crate::convert;

/// How one vertex array stores its values, so it can be read as floats, interpolated and written
/// back in the same type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// PackedVector2Array (UV, UV2).
    Vec2,
    /// PackedColorArray.
    Color,
    /// PackedFloat32Array with this many floats per vertex (float custom formats).
    Floats(usize),
    /// PackedByteArray, 4 bytes per vertex, interpolated as unsigned normalised values.
    Unorm8,
    /// PackedByteArray with this many bytes per vertex that does not interpolate as bytes
    /// (signed or half values): each vertex copies its heaviest source's bytes.
    RawBytes(usize),
}

impl Kind {
    fn components(self) -> usize {
        match self {
            Kind::Vec2 => 2,
            Kind::Color => 4,
            Kind::Floats(n) | Kind::RawBytes(n) => n,
            Kind::Unorm8 => 4,
        }
    }
}

/// One array of one source surface, as floats (`kind.components()` per vertex).
struct Channel {
    kind: Kind,
    values: Vec<f32>,
}

/// The arrays a level mesh interpolates, besides positions and normals.
const INTERPOLATED: [ArrayType; 3] = [ArrayType::TEX_UV, ArrayType::TEX_UV2, ArrayType::COLOR];

fn kind_of(which: ArrayType, format: u64) -> Option<Kind> {
    if which == ArrayType::TEX_UV || which == ArrayType::TEX_UV2 {
        return Some(Kind::Vec2);
    }
    if which == ArrayType::COLOR {
        return Some(Kind::Color);
    }
    let c = which.ord() - ArrayType::CUSTOM0.ord();
    let f = ((format & custom_mask(c)) >> custom_shift(c)) as i32;
    Some(match ArrayCustomFormat::try_from_ord(f)? {
        ArrayCustomFormat::RGBA8_UNORM => Kind::Unorm8,
        ArrayCustomFormat::RGBA8_SNORM | ArrayCustomFormat::RG_HALF => Kind::RawBytes(4),
        ArrayCustomFormat::RGBA_HALF => Kind::RawBytes(8),
        ArrayCustomFormat::R_FLOAT => Kind::Floats(1),
        ArrayCustomFormat::RG_FLOAT => Kind::Floats(2),
        ArrayCustomFormat::RGB_FLOAT => Kind::Floats(3),
        ArrayCustomFormat::RGBA_FLOAT => Kind::Floats(4),
        _ => return None,
    })
}

fn read(surface: &SourceSurface, which: ArrayType) -> Option<Channel> {
    let kind = kind_of(which, surface.format)?;
    let n = surface.vertex_count;
    let values: Vec<f32> = match kind {
        Kind::Vec2 => array_at::<PackedVector2Array>(&surface.arrays, which)?
            .as_slice()
            .iter()
            .flat_map(|v| [v.x, v.y])
            .collect(),
        Kind::Color => array_at::<PackedColorArray>(&surface.arrays, which)?
            .as_slice()
            .iter()
            .flat_map(|c| [c.r, c.g, c.b, c.a])
            .collect(),
        Kind::Floats(_) => array_at::<PackedFloat32Array>(&surface.arrays, which)?.to_vec(),
        Kind::Unorm8 | Kind::RawBytes(_) => array_at::<PackedByteArray>(&surface.arrays, which)?
            .as_slice()
            .iter()
            .map(|&b| f32::from(b))
            .collect(),
    };
    (values.len() == n * kind.components()).then_some(Channel { kind, values })
}

fn write(kind: Kind, values: &[f32]) -> Variant {
    match kind {
        Kind::Vec2 => values
            .chunks_exact(2)
            .map(|v| Vector2::new(v[0], v[1]))
            .collect::<PackedVector2Array>()
            .to_variant(),
        Kind::Color => values
            .chunks_exact(4)
            .map(|c| Color::from_rgba(c[0], c[1], c[2], c[3]))
            .collect::<PackedColorArray>()
            .to_variant(),
        Kind::Floats(_) => PackedFloat32Array::from(values).to_variant(),
        Kind::Unorm8 | Kind::RawBytes(_) => values
            .iter()
            .map(|&v| v.round().clamp(0.0, 255.0) as u8)
            .collect::<PackedByteArray>()
            .to_variant(),
    }
}

/// The source surfaces of `character` in combined-mesh order, with the index of each one's
/// first vertex in the combined vertex order.
pub fn surfaces_with_bases(character: &Character) -> Vec<(&SourceSurface, u32)> {
    let mut base = 0u32;
    character
        .meshes
        .iter()
        .flat_map(|m| &m.surfaces)
        .map(|s| {
            let b = base;
            base += s.vertex_count as u32;
            (s, b)
        })
        .collect()
}

/// Interpolates one array for `vertices` drawn on surface `target` (values of `kind`). Each
/// source vertex is read from its own surface; a source whose surface lacks the array (or has it
/// in another type) is left out and the others' weights renormalised; a vertex none of whose
/// sources has it gets zeros. Byte arrays that do not interpolate copy the heaviest source.
fn interpolate(
    kind: Kind,
    vertices: &[LodVertex],
    channels: &[Option<Channel>],
    bases: &[u32],
) -> Vec<f32> {
    let k = kind.components();
    let mut out = vec![0.0f32; vertices.len() * k];
    for (v, dst) in vertices.iter().zip(out.chunks_exact_mut(k)) {
        let mut total = 0.0f32;
        let mut best = (f32::MIN, None);
        let mut sum = vec![0.0f32; k];
        for (&src, &w) in v.sources.iter().zip(&v.weights) {
            let s = bases.partition_point(|&b| b <= src) - 1;
            let Some(ch) = channels[s].as_ref().filter(|c| c.kind == kind) else {
                continue;
            };
            let at = (src - bases[s]) as usize * k;
            let value = &ch.values[at..at + k];
            if w > best.0 {
                best = (w, Some(value));
            }
            for (acc, x) in sum.iter_mut().zip(value) {
                *acc += w * x;
            }
            total += w;
        }
        match (kind, best.1) {
            (Kind::RawBytes(_), Some(value)) => dst.copy_from_slice(value),
            _ if total > 0.0 => {
                for (d, s) in dst.iter_mut().zip(&sum) {
                    *d = s / total;
                }
            }
            _ => {}
        }
    }
    out
}

/// The ArrayMesh of `level`: one surface per level surface, with its source surface's material
/// and name; positions and normals of each vertex's column at the reference frame (`first`,
/// `first_normals`: decoded from the level's VAT, one per column; normals may be empty), tangents
/// likewise where baked (`first_tangents`, with the source vertices' bitangent signs); every
/// other array the source surface has, interpolated; the column in custom channel `channel`.
pub fn level_mesh(
    character: &Character,
    level: &LodLevel,
    first: &[glam::Vec3],
    first_normals: &[glam::Vec3],
    first_tangents: Option<&[glam::Vec3]>,
    channel: i32,
    aabb: Aabb,
) -> Result<Gd<ArrayMesh>, String> {
    let surfaces = surfaces_with_bases(character);
    let signs = first_tangents.map(|_| character.tangent_signs());
    let bases: Vec<u32> = surfaces.iter().map(|s| s.1).collect();
    let mut mesh = ArrayMesh::new_gd();
    for ls in &level.surfaces {
        let (target, _) = surfaces
            .get(ls.source_surface as usize)
            .ok_or_else(|| format!("LOD surface names source surface {}", ls.source_surface))?;
        // The level's vertices this surface draws, in order of first use.
        let mut local = std::collections::HashMap::new();
        let mut used = Vec::new();
        let indices: PackedInt32Array = ls
            .indices
            .iter()
            .map(|&i| {
                *local.entry(i).or_insert_with(|| {
                    used.push(level.vertices[i as usize]);
                    used.len() as i32 - 1
                })
            })
            .collect();
        let column = |v: &LodVertex| v.column as usize;
        let mut arrays = VarArray::new();
        arrays.resize(ArrayType::MAX.ord() as usize, &Variant::nil());
        let positions: Vec<glam::Vec3> = used.iter().map(|v| first[column(v)]).collect();
        arrays.set(
            ArrayType::VERTEX.ord() as usize,
            &convert::to_vector3s(&positions).to_variant(),
        );
        if !first_normals.is_empty() {
            let normals: Vec<glam::Vec3> = used.iter().map(|v| first_normals[column(v)]).collect();
            arrays.set(
                ArrayType::NORMAL.ord() as usize,
                &convert::to_vector3s(&normals).to_variant(),
            );
        }
        let customs = (0..CUSTOM_CHANNELS)
            .filter(|&c| c != channel)
            .map(|c| ArrayType::from_ord(ArrayType::CUSTOM0.ord() + c));
        for which in INTERPOLATED.into_iter().chain(customs) {
            let Some(own) = read(target, which) else {
                continue;
            };
            let channels: Vec<Option<Channel>> = surfaces
                .iter()
                .map(|(s, _)| {
                    if std::ptr::eq(*s, *target) {
                        None
                    } else {
                        read(s, which)
                    }
                })
                .collect();
            let index = surfaces
                .iter()
                .position(|(s, _)| std::ptr::eq(*s, *target))
                .expect("target is one of the surfaces");
            let mut channels = channels;
            let kind = own.kind;
            channels[index] = Some(own);
            let values = interpolate(kind, &used, &channels, &bases);
            arrays.set(which.ord() as usize, &write(kind, &values));
        }
        if let (Some(t), Some(signs)) = (first_tangents, &signs) {
            // The sign of the source vertex that weighs most (a copied vertex: its own).
            let vertex_signs: Vec<f32> = used
                .iter()
                .map(|v| {
                    let k = (0..3)
                        .max_by(|&a, &b| v.weights[a].total_cmp(&v.weights[b]))
                        .unwrap_or(0);
                    signs.get(v.sources[k] as usize).copied().unwrap_or(1.0)
                })
                .collect();
            let columns: Vec<usize> = used.iter().map(|v| v.column as usize).collect();
            arrays.set(
                ArrayType::TANGENT.ord() as usize,
                &super::output::tangent_array(&columns, t, &vertex_signs).to_variant(),
            );
        }
        let columns: PackedFloat32Array = used.iter().map(|v| v.column as f32).collect();
        arrays.set(
            (ArrayType::CUSTOM0.ord() + channel) as usize,
            &columns.to_variant(),
        );
        arrays.set(ArrayType::INDEX.ord() as usize, &indices.to_variant());
        let before = mesh.get_surface_count();
        mesh.add_surface_from_arrays_ex(PrimitiveType::TRIANGLES, &arrays)
            .flags(surface_flags(target.format, channel))
            .done();
        if mesh.get_surface_count() != before + 1 {
            return Err(format!(
                "Godot refused a LOD surface made from '{}' (see the error above)",
                target.name
            ));
        }
        if let Some(material) = &target.material {
            mesh.surface_set_material(before, material);
        }
        if !target.name.is_empty() {
            mesh.surface_set_name(before, &target.name);
        }
    }
    mesh.set_custom_aabb(aabb);
    Ok(mesh)
}
