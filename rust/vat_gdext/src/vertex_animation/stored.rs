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
            && self.frame_count == 0
            && self.clip_names.is_empty()
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
        };
        let problem = vat_core::bake::check(&stored).err()?;
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
