//! `cargo xtask ...`: provisioning Godot, building and assembling the addon, tests, benchmarks
//! and the demo. Run `cargo xtask help` for the commands.

mod apt;
mod bake;
mod bench;
mod bench_readme;
mod build;
mod demo;
mod elf;
mod godot;
mod lod;
mod package;
mod process;
mod provision;
mod root;
mod tally;
mod test;
mod test_godot;
mod util;
mod xvfb;
mod zip;

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::godot::Session;
use crate::test::Tier;
use crate::util::Result;

const USAGE: &str = "\
usage: cargo xtask <command>

  build [--release]            build the extension into addons/vat_crowd/bin/ and assemble the addon
  test [--tier T]... [--filter S]
                               fmt + clippy, cargo test, Godot unit tests (headless), render tests
                               (T: lint, rust, unit, render, package; default all; S narrows the
                               Godot tests)
  demo [--frames N] [-- ARGS]  run the demo: in a window with a DISPLAY, else offscreen, writing
                               target/demo/demo.png; ARGS go to the demo (e.g. --actors 1000)
  bench bake|update|calls|frame [--quick] [--full]
                               run a benchmark under the renderer and print a table (--full:
                               frame also at 100,000 actors)
  bench readme                 write README.md's benchmark tables from target/bench/*.json
  package                      write target/dist/vat_crowd-VERSION.zip: the addon as users install
                               it (release library, no benchmark class)
  bake [--debug] FILE.glb [OUT.res]
                               bake a scene file into a VertexAnimation resource (--debug: with
                               the debug build of the extension instead of a release build)
  lod [--release] FILE.glb --out DIR
                               build a character's LOD chain and write DIR/lod_report.json plus a
                               silhouette PNG of each level's worst view
  godot [--render] [--timeout S] -- ARGS...
                               run the provisioned Godot (--render: private Xvfb + lavapipe)
  provision [--render]         provision Godot (and the rendering libraries) and say where it is

environment: GODOT (use this Godot), VAT_CROWD_CACHE (provisioned software), CI=true (render tests
must run), VAT_CROWD_TIER_TIMEOUT (seconds per Godot test tier, default 600)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match dispatch(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(args: &[String]) -> Result<ExitCode> {
    let Some((command, rest)) = args.split_first() else {
        print!("{USAGE}");
        return Ok(ExitCode::FAILURE);
    };
    if !matches!(command.as_str(), "help" | "--help" | "-h") {
        // Every command works on a checkout: find it before doing anything.
        util::find_repo_root()?;
    }
    match command.as_str() {
        "build" => {
            let release = flags(rest, &["--release"])?.contains(&"--release");
            let session = Session::plain()?;
            build::build(release, build::default_features(release), Some(&session))?;
            Ok(ExitCode::SUCCESS)
        }
        "test" => cmd_test(rest),
        "demo" => cmd_demo(rest),
        "bench" => match rest {
            [which] if which == "readme" => {
                bench_readme::write_readme().map(|()| ExitCode::SUCCESS)
            }
            [which, opts @ ..] => {
                let set = flags(opts, &["--quick", "--full"])?;
                bench::bench(which, set.contains(&"--quick"), set.contains(&"--full"))
            }
            [] => Err("bench: say which: `bench bake`, `update`, `calls` or `frame`".into()),
        },
        "bake" => {
            let debug = rest.first().is_some_and(|a| a == "--debug");
            match &rest[usize::from(debug)..] {
                [file] => bake::bake(Path::new(file), None, !debug),
                [file, out] => bake::bake(Path::new(file), Some(Path::new(out)), !debug),
                _ => Err("usage: cargo xtask bake [--debug] FILE.glb [OUT.res]".into()),
            }
        }
        "lod" => cmd_lod(rest),
        "package" => {
            flags(rest, &[])?;
            package::package()?;
            Ok(ExitCode::SUCCESS)
        }
        "godot" => cmd_godot(rest),
        "provision" => cmd_provision(rest),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => Err(format!("unknown command {other:?}\n{USAGE}").into()),
    }
}

/// `lod [--release] FILE --out DIR`.
fn cmd_lod(args: &[String]) -> Result<ExitCode> {
    let usage = "usage: cargo xtask lod [--release] FILE.glb --out DIR";
    let mut release = false;
    let mut file = None;
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--release" => release = true,
            "--out" => out = Some(value(&mut it, "--out")?),
            _ if file.is_none() && !a.starts_with("--") => file = Some(a),
            _ => return Err(format!("unexpected argument {a:?}; {usage}").into()),
        }
    }
    match (file, out) {
        (Some(f), Some(o)) => lod::lod(Path::new(f), Path::new(o), release),
        _ => Err(usage.into()),
    }
}

/// Checks that `args` only holds flags from `known` and returns them.
fn flags<'a>(args: &'a [String], known: &[&str]) -> Result<Vec<&'a str>> {
    args.iter()
        .map(|a| {
            if known.contains(&a.as_str()) {
                Ok(a.as_str())
            } else {
                Err(format!("unknown option {a:?} (expected one of {known:?})").into())
            }
        })
        .collect()
}

/// Splits `args` at the first `--` into (options, pass-through).
fn split_passthrough(args: &[String]) -> (&[String], &[String]) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[]),
    }
}

/// The value after option `name`.
fn value<'a>(it: &mut impl Iterator<Item = &'a String>, name: &str) -> Result<&'a String> {
    it.next()
        .ok_or_else(|| format!("{name} needs a value").into())
}

fn cmd_test(args: &[String]) -> Result<ExitCode> {
    let mut tiers = Vec::new();
    let mut filter = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--tier" => {
                let v = value(&mut it, "--tier")?;
                tiers.push(Tier::parse(v).ok_or_else(|| format!("unknown tier {v:?}"))?);
            }
            "--filter" => filter = Some(value(&mut it, "--filter")?.as_str()),
            other => return Err(format!("test: unknown option {other:?}").into()),
        }
    }
    if tiers.is_empty() {
        tiers = Tier::ALL.to_vec();
    }
    test::test(&tiers, filter)
}

fn cmd_demo(args: &[String]) -> Result<ExitCode> {
    let (opts, pass) = split_passthrough(args);
    let mut frames = None;
    let mut it = opts.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--frames" => {
                let v = value(&mut it, "--frames")?;
                frames = Some(
                    v.parse()
                        .map_err(|_| format!("--frames: not a number: {v}"))?,
                );
            }
            other => {
                return Err(
                    format!("demo: unknown option {other:?} (demo arguments go after --)").into(),
                )
            }
        }
    }
    demo::demo(frames, pass)
}

fn cmd_godot(args: &[String]) -> Result<ExitCode> {
    let (opts, pass) = split_passthrough(args);
    let mut render = false;
    let mut timeout = 3600;
    let mut it = opts.iter();
    while let Some(o) = it.next() {
        match o.as_str() {
            "--render" => render = true,
            "--timeout" => {
                let v = value(&mut it, "--timeout")?;
                timeout = v
                    .parse()
                    .map_err(|_| format!("--timeout: not seconds: {v}"))?;
            }
            other => {
                return Err(
                    format!("godot: unknown option {other:?} (Godot's own go after --)").into(),
                )
            }
        }
    }
    let session = if render {
        Session::render()?
    } else {
        Session::plain()?
    };
    let out = session.run(pass, Duration::from_secs(timeout))?;
    Ok(match out.status.and_then(|s| s.code()) {
        Some(code) => ExitCode::from(code.clamp(0, 255) as u8),
        None => {
            eprintln!("xtask: Godot {}", out.status_text());
            ExitCode::FAILURE
        }
    })
}

fn cmd_provision(args: &[String]) -> Result<ExitCode> {
    let render = flags(args, &["--render"])?.contains(&"--render");
    let session = if render {
        Session::render()?
    } else {
        Session::plain()?
    };
    println!(
        "godot: {} ({})",
        session.godot.exe.display(),
        session.godot.version
    );
    if render {
        println!(
            "render env (DISPLAY: a private Xvfb per run): {}",
            session.env_words()
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    /// No two xtask modules import each other, directly or through others: shared helpers
    /// (such as `tally::Tally`) live in modules of their own.
    #[test]
    fn no_module_cycle() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            let mut deps: Vec<String> = text
                .split("crate::")
                .skip(1)
                .map(|rest| {
                    rest.chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                // `crate::bail!` is a macro at the crate root, not a module.
                .filter(|d| !d.is_empty() && d != "bail" && *d != name)
                .collect();
            deps.sort();
            deps.dedup();
            graph.insert(name, deps);
        }
        assert!(graph.contains_key("tally"), "{graph:?}");
        // Depth-first search, reporting the first cycle found as a path.
        fn visit(
            m: &str,
            graph: &BTreeMap<String, Vec<String>>,
            stack: &mut Vec<String>,
            done: &mut Vec<String>,
        ) {
            if done.iter().any(|d| d == m) {
                return;
            }
            if let Some(i) = stack.iter().position(|s| s == m) {
                panic!("module cycle: {} -> {m}", stack[i..].join(" -> "));
            }
            stack.push(m.to_string());
            for d in graph.get(m).into_iter().flatten() {
                visit(d, graph, stack, done);
            }
            stack.pop();
            done.push(m.to_string());
        }
        let mut done = Vec::new();
        for m in graph.keys() {
            if m != "main" {
                visit(m, &graph, &mut Vec::new(), &mut done);
            }
        }
    }
}
