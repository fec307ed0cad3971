//! What the inspector warns about on a `VertexAnimation` (Godot has no configuration warnings for
//! resources): no source scene, a source that is missing or cannot bake, no bake yet, a bake
//! older than its source.

use godot::prelude::*;

use super::steps::BakeSource;
use super::VertexAnimation;

#[godot_api(secondary)]
impl VertexAnimation {
    /// What is wrong with this resource as it stands, one sentence each, for the inspector (the
    /// Bake panel shows them): no `source_scene`; a source that cannot bake with these settings
    /// (no Skeleton3D, no AnimationPlayer, no clips, ...: what `bake()` would print); not baked
    /// yet; or baked from a source whose file changed since (or another source); a source that
    /// was moved out of the project or deleted. Empty when all is well. It instantiates
    /// `source_scene`, like `estimate_bake`.
    #[func]
    pub fn get_bake_warnings(&self) -> PackedStringArray {
        let mut out = PackedStringArray::new();
        if !self.has_source_scene() {
            out.push("No source scene: set source_scene to the character to bake (a .glb, .gltf or .tscn with a Skeleton3D and an AnimationPlayer).");
        } else if let Some(missing) = self.missing_source() {
            out.push(format!("The source is missing: {missing}. The bake loads and plays as it is; set source_scene to bake again.").as_str());
        } else if let Err(e) = self.plan(BakeSource::Scene) {
            out.push(format!("The source cannot be baked as set: {e}").as_str());
        }
        let missing = self.missing_variations();
        if !missing.is_empty() {
            out.push(format!("Texture variations are missing: {} (moved out of the project or deleted). The baked variations play as they are; set texture_variations to bake again.", missing.join(", ")).as_str());
        }
        if !self.is_baked() {
            out.push("Not baked yet: press Bake; crowd nodes draw nothing from it until then.");
        } else if self.source_changed() {
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

impl VertexAnimation {
    /// Whether the source's file differs from the one baked: another content (md5; a file moved
    /// inside the project with its content unchanged is the same source), or another file set.
    fn source_changed(&self) -> bool {
        if self.source_stamp.is_empty() {
            return false;
        }
        let now = self.source_stamp_now().to_string();
        let Some(md5_now) = now.rsplit('|').next().filter(|m| !m.is_empty()) else {
            // No file to compare with: gone (warned above) or built in memory.
            return false;
        };
        let baked = self.source_stamp.to_string();
        baked.rsplit('|').next() != Some(md5_now)
    }
}
