//! Running Godot: headless, or rendering under a private Xvfb with lavapipe; and checking its
//! log for the failures Godot does not turn into an exit status.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::process::{run_with_timeout, Outcome};
use crate::provision::{find_godot, Godot};
use crate::util::{env_nonempty, Result};
use crate::xvfb::Xvfb;

/// Log text that fails a run whatever the exit status says.
const FATAL_PATTERNS: &[&str] = &[
    "SCRIPT ERROR",
    // A Rust panic caught by gdext ("ERROR: [panic file:line] ..."): never expected, even for
    // bad input, which gets a clear error instead.
    "[panic ",
    "Can't open dynamic library",
    "ObjectDB instances leaked at exit",
    // The rendering device's and server's leak reports at exit ("1 RID of type \"Compute\" was
    // leaked.", "2 RID allocations of type ... were leaked at exit."): the GPU frame's buffers,
    // pipelines and indirect command buffers must all be freed with their crowds.
    "was leaked",
    "were leaked",
];

/// A Godot ready to run, with its X server when rendering.
pub struct Session {
    /// The executable and where it came from.
    pub godot: Godot,
    xvfb: Option<Xvfb>,
    env: Vec<(String, String)>,
}

impl Session {
    /// Headless runs.
    pub fn plain() -> Result<Session> {
        Session::headless(false)
    }

    /// Headless runs; with `render_libs`, the rendering libraries are provisioned now too
    /// (one download when a later step renders).
    pub fn headless(render_libs: bool) -> Result<Session> {
        Ok(Session {
            godot: find_godot(render_libs)?,
            xvfb: None,
            env: Vec::new(),
        })
    }

    /// Windowed runs on the user's own display: the provisioned root's Vulkan loader and Mesa
    /// drivers are added to what the system offers (its ICD files come after the system's).
    pub fn windowed() -> Result<Session> {
        let godot = find_godot(true)?;
        let mut env = Vec::new();
        if let Some(root) = &godot.root {
            let system =
                env_nonempty("XDG_DATA_DIRS").unwrap_or("/usr/local/share:/usr/share".into());
            let data = format!("{system}:{}", root.join("usr/share").display());
            env.push(("XDG_DATA_DIRS".to_string(), data));
        }
        Ok(Session {
            godot,
            xvfb: None,
            env,
        })
    }

    /// Rendering runs: rendering libraries provisioned and a private Xvfb started.
    pub fn render() -> Result<Session> {
        let godot = find_godot(true)?;
        let log = std::env::temp_dir().join(format!("vat_crowd-xvfb-{}.log", std::process::id()));
        let xvfb = Xvfb::start(log)?;
        Ok(Session {
            godot,
            xvfb: Some(xvfb),
            env: Vec::new(),
        })
    }

    /// The same session with `key=value` in Godot's environment.
    pub fn with_env(mut self, key: &str, value: &str) -> Session {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// True when this session renders through its own Xvfb.
    pub fn renders(&self) -> bool {
        self.xvfb.is_some()
    }

    /// `DISPLAY` plus what the renderer needs, as `NAME=value` words (for status lines).
    pub fn env_words(&self) -> String {
        self.env()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn env(&self) -> Vec<(String, String)> {
        let mut env = self.env.clone();
        if let Some(x) = &self.xvfb {
            env.push(("DISPLAY".to_string(), x.display.clone()));
            env.extend(self.godot.render_env());
        }
        env
    }

    /// A Godot command with `args`; rendering sessions add `--rendering-driver vulkan` (and
    /// the dummy audio driver: Xvfb machines have no sound card) first, so that `args` may
    /// still choose otherwise.
    pub fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(&self.godot.exe);
        cmd.envs(self.env());
        if self.renders() {
            // $VAT_CROWD_RENDER_DRIVER=opengl3 (or opengl3_es) tries the Compatibility renderer.
            let driver = env_nonempty("VAT_CROWD_RENDER_DRIVER").unwrap_or("vulkan".into());
            cmd.args(["--rendering-driver", &driver, "--audio-driver", "Dummy"]);
        }
        cmd.args(args);
        cmd
    }

    /// Runs Godot with `args` under `timeout`, echoing its output.
    pub fn run(&self, args: &[String], timeout: Duration) -> Result<Outcome> {
        run_with_timeout(&mut self.command(args), timeout, true)
    }

    /// `godot --headless --path P --import`, checked.
    pub fn import(&self, project: &Path) -> Result<()> {
        println!("xtask: importing {}", project.display());
        let args = vec![
            "--headless".to_string(),
            "--path".into(),
            project.display().to_string(),
            "--import".into(),
        ];
        let out = run_with_timeout(&mut self.command(&args), Duration::from_secs(600), false)?;
        // Script errors here (a test script that does not parse yet) show again, attributed,
        // when the tests run; only a failed import or a library that does not load stop here.
        let problems: Vec<String> = problems(&out, false)
            .into_iter()
            .filter(|p| !p.contains("SCRIPT ERROR"))
            .collect();
        if !problems.is_empty() {
            for l in &out.lines {
                println!("{l}");
            }
            return Err(format!(
                "import of {} failed: {}",
                project.display(),
                problems.join("; ")
            )
            .into());
        }
        Ok(())
    }
}

/// Why a Godot run failed: exit status, timeout, fatal log text, and for rendering runs a
/// missing rendering device line. Empty when it passed.
pub fn problems(out: &Outcome, render: bool) -> Vec<String> {
    let mut found = Vec::new();
    if !out.success() {
        found.push(format!("Godot exited with {}", out.status_text()));
    }
    for pattern in FATAL_PATTERNS {
        // Quote Godot's own line rather than a runner verdict that repeats it.
        let mut hits = out.lines.iter().filter(|l| l.contains(pattern));
        let first = hits
            .clone()
            .find(|l| !l.starts_with("FAIL "))
            .or(hits.next());
        if let Some(line) = first {
            found.push(format!("log has \"{pattern}\": {}", line.trim()));
        }
    }
    if render && !out.lines.iter().any(|l| is_device_line(l)) {
        found.push("no rendering device line in the log (did it really render?)".into());
    }
    found
}

/// Godot's "Vulkan 1.4.x - Forward+ - Using Device #0: ..." (or "OpenGL API ... - Using
/// Device: ...") line, or lavapipe's name.
fn is_device_line(line: &str) -> bool {
    line.contains("llvmpipe")
        || ((line.contains("Vulkan") || line.contains("OpenGL")) && line.contains("Using Device"))
}
