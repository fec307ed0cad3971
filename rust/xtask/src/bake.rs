//! `cargo xtask bake FILE.glb [OUT.res]`: bake a scene file outside any project, through a
//! temporary Godot project that holds a copy of the addon and of the file.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::bail;
use crate::build::{self, target_dir};
use crate::godot::{problems, Session};
use crate::util::{absolute, mkdirs, repo_root, Result};

/// Bakes `source` into `out` (default: beside the source, `NAME.vat.res`).
pub fn bake(source: &Path, out: Option<&Path>) -> Result<ExitCode> {
    let source = absolute(source);
    if !source.is_file() {
        bail!("bake: {} is not a file", source.display());
    }
    let file_name = source.file_name().expect("a file has a name").to_owned();
    let out = match out {
        Some(o) => absolute(o),
        None => source.with_extension("vat.res"),
    };
    let plain = Session::plain()?;
    build::build(true, None)?;

    let project = target_dir().join(format!("bake/project-{}", std::process::id()));
    let _ = fs::remove_dir_all(&project);
    mkdirs(&project.join(".godot"))?;
    fs::write(
        project.join("project.godot"),
        "config_version=5\n\n[application]\n\nconfig/name=\"vat_crowd bake\"\n",
    )?;
    fs::write(
        project.join(".godot/extension_list.cfg"),
        "res://addons/vat_crowd/vat_crowd.gdextension\n",
    )?;
    copy_dir(
        &repo_root().join("addons/vat_crowd"),
        &project.join("addons/vat_crowd"),
    )?;
    fs::copy(&source, project.join(&file_name))?;
    if source.extension().is_some_and(|e| e == "gltf") {
        // A .gltf names its buffers and images beside it.
        copy_gltf_siblings(&source, &project)?;
    }

    let result = (|| -> Result<()> {
        plain.import(&project)?;
        let args: Vec<String> = [
            "--headless",
            "--path",
            &project.display().to_string(),
            "--script",
            "res://addons/vat_crowd/bake.gd",
            "--",
            "--source",
            &format!("res://{}", file_name.to_string_lossy()),
            "--out",
            "res://out.res",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let run = plain.run(&args, Duration::from_secs(1800))?;
        let problems = problems(&run, false);
        if !problems.is_empty() {
            bail!("bake failed: {}", problems.join("; "));
        }
        if let Some(dir) = out.parent() {
            mkdirs(dir)?;
        }
        fs::copy(project.join("out.res"), &out)
            .map_err(|e| format!("bake wrote no out.res: {e}"))?;
        Ok(())
    })();
    let _ = fs::remove_dir_all(&project);
    result?;
    println!("xtask: baked {} -> {}", source.display(), out.display());
    Ok(ExitCode::SUCCESS)
}

/// Copies a folder tree, following links (the addon's bin/ and shaders/ are real files).
fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    mkdirs(to)?;
    for e in fs::read_dir(from)?.flatten() {
        let path = e.path();
        let dst = to.join(e.file_name());
        if path.is_dir() {
            copy_dir(&path, &dst)?;
        } else {
            fs::copy(&path, &dst)?;
        }
    }
    Ok(())
}

fn copy_gltf_siblings(source: &Path, project: &Path) -> Result<()> {
    let dir: PathBuf = source.parent().map(Path::to_path_buf).unwrap_or_default();
    for e in fs::read_dir(&dir)?.flatten() {
        let p = e.path();
        let ext = p.extension().map(|x| x.to_string_lossy().to_lowercase());
        if matches!(
            ext.as_deref(),
            Some("bin" | "png" | "jpg" | "jpeg" | "webp" | "ktx2")
        ) {
            fs::copy(&p, project.join(e.file_name()))?;
        }
    }
    Ok(())
}
