//! Where a `VertexAnimation`'s source scene lives: remembered by its file's path and uid (or
//! kept inside the resource when it has no file), never as a load dependency, so a baked
//! resource copied into another project, or whose source was moved or deleted, still loads and
//! plays.

use godot::classes::{FileAccess, PackedScene, ResourceLoader, ResourceUid};
use godot::prelude::*;

use super::VertexAnimation;

/// The file of a resource, if it has one of its own (not built in memory, not a sub-resource
/// of another file).
fn own_file(scene: &Gd<PackedScene>) -> Option<GString> {
    let path = scene.get_path();
    (!path.is_empty() && !path.to_string().contains("::")).then_some(path)
}

impl VertexAnimation {
    /// Remembers `scene` as the source: in this session as it is; in the file by path and uid,
    /// or inside the resource when it has no file of its own.
    pub(super) fn remember_source(&mut self, scene: Option<Gd<PackedScene>>) {
        let file = scene.as_ref().and_then(own_file);
        self.source_path = file.clone().unwrap_or_default();
        self.source_uid = file
            .map(|path| {
                let id = ResourceLoader::singleton().get_resource_uid(&path);
                if id == i64::from(ResourceUid::INVALID_ID) {
                    GString::new()
                } else {
                    ResourceUid::singleton().id_to_text(id)
                }
            })
            .unwrap_or_default();
        self.source_embedded = if self.source_path.is_empty() {
            scene.clone()
        } else {
            None
        };
        self.source.replace(scene);
    }

    /// Whether a source is set, found or not.
    pub fn has_source_scene(&self) -> bool {
        self.source.borrow().is_some()
            || self.source_embedded.is_some()
            || !self.source_path.is_empty()
    }

    /// The source's file as it is found now: by uid (which follows a move inside the project),
    /// else by path; `None` when it has none or it is gone.
    pub(super) fn source_file(&self) -> Option<GString> {
        if !self.source_uid.is_empty() {
            let uids = ResourceUid::singleton();
            let id = uids.text_to_id(&self.source_uid);
            if id != i64::from(ResourceUid::INVALID_ID) && uids.has_id(id) {
                let path = uids.get_id_path(id);
                if ResourceLoader::singleton().exists(&path) {
                    return Some(path);
                }
            }
        }
        let path = &self.source_path;
        (!path.is_empty() && ResourceLoader::singleton().exists(path)).then(|| path.clone())
    }

    /// The source scene: the one set, else the one kept inside the resource, else its file
    /// (loaded once, on first use); `None` when none is set or its file is gone.
    pub(crate) fn source(&self) -> Option<Gd<PackedScene>> {
        if let Some(scene) = self.source.borrow().as_ref() {
            return Some(scene.clone());
        }
        if let Some(scene) = &self.source_embedded {
            return Some(scene.clone());
        }
        let file = self.source_file()?;
        let scene = ResourceLoader::singleton()
            .load(&file)
            .and_then(|r| r.try_cast::<PackedScene>().ok())?;
        self.source.replace(Some(scene.clone()));
        Some(scene)
    }

    /// Why a source that is set cannot be found, for errors and warnings; `None` when it is
    /// found or none is set.
    pub(super) fn missing_source(&self) -> Option<String> {
        (self.has_source_scene() && self.source().is_none()).then(|| {
            format!(
                "its source_scene '{}' is missing (moved out of the project or deleted)",
                self.source_path
            )
        })
    }

    /// `path|md5` of the source's file as found now, or empty when it has none (built in
    /// memory, or embedded in another resource) or it is gone.
    pub(super) fn source_stamp_now(&self) -> GString {
        let file = match self.source.borrow().as_ref() {
            Some(scene) => own_file(scene),
            None => self.source_file(),
        };
        let Some(path) = file else {
            return GString::new();
        };
        let md5 = FileAccess::get_md5(&path);
        if md5.is_empty() {
            return GString::new();
        }
        GString::from(format!("{path}|{md5}").as_str())
    }
}
