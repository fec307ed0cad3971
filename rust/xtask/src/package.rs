//! `cargo xtask package`: the addon as users install it (`target/dist/vat_crowd-VERSION.zip`),
//! and the check that it installs cleanly into an empty project.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::build::{cargo, copy_shaders, target_dir, LIB_NAME};
use crate::godot::{problems, Session};
use crate::tally::Tally;
use crate::util::{self, mkdirs, repo_root, Result};
use crate::zip::write_zip;

/// The addon folder inside the package and in a user's project.
const ADDON: &str = "addons/vat_crowd";

/// The shared character (file stem) the editor check bakes through the inspector's Bake panel.
const ROBOT: &str = "RobotExpressive";

/// The robot's import settings: the scene importer's defaults but for tangents.
const ROBOT_IMPORT: &str =
    "[remap]\n\nimporter=\"scene\"\nimporter_version=1\ntype=\"PackedScene\"\n\n[params]\n\nmeshes/ensure_tangents=false\n";

/// The package version: the workspace's, which plugin.cfg must repeat.
fn version(root: &Path) -> Result<String> {
    let version = env!("CARGO_PKG_VERSION").to_string();
    let cfg = fs::read_to_string(root.join(ADDON).join("plugin.cfg"))?;
    if !cfg.contains(&format!("version=\"{version}\"")) {
        return Err(format!(
            "{ADDON}/plugin.cfg does not say version=\"{version}\" (the workspace version in \
             Cargo.toml); make them agree"
        )
        .into());
    }
    Ok(version)
}

/// Whether a file of the addon folder ships: not editor import caches, not hidden files, not
/// the library (the fresh release build replaces it).
fn ships(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    !(name.starts_with('.') || name.ends_with(".import") || rel.starts_with("bin/"))
}

/// Files under `dir`, as paths relative to it with `/`, sorted (so the archive is reproducible).
fn files_under(dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under dir");
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Builds the release library without the benchmark class and writes the zip; returns its path.
pub fn package() -> Result<PathBuf> {
    let root = repo_root();
    let version = version(&root)?;
    // The benchmark helper class (feature `bench`) is for this repository's benchmarks only, the
    // diagnostics (feature `dev`) for its development: both are off by default, and
    // --no-default-features keeps any default feature out too.
    let mut cmd = cargo();
    cmd.args([
        "build",
        "--release",
        "--package",
        "vat_gdext",
        "--no-default-features",
    ])
    .current_dir(&root);
    util::run(&mut cmd)?;
    copy_shaders(&root)?;
    let addon = root.join(ADDON);
    let mut entries = Vec::new();
    for rel in files_under(&addon)? {
        if ships(&rel) {
            entries.push((format!("{ADDON}/{rel}"), fs::read(addon.join(&rel))?));
        }
    }
    let built = target_dir().join("release/libvat_gdext.so");
    let library = fs::read(&built)?;
    // Without -z nodelete, Godot's shutdown unmaps the library under rayon's threads.
    let flags = crate::elf::flags_1(&library).map_err(|e| format!("{}: {e}", built.display()))?;
    if flags & crate::elf::DF_1_NODELETE == 0 {
        return Err(format!(
            "{} is not linked -z nodelete (rust/vat_gdext/build.rs): a headless bake could crash as \
             Godot exits",
            built.display()
        )
        .into());
    }
    entries.push((format!("{ADDON}/bin/{LIB_NAME}"), library));
    // Libraries for other platforms, when CI has put them into bin/.
    let bin = addon.join("bin");
    if bin.is_dir() {
        for rel in files_under(&bin)? {
            if rel != LIB_NAME && !rel.starts_with('.') {
                entries.push((format!("{ADDON}/bin/{rel}"), fs::read(bin.join(&rel))?));
            }
        }
    }
    entries.push((format!("{ADDON}/LICENSE"), fs::read(root.join("LICENSE"))?));
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let dist = target_dir().join("dist");
    mkdirs(&dist)?;
    let out = dist.join(format!("vat_crowd-{version}.zip"));
    let tmp = dist.join(format!(".vat_crowd-{version}.zip.partial"));
    write_zip(&tmp, &entries)?;
    fs::rename(&tmp, &out)?;
    let bytes: u64 = entries.iter().map(|e| e.1.len() as u64).sum();
    println!(
        "xtask: wrote {} ({} files, {})",
        out.display(),
        entries.len(),
        util::mb(bytes)
    );
    Ok(out)
}

/// A GDScript that unzips the package into the project with Godot's own ZIPReader (not our
/// writer's inverse), so the archive is checked by an independent reader.
const UNZIP_GD: &str = r#"extends SceneTree
func _initialize() -> void:
	var args := OS.get_cmdline_user_args()
	var zip := ZIPReader.new()
	if zip.open(args[0]) != OK:
		printerr("PACKAGE: cannot open ", args[0])
		quit(1)
		return
	var n := 0
	for f in zip.get_files():
		if f.ends_with("/"):
			continue
		var dest: String = args[1].path_join(f)
		DirAccess.make_dir_recursive_absolute(dest.get_base_dir())
		var out := FileAccess.open(dest, FileAccess.WRITE)
		out.store_buffer(zip.read_file(f))
		out.close()
		n += 1
	print("PACKAGE: unzipped %d files" % n)
	quit(0)
"#;

/// A game-time check in the installed project: every class exists and works, the benchmark
/// class does not ship, the shader library compiles into a material.
const CHECK_GD: &str = r#"extends SceneTree
func _initialize() -> void:
	var ok := true
	for c in ["VertexAnimation", "VertexAnimationBaker", "AnimatedMeshInstance", "AnimatedActorMeshInstance"]:
		if not ClassDB.class_exists(c):
			printerr("PACKAGE: class %s is missing" % c)
			ok = false
	if ClassDB.class_exists("VatCrowdBench"):
		printerr("PACKAGE: the benchmark class VatCrowdBench ships in the addon")
		ok = false
	var crowd := AnimatedActorMeshInstance.new()
	root.add_child(crowd)
	crowd.free()
	var shader := load("res://addons/vat_crowd/shaders/vat_crowd.gdshader") as Shader
	if shader == null or shader.code.is_empty():
		printerr("PACKAGE: the crowd shader does not load")
		ok = false
	print("PACKAGE: run-time check ", "passed" if ok else "FAILED")
	quit(0 if ok else 1)
"#;

const PROJECT: &str =
    "config_version=5\n\n[application]\n\nconfig/name=\"vat_crowd package check\"\n";

/// Lines of a Godot run that a clean install must not have (besides `problems`): any error or
/// warning at all.
fn noise(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.contains("ERROR") || l.contains("WARNING") || l.contains("PACKAGE: cannot"))
        .map(|l| l.trim().to_string())
        .collect()
}

fn checked(session: &Session, what: &str, args: Vec<String>) -> Result<()> {
    let out = session.run(&args, Duration::from_secs(300))?;
    let mut found = problems(&out, false);
    found.extend(noise(&out.lines));
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!("{what}: {}", found.join("; ")).into())
    }
}

/// The editor session of tests/editor/editor_check.gd in the installed project, under the real
/// renderer: bake through the inspector button, bake RobotExpressive through the Bake panel
/// (clip picker, progress, Cancel, undo and redo), save, select every class, save and reopen a
/// scene, capture the crowd nodes' preview in the 3D viewport, read every class's F1 help. Fails
/// on any error, warning or panic in the log.
fn editor_check(project: &Path) -> Result<()> {
    let root = repo_root();
    let (dir, characters) = crate::test_godot::shared_characters(&root);
    // The smallest character keeps the bake short; the check is about the editor.
    let character = characters
        .iter()
        .min_by_key(|p| fs::metadata(p).map_or(u64::MAX, |m| m.len()))
        .ok_or_else(|| {
            format!(
                "no character (.glb) in {} for the editor check",
                dir.as_ref()
                    .map_or("../shared/assets".into(), |d| d.display().to_string())
            )
        })?;
    fs::copy(character, project.join("character.glb"))?;
    // The inspector's stepped bake, picker and undo are checked on this one (14 clips, rigid and
    // skinned parts, blend shapes).
    let robot = characters
        .iter()
        .find(|p| p.file_stem().is_some_and(|s| s == ROBOT))
        .ok_or_else(|| {
            format!(
                "no {ROBOT}.glb in {} for the editor check of the inspector's bake",
                dir.as_ref()
                    .map_or("../shared/assets".into(), |d| d.display().to_string())
            )
        })?;
    fs::copy(robot, project.join("robot.glb"))?;
    // Some of its meshes have no UVs, and Godot's default import (ensure tangents) logs an error
    // for each; a user would untick the option, as this does.
    fs::write(project.join("robot.glb.import"), ROBOT_IMPORT)?;
    let plugin = project.join("addons/vat_crowd_check");
    mkdirs(&plugin)?;
    for f in [
        "editor_check.gd",
        "preview_check.gd",
        "docs_check.gd",
        "plugin.cfg",
    ] {
        fs::copy(root.join("tests/editor").join(f), plugin.join(f))?;
    }
    fs::write(
        project.join("project.godot"),
        format!(
            "{PROJECT}\n[editor_plugins]\n\nenabled=PackedStringArray(\"res://{ADDON}/plugin.cfg\", \
             \"res://addons/vat_crowd_check/plugin.cfg\")\n"
        ),
    )?;
    let session = Session::render()?;
    let args = vec![
        "--editor".into(),
        "--path".into(),
        project.display().to_string(),
        "--".into(),
        "--vat-editor-check".into(),
    ];
    let out = session.run(&args, Duration::from_secs(400))?;
    let mut found = problems(&out, true);
    found.extend(noise(&out.lines));
    if !out.lines.iter().any(|l| l.contains("EDITOR CHECK: passed")) {
        found.push("the editor check did not report \"EDITOR CHECK: passed\"".into());
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!("editor check: {}", found.join("; ")).into())
    }
}

/// Packages the addon, unzips it into an empty project, enables the plugin, opens the editor
/// (headless, fresh: no `.godot/` yet) and runs a game-time check; any error or warning fails.
pub fn install_check(session: &Session) -> Tally {
    let result = (|| -> Result<()> {
        let zip = package()?;
        let project = target_dir().join("tmp/package_check");
        if project.exists() {
            fs::remove_dir_all(&project)?;
        }
        mkdirs(&project)?;
        fs::write(project.join("project.godot"), PROJECT)?;
        let scripts = target_dir().join("tmp/package_scripts");
        mkdirs(&scripts)?;
        fs::write(scripts.join("unzip.gd"), UNZIP_GD)?;
        fs::write(scripts.join("check.gd"), CHECK_GD)?;
        let p = project.display().to_string();
        let script = |name: &str| scripts.join(name).display().to_string();
        // Unzip with Godot, in the still empty project.
        checked(
            session,
            "unzip",
            vec![
                "--headless".into(),
                "--path".into(),
                p.clone(),
                "--script".into(),
                script("unzip.gd"),
                "--".into(),
                zip.display().to_string(),
                p.clone(),
            ],
        )?;
        // The unzip run made a `.godot/`: remove it, so the editor meets the project as new.
        let cache = project.join(".godot");
        if cache.exists() {
            fs::remove_dir_all(&cache)?;
        }
        fs::write(
            project.join("project.godot"),
            format!(
                "{PROJECT}\n[editor_plugins]\n\nenabled=PackedStringArray(\"res://{ADDON}/plugin.cfg\")\n"
            ),
        )?;
        // The editor as a user opens the project for the first time.
        let editor = vec![
            "--headless".into(),
            "--editor".into(),
            "--quit-after".into(),
            "300".into(),
            "--path".into(),
            p.clone(),
        ];
        checked(session, "first editor start", editor)?;
        let game = vec![
            "--headless".into(),
            "--path".into(),
            p,
            "--script".into(),
            script("check.gd"),
        ];
        checked(session, "game-time check", game)?;
        editor_check(&project)
    })();
    match result {
        Ok(()) => {
            println!(
                "PASS package: installs from the zip, opens, bakes, inspects and saves in the \
                 editor with no error or warning"
            );
            Tally::one(true)
        }
        Err(e) => {
            println!("FAIL package: {e}");
            Tally::one(false)
        }
    }
}
