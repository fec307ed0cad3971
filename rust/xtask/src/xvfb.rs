//! A private Xvfb on a free display, stopped when dropped.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::bail;
use crate::util::{self, Result};

/// A running X server that only this process uses.
pub struct Xvfb {
    child: Child,
    log: PathBuf,
    /// The value for `DISPLAY`, e.g. ":99".
    pub display: String,
}

impl Xvfb {
    /// Starts Xvfb (installing it with apt first when running as root and it is missing).
    /// The server picks a free display itself (`-displayfd`), so parallel runs do not collide.
    pub fn start(log: PathBuf) -> Result<Xvfb> {
        let exe = match util::which("Xvfb") {
            Some(exe) => exe,
            None => install_xvfb()?,
        };
        let log_file = File::create(&log)?;
        let mut child = Command::new(&exe)
            .args(["-displayfd", "1", "-screen", "0", "1280x1024x24"])
            .args(["-nolisten", "tcp", "-noreset"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if !line.trim().is_empty() => Ok(Xvfb {
                child,
                log,
                display: format!(":{}", line.trim()),
            }),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                bail!(
                    "Xvfb did not start (log {}):\n{}",
                    log.display(),
                    text.trim_end()
                )
            }
        }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// As root on a Debian-based system, `apt-get install xvfb`; otherwise explain what is needed.
fn install_xvfb() -> Result<PathBuf> {
    if !util::is_root() || util::which("apt-get").is_none() {
        bail!(
            "Xvfb is not installed and this user cannot install it: \
             run `sudo apt-get install -y xvfb xauth` (or give the session a DISPLAY)"
        );
    }
    println!("xtask: installing xvfb with apt-get (running as root) ...");
    util::run(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "xvfb", "xauth"])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
    .or_else(|_| {
        util::run(Command::new("apt-get").arg("update"))?;
        util::run(
            Command::new("apt-get")
                .args(["install", "-y", "--no-install-recommends", "xvfb", "xauth"])
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )
    })?;
    util::which("Xvfb").ok_or_else(|| "apt-get installed xvfb but Xvfb is not on PATH".into())
}
