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

/// Bakes `source` into `out` (default: beside the source, `NAME.vat.res`), with the release build
/// of the extension (`release`) or the debug one.
pub fn bake(source: &Path, out: Option<&Path>, release: bool) -> Result<ExitCode> {
    let source = absolute(source);
    if !source.is_file() {
        bail!("bake: {} is not a file", source.display());
    }
    let out = match out {
        Some(o) => absolute(o),
        None => source.with_extension("vat.res"),
    };
    let plain = Session::plain()?;
    build::build(release, build::default_features(release), None)?;

    let project = target_dir().join(format!("bake/project-{}", std::process::id()));
    let _ = fs::remove_dir_all(&project);
    make_project(&project, &source)?;
    let file_name = source.file_name().expect("a file has a name").to_owned();

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

/// A fresh Godot project at `project` with the addon (bin/ and shaders/ included) and a copy of
/// `source` (and, for a .gltf, its sibling buffers and images) at its root.
pub(crate) fn make_project(project: &Path, source: &Path) -> Result<()> {
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
    fs::copy(
        source,
        project.join(source.file_name().expect("a file has a name")),
    )?;
    if source.extension().is_some_and(|e| e == "gltf") {
        // A .gltf names its buffers and images beside it.
        copy_gltf_siblings(source, project)?;
    }
    Ok(())
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

/// The unit tier's check of `cargo xtask bake` itself: bakes the smallest character of
/// tests/assets_local/ with it (debug build), then, in a fresh project holding that file, the
/// output and the addon, tests/lib/verify_bake.gd loads the output and requires every frame to
/// equal a bake of the same file by VertexAnimation.bake() in a running game (which the render
/// tier compares with Godot's own posing), and its clips to move. Skips (fails with CI=true)
/// when there is no character.
pub fn self_check(session: &Session, root: &Path) -> bool {
    let assets = root.join("tests/assets_local");
    let smallest = fs::read_dir(&assets)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("glb")))
        .min_by_key(|p| fs::metadata(p).map(|m| m.len()).unwrap_or(u64::MAX));
    let Some(source) = smallest else {
        let ci = crate::util::env_nonempty("CI").is_some_and(|v| v != "false" && v != "0");
        println!(
            "{} xtask bake check: no .glb in tests/assets_local",
            if ci { "FAIL" } else { "SKIP" }
        );
        return !ci;
    };
    let result = (|| -> Result<()> {
        let out = target_dir().join("test_out/xtask_bake/baked.res");
        let _ = fs::remove_file(&out);
        if bake(&source, Some(&out), false)? != ExitCode::SUCCESS {
            bail!("cargo xtask bake failed");
        }
        let project = target_dir().join(format!("bake/check-{}", std::process::id()));
        let _ = fs::remove_dir_all(&project);
        make_project(&project, &source)?;
        fs::copy(&out, project.join("baked.res"))?;
        session.import(&project)?;
        let name = source.file_name().expect("a file").to_string_lossy();
        let source_arg = format!("res://{name}");
        let args = ["--baked", "res://baked.res", "--source", &source_arg];
        let mut found = run_check_script(session, root, &project, "verify_bake", &args, 300)?;
        if found.is_empty() {
            found = check_without_source(session, root, &project, &name)?;
        }
        let _ = fs::remove_dir_all(&project);
        if !found.is_empty() {
            bail!("{}", found.join("; "));
        }
        Ok(())
    })();
    match result {
        Ok(()) => {
            println!("PASS xtask bake check ({})", source.display());
            true
        }
        Err(e) => {
            println!("FAIL xtask bake check ({}): {e}", source.display());
            false
        }
    }
}

/// Deletes the source (`name`) from `project` and runs `tests/lib/verify_moved_bake.gd` there:
/// the baked file must load, play and warn without it. Returns what went wrong.
fn check_without_source(
    session: &Session,
    root: &Path,
    project: &Path,
    name: &str,
) -> Result<Vec<String>> {
    fs::remove_file(project.join(name))?;
    let _ = fs::remove_file(project.join(format!("{name}.import")));
    let args = ["--baked", "res://baked.res"];
    run_check_script(session, root, project, "verify_moved_bake", &args, 120)
}

/// Copies `tests/lib/SCRIPT.gd` into `project` and runs it there headless with `args` after
/// `--`, within `limit_s` seconds, echoing the lines it prints about itself. Returns what went
/// wrong (Godot's exit status and the log's fatal patterns).
fn run_check_script(
    session: &Session,
    root: &Path,
    project: &Path,
    script: &str,
    args: &[&str],
    limit_s: u64,
) -> Result<Vec<String>> {
    let file = format!("{script}.gd");
    fs::copy(root.join("tests/lib").join(&file), project.join(&file))?;
    let mut all = vec![
        "--headless".to_string(),
        "--path".into(),
        project.display().to_string(),
        "--script".into(),
        format!("res://{file}"),
        "--".into(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    let run = session.run(&all, Duration::from_secs(limit_s))?;
    for l in run.lines.iter().filter(|l| l.starts_with(script)) {
        println!("  {l}");
    }
    Ok(problems(&run, false))
}
