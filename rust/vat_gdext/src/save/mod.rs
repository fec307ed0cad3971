//! Saving a resource atomically: a temporary file beside the target, then a rename over it,
//! keeping the target's UID and telling the editor's file system what changed.

mod uid_header;

use std::sync::atomic::{AtomicU32, Ordering};

use godot::classes::{
    DirAccess, EditorInterface, Engine, FileAccess, ProjectSettings, Resource, ResourceLoader,
    ResourceSaver, ResourceUid,
};
use godot::global::Error;
use godot::prelude::*;

/// Numbers the temporary files of one process, so two saves never share one.
static SAVES: AtomicU32 = AtomicU32::new(0);

/// The temporary file a save of `path` writes first: hidden (a dot name, which Godot's file
/// system dock does not list), tagged with this process and save, and ending in the target's
/// extension (the saver picks the format by it), so no user file has its name.
pub fn temporary_path(path: &str) -> Option<String> {
    let (dir, file) = path.rsplit_once('/')?;
    let (_, ext) = file
        .rsplit_once('.')
        .filter(|(stem, e)| !stem.is_empty() && !e.is_empty())?;
    let n = SAVES.fetch_add(1, Ordering::Relaxed);
    Some(format!(
        "{dir}/.{file}.vat-crowd-save-{}-{n}.{ext}",
        std::process::id()
    ))
}

/// Godot's "no UID" value (`ResourceUID.INVALID_ID`).
const NO_UID: i64 = -1;

/// Gives the freshly written temporary file `tmp` (absolute `abs_tmp`) the UID `uid`, if Godot's
/// own reading of its header agrees with ours (so an unknown format is never patched). Returns
/// whether it did.
fn keep_uid(tmp: &str, abs_tmp: &str, uid: i64) -> bool {
    let written = ResourceLoader::singleton().get_resource_uid(tmp);
    let Ok(bytes) = std::fs::read(abs_tmp) else {
        return false;
    };
    let patched = if uid_header::binary_uid(&bytes) == Some(written) {
        let mut bytes = bytes;
        uid_header::set_binary_uid(&mut bytes, uid).then_some(bytes)
    } else {
        let text_uid = ResourceUid::singleton().id_to_text(uid).to_string();
        std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| uid_header::set_text_uid(t, &text_uid))
            .map(String::into_bytes)
    };
    patched.is_some_and(|b| std::fs::write(abs_tmp, b).is_ok())
        && ResourceLoader::singleton().get_resource_uid(tmp) == uid
}

/// Writes `resource` to a temporary file beside `path`, then renames it over `path`; on any
/// failure the temporary file is removed and `path` is left as it was. An existing file's UID
/// is kept (scenes that reference it by UID keep loading it), and in the editor the file
/// system is told about both files, so the dock shows no temporary entry.
pub fn save_atomic(resource: &Gd<Resource>, path: &str) -> Result<(), (Error, String)> {
    let tmp = temporary_path(path).ok_or_else(|| {
        (
            Error::ERR_FILE_BAD_PATH,
            format!("'{path}' is not a file path with an extension (use .res)"),
        )
    })?;
    let err = ResourceSaver::singleton()
        .save_ex(resource)
        .path(tmp.as_str())
        .done();
    let old_uid = if FileAccess::file_exists(path) {
        ResourceLoader::singleton().get_resource_uid(path)
    } else {
        NO_UID
    };
    let settings = ProjectSettings::singleton();
    let abs_tmp = settings.globalize_path(tmp.as_str());
    if err != Error::OK {
        let _ = DirAccess::remove_absolute(&abs_tmp);
        return Err((
            err,
            format!("could not write '{path}' ({err:?}); it was left untouched"),
        ));
    }
    if old_uid != NO_UID && !keep_uid(&tmp, &abs_tmp.to_string(), old_uid) {
        godot_warn!(
            "vat_crowd: saving '{path}' gave it a new UID; scenes that reference it by its old \
             UID fall back to its path"
        );
    }
    // The file's UID: the kept one, or the one Godot gave a file saved for the first time.
    let uid = ResourceLoader::singleton().get_resource_uid(tmp.as_str());
    let abs = settings.globalize_path(path);
    let err = DirAccess::rename_absolute(&abs_tmp, &abs);
    if err != Error::OK {
        let _ = DirAccess::remove_absolute(&abs_tmp);
        return Err((
            err,
            format!("could not move the new file over '{path}' ({err:?}); it was left untouched"),
        ));
    }
    if uid != NO_UID {
        let mut uids = ResourceUid::singleton();
        if uids.has_id(uid) {
            uids.set_id(uid, path);
        } else {
            uids.add_id(uid, path);
        }
    }
    if Engine::singleton().is_editor_hint() {
        if let Some(mut fs) = EditorInterface::singleton().get_resource_filesystem() {
            fs.update_file(tmp.as_str());
            fs.update_file(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::temporary_path;

    #[test]
    fn temporary_names_are_hidden_unique_and_keep_the_extension() {
        let a = temporary_path("res://x/keep.res").unwrap();
        let b = temporary_path("res://x/keep.res").unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with("res://x/.keep.res.vat-crowd-save-"), "{a}");
        assert!(a.ends_with(".res"));
        assert_ne!(a, "res://x/keep.tmp.res");
        assert!(temporary_path("res://x/noext").is_none());
        assert!(temporary_path("res://x/.res").is_none());
        assert!(temporary_path("res://x/a.tres").unwrap().ends_with(".tres"));
    }
}
