//! Reading a `VertexAnimation`'s stored bake back (part of `VertexAnimation`): the encoded VAT
//! rebuilt from the textures, and frames decoded from it exactly as the shader reads them.

use godot::prelude::*;
use vat_core::bake::{EncodedVat, EncodingParams, Precision, VatLayout};
use vat_core::bones::EncodedBones;

use super::{VertexAnimation, STORAGE_BONES};
use crate::bake::output;
use crate::convert;

#[godot_api(secondary)]
impl VertexAnimation {
    /// Positions of every VAT column (`vertex_count` of them; a mesh vertex reads the column in
    /// its `column_channel`) at `frame` of `clip`, in the character root's space, decoded from the
    /// textures exactly as the shader reads them.
    #[func]
    pub fn decode_frame(&mut self, clip: i32, frame: i32) -> PackedVector3Array {
        self.decode(clip, frame, false)
    }

    /// Normals of every VAT column at `frame` of `clip`, decoded like the shader does (empty if
    /// normals were not baked).
    #[func]
    pub fn decode_frame_normals(&mut self, clip: i32, frame: i32) -> PackedVector3Array {
        self.decode(clip, frame, true)
    }

    /// Tangents of every VAT column at `frame` of `clip`, decoded like the shader does (empty if
    /// tangents were not baked: no source material uses a normal map). The bitangent sign is the
    /// mesh's own (its TANGENT w).
    #[func]
    pub fn decode_frame_tangents(&mut self, clip: i32, frame: i32) -> PackedVector3Array {
        if self.baked_storage == STORAGE_BONES && self.tangents_baked() {
            return self.decode_bones(clip, frame, 2);
        }
        let Some(texture) = self.tangent_texture.clone() else {
            return PackedVector3Array::new();
        };
        let (Some((f, vat)), Some(image)) = (self.baked_frame(clip, frame), texture.get_image())
        else {
            return PackedVector3Array::new();
        };
        let tangents = EncodedVat {
            layout: vat.layout,
            params: EncodingParams {
                normals: true,
                ..vat.params
            },
            positions: output::GodotBytes(PackedByteArray::new()),
            normals: output::GodotBytes(image.get_data()),
            bounds: vat.bounds,
            clip_bounds: Vec::new(),
        };
        convert::to_vector3s(&vat_core::bake::decode_frame_normals(&tangents, f))
    }
}

impl VertexAnimation {
    pub(super) fn decode(&mut self, clip: i32, frame: i32, normals: bool) -> PackedVector3Array {
        if self.baked_storage == STORAGE_BONES {
            if normals && !self.normals_baked() {
                return PackedVector3Array::new();
            }
            return self.decode_bones(clip, frame, usize::from(normals));
        }
        let Some((f, vat)) = self.baked_frame(clip, frame) else {
            return PackedVector3Array::new();
        };
        if normals {
            if !vat.params.normals {
                return PackedVector3Array::new();
            }
            convert::to_vector3s(&vat_core::bake::decode_frame_normals(vat, f))
        } else {
            convert::to_vector3s(&vat_core::bake::decode_frame(vat, f))
        }
    }

    /// One of (positions, normals, tangents) (`which` 0, 1, 2) of every column at `frame` of
    /// `clip` in bone storage, skinned from the bone textures as the shader skins them.
    fn decode_bones(&mut self, clip: i32, frame: i32, which: usize) -> PackedVector3Array {
        let Some(f) = self.frame_index(clip, frame) else {
            return PackedVector3Array::new();
        };
        let Some(bones) = self.encoded_bones() else {
            godot_error!("vat_crowd: '{}' is not baked", self.name_for_messages());
            return PackedVector3Array::new();
        };
        let (ps, ns, ts) = vat_core::bones::decode_frame(&bones, f);
        convert::to_vector3s(&[ps, ns, ts][which])
    }

    /// The bone bake rebuilt from the stored textures, or `None` (with one error) when the stored
    /// fields disagree.
    pub(super) fn encoded_bones(&self) -> Option<EncodedBones> {
        if self.looks_unbaked() || self.stored_problem().is_some() {
            return None;
        }
        let bones = self.drawn_bone_texture()?.get_image()?.get_data().to_vec();
        let skin = self.skin_texture.as_ref()?.get_image()?.get_data().to_vec();
        let precision = self.stored_precision();
        let palette = self.bone_count as u32;
        let influences = self.bone_influences as u32;
        let frames = self.frame_count as u32;
        let (bone_layout, skin_layout) = vat_core::bones::layouts(
            palette as usize,
            frames as usize,
            self.vertex_count as usize,
            influences as usize,
        )
        .ok()?;
        let texel = vat_core::bake::position_texel_bytes(i64::from(self.baked_precision))?;
        if bones.len() < bone_layout.texel_count() * texel
            || skin.len() < skin_layout.texel_count() * vat_core::bones::SKIN_TEXEL_BYTES
        {
            godot_error!(
                "vat_crowd: '{}' has bone texture data of the wrong size (corrupt resource?)",
                self.name_for_messages()
            );
            return None;
        }
        Some(EncodedBones {
            precision,
            offset: convert::vec3(self.encoding_offset),
            scale: convert::vec3(self.encoding_scale),
            palette,
            influences,
            columns: self.vertex_count as u32,
            bone_layout,
            skin_layout,
            bones,
            skin,
        })
    }

    /// The baked frame index of `frame` of `clip`, or `None` after one error: the clip or the
    /// frame is out of range.
    fn frame_index(&self, clip: i32, frame: i32) -> Option<u32> {
        let c = self.clip_checked(clip)?;
        if frame < 0 || frame as u32 >= c.frame_count {
            godot_error!(
                "vat_crowd: frame {frame} out of range for clip '{}' ({} frames)",
                c.name,
                c.frame_count
            );
            return None;
        }
        Some(c.first_frame + frame as u32)
    }

    /// The stored precision as the core takes it (`baked_precision` 1 float, else half).
    fn stored_precision(&self) -> Precision {
        if self.baked_precision == 1 {
            Precision::Float
        } else {
            Precision::Half
        }
    }

    /// The baked frame index of `frame` of `clip` and the encoded VAT, or `None` after one error:
    /// the clip or the frame is out of range, or the resource holds no usable bake.
    fn baked_frame(
        &mut self,
        clip: i32,
        frame: i32,
    ) -> Option<(u32, &EncodedVat<output::GodotBytes>)> {
        let f = self.frame_index(clip, frame)?;
        let name = self.name_for_messages();
        let Some(vat) = self.encoded() else {
            godot_error!("vat_crowd: '{name}' is not baked");
            return None;
        };
        Some((f, vat))
    }

    /// The encoded VAT rebuilt from the stored textures: cached, rebuilt when a texture is
    /// replaced, and `None` (with one error) when the stored fields disagree.
    pub(super) fn encoded(&mut self) -> Option<&EncodedVat<output::GodotBytes>> {
        let ids = [
            self.position_texture.as_ref().map(|t| t.instance_id()),
            self.normal_texture.as_ref().map(|t| t.instance_id()),
        ];
        if self.cache.as_ref().is_some_and(|(_, key)| *key != ids) {
            self.cache = None;
        }
        // Every field (not only the textures) may have been set since: check them each time.
        if self.looks_unbaked() || self.stored_problem().is_some() {
            return None;
        }
        if self.cache.is_none() {
            let positions = self.position_texture.as_ref()?.get_image()?.get_data();
            let normals = match &self.normal_texture {
                Some(t) => t.get_image()?.get_data(),
                None => PackedByteArray::new(),
            };
            let layout = VatLayout::new(self.vertex_count as u32, self.frame_count as u32).ok()?;
            let params = EncodingParams {
                precision: self.stored_precision(),
                offset: convert::vec3(self.encoding_offset),
                scale: convert::vec3(self.encoding_scale),
                normals: !normals.is_empty(),
            };
            let needed = |p, n| layout.texel_count() * vat_core::bake::bytes_per_vertex_frame(p, n);
            if positions.len() < needed(params.precision, false)
                || (params.normals
                    && normals.len()
                        < needed(params.precision, true) - needed(params.precision, false))
            {
                godot_error!(
                    "vat_crowd: '{}' has texture data of the wrong size (corrupt resource?)",
                    self.name_for_messages()
                );
                return None;
            }
            let vat = EncodedVat {
                layout,
                params,
                positions: output::GodotBytes(positions),
                normals: output::GodotBytes(normals),
                bounds: convert::bounds(self.bounds),
                clip_bounds: Vec::new(),
            };
            self.cache = Some((vat, ids));
        }
        self.cache.as_ref().map(|(vat, _)| vat)
    }
}
