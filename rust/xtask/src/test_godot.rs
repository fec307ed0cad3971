//! The Godot-side tiers of `cargo xtask test`: preparing tests/, running tests/runner.gd on one
//! folder, and the harness's self-check.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::build;
use crate::godot::{problems, Session};
use crate::process::run_with_timeout;
use crate::tally::Tally;
use crate::util::{env_nonempty, mkdirs, Result};

/// Seconds a tier's Godot process may run (`$VAT_CROWD_TIER_TIMEOUT`, default 600).
fn tier_timeout() -> Duration {
    let s = env_nonempty("VAT_CROWD_TIER_TIMEOUT")
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    Duration::from_secs(s)
}

/// Provisions Godot (with the rendering libraries when `render` tests follow), builds the
/// extension (dev), copies the shared assets and imports tests/.
pub fn prepare(root: &Path, render: bool) -> Result<Session> {
    let session = Session::headless(render)?;
    build::build(false, &[build::DEV], Some(&session))?;
    copy_assets(root)?;
    session.import(&root.join("tests"))?;
    Ok(session)
}

/// The folder of shared characters (`$VAT_CROWD_ASSETS`, else ../shared/assets) and every
/// character (`.glb`, `.gltf`) in it.
pub fn shared_characters(root: &Path) -> (Option<PathBuf>, Vec<PathBuf>) {
    let dir = env_nonempty("VAT_CROWD_ASSETS")
        .map(PathBuf::from)
        .or_else(|| root.parent().map(|p| p.join("shared/assets")));
    let mut sources: Vec<PathBuf> = dir
        .as_deref()
        .and_then(|d| fs::read_dir(d).ok())
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension().is_some_and(|e| {
                        e.eq_ignore_ascii_case("glb") || e.eq_ignore_ascii_case("gltf")
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    sources.sort();
    (dir, sources)
}

/// Every character (`.glb`, `.gltf`) of `$VAT_CROWD_ASSETS` or ../shared/assets into
/// tests/assets_local/, so a file added there is tested with no code change; copies that no longer
/// have a source are removed.
pub fn copy_assets(root: &Path) -> Result<()> {
    let (dir, sources) = shared_characters(root);
    let dst_dir = root.join("tests/assets_local");
    if sources.is_empty() {
        println!(
            "xtask: note: no characters found in {}; tests that need them will skip (fail with CI=true)",
            dir.map_or("../shared/assets".into(), |d| d.display().to_string())
        );
    }
    mkdirs(&dst_dir)?;
    for src in &sources {
        let name = src.file_name().expect("a file has a name");
        let dst = dst_dir.join(name);
        let same =
            fs::metadata(&dst).is_ok_and(|d| fs::metadata(src).is_ok_and(|s| s.len() == d.len()));
        if !same {
            fs::copy(src, &dst)?;
            println!(
                "xtask: copied {} into tests/assets_local/",
                name.to_string_lossy()
            );
        }
    }
    for e in fs::read_dir(&dst_dir)?.flatten() {
        let p = e.path();
        let known = sources.iter().any(|s| s.file_name() == p.file_name());
        let character = p
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("glb") || e.eq_ignore_ascii_case("gltf"));
        if character && !known {
            let _ = fs::remove_file(&p);
            let _ = fs::remove_file(p.with_extension(format!(
                "{}.import",
                p.extension().unwrap_or_default().to_string_lossy()
            )));
        }
    }
    Ok(())
}

/// Runs tests/runner.gd on one folder and turns its output into a tally; anything the log
/// shows wrong beyond the runner's own counts is one more failure.
pub fn run_tier(session: &Session, root: &Path, dir: &str, filter: Option<&str>) -> Tally {
    run_tier_with(session, root, dir, filter, &[])
}

/// `run_tier` with extra Godot arguments first (e.g. another rendering method).
pub fn run_tier_with(
    session: &Session,
    root: &Path,
    dir: &str,
    filter: Option<&str>,
    extra: &[&str],
) -> Tally {
    let render = session.renders();
    let mut args: Vec<String> = extra.iter().map(|a| a.to_string()).collect();
    if !render {
        args.push("--headless".into());
    }
    args.extend(["--path".into(), root.join("tests").display().to_string()]);
    if render {
        args.extend(["--resolution".into(), "640x480".into()]);
    }
    args.extend([
        "-s".into(),
        "res://runner.gd".into(),
        "--".into(),
        "--dir".into(),
        dir.into(),
    ]);
    if let Some(f) = filter {
        args.extend(["--filter".into(), f.into()]);
    }
    let out_dir = build::target_dir().join("test_out");
    let _ = mkdirs(&out_dir);
    let mut cmd = session.command(&args);
    cmd.env("VAT_TEST_OUT", &out_dir);
    if render {
        println!("xtask: render env: {}", session.env_words());
    }
    let out = match run_with_timeout(&mut cmd, tier_timeout(), true) {
        Ok(o) => o,
        Err(e) => {
            println!("FAIL {dir}: {e}");
            return Tally::one(false);
        }
    };
    let mut t = out
        .lines
        .iter()
        .rev()
        .find_map(|l| parse_final_line(l))
        .unwrap_or_else(|| {
            println!("FAIL {dir}: the runner printed no final \"N passed, N failed\" line");
            Tally::one(false)
        });
    let problems = problems(&out, render);
    for p in &problems {
        println!("FAIL {dir}: {p}");
    }
    // One more failure unless the runner's own FAIL lines already explain every problem (its
    // exit status 1, a script error it pinned on a test), so counts stay meaningful.
    let runner_failed = t.failed > 0 && out.status.and_then(|s| s.code()) == Some(1);
    let pinned = out.lines.iter().any(|l| {
        l.starts_with("FAIL ")
            && (l.contains("SCRIPT ERROR") || l.contains("cannot load the script"))
    });
    let explained = |p: &String| {
        (p.starts_with("Godot exited with") && runner_failed)
            || (p.contains("\"SCRIPT ERROR\"") && pinned)
    };
    let unexplained = problems.iter().any(|p| !explained(p));
    if unexplained {
        t.failed += 1;
    }
    t
}

/// The verdicts tests/selftest/test_harness.gd must get (each line starts with one).
const SELFTEST_EXPECTED: &[&str] = &[
    "PASS selftest/test_harness.gd::test_passes ",
    "FAIL selftest/test_harness.gd::test_fails_a_check: deliberate failure",
    "FAIL selftest/test_harness.gd::test_script_error: SCRIPT ERROR",
    "FAIL selftest/test_harness.gd::test_fails_after_await: deliberate failure after an await",
    "SKIP selftest/test_harness.gd::test_skips: deliberate skip",
    "PASS selftest/test_harness.gd::test_leaks_a_node ",
    "FAIL selftest/test_harness.gd::test_times_out: timed out",
    "2 passed, 4 failed, 1 skipped",
];

/// Runs the harness's deliberately failing tests and checks that the runner and the log scan
/// catch every kind of failure (failed check, script error, timeout, leak, exit status).
pub fn harness_self_check(session: &Session, root: &Path) -> bool {
    let args: Vec<String> = [
        "--headless",
        "--path",
        &root.join("tests").display().to_string(),
        "-s",
        "res://runner.gd",
        "--",
        "--dir",
        "selftest",
        "--test-timeout",
        "2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = match run_with_timeout(&mut session.command(&args), Duration::from_secs(120), false) {
        Ok(o) => o,
        Err(e) => {
            println!("FAIL harness self-check: {e}");
            return false;
        }
    };
    let mut missing: Vec<String> = SELFTEST_EXPECTED
        .iter()
        .filter(|want| !out.lines.iter().any(|l| l.starts_with(*want)))
        .map(|want| format!("no line starting {want:?}"))
        .collect();
    if out.status.and_then(|s| s.code()) != Some(1) {
        missing.push(format!("exit status {} (expected 1)", out.status_text()));
    }
    let found = problems(&out, false).join("\n");
    for pattern in ["SCRIPT ERROR", "ObjectDB instances leaked at exit"] {
        if !found.contains(pattern) {
            missing.push(format!("the log scan did not report {pattern:?}"));
        }
    }
    if missing.is_empty() {
        println!("PASS harness self-check (deliberate failures, script error, timeout and leak all caught)");
        true
    } else {
        for l in &out.lines {
            println!("  | {l}");
        }
        println!("FAIL harness self-check: {}", missing.join("; "));
        false
    }
}

/// "3 passed, 1 failed" or "3 passed, 1 failed, 2 skipped".
fn parse_final_line(line: &str) -> Option<Tally> {
    let parts: Vec<&str> = line.trim().split(", ").collect();
    let count = |part: &str, label: &str| -> Option<u32> {
        let (n, l) = part.split_once(' ')?;
        (l == label).then(|| n.parse().ok()).flatten()
    };
    let (passed, failed) = (
        count(parts.first()?, "passed")?,
        count(parts.get(1)?, "failed")?,
    );
    let skipped = match parts.get(2) {
        Some(p) => count(p, "skipped")?,
        None => 0,
    };
    (parts.len() <= 3).then_some(Tally {
        passed,
        failed,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::parse_final_line;

    #[test]
    fn final_lines() {
        let t = parse_final_line("3 passed, 1 failed").unwrap();
        assert_eq!((t.passed, t.failed, t.skipped), (3, 1, 0));
        let t = parse_final_line("0 passed, 0 failed, 2 skipped").unwrap();
        assert_eq!((t.passed, t.failed, t.skipped), (0, 0, 2));
        assert!(parse_final_line("PASS unit/test_a.gd::test_b (3 ms)").is_none());
        assert!(parse_final_line("3 passed").is_none());
    }
}
