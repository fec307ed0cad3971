//! Where a `VertexAnimation`'s inputs live: its source scene and its texture variations are
//! remembered by their files' paths and uids (or kept inside the resource when they have no
//! file of their own), never as load dependencies, so a baked resource copied into another
//! project, or whose inputs were moved or deleted, still loads and plays.

use godot::classes::{FileAccess, PackedScene, Resource, ResourceLoader, ResourceUid, Texture2D};
use godot::prelude::*;

use super::VertexAnimation;

/// The file of a resource, if it has one of its own (not built in memory, not a sub-resource
/// of another file).
fn own_file(resource: &Gd<Resource>) -> Option<GString> {
    let path = resource.get_path();
    (!path.is_empty() && !path.to_string().contains("::")).then_some(path)
}

/// The `uid://` text of the file at `path`, or empty when it has none.
fn uid_of(path: &GString) -> GString {
    let id = ResourceLoader::singleton().get_resource_uid(path);
    if id == i64::from(ResourceUid::INVALID_ID) {
        GString::new()
    } else {
        ResourceUid::singleton().id_to_text(id)
    }
}

/// The file a remembered `uid` and `path` name now: by uid (which follows a move inside the
/// project), else by path; `None` when neither exists.
fn find_file(uid: &str, path: &str) -> Option<GString> {
    let mut loader = ResourceLoader::singleton();
    if !uid.is_empty() {
        let uids = ResourceUid::singleton();
        let id = uids.text_to_id(uid);
        if id != i64::from(ResourceUid::INVALID_ID) && uids.has_id(id) {
            let found = uids.get_id_path(id);
            if loader.exists(&found) {
                return Some(found);
            }
        }
    }
    (!path.is_empty() && loader.exists(path)).then(|| GString::from(path))
}

/// Loads the `T` at `file`.
fn load<T: Inherits<Resource>>(file: &GString) -> Option<Gd<T>> {
    ResourceLoader::singleton()
        .load(file)
        .and_then(|r| r.try_cast::<T>().ok())
}

/// A remembered variation file, `uid|path`, split.
fn split_entry(entry: &str) -> (&str, &str) {
    entry.split_once('|').unwrap_or(("", entry))
}

impl VertexAnimation {
    /// Remembers `scene` as the source: in this session as it is; in the file by path and uid,
    /// or inside the resource when it has no file of its own.
    pub(super) fn remember_source(&mut self, scene: Option<Gd<PackedScene>>) {
        let file = scene.as_ref().and_then(|s| own_file(&s.clone().upcast()));
        self.source_uid = file.as_ref().map(uid_of).unwrap_or_default();
        self.source_path = file.unwrap_or_default();
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

    /// The source scene: the one set, else the one kept inside the resource, else its file
    /// (loaded once, on first use); `None` when none is set or its file is gone.
    pub(crate) fn source(&self) -> Option<Gd<PackedScene>> {
        if let Some(scene) = self.source.borrow().as_ref() {
            return Some(scene.clone());
        }
        if let Some(scene) = &self.source_embedded {
            return Some(scene.clone());
        }
        let file = find_file(&self.source_uid.to_string(), &self.source_path.to_string())?;
        let scene = load::<PackedScene>(&file)?;
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
            Some(scene) => own_file(&scene.clone().upcast()),
            None => find_file(&self.source_uid.to_string(), &self.source_path.to_string()),
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

    /// Remembers `textures` as the variations: in this session as they are; in the file each by
    /// its path and uid, or inside the resource when it has no file of its own.
    pub(super) fn remember_variations(&mut self, textures: Array<Option<Gd<Texture2D>>>) {
        let mut files = PackedStringArray::new();
        let mut embedded: Array<Option<Gd<Texture2D>>> = Array::new();
        for texture in textures.iter_shared() {
            match texture.as_ref().and_then(|t| own_file(&t.clone().upcast())) {
                Some(path) => {
                    files.push(format!("{}|{path}", uid_of(&path)).as_str());
                    embedded.push(None::<&Gd<Texture2D>>);
                }
                None => {
                    files.push("");
                    embedded.push(texture.as_ref());
                }
            }
        }
        self.variation_files = files;
        self.variations_embedded = embedded;
        self.variation_inputs.replace(Some(textures));
    }

    /// The texture variations: as set, else each kept inside the resource or found by its file
    /// (loaded once, on first use); an entry whose file is gone is null.
    pub(crate) fn variations(&self) -> Array<Option<Gd<Texture2D>>> {
        if let Some(textures) = self.variation_inputs.borrow().as_ref() {
            return textures.clone();
        }
        let n = self
            .variation_files
            .len()
            .max(self.variations_embedded.len());
        let mut out: Array<Option<Gd<Texture2D>>> = Array::new();
        for i in 0..n {
            let texture = self.variations_embedded.get(i).flatten().or_else(|| {
                let entry = self.variation_files.get(i)?.to_string();
                let (uid, path) = split_entry(&entry);
                load::<Texture2D>(&find_file(uid, path)?)
            });
            out.push(texture.as_ref());
        }
        self.variation_inputs.replace(Some(out.clone()));
        out
    }

    /// The variations whose files are gone, as `texture_variations[i] 'path'`.
    pub(super) fn missing_variations(&self) -> Vec<String> {
        let textures = self.variations();
        (0..textures.len())
            .filter(|&i| textures.get(i).flatten().is_none())
            .filter_map(|i| {
                let entry = self.variation_files.get(i)?.to_string();
                let (_, path) = split_entry(&entry);
                (!path.is_empty()).then(|| format!("texture_variations[{i}] '{path}'"))
            })
            .collect()
    }
}
