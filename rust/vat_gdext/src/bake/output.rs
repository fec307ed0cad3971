//! Turning the core's encoded VAT into Godot resources: the combined render mesh, the data
//! textures and the variation Texture2DArray.

use godot::classes::image::Format;
use godot::classes::mesh::{ArrayCustomFormat, ArrayFormat, ArrayType};
use godot::classes::{ArrayMesh, Image, ImageTexture, Texture2D, Texture2DArray};
use godot::obj::{EngineBitfield, EngineEnum};
use godot::prelude::*;
use vat_core::bake::SkinEncoder;
use vat_core::bake::{EncodedVat, Precision};

use super::collect::Character;
use crate::convert;

/// Custom vertex channels a mesh surface has (CUSTOM0-CUSTOM3).
pub const CUSTOM_CHANNELS: i32 = 4;

/// Texture bytes held in Godot's own array, so the core encodes straight into the memory the
/// `Image` uses (no copy from a Rust buffer), and the bake's decoded cache shares it.
#[derive(Clone, Default)]
pub struct GodotBytes(pub PackedByteArray);

impl AsRef<[u8]> for GodotBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl AsMut<[u8]> for GodotBytes {
    fn as_mut(&mut self) -> &mut [u8] {
        self.0.as_mut_slice()
    }
}

/// `bytes` zero bytes in a new Godot array.
pub fn godot_bytes(bytes: usize) -> GodotBytes {
    let mut array = PackedByteArray::new();
    array.resize(bytes);
    GodotBytes(array)
}

impl std::ops::Deref for GodotBytes {
    type Target = PackedByteArray;

    fn deref(&self) -> &PackedByteArray {
        &self.0
    }
}

/// Encodes the bake (pass 2 of `SkinEncoder`, on the extension's worker pool) into two new
/// Godot byte arrays and returns the encoded VAT over them.
pub fn encode_into_godot(encoder: SkinEncoder<'_>) -> EncodedVat<GodotBytes> {
    let mut positions = godot_bytes(encoder.position_bytes());
    let mut normals = godot_bytes(encoder.normal_bytes());
    let (p, n) = (positions.as_mut(), normals.as_mut());
    crate::workers::install(|| encoder.encode_into(p, n));
    encoder.into_encoded(positions, normals)
}

/// The tangent VAT of a bake: `encoder` (over [`vat_core::bake::tangent_sources`]) encodes its
/// normals, the skinned tangents, into a new Godot array; its positions are `vat`'s (the same
/// skinning, so the same bytes), shared rather than encoded again.
pub fn encode_tangents_into_godot(
    encoder: SkinEncoder<'_>,
    vat: &EncodedVat<GodotBytes>,
) -> EncodedVat<GodotBytes> {
    let mut tangents = godot_bytes(encoder.normal_bytes());
    let t = tangents.as_mut();
    crate::workers::install(|| encoder.encode_normals_into(t));
    encoder.into_encoded(vat.positions.clone(), tangents)
}

/// Builds the combined render mesh: every baked mesh instance's surfaces in depth-first order,
/// materials kept, vertex order kept, every array the source has kept (UV, UV2, colours, custom
/// channels with their formats), and each vertex's VAT column in the first custom channel no
/// source surface uses (one float). Rest positions and normals are replaced by the first baked
/// frame so the mesh previews in the editor in the character's space (tangents too, where baked,
/// with the source's bitangent signs); bone and
/// blend-shape data are dropped (they are baked in). Returns the mesh and the column's channel.
pub fn combined_mesh<B: AsRef<[u8]>>(
    character: &Character,
    vat: &EncodedVat<B>,
    tangents: Option<&EncodedVat<B>>,
) -> Result<(Gd<ArrayMesh>, i32), String> {
    let surfaces = || character.meshes.iter().flat_map(|m| &m.surfaces);
    let channel = free_custom_channel(character)?;
    let first = vat_core::bake::decode_frame(vat, 0);
    let first_normals = if vat.params.normals {
        vat_core::bake::decode_frame_normals(vat, 0)
    } else {
        Vec::new()
    };
    // Tangents at the reference frame and every vertex's bitangent sign, where baked.
    let tangent_frame = tangents.map(|t| {
        (
            vat_core::bake::decode_frame_normals(t, 0),
            character.tangent_signs(),
        )
    });
    let mut mesh = ArrayMesh::new_gd();
    let mut column = 0usize;
    let mut added = 0;
    for surface in surfaces() {
        let n = surface.vertex_count;
        let range = column..column + n;
        let mut arrays = surface.arrays.duplicate_shallow();
        arrays.set(
            ArrayType::VERTEX.ord() as usize,
            &convert::to_vector3s(&first[range.clone()]).to_variant(),
        );
        if !first_normals.is_empty() {
            arrays.set(
                ArrayType::NORMAL.ord() as usize,
                &convert::to_vector3s(&first_normals[range.clone()]).to_variant(),
            );
        }
        for dropped in [ArrayType::TANGENT, ArrayType::BONES, ArrayType::WEIGHTS] {
            arrays.set(dropped.ord() as usize, &Variant::nil());
        }
        if let Some((t, signs)) = &tangent_frame {
            let columns: Vec<usize> = range.clone().collect();
            arrays.set(
                ArrayType::TANGENT.ord() as usize,
                &tangent_array(&columns, t, &signs[range.clone()]).to_variant(),
            );
        }
        let columns: PackedFloat32Array = range.map(|c| c as f32).collect();
        arrays.set(
            (ArrayType::CUSTOM0.ord() + channel) as usize,
            &columns.to_variant(),
        );
        column += n;
        mesh.add_surface_from_arrays_ex(surface.primitive, &arrays)
            .flags(surface_flags(surface.format, channel))
            .done();
        added += 1;
        let index = mesh.get_surface_count() - 1;
        if mesh.get_surface_count() != added {
            return Err(format!(
                "Godot refused surface '{}' of the combined mesh (see the error above)",
                surface.name
            ));
        }
        if let Some(material) = &surface.material {
            mesh.surface_set_material(index, material);
        }
        if !surface.name.is_empty() {
            mesh.surface_set_name(index, &surface.name);
        }
    }
    mesh.set_custom_aabb(convert::to_aabb(&vat.bounds));
    Ok((mesh, channel))
}

/// Godot's TANGENT array for vertices reading `columns`: each column's tangent at the reference
/// frame (`first`, decoded from the tangent texture) and the vertex's bitangent sign (`signs`,
/// one per vertex).
pub fn tangent_array(columns: &[usize], first: &[glam::Vec3], signs: &[f32]) -> PackedFloat32Array {
    columns
        .iter()
        .enumerate()
        .flat_map(|(i, &c)| {
            let t = first.get(c).copied().unwrap_or(glam::Vec3::X);
            let w = signs.get(i).copied().unwrap_or(1.0);
            [t.x, t.y, t.z, w]
        })
        .collect()
}

/// The first custom vertex channel no source surface uses: where the VAT column goes.
pub fn free_custom_channel(character: &Character) -> Result<i32, String> {
    let used = |channel: i32| {
        character.meshes.iter().flat_map(|m| &m.surfaces).any(|s| {
            s.arrays
                .get((ArrayType::CUSTOM0.ord() + channel) as usize)
                .is_some_and(|v| !v.is_nil())
        })
    };
    (0..CUSTOM_CHANNELS).find(|&c| !used(c)).ok_or_else(|| {
        "every custom vertex channel (CUSTOM0-CUSTOM3) of the source meshes carries data, and the VAT column needs one free channel; free one in the source (e.g. fewer UV sets)".to_string()
    })
}

/// Surface flags for a baked surface: the source's custom channel formats (the arrays' types
/// depend on them) except `channel`, which holds the VAT column as one float.
pub fn surface_flags(source_format: u64, channel: i32) -> ArrayFormat {
    let kept = (0..CUSTOM_CHANNELS)
        .filter(|&c| c != channel)
        .fold(0, |bits, c| bits | (source_format & custom_mask(c)));
    let column_bits = (ArrayCustomFormat::R_FLOAT.ord() as u64) << custom_shift(channel);
    ArrayFormat::from_ord(kept | column_bits)
}

/// The bits of custom channel `c`'s format in a surface format.
pub fn custom_mask(c: i32) -> u64 {
    ArrayFormat::CUSTOM_MASK.ord() << custom_shift(c)
}

/// Bit offset of custom channel `c`'s format in a surface format.
pub fn custom_shift(c: i32) -> u64 {
    ArrayFormat::CUSTOM0_SHIFT.ord() + c as u64 * ArrayFormat::CUSTOM_BITS.ord()
}

/// The position texture: RGBAH or RGBAF, laid out as `vat_core::bake::VatLayout` says.
pub fn position_texture(vat: &EncodedVat<GodotBytes>) -> Gd<ImageTexture> {
    let format = match vat.params.precision {
        Precision::Half => Format::RGBAH,
        Precision::Float => Format::RGBAF,
    };
    packed_texture(vat.layout.width, vat.layout.height, format, &vat.positions)
}

/// The normal texture (octahedral, RGH), if normals were baked.
pub fn normal_texture(vat: &EncodedVat<GodotBytes>) -> Option<Gd<ImageTexture>> {
    vat.params.normals.then(|| {
        packed_texture(
            vat.layout.width,
            vat.layout.height,
            Format::RGH,
            &vat.normals,
        )
    })
}

/// The clip table texture: one RGBAF texel per clip (first frame, frame count, duration, looped).
pub fn clip_texture(table: &[f32]) -> Gd<ImageTexture> {
    let bytes: Vec<u8> = table.iter().flat_map(|f| f.to_le_bytes()).collect();
    data_texture((table.len() / 4) as u32, 1, Format::RGBAF, &bytes)
}

/// An exact data texture: no mipmaps, no compression, bytes as given.
pub fn data_texture(width: u32, height: u32, format: Format, bytes: &[u8]) -> Gd<ImageTexture> {
    packed_texture(width, height, format, &PackedByteArray::from(bytes))
}

/// [`data_texture`] of bytes already in a Godot array; the image shares them (copy-on-write).
fn packed_texture(
    width: u32,
    height: u32,
    format: Format,
    data: &PackedByteArray,
) -> Gd<ImageTexture> {
    let image = Image::create_from_data(width as i32, height as i32, false, format, data)
        .expect("byte count matches the layout");
    ImageTexture::create_from_image(&image).expect("image is valid")
}

/// Refuses more variations than the renderer allows layers in one Texture2DArray (which would
/// never draw); the bake checks this before sampling anything.
pub fn check_variation_count(count: usize, owner: &str) -> Result<(), String> {
    let layers = crate::limits::renderer_max_texture_layers();
    if count > layers as usize {
        return Err(format!(
            "'{owner}' has {count} texture_variations, more than the {layers} layers this renderer allows in one Texture2DArray"
        ));
    }
    Ok(())
}

/// A variation Texture2DArray and the images of its layers.
pub type Variations = (Gd<Texture2DArray>, Array<Gd<Image>>);

/// Builds the variation Texture2DArray. Every texture is converted to the first one's size and
/// to RGBA8 (with a warning when a texture had to be resized), then mipmapped, so any mix of
/// imported textures works. Returns the array and its layers' images (what a saved resource
/// keeps: see `variations_from_layers`), or `Ok(None)` when there are no variations.
pub fn variations(
    textures: &[Option<Gd<Texture2D>>],
    owner: &str,
) -> Result<Option<Variations>, String> {
    if textures.is_empty() {
        return Ok(None);
    }
    check_variation_count(textures.len(), owner)?;
    let max_side = crate::limits::renderer_max_texture_size();
    let mut images: Array<Gd<Image>> = Array::new();
    let mut size = None;
    for (i, texture) in textures.iter().enumerate() {
        let texture = texture
            .as_ref()
            .ok_or_else(|| format!("texture_variations[{i}] of '{owner}' is empty"))?;
        let mut image = texture
            .get_image()
            .ok_or_else(|| format!("texture_variations[{i}] of '{owner}' has no image data"))?;
        if image.is_compressed() {
            image.decompress();
        }
        let (w, h) = (image.get_width(), image.get_height());
        if w.max(h) as u32 > max_side {
            return Err(format!(
                "texture_variations[{i}] of '{owner}' is {w}x{h}, larger than the {max_side} texels per side this renderer allows"
            ));
        }
        let (tw, th) = *size.get_or_insert((w, h));
        if (w, h) != (tw, th) {
            godot_warn!(
                "vat_crowd: texture_variations[{i}] of '{owner}' is {w}x{h}; resized to {tw}x{th} like the first"
            );
            image.resize(tw, th);
        }
        if image.has_mipmaps() {
            image.clear_mipmaps();
        }
        image.convert(Format::RGBA8);
        image.generate_mipmaps();
        images.push(&image);
    }
    let array = variations_from_layers(&images).map_err(|err| {
        format!("could not build the variation Texture2DArray of '{owner}': {err}")
    })?;
    Ok(Some((array, images)))
}

/// The variation Texture2DArray of `layers` (same size and format, mipmapped).
pub fn variations_from_layers(layers: &Array<Gd<Image>>) -> Result<Gd<Texture2DArray>, String> {
    let mut array = Texture2DArray::new_gd();
    let err = array.create_from_images(layers);
    if err != godot::global::Error::OK {
        return Err(format!("{err:?}"));
    }
    Ok(array)
}
