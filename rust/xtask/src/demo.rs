//! `cargo xtask demo`: the release build of godot_project, in a window when there is a display,
//! else offscreen under a private Xvfb, saving target/demo/demo.png.

use std::fs;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use crate::bail;
use crate::build::{self, target_dir};
use crate::godot::{problems, Session};
use crate::util::{self, env_nonempty, mkdirs, repo_root, Result};

/// Frames the offscreen run renders unless `--frames` says otherwise. lavapipe needs minutes
/// per frame for 100,000 soldiers (about 440 million vertices with shadows) on two cores, so the
/// default is a handful: enough for the statistics and the picture.
const DEFAULT_FRAMES: u32 = 3;

/// Runs the demo; `frames` limits the run (always set offscreen), `user_args` go to the demo.
pub fn demo(frames: Option<u32>, user_args: &[String]) -> Result<ExitCode> {
    let root = repo_root();
    let project = root.join("godot_project");
    let plain = Session::plain()?;
    build::build(true, &[], Some(&plain))?;
    plain.import(&project)?;
    let mut args = vec!["--path".to_string(), project.display().to_string()];

    if env_nonempty("DISPLAY").is_some() || env_nonempty("WAYLAND_DISPLAY").is_some() {
        let windowed = Session::windowed()?;
        println!(
            "xtask: starting the demo in a window (Godot {})",
            windowed.godot.version
        );
        args.push("--".into());
        if let Some(n) = frames {
            args.extend(["--frames".into(), n.to_string()]);
        }
        args.extend(user_args.iter().cloned());
        // Interactive: the user closes the window, so no timeout here.
        let status = windowed.command(&args).status()?;
        return Ok(if status.success() {
            ExitCode::SUCCESS
        } else {
            println!("xtask: the demo exited with {status}");
            ExitCode::FAILURE
        });
    }

    let session = Session::render()?;
    let out_dir = target_dir().join("demo");
    mkdirs(&out_dir)?;
    let png = out_dir.join("demo.png");
    let frames = frames.unwrap_or(DEFAULT_FRAMES);
    println!(
        "xtask: no display: rendering {frames} demo frames offscreen (Xvfb + lavapipe) into {}",
        png.display()
    );
    args.extend(["--resolution".into(), "1280x720".into(), "--".into()]);
    args.extend(["--frames".into(), frames.to_string()]);
    args.extend(["--screenshot".into(), png.display().to_string()]);
    args.extend(user_args.iter().cloned());
    let started = SystemTime::now();
    let timeout = env_nonempty("VAT_CROWD_DEMO_TIMEOUT")
        .and_then(|v| v.parse().ok())
        .unwrap_or(2400);
    let out = session.run(&args, Duration::from_secs(timeout))?;
    // A leak at exit is the demo's to fix, but the run itself worked: warn, do not fail.
    let (warnings, problems): (Vec<String>, Vec<String>) = problems(&out, true)
        .into_iter()
        .partition(|p| p.contains("ObjectDB instances leaked"));
    let fresh = fs::metadata(&png)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t >= started);
    println!("\nxtask: demo summary:");
    for line in out.lines.iter().filter(|l| l.starts_with("DEMO")) {
        println!("  {line}");
    }
    for w in &warnings {
        println!("xtask: warning: {w}");
    }
    if out.timed_out {
        println!(
            "xtask: hint: software rendering is slow; try `cargo xtask demo --frames 10 -- --actors 2000`, \
             or raise $VAT_CROWD_DEMO_TIMEOUT (now {timeout} s)"
        );
    }
    if !problems.is_empty() {
        bail!("the demo run failed: {}", problems.join("; "));
    }
    if !fresh {
        bail!("the demo did not write {}", png.display());
    }
    println!(
        "xtask: wrote {} ({})",
        png.display(),
        util::mb(fs::metadata(&png)?.len())
    );
    Ok(ExitCode::SUCCESS)
}
