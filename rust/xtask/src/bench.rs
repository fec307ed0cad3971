//! `cargo xtask bench bake|update`: run a benchmark script under the renderer (release build)
//! and print its JSON results as a table of medians and ratios.

use std::fs;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;

use crate::bail;
use crate::build::{self, target_dir};
use crate::godot::{problems, Session};
use crate::util::{mkdirs, repo_root, Result};

/// Runs `tests/bench/bench_<which>.gd` and prints the table.
pub fn bench(which: &str, quick: bool) -> Result<ExitCode> {
    if which != "bake" && which != "update" {
        bail!("bench: expected `bake` or `update`, got {which:?}");
    }
    let root = repo_root();
    let tests = root.join("tests");
    let plain = Session::plain()?;
    build::build(true, Some(&plain))?;
    plain.import(&tests)?;
    let session = Session::render()?;
    let out_dir = target_dir().join("bench");
    mkdirs(&out_dir)?;
    let json = out_dir.join(format!("{which}.json"));
    let _ = fs::remove_file(&json);
    let mut args = vec![
        "--path".to_string(),
        tests.display().to_string(),
        "-s".into(),
        format!("res://bench/bench_{which}.gd"),
        "--".into(),
    ];
    if quick {
        args.push("--quick".into());
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
        "what", "actors", "median ms", "vs first"
    );
    let mut first: Vec<(Option<i64>, f64)> = Vec::new();
    for r in results {
        let name = ["baker", "path"]
            .iter()
            .find_map(|k| r.get(*k).and_then(Value::as_str))
            .unwrap_or("?");
        let actors = r.get("actors").and_then(Value::as_i64);
        let ms = ["ms", "cpu_ms"]
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

fn fmt_actors(actors: Option<i64>) -> String {
    actors.map(|a| a.to_string()).unwrap_or_else(|| "-".into())
}
