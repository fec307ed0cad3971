//! `cargo xtask test`: lint, the Rust unit tests, the Godot-side unit tests (headless) and the
//! render tests (Xvfb + lavapipe), with one `N passed, N failed` line over all of them.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use crate::build::{self, cargo};
use crate::godot::Session;
use crate::process::run_with_timeout;
use crate::tally::Tally;
use crate::test_godot::{harness_self_check, prepare, run_tier, run_tier_with};
use crate::util::{in_ci, repo_root, Result};

/// The parts of the test run, in order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tier {
    /// `cargo fmt --check` and clippy with `-D warnings`.
    Lint,
    /// `cargo test --workspace`.
    Rust,
    /// tests/unit under headless Godot.
    Unit,
    /// tests/render under Xvfb + lavapipe.
    Render,
    /// `cargo xtask package`, installed into an empty project and opened in the editor.
    Package,
}

impl Tier {
    /// Every tier, in the order they run.
    pub const ALL: [Tier; 5] = [
        Tier::Lint,
        Tier::Rust,
        Tier::Unit,
        Tier::Render,
        Tier::Package,
    ];

    /// Parses a `--tier` value.
    pub fn parse(s: &str) -> Option<Tier> {
        Some(match s {
            "lint" => Tier::Lint,
            "rust" => Tier::Rust,
            "unit" => Tier::Unit,
            "render" => Tier::Render,
            "package" => Tier::Package,
            _ => return None,
        })
    }
}

/// Runs `tiers` (with `filter` narrowing the Godot-side tests) and prints the final line.
pub fn test(tiers: &[Tier], filter: Option<&str>) -> Result<ExitCode> {
    let start = Instant::now();
    let root = repo_root();
    let mut total = Tally::default();
    let mut failures: Vec<String> = Vec::new();
    if tiers.contains(&Tier::Lint) {
        banner("lint: cargo fmt --check");
        let fmt = Tally::one(check_cargo(&["fmt", "--all", "--check"]));
        note(&mut total, "fmt", fmt, &mut failures);
        banner("lint: cargo clippy --workspace --all-targets -- -D warnings");
        let args = [
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ];
        note(
            &mut total,
            "clippy",
            Tally::one(check_cargo(&args)),
            &mut failures,
        );
        // The code behind vat_gdext's off-by-default features (dev diagnostics, the benchmark
        // class) is linted too.
        let features = [build::DEV, build::BENCH].join(",");
        banner(&format!(
            "lint: cargo clippy -p vat_gdext --all-targets --features {features} -- -D warnings"
        ));
        let args = [
            "clippy",
            "-p",
            "vat_gdext",
            "--all-targets",
            "--features",
            &features,
            "--",
            "-D",
            "warnings",
        ];
        note(
            &mut total,
            "clippy (dev, bench)",
            Tally::one(check_cargo(&args)),
            &mut failures,
        );
    }
    if tiers.contains(&Tier::Rust) {
        banner("rust: cargo test --workspace");
        note(&mut total, "cargo test", cargo_test()?, &mut failures);
    }
    let godot_tiers = tiers.contains(&Tier::Unit) || tiers.contains(&Tier::Render);
    if godot_tiers {
        banner("godot: provisioning, build, import");
        match prepare(&root, tiers.contains(&Tier::Render)) {
            Ok(session) => {
                if tiers.contains(&Tier::Unit) {
                    banner("unit: tests/unit (headless Godot)");
                    let mut t = Tally::one(harness_self_check(&session, &root));
                    if filter.is_none_or(|f| "xtask bake".contains(f)) {
                        t.add(Tally::one(crate::bake::self_check(&session, &root)));
                    }
                    t.add(run_tier(&session, &root, "unit", filter));
                    note(&mut total, "unit", t, &mut failures);
                }
            }
            Err(e) => {
                println!("FAIL build/import: {e}");
                note(&mut total, "build", Tally::one(false), &mut failures);
            }
        }
        if tiers.contains(&Tier::Render) && failures.iter().all(|f| f != "build") {
            banner("render: tests/render (Xvfb + lavapipe)");
            let t = match Session::render() {
                Ok(session) => {
                    let mut t = run_tier(&session, &root, "render", filter);
                    // The crowd shader must work in every renderer: the play tests again in
                    // Mobile and Compatibility (Forward+ ran everything above).
                    for (method, args) in RENDERER_PASSES {
                        if filter.is_some_and(|f| {
                            !RENDERER_PASS_TESTS
                                .split('|')
                                .any(|t| t.contains(f) || f.contains(t))
                        }) {
                            continue;
                        }
                        println!("xtask: render tier again with the {method} renderer");
                        t.add(run_tier_with(
                            &session,
                            &root,
                            "render",
                            Some(RENDERER_PASS_TESTS),
                            args,
                        ));
                    }
                    t
                }
                Err(e) if in_ci() => {
                    println!("FAIL render: rendering could not be provisioned and CI=true: {e}");
                    Tally::one(false)
                }
                Err(e) => {
                    println!("\n{}", "!".repeat(78));
                    println!("!! SKIPPING THE RENDER TESTS: rendering could not be provisioned:");
                    println!("!! {e}");
                    println!("!! (with CI=true this is a failure)");
                    println!("{}\n", "!".repeat(78));
                    Tally {
                        skipped: 1,
                        ..Tally::default()
                    }
                }
            };
            note(&mut total, "render", t, &mut failures);
        }
    }
    if tiers.contains(&Tier::Package) && filter.is_none_or(|f| "package".contains(f)) {
        banner("package: cargo xtask package, installed into an empty project");
        let t = match Session::plain() {
            Ok(session) => crate::package::install_check(&session),
            Err(e) => {
                println!("FAIL package: no Godot: {e}");
                Tally::one(false)
            }
        };
        note(&mut total, "package", t, &mut failures);
    }
    println!(
        "xtask: test finished in {:.0} s{}",
        start.elapsed().as_secs_f64(),
        if failures.is_empty() {
            String::new()
        } else {
            format!("; failing: {}", failures.join(", "))
        }
    );
    println!("{}", total.line());
    Ok(if total.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Prints a tier's result and adds it to the total.
fn note(total: &mut Tally, name: &str, t: Tally, failures: &mut Vec<String>) {
    println!("xtask: == {name}: {}", t.line());
    if t.failed > 0 {
        failures.push(name.to_string());
    }
    total.add(t);
}

/// The tests run again in the further renderers (the runner's "|"-separated filter): the crowd
/// play tests, the crowd frame (culling, levels of detail), the GPU-driven frame against the CPU
/// frame (in Compatibility both are the CPU frame) and every character's render equivalence.
const RENDERER_PASS_TESTS: &str =
    "test_play_render|test_each_render_equivalence|test_crowd_frame_render|test_gpu_frame_render";

/// Further renderers the play tests run in, after Forward+.
const RENDERER_PASSES: &[(&str, &[&str])] = &[
    ("Mobile", &["--rendering-method", "mobile"]),
    (
        "Compatibility",
        &[
            "--rendering-method",
            "gl_compatibility",
            "--rendering-driver",
            "opengl3",
        ],
    ),
];

fn banner(what: &str) {
    println!("\nxtask: ==== {what}");
}

fn check_cargo(args: &[&str]) -> bool {
    let mut cmd = cargo();
    cmd.args(args).current_dir(repo_root());
    match cmd.status() {
        Ok(s) => s.success(),
        Err(e) => {
            println!("xtask: cannot run cargo {}: {e}", args.join(" "));
            false
        }
    }
}

/// `cargo test --workspace`, counting the "test result:" lines of every test binary.
fn cargo_test() -> Result<Tally> {
    let mut cmd = cargo();
    cmd.args(["test", "--workspace"]).current_dir(repo_root());
    let out = run_with_timeout(&mut cmd, Duration::from_secs(3600), true)?;
    let mut t = Tally::default();
    for line in &out.lines {
        let Some(rest) = line.split("test result:").nth(1) else {
            continue;
        };
        for part in rest.split(';') {
            let mut words = part.split_whitespace().rev();
            let (Some(label), Some(n)) = (words.next(), words.next()) else {
                continue;
            };
            let n: u32 = n.parse().unwrap_or(0);
            match label {
                "passed" => t.passed += n,
                "failed" => t.failed += n,
                "ignored" => t.skipped += n,
                _ => {}
            }
        }
    }
    if !out.success() && t.failed == 0 {
        println!(
            "FAIL cargo test: {} (no failing test reported: build error?)",
            out.status_text()
        );
        t.failed += 1;
    }
    Ok(t)
}
