//! Finding Godot 4.4+, or provisioning Debian sid's Godot (and lavapipe for rendering) into a
//! private root in the cache. The sid binaries need sid's glibc, so a patched copy of the Godot
//! executable uses the root's dynamic loader and libraries.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::apt::{Apt, Pkg};
use crate::bail;
use crate::process::run_with_timeout;
use crate::util::{self, cache_dir, env_nonempty, mb, mkdirs, Result};

/// Packages that sid's godot pulls in but that a Godot run never uses.
const EXCLUDED: &[&str] = &[
    "fonts-",
    "debconf",
    "cdebconf",
    "isa-support",
    "libdebian-installer",
    "libnewt",
    "libslang",
    "libtextwrap",
];
/// Mesa's software Vulkan (lavapipe) and GL, for `--render`.
const RENDER_PKGS: &[&str] = &[
    "libgl1",
    "libglx-mesa0",
    "libgl1-mesa-dri",
    "mesa-vulkan-drivers",
    "libvulkan1",
    "libegl1",
    "libegl-mesa0",
    "libglvnd0",
    "libgles2",
];
const LIBDIR: &str = "usr/lib/x86_64-linux-gnu";
const MIN_MINOR: u32 = 4;

/// A Godot executable this xtask may run.
pub struct Godot {
    /// The executable.
    pub exe: PathBuf,
    /// What `--version` printed.
    pub version: String,
    /// The sid root the executable runs in, when it was provisioned.
    pub root: Option<PathBuf>,
}

impl Godot {
    /// Environment for `--render` beyond `DISPLAY`: with a provisioned root, point the Vulkan
    /// loader at lavapipe and glvnd/Mesa at the root's drivers.
    pub fn render_env(&self) -> Vec<(String, String)> {
        let Some(root) = &self.root else {
            return Vec::new();
        };
        let icd = root.join("usr/share/vulkan/icd.d/lvp_icd.json");
        let lib = root.join(LIBDIR);
        let icd = icd.display().to_string();
        vec![
            ("VK_DRIVER_FILES".into(), icd.clone()),
            ("VK_ICD_FILENAMES".into(), icd),
            (
                "__EGL_VENDOR_LIBRARY_DIRS".into(),
                root.join("usr/share/glvnd/egl_vendor.d")
                    .display()
                    .to_string(),
            ),
            (
                "LIBGL_DRIVERS_PATH".into(),
                lib.join("dri").display().to_string(),
            ),
            (
                "GBM_BACKENDS_PATH".into(),
                lib.join("gbm").display().to_string(),
            ),
        ]
    }
}

/// `$GODOT`, else a `godot` 4.4+ on PATH, else the provisioned one (provisioning it on first
/// use). With `render`, the provisioned root also gets the rendering libraries.
pub fn find_godot(render: bool) -> Result<Godot> {
    if let Some(path) = env_nonempty("GODOT") {
        let exe = util::absolute(Path::new(&path));
        let version = godot_version(&exe)?;
        if !version_ok(&version) {
            bail!("GODOT={path} is Godot {version}; vat_crowd needs 4.{MIN_MINOR} or later");
        }
        return Ok(Godot {
            exe,
            version,
            root: None,
        });
    }
    if let Some(exe) = util::which("godot") {
        match godot_version(&exe) {
            Ok(v) if version_ok(&v) => {
                return Ok(Godot {
                    exe,
                    version: v,
                    root: None,
                })
            }
            Ok(v) => println!(
                "xtask: ignoring {} (Godot {v}, need 4.{MIN_MINOR}+)",
                exe.display()
            ),
            Err(e) => println!("xtask: ignoring {}: {e}", exe.display()),
        }
    }
    provisioned(render)
}

fn provisioned(render: bool) -> Result<Godot> {
    let cache = cache_dir();
    mkdirs(&cache)?;
    let lock = File::create(cache.join(".lock"))?;
    if lock.try_lock().is_err() {
        println!(
            "xtask: waiting for another xtask provisioning {} ...",
            cache.display()
        );
        lock.lock()?;
    }
    let root = cache.join("sid-root");
    let exe = cache.join("godot/godot");
    let godot_marker = cache.join("godot/.complete");
    let render_marker = root.join(".render-complete");
    let have_godot = godot_marker.exists() && exe.exists();
    let have_render = render_marker.exists();
    if have_godot && (!render || have_render) {
        let version = fs::read_to_string(&godot_marker)?.trim().to_string();
        println!("xtask: using cached Godot {version} ({})", exe.display());
        return Ok(Godot {
            exe,
            version,
            root: Some(root),
        });
    }

    let start = Instant::now();
    println!(
        "xtask: provisioning Godot{} from Debian sid into {} (first run only; takes minutes)",
        if render { " and lavapipe" } else { "" },
        cache.display()
    );
    let mut wanted = vec!["godot"];
    if render {
        wanted.extend_from_slice(RENDER_PKGS);
    }
    let own_patchelf = util::which("patchelf").is_none();
    if own_patchelf {
        wanted.push("patchelf");
    }
    let apt = Apt::new(&cache.join("apt"))?;
    let downloaded = install_into_root(&apt, &root, &wanted)?;
    let patchelf = Patchelf::new(&root, own_patchelf);
    fix_library_paths(&patchelf, &root)?;

    mkdirs(&cache.join("godot"))?;
    let tmp = cache.join("godot/godot.tmp");
    fs::copy(root.join("usr/bin/godot"), &tmp)?;
    patchelf.run(&[
        "--set-interpreter",
        &root
            .join("usr/lib64/ld-linux-x86-64.so.2")
            .display()
            .to_string(),
        "--force-rpath",
        "--set-rpath",
        &format!("{0}/{LIBDIR}:{0}/{LIBDIR}/pulseaudio", root.display()),
        &tmp.display().to_string(),
    ])?;
    fs::rename(&tmp, &exe)?;
    let version = godot_version(&exe)?;
    fs::write(&godot_marker, format!("{version}\n"))?;
    if render {
        fs::write(&render_marker, "")?;
    }
    println!(
        "xtask: provisioned Godot {version} in {:.0} s ({} downloaded, root {})",
        start.elapsed().as_secs_f64(),
        mb(downloaded),
        mb(util::tree_size(&root))
    );
    Ok(Godot {
        exe,
        version,
        root: Some(root),
    })
}

/// Resolves `wanted`, downloads what the root lacks and unpacks it there.
/// Returns the bytes downloaded.
fn install_into_root(apt: &Apt, root: &Path, wanted: &[&str]) -> Result<u64> {
    let mut fresh_lists = false;
    if !apt.has_lists() {
        apt.update()?;
        fresh_lists = true;
    }
    let record = root.join(".vat_installed");
    let installed = fs::read_to_string(&record).unwrap_or_default();
    let missing = |pkgs: Vec<Pkg>| -> Vec<Pkg> {
        pkgs.into_iter()
            .filter(|p| !EXCLUDED.iter().any(|x| p.name.starts_with(x)))
            .filter(|p| !installed.lines().any(|l| l == p.name))
            .collect()
    };
    let debs_dir = root.with_file_name("debs");
    let mut todo = missing(apt.resolve(wanted)?);
    let debs = match apt.download(&todo, &debs_dir) {
        Ok(d) => d,
        Err(e) if !fresh_lists => {
            // Old lists name versions the archive no longer has: refresh once.
            println!("xtask: download failed ({e}); refreshing package lists");
            apt.update()?;
            todo = missing(apt.resolve(wanted)?);
            apt.download(&todo, &debs_dir)?
        }
        Err(e) => return Err(e),
    };
    let bytes: u64 = debs.iter().map(|d| util::tree_size(d)).sum();
    println!(
        "xtask: unpacking {} packages ({}) ...",
        debs.len(),
        mb(bytes)
    );
    mkdirs(root)?;
    let mut names = installed.clone();
    for (deb, pkg) in debs.iter().zip(&todo) {
        util::run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(root))?;
        names.push_str(&pkg.name);
        names.push('\n');
        fs::remove_file(deb)?;
    }
    fs::write(&record, names)?;
    Ok(bytes)
}

/// patchelf from the system, or the root's own one run through the root's loader.
struct Patchelf {
    cmd: Vec<String>,
}

impl Patchelf {
    fn new(root: &Path, own: bool) -> Patchelf {
        let cmd = if own {
            vec![
                root.join("usr/lib64/ld-linux-x86-64.so.2")
                    .display()
                    .to_string(),
                "--library-path".into(),
                root.join(LIBDIR).display().to_string(),
                root.join("usr/bin/patchelf").display().to_string(),
            ]
        } else {
            vec!["patchelf".into()]
        };
        Patchelf { cmd }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.cmd[0]);
        cmd.args(&self.cmd[1..]).args(args);
        cmd
    }

    fn run(&self, args: &[&str]) -> Result<()> {
        util::run(&mut self.command(args))
    }
}

/// Libraries with their own RPATH/RUNPATH (libpulse, libLLVM, ...) ignore the executable's
/// RPATH for their dependencies: point their absolute entries into the root, and add the
/// root's library folder so that nothing falls through to the host's older libraries.
fn fix_library_paths(patchelf: &Patchelf, root: &Path) -> Result<()> {
    let libdir = root.join(LIBDIR).display().to_string();
    let mut files = Vec::new();
    collect_elf_files(&root.join(LIBDIR), &mut files);
    let mut fixed = 0;
    for file in files {
        let f = file.display().to_string();
        let Ok(current) = util::output(&mut patchelf.command(&["--print-rpath", &f])) else {
            continue;
        };
        let current = current.trim();
        if current.is_empty() {
            continue;
        }
        let mut entries: Vec<String> = current
            .split(':')
            .filter(|e| !e.is_empty())
            .map(|e| {
                if e.starts_with('/') && !e.starts_with(&root.display().to_string()) {
                    format!("{}{e}", root.display())
                } else if e.starts_with("$ORIGIN/..") && !current.contains("$ORIGIN:") {
                    format!("$ORIGIN:{e}")
                } else {
                    e.to_string()
                }
            })
            .collect();
        if !entries.contains(&libdir) {
            entries.push(libdir.clone());
        }
        let wanted = entries.join(":");
        if wanted != current {
            patchelf.run(&["--set-rpath", &wanted, &f])?;
            fixed += 1;
        }
    }
    println!("xtask: pointed {fixed} libraries' search paths into the root");
    Ok(())
}

fn collect_elf_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for entry in rd.flatten() {
        let path = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            collect_elf_files(&path, out);
        } else if ft.is_file() && is_elf(&path) {
            out.push(path);
        }
    }
}

fn is_elf(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == b"\x7fELF"
}

/// What `godot --version` prints (its last line), run under a timeout.
pub fn godot_version(exe: &Path) -> Result<String> {
    let out = run_with_timeout(
        Command::new(exe).arg("--version"),
        Duration::from_secs(60),
        false,
    )?;
    if !out.success() {
        bail!(
            "{} --version failed ({}):\n{}",
            exe.display(),
            out.status_text(),
            out.lines.join("\n")
        );
    }
    out.lines
        .iter()
        .rev()
        .find(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|l| l.trim().to_string())
        .ok_or_else(|| format!("{} --version printed no version", exe.display()).into())
}

/// "4.6.3.stable..." is at least 4.4.
fn version_ok(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => major > 4 || (major == 4 && minor >= MIN_MINOR),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::version_ok;

    #[test]
    fn versions() {
        assert!(version_ok("4.6.3.stable.debian4.6.3+ds-3"));
        assert!(version_ok("4.4.stable.official"));
        assert!(!version_ok("4.3.1.stable"));
        assert!(!version_ok("3.5.2.stable"));
        assert!(version_ok("5.0.beta"));
        assert!(!version_ok("garbage"));
    }
}
