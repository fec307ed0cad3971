//! `cargo xtask build`: compile the extension and assemble everything Godot needs from the one
//! source of each file (library into the addon, shaders into the addon, links to the addon,
//! the generated demo character).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use crate::bail;
use crate::godot::{problems, Session};
use crate::process::run_with_timeout;
use crate::util::{self, mkdirs, repo_root, Result};

/// The one library name both the debug and the release keys of the .gdextension load.
pub const LIB_NAME: &str = "libvat_gdext.linux.x86_64.so";
/// Projects that use the addon through a link: godot_project (the demo) and tests.
const ADDON_LINKS: &[&str] = &["godot_project/addons/vat_crowd", "tests/addons/vat_crowd"];
const SOLDIER_BUILDER: &str = "godot_project/demo/character/soldier_builder.gd";
const SOLDIER_OUTPUTS: &[&str] = &[
    "godot_project/demo/character/generated/soldier.tscn",
    "tests/generated/soldier.tscn",
];

/// The cargo target folder.
pub fn target_dir() -> PathBuf {
    util::env_nonempty("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
}

/// `cargo`, as the running cargo names itself.
pub fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// Cargo features of vat_gdext that are off by default: the development diagnostics
/// (`VertexAnimation.dump_lod_input`) and the benchmark class `VatCrowdBench`. The shipped
/// addon (`cargo xtask package`) has neither.
pub const DEV: &str = "dev";
/// See [`DEV`].
pub const BENCH: &str = "bench";

/// The features `cargo xtask build` gives a build: the debug build (the one `cargo xtask test`
/// runs and `tests/lib/dump_lod_sources.gd` needs) has the development diagnostics, the release
/// build is what users get.
pub fn default_features(release: bool) -> &'static [&'static str] {
    if release {
        &[]
    } else {
        &[DEV]
    }
}

/// Builds the extension (dev or release profile) with `features` of vat_gdext and assembles the
/// addon and its links. Without `session`, the demo character is not generated (it needs Godot).
pub fn build(release: bool, features: &[&str], session: Option<&Session>) -> Result<()> {
    let root = repo_root();
    let mut cmd = cargo();
    cmd.args(["build", "--package", "vat_gdext"])
        .current_dir(&root);
    if release {
        cmd.arg("--release");
    }
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    util::run(&mut cmd)?;
    let profile = if release { "release" } else { "debug" };
    let built = target_dir().join(profile).join("libvat_gdext.so");
    let bin = root.join("addons/vat_crowd/bin");
    mkdirs(&bin)?;
    if copy_if_changed(&built, &bin.join(LIB_NAME))? {
        println!(
            "xtask: {profile} library (features: {}) -> addons/vat_crowd/bin/{LIB_NAME}",
            if features.is_empty() {
                "none".to_string()
            } else {
                features.join(", ")
            }
        );
    }
    copy_shaders(&root)?;
    for link in ADDON_LINKS {
        ensure_link(&root.join(link), Path::new("../../addons/vat_crowd"))?;
    }
    if let Some(session) = session {
        generate_soldier(&root, session)?;
    }
    Ok(())
}

/// Copies `from` to `to` unless the bytes are the same; replaces by rename, so that a Godot
/// that has the old file mapped keeps running. Returns whether it copied.
fn copy_if_changed(from: &Path, to: &Path) -> Result<bool> {
    let new = fs::read(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    if fs::read(to).is_ok_and(|old| old == new) {
        return Ok(false);
    }
    let tmp = to.with_extension("tmp");
    fs::write(&tmp, &new)?;
    fs::rename(&tmp, to)?;
    Ok(true)
}

/// shaders/*.gdshader* -> addons/vat_crowd/shaders/, removing shaders that left the source.
pub fn copy_shaders(root: &Path) -> Result<()> {
    let src = root.join("shaders");
    let dst = root.join("addons/vat_crowd/shaders");
    mkdirs(&dst)?;
    let is_shader = |p: &Path| {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        name.ends_with(".gdshader") || name.ends_with(".gdshaderinc")
    };
    let mut names = Vec::new();
    if let Ok(rd) = fs::read_dir(&src) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_file() && is_shader(&p) {
                let name = e.file_name();
                copy_if_changed(&p, &dst.join(&name))?;
                names.push(name);
            }
        }
    }
    for e in fs::read_dir(&dst)?.flatten() {
        if is_shader(&e.path()) && !names.contains(&e.file_name()) {
            fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

/// Makes `link` a symlink to `target` (relative), replacing a wrong link.
fn ensure_link(link: &Path, target: &Path) -> Result<()> {
    if let Ok(current) = fs::read_link(link) {
        if current == target {
            return Ok(());
        }
        fs::remove_file(link)?;
    } else if link.exists() {
        bail!(
            "{} exists and is not a link to the addon: move it away (the addon's one source is addons/vat_crowd)",
            link.display()
        );
    }
    mkdirs(link.parent().expect("link has a parent"))?;
    std::os::unix::fs::symlink(target, link)?;
    Ok(())
}

fn mtime(p: &Path) -> Option<SystemTime> {
    fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Runs the demo character builder when its output is missing or older than the script.
fn generate_soldier(root: &Path, session: &Session) -> Result<()> {
    let script = root.join(SOLDIER_BUILDER);
    if !script.exists() {
        println!("xtask: note: {SOLDIER_BUILDER} does not exist yet; no demo character generated");
        return Ok(());
    }
    // The builder's helper scripts sit beside it: the newest of them dates the sources.
    let script_time = fs::read_dir(script.parent().expect("script has a folder"))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "gd"))
        .filter_map(|p| mtime(&p))
        .max();
    let stale = SOLDIER_OUTPUTS
        .iter()
        .any(|o| mtime(&root.join(o)).is_none_or(|t| Some(t) < script_time));
    if !stale {
        return Ok(());
    }
    println!("xtask: generating the demo character ({SOLDIER_BUILDER})");
    let project = root.join("godot_project");
    session.import(&project)?;
    let args: Vec<String> = [
        "--headless",
        "--path",
        &project.display().to_string(),
        "-s",
        "res://demo/character/soldier_builder.gd",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = run_with_timeout(&mut session.command(&args), Duration::from_secs(600), true)?;
    let problems = problems(&out, false);
    if !problems.is_empty() {
        bail!("the demo character builder failed: {}", problems.join("; "));
    }
    if !root.join(SOLDIER_OUTPUTS[0]).exists() {
        bail!(
            "the demo character builder did not write {}",
            SOLDIER_OUTPUTS[0]
        );
    }
    for o in &SOLDIER_OUTPUTS[1..] {
        if !root.join(o).exists() {
            println!("xtask: warning: the demo character builder did not write {o}");
        }
    }
    Ok(())
}
