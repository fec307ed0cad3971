//! `cargo xtask lod FILE.glb --out DIR`: build a character's LOD chain (a bake with the default
//! LOD settings) and write `DIR/lod_report.json` plus a silhouette PNG of each level's worst view,
//! through a temporary Godot project like `cargo xtask bake`.

use std::fs;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::bail;
use crate::bake::make_project;
use crate::build::{self, target_dir};
use crate::godot::{problems, Session};
use crate::util::{absolute, mkdirs, Result};

/// The script the temporary project runs (kept beside this file so it reads as GDScript).
const SCRIPT: &str = include_str!("lod_report.gd");

/// Writes the LOD report of `source` into `out` (created if missing), with the release build of
/// the extension (`release`) or the debug one.
pub fn lod(source: &Path, out: &Path, release: bool) -> Result<ExitCode> {
    let source = absolute(source);
    if !source.is_file() {
        bail!("lod: {} is not a file", source.display());
    }
    let out = absolute(out);
    mkdirs(&out)?;
    let plain = Session::plain()?;
    build::build(release, build::default_features(release), None)?;
    let project = target_dir().join(format!("lod/project-{}", std::process::id()));
    let _ = fs::remove_dir_all(&project);
    make_project(&project, &source)?;
    fs::write(project.join("lod_report.gd"), SCRIPT)?;
    let file_name = source.file_name().expect("a file has a name").to_owned();
    let result = (|| -> Result<()> {
        plain.import(&project)?;
        let args: Vec<String> = [
            "--headless",
            "--path",
            &project.display().to_string(),
            "--script",
            "res://lod_report.gd",
            "--",
            "--source",
            &format!("res://{}", file_name.to_string_lossy()),
            "--out",
            &out.display().to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let run = plain.run(&args, Duration::from_secs(1800))?;
        for l in &run.lines {
            if l.contains("WARNING: vat_crowd") || l.starts_with("lod_report.gd") {
                println!("  {l}");
            }
        }
        let problems = problems(&run, false);
        if !problems.is_empty() {
            bail!("lod failed: {}", problems.join("; "));
        }
        Ok(())
    })();
    let _ = fs::remove_dir_all(&project);
    result?;
    println!(
        "xtask: LOD report of {} -> {}",
        source.display(),
        out.join("lod_report.json").display()
    );
    Ok(ExitCode::SUCCESS)
}
