//! Small helpers shared by every command: paths, errors, running plain tools.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Every xtask error is a message for the person at the terminal.
pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Returns an error with a formatted message: `bail!("what {}", where)`.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => { return Err(format!($($arg)*).into()) };
}

/// The repository root: the nearest directory at or above the current one whose Cargo.toml is
/// this workspace (see `root::find_root`), so a binary shared by two checkouts through one
/// `CARGO_TARGET_DIR` works on the checkout it runs in. `main` calls [`find_repo_root`] first,
/// so a run outside any checkout stops there with its error; searched once per run.
pub fn repo_root() -> PathBuf {
    find_repo_root().unwrap_or_else(|e| panic!("{e}"))
}

/// [`repo_root`], or an error saying where the search started when no ancestor of the current
/// directory is a vat_crowd workspace (the path compiled into the binary is never used: it names
/// whichever checkout built it last).
pub fn find_repo_root() -> Result<PathBuf> {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    if let Some(root) = ROOT.get() {
        return Ok(root.clone());
    }
    let cwd = env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let root = crate::root::find_root(&cwd).ok_or_else(|| {
        format!(
            "no vat_crowd checkout at or above {}: no Cargo.toml there has a [workspace] whose \
             members include rust/xtask; run `cargo xtask` from inside the checkout to work on",
            cwd.display()
        )
    })?;
    Ok(ROOT.get_or_init(|| root).clone())
}

/// Provisioned software lives here: `$VAT_CROWD_CACHE`, else `$XDG_CACHE_HOME/vat_crowd`,
/// else `~/.cache/vat_crowd`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = env_nonempty("VAT_CROWD_CACHE") {
        return absolute(Path::new(&dir));
    }
    if let Some(dir) = env_nonempty("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("vat_crowd");
    }
    let home = env_nonempty("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".cache").join("vat_crowd")
}

/// An environment variable, treating "" like unset.
pub fn env_nonempty(name: &str) -> Option<String> {
    env::var(name).ok().filter(|v| !v.is_empty())
}

/// `CI=true` (or any value other than "false"/"0"): missing prerequisites become failures.
pub fn in_ci() -> bool {
    env_nonempty("CI").is_some_and(|v| v != "false" && v != "0")
}

/// `path` made absolute against the current directory (without resolving links).
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        env::current_dir().expect("current directory").join(path)
    }
}

/// True when this process runs as root (read from /proc, so no libc binding is needed).
pub fn is_root() -> bool {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|rest| rest.split_whitespace().nth(1))
        .is_some_and(|euid| euid == "0")
}

/// The first executable called `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs `cmd` with inherited output; fails unless it exits with status 0.
pub fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {}: {e}", describe(cmd)))?;
    if !status.success() {
        bail!("{} failed ({status})", describe(cmd));
    }
    Ok(())
}

/// Runs `cmd` and returns its stdout; fails (with stderr) unless it exits with status 0.
pub fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start {}: {e}", describe(cmd)))?;
    if !out.status.success() {
        bail!(
            "{} failed ({}):\n{}",
            describe(cmd),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The program and its first arguments, for messages.
pub fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args().take(6) {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    if cmd.get_args().len() > 6 {
        s.push_str(" ...");
    }
    s
}

/// Creates `dir` and its parents.
pub fn mkdirs(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()).into())
}

/// Size of everything under `path`, in bytes (links not followed).
pub fn tree_size(path: &Path) -> u64 {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    fs::read_dir(path)
        .map(|rd| rd.flatten().map(|e| tree_size(&e.path())).sum())
        .unwrap_or(0)
}

/// Bytes as "12.3 MB".
pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
