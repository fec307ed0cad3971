//! Saving a resource atomically: a temporary file beside the target, then a rename over it.

use std::sync::atomic::{AtomicU32, Ordering};

use godot::classes::{DirAccess, ProjectSettings, Resource, ResourceSaver};
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

/// Writes `resource` to a temporary file beside `path`, then renames it over `path`; on any
/// failure the temporary file is removed and `path` is left as it was.
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
    let settings = ProjectSettings::singleton();
    let abs_tmp = settings.globalize_path(tmp.as_str());
    if err != Error::OK {
        let _ = DirAccess::remove_absolute(&abs_tmp);
        return Err((
            err,
            format!("could not write '{path}' ({err:?}); it was left untouched"),
        ));
    }
    let abs = settings.globalize_path(path);
    let err = DirAccess::rename_absolute(&abs_tmp, &abs);
    if err != Error::OK {
        let _ = DirAccess::remove_absolute(&abs_tmp);
        return Err((
            err,
            format!("could not move the new file over '{path}' ({err:?}); it was left untouched"),
        ));
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
