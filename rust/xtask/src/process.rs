//! Running a child under a timeout while echoing and keeping its output.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::util::{describe, Result};

/// How a child ended and what it printed (stdout and stderr interleaved as they arrived).
pub struct Outcome {
    /// The child's own exit status; `None` when it was killed on timeout.
    pub status: Option<ExitStatus>,
    /// The run hit its timeout and was killed.
    pub timed_out: bool,
    /// Every output line, without the newline.
    pub lines: Vec<String>,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl Outcome {
    /// Exited by itself with status 0.
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// The exit status for messages ("killed after timeout" when there is none).
    pub fn status_text(&self) -> String {
        match (self.timed_out, self.status) {
            (true, _) => format!("killed after {:.0} s timeout", self.elapsed.as_secs_f64()),
            (false, Some(s)) => s.to_string(),
            (false, None) => "no exit status".into(),
        }
    }
}

/// Runs `cmd` (stdin closed), kills it when `timeout` passes, and returns its output.
/// With `echo`, every line is also printed as it arrives.
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration, echo: bool) -> Result<Outcome> {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", describe(cmd)))?;
    let lines = Arc::new(Mutex::new(Vec::new()));
    let (done_tx, done_rx) = mpsc::channel();
    let out = child.stdout.take().expect("piped stdout");
    let err = child.stderr.take().expect("piped stderr");
    spawn_reader(out, false, echo, lines.clone(), done_tx.clone());
    spawn_reader(err, true, echo, lines.clone(), done_tx);

    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() >= timeout {
            timed_out = true;
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    // A grandchild could keep a pipe open forever: wait a little for the readers, not for ever.
    for _ in 0..2 {
        let _ = done_rx.recv_timeout(Duration::from_secs(5));
    }
    let lines = std::mem::take(&mut *lines.lock().expect("output lock"));
    Ok(Outcome {
        status,
        timed_out,
        lines,
        elapsed: start.elapsed(),
    })
}

fn spawn_reader(
    stream: impl Read + Send + 'static,
    is_err: bool,
    echo: bool,
    lines: Arc<Mutex<Vec<String>>>,
    done: mpsc::Sender<()>,
) {
    thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&buf)
                .trim_end_matches(['\n', '\r'])
                .to_string();
            if echo {
                if is_err {
                    let _ = writeln!(std::io::stderr(), "{line}");
                } else {
                    let _ = writeln!(std::io::stdout(), "{line}");
                }
            }
            lines.lock().expect("output lock").push(line);
        }
        let _ = done.send(());
    });
}
