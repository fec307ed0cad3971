//! `cargo xtask bench bake|update|calls|frame`: run a benchmark script under the renderer (release build)
//! and print its JSON results as a table of medians and ratios.

use std::fs;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;

use crate::bail;
use crate::build::{self, target_dir};
use crate::godot::{problems, Session};
use crate::util::{mkdirs, repo_root, Result};

/// The one resolution of every `bench frame` configuration: small, because lavapipe rasterises on
/// the same two cores, yet 16:9 like the demo.
const FRAME_RESOLUTION: &str = "640x360";

/// Runs `tests/bench/bench_<which>.gd` (`godot_project/bench/bench_frame.gd` for `frame`) and prints the table (`full`: the larger sizes a
/// benchmark leaves out by default).
pub fn bench(which: &str, quick: bool, full: bool) -> Result<ExitCode> {
    if !["bake", "update", "calls", "frame"].contains(&which) {
        bail!("bench: expected `bake`, `update`, `calls` or `frame`, got {which:?}");
    }
    let root = repo_root();
    // The frame benchmark runs the demo's battle, in the demo project; the others run in tests/.
    let tests = root.join(if which == "frame" {
        "godot_project"
    } else {
        "tests"
    });
    let plain = Session::plain()?;
    // The benchmarks need the helper class VatCrowdBench (feature `bench`, off by default).
    build::build(true, &[build::BENCH], Some(&plain))?;
    if which == "bake" {
        // The corpus character comes from the shared assets; without them it is skipped.
        crate::test_godot::copy_assets(&root)?;
    }
    plain.import(&tests)?;
    // The GPU-driven frame's compute passes are timed by the rendering device's timestamps.
    let session = Session::render()?.with_env("VAT_CROWD_GPU_TIMESTAMPS", "1");
    let out_dir = target_dir().join("bench");
    mkdirs(&out_dir)?;
    let json = out_dir.join(format!("{which}.json"));
    let _ = fs::remove_file(&json);
    let mut args = vec!["--path".to_string(), tests.display().to_string()];
    if which == "frame" {
        args.extend(["--resolution".into(), FRAME_RESOLUTION.into()]);
    }
    args.extend([
        "-s".into(),
        format!("res://bench/bench_{which}.gd"),
        "--".into(),
    ]);
    if quick {
        args.push("--quick".into());
    }
    if full {
        args.push("--full".into());
    }
    args.extend(["--out".into(), json.display().to_string()]);
    let out = session.run(&args, Duration::from_secs(3600))?;
    let problems = problems(&out, true);
    if !problems.is_empty() {
        bail!("bench {which} failed: {}", problems.join("; "));
    }
    let text = fs::read_to_string(&json)
        .map_err(|e| format!("bench {which} wrote no {}: {e}", json.display()))?;
    let report: Value = serde_json::from_str(&text)?;
    print_table(&report);
    print_per_vertex_frame(&report);
    println!("xtask: results in {}", json.display());
    Ok(ExitCode::SUCCESS)
}

/// One row per result: its names (baker / path / actors), its median time, and the ratio to
/// the first result of the same actor count.
fn print_table(report: &Value) {
    let Some(results) = report.get("results").and_then(Value::as_array) else {
        println!("xtask: the report has no results");
        return;
    };
    println!(
        "\n{:<28} {:>10} {:>12} {:>10}",
        "what", "actors", "median", "vs first"
    );
    let mut first: Vec<(Option<i64>, f64)> = Vec::new();
    for r in results {
        let text = |k: &str| r.get(k).and_then(Value::as_str);
        let name = match (text("view"), text("lod")) {
            (Some(view), Some(lod)) => {
                let storage = text("storage").map_or(String::new(), |s| format!(", {s}"));
                format!(
                    "{view}, lod {lod}, {}{storage}",
                    text("frame").unwrap_or("cpu")
                )
            }
            _ => ["baker", "path", "call"]
                .iter()
                .find_map(|k| text(k))
                .unwrap_or("?")
                .to_string(),
        };
        let actors = r.get("actors").and_then(Value::as_i64);
        let ms = ["ms", "cpu_ms", "frame_ms", "ns_per_call"]
            .iter()
            .find_map(|k| r.get(*k).and_then(Value::as_f64));
        let Some(ms) = ms else {
            println!("{name:<28} {:>10} {:>12}", fmt_actors(actors), "-");
            continue;
        };
        let base = match first.iter().find(|(a, _)| *a == actors) {
            Some((_, b)) => *b,
            None => {
                first.push((actors, ms));
                ms
            }
        };
        let ratio = if base > 0.0 { ms / base } else { f64::NAN };
        println!(
            "{name:<28} {:>10} {:>12.3} {:>9.2}x",
            fmt_actors(actors),
            ms,
            ratio
        );
    }
}

/// The bake report's characters: vat_crowd's split per vertex-frame in ns, its own work (skin +
/// encode + build) over Godot's pose sampling, the MeshDataTool port over vat_crowd, then the
/// bake's time in ms without LODs beside the LOD chain's own time (build, silhouette checks,
/// pruned VAT, level meshes) in a bake with LODs.
fn print_per_vertex_frame(report: &Value) {
    let Some(characters) = report.get("characters").and_then(Value::as_array) else {
        return;
    };
    println!(
        "\n{:<34} {:>13} {:>8} {:>8} {:>8} {:>8} {:>11} {:>9}",
        "ns per vertex-frame",
        "v x f",
        "sample",
        "skin",
        "encode",
        "build",
        "own/sample",
        "mdt/vat"
    );
    for c in characters {
        let name = c.get("character").and_then(Value::as_str).unwrap_or("?");
        let name = name.rsplit('/').next().unwrap_or(name);
        let num = |v: Option<&Value>| v.and_then(Value::as_f64).unwrap_or(f64::NAN);
        let ns = c.get("split_ns_per_vertex_frame");
        let stage = |k: &str| num(ns.and_then(|n| n.get(k)));
        let size = format!(
            "{}x{}",
            num(c.get("vertices")) as i64,
            num(c.get("frames")) as i64
        );
        println!(
            "{name:<34} {size:>13} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>10.2}x {:>8.1}x",
            stage("sample"),
            stage("skin"),
            stage("encode"),
            stage("build"),
            num(c.get("own_vs_sample")),
            num(c.get("gdscript_meshdatatool_vs_vat_crowd")),
        );
    }
    println!(
        "\n{:<34} {:>12} {:>12} {:>16}",
        "ms per bake (medians)", "bake", "LOD chain", "bake with LODs"
    );
    for c in characters {
        let name = c.get("character").and_then(Value::as_str).unwrap_or("?");
        let name = name.rsplit('/').next().unwrap_or(name);
        let split = |k: &str| {
            c.get("split")
                .and_then(|s| s.get(k))
                .and_then(Value::as_f64)
                .unwrap_or(f64::NAN)
        };
        println!(
            "{name:<34} {:>12.1} {:>12.1} {:>16.1}",
            split("total_ms"),
            split("lod_ms"),
            split("total_with_lod_ms")
        );
    }
    if let Some(note) = report
        .get("corpus")
        .and_then(|c| c.get("note"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        println!("note: {note}");
    }
}

fn fmt_actors(actors: Option<i64>) -> String {
    actors.map(|a| a.to_string()).unwrap_or_else(|| "-".into())
}
