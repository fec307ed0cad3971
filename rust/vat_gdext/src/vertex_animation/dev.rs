//! VertexAnimation's development diagnostics (cargo feature `dev`, absent from the shipped
//! library): `dump_lod_input`, the bake that also writes the LOD chain's input as JSON.

use godot::global::Error;
use godot::prelude::*;
use vat_core::bake::EncodedVat;
use vat_core::clip::Clip;

use super::VertexAnimation;
use crate::bake::collect::Character;
use crate::bake::lod_source;

#[godot_api(secondary)]
impl VertexAnimation {
    /// Development tool: bakes like `bake()` and also writes the LOD chain's input as JSON, to
    /// try the engine-free LOD tools (`vat_core::lod_mesh`) on this character outside Godot:
    /// `source_json` gets the combined mesh (positions and normals of frame 0, first UV set,
    /// dominant bone per vertex, bone names, surfaces with their cull mode, and per surface the
    /// RGBA8 images it may be drawn with), `poses_json` the positions of every source vertex at
    /// the first, middle and last frame of every clip (an array of arrays of `[x, y, z]`).
    /// Returns what `bake()` returns; a file that cannot be written fails the bake (one error)
    /// and keeps the previous bake.
    #[func]
    pub fn dump_lod_input(&mut self, source_json: GString, poses_json: GString) -> Error {
        self.lod_dump = Some((source_json.to_string(), poses_json.to_string()));
        let err = self.bake();
        self.lod_dump = None;
        err
    }
}

impl VertexAnimation {
    /// Writes the files `dump_lod_input` asked for, if it did (the VAT still over source vertices).
    pub(super) fn write_lod_dump<B: AsRef<[u8]>>(
        &self,
        character: &Character,
        vat: &EncodedVat<B>,
        clips: &[Clip],
    ) -> Result<(), String> {
        let Some((source_path, poses_path)) = &self.lod_dump else {
            return Ok(());
        };
        let mut source = lod_source::lod_source(character, vat);
        let variations: Vec<_> = self.variations().iter_shared().collect();
        source.textures = lod_source::surface_images(character, &variations);
        let poses = lod_source::poses(vat, &lod_source::pose_frames(clips));
        let global = |p: &str| {
            godot::classes::ProjectSettings::singleton()
                .globalize_path(p)
                .to_string()
        };
        lod_source::write_json(&source, &poses, &global(source_path), &global(poses_path))
    }
}
