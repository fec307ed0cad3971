//! Whether a `VertexAnimation`'s stored bake can be read (part of `VertexAnimation`): checked as
//! a whole by `vat_core::bake::check` before anything reads it.

use godot::classes::image::Format;
use godot::classes::ImageTexture;
use godot::prelude::*;

use super::VertexAnimation;

impl VertexAnimation {
    /// True when nothing was ever baked into this resource (a fresh one): not an error.
    pub(super) fn looks_unbaked(&self) -> bool {
        self.mesh.is_none()
            && self.position_texture.is_none()
            && self.bone_texture.is_none()
            && self.frame_count == 0
            && self.clip_names.is_empty()
    }

    /// A bake that draws with its `bone_source`'s bone texture, if that one no longer matches it
    /// (re-baked with other clips or bones, or replaced).
    fn bone_source_problem(&self) -> Option<String> {
        if self.baked_storage == 0 || self.bone_texture.is_some() {
            return None;
        }
        let Some(source) = self.bone_source_other() else {
            return Some("it has no bone texture and no bone_source to draw with".into());
        };
        let s = source.bind();
        let same = s.baked_storage == self.baked_storage
            && s.bone_count == self.bone_count
            && s.frame_count == self.frame_count
            && s.encoding_offset == self.encoding_offset
            && s.encoding_scale == self.encoding_scale
            && s.baked_precision == self.baked_precision;
        (!same).then(|| {
            format!(
                "its bone_source '{}' was baked again since (other clips, bones or precision)",
                s.name_for_messages()
            )
        })
    }

    /// What is wrong with the stored bake, if anything; reported once per distinct problem.
    pub(super) fn stored_problem(&self) -> Option<String> {
        let texture = |t: &Option<Gd<ImageTexture>>| {
            t.as_ref().map(|t| vat_core::bake::StoredTexture {
                width: i64::from(t.get_width()),
                height: i64::from(t.get_height()),
                bytes_per_texel: match t.get_format() {
                    Format::RGBAH => 8,
                    Format::RGBAF => 16,
                    Format::RGH => 4,
                    _ => 0,
                },
            })
        };
        let mesh_vertices = self.mesh.as_ref().map(|m| {
            (0..m.get_surface_count())
                .map(|s| m.surface_get_array_len(s).max(0) as usize)
                .sum()
        });
        let v = self.encoding_offset;
        let sc = self.encoding_scale;
        let stored = vat_core::bake::StoredBake {
            vertex_count: i64::from(self.vertex_count),
            frame_count: i64::from(self.frame_count),
            mesh_vertices,
            positions: texture(&self.position_texture),
            normals: texture(&self.normal_texture),
            tangents: texture(&self.tangent_texture),
            precision: i64::from(self.baked_precision),
            clip_names: self.clip_names.len(),
            clip_table: self.clip_table.as_slice(),
            clip_bounds: self.clip_bounds_table.as_slice(),
            root_velocities: self.clip_root_velocities.len(),
            offset: [v.x, v.y, v.z],
            scale: [sc.x, sc.y, sc.z],
            column_channel: i64::from(self.column_channel),
            bones: (self.baked_storage != 0).then(|| vat_core::bake::StoredBones {
                bone_count: i64::from(self.bone_count),
                influences: i64::from(self.bone_influences),
                bones: texture(&self.drawn_bone_texture()),
                skin: texture(&self.skin_texture),
            }),
        };
        let problem = if (0..=1).contains(&self.baked_storage) {
            match (
                vat_core::bake::check(&stored).err(),
                self.bone_source_problem(),
            ) {
                (Some(p), _) | (None, Some(p)) => p,
                (None, None) => return None,
            }
        } else {
            format!(
                "baked_storage {} is neither 0 (vertices) nor 1 (bones)",
                self.baked_storage
            )
        };
        let message = format!(
            "'{}' holds an inconsistent bake and is drawn as nothing: {problem} (re-bake it)",
            self.name_for_messages()
        );
        if *self.reported.borrow() != message {
            godot_error!("vat_crowd: {message}");
            *self.reported.borrow_mut() = message.clone();
        }
        Some(message)
    }
}
