//! What the inspector warns about on a `VertexAnimation` (Godot has no configuration warnings for
//! resources): no source scene, a source that cannot bake, no bake yet, a bake older than its
//! source.

use godot::classes::FileAccess;
use godot::prelude::*;

use super::steps::BakeSource;
use super::VertexAnimation;

impl VertexAnimation {
    /// `path|md5` of `source_scene`'s file, or empty when it has none (built in memory, or
    /// embedded in another resource).
    pub(super) fn source_stamp_now(&self) -> GString {
        let Some(scene) = &self.source_scene else {
            return GString::new();
        };
        let path = scene.get_path();
        if path.is_empty() || path.to_string().contains("::") {
            return GString::new();
        }
        let md5 = FileAccess::get_md5(&path);
        if md5.is_empty() {
            return GString::new();
        }
        GString::from(format!("{path}|{md5}").as_str())
    }
}

#[godot_api(secondary)]
impl VertexAnimation {
    /// What is wrong with this resource as it stands, one sentence each, for the inspector (the
    /// Bake panel shows them): no `source_scene`; a source that cannot bake with these settings
    /// (no Skeleton3D, no AnimationPlayer, no clips, ...: what `bake()` would print); not baked
    /// yet; or baked from a source whose file changed since (or another source). Empty when all
    /// is well. It instantiates `source_scene`, like `estimate_bake`.
    #[func]
    pub fn get_bake_warnings(&self) -> PackedStringArray {
        let mut out = PackedStringArray::new();
        if self.source_scene.is_none() {
            out.push("No source scene: set source_scene to the character to bake (a .glb, .gltf or .tscn with a Skeleton3D and an AnimationPlayer).");
        } else if let Err(e) = self.plan(BakeSource::Scene) {
            out.push(format!("The source cannot be baked as set: {e}").as_str());
        }
        if !self.is_baked() {
            out.push("Not baked yet: press Bake; crowd nodes draw nothing from it until then.");
        } else if !self.source_stamp.is_empty() && self.source_stamp != self.source_stamp_now() {
            let baked_from = self.source_stamp.to_string();
            let path = baked_from.split('|').next().unwrap_or_default().to_string();
            out.push(
                format!("The bake is older than its source: '{path}' changed (or another source was set) since it was baked; press Bake again.")
                    .as_str(),
            );
        }
        out
    }
}
