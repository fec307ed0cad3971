//! Bone storage's part of `VertexAnimation`: the accessors of its baked fields, `bone_source`,
//! and what the crowd and the decoder read through them (the texture drawn, the directions used).

use godot::classes::ImageTexture;
use godot::prelude::*;

use super::{VertexAnimation, STORAGE_BONES};
use crate::bake::bones;

impl VertexAnimation {
    /// Whether the shader uses baked normals: a normal texture, or skinned rest normals.
    pub(crate) fn normals_baked(&self) -> bool {
        if self.baked_storage == STORAGE_BONES {
            self.bone_directions & 1 != 0
        } else {
            self.normal_texture.is_some()
        }
    }

    /// The bone texture this model draws with: its own, or its `bone_source`'s.
    pub(crate) fn drawn_bone_texture(&self) -> Option<Gd<ImageTexture>> {
        if self.bone_texture.is_some() {
            return self.bone_texture.clone();
        }
        let source = self.bone_source_other()?;
        let texture = source.bind().bone_texture.clone();
        texture
    }

    /// How many times the baked fields were replaced, with the same count of `bone_source` (whose
    /// bone texture this one may draw with): a crowd built for other counts draws stale data.
    pub(crate) fn bake_generation(&self) -> (u64, u64) {
        let source = self.bone_source_other().map_or(0, |s| s.bind().generation);
        (self.generation, source)
    }

    /// `bone_source` unless it is this resource (which the setter refuses; binding it again here
    /// would panic).
    pub(crate) fn bone_source_other(&self) -> Option<&Gd<VertexAnimation>> {
        self.bone_source
            .as_ref()
            .filter(|s| s.instance_id() != self.base().instance_id())
    }

    /// Whether the shader uses baked tangents: a tangent texture, or skinned rest tangents.
    pub(crate) fn tangents_baked(&self) -> bool {
        if self.baked_storage == STORAGE_BONES {
            self.bone_directions & 2 != 0
        } else {
            self.tangent_texture.is_some()
        }
    }

    /// The bone texture of `bone_source`, if set: `Err` when it holds none of its own (not baked,
    /// baked in vertex storage, or itself drawing with another's).
    pub(super) fn bone_source_bones(&self) -> Result<Option<bones::SourceBones>, String> {
        let Some(source) = self.bone_source_other() else {
            return Ok(None);
        };
        let s = source.bind();
        let name = s.name_for_messages();
        let refuse = |why: &str| {
            Err(format!(
                "'{}': its bone_source '{name}' {why}; bake that one in bone storage first",
                self.name_for_messages()
            ))
        };
        if !s.is_baked() || s.baked_storage != bones::STORAGE_BONES {
            return refuse("is not baked in bone storage");
        }
        if s.bone_texture.is_none() {
            return refuse("draws with another model's bone texture");
        }
        match s.encoded_bones() {
            Some(bones) => Ok(Some(bones::SourceBones {
                name,
                bones,
                offered: false,
            })),
            None => refuse("holds an unreadable bake"),
        }
    }
}
