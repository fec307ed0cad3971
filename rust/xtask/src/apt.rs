//! A private apt that reads Debian sid into the cache, without root and without touching the
//! system's apt state: every directory apt uses is redirected through `APT_CONFIG`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bail;
use crate::util::{self, env_nonempty, mkdirs, Result};

/// The archive that serves sid; `$VAT_CROWD_DEBIAN_MIRROR` replaces it (e.g. a snapshot URL).
const DEFAULT_MIRROR: &str = "http://deb.debian.org/debian";
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

/// One package version chosen by apt's resolver.
#[derive(Clone, Debug)]
pub struct Pkg {
    /// Package name.
    pub name: String,
    /// Exact version, so the download matches the resolution.
    pub version: String,
}

/// apt with its configuration, lists, cache and state under one folder.
pub struct Apt {
    dir: PathBuf,
}

impl Apt {
    /// Prepares the private configuration under `dir` (cheap; downloads nothing).
    pub fn new(dir: &Path) -> Result<Apt> {
        if util::which("apt-get").is_none() || util::which("dpkg-deb").is_none() {
            bail!(
                "provisioning Godot needs apt-get and dpkg-deb (a Debian-based system); \
                 elsewhere install Godot 4.4+ yourself and set GODOT=/path/to/godot"
            );
        }
        if !Path::new(KEYRING).exists() {
            bail!("{KEYRING} is missing: install the debian-archive-keyring package or set GODOT");
        }
        let apt = Apt {
            dir: dir.to_path_buf(),
        };
        for sub in [
            "etc/apt.conf.d",
            "etc/preferences.d",
            "etc/sources.list.d",
            "lists/partial",
            "cache/archives/partial",
            "state",
            "log",
        ] {
            mkdirs(&dir.join(sub))?;
        }
        let status = dir.join("state/status");
        if !status.exists() {
            // An empty dpkg status: the resolver treats nothing as installed.
            fs::write(&status, "")?;
        }
        let mirror = env_nonempty("VAT_CROWD_DEBIAN_MIRROR").unwrap_or(DEFAULT_MIRROR.into());
        // Check-Valid-Until: a mirror frozen in time (as some build farms use) serves an expired
        // Release file; its signature is still checked.
        let sources = format!(
            "Types: deb\nURIs: {mirror}\nSuites: sid\nComponents: main\nSigned-By: {KEYRING}\n\
             Check-Valid-Until: no\n"
        );
        fs::write(dir.join("etc/sources.list.d/sid.sources"), sources)?;
        fs::write(dir.join("apt.conf"), apt.config())?;
        Ok(apt)
    }

    fn config(&self) -> String {
        let d = self.dir.display();
        let sandbox = if util::is_root() {
            // Downloads would otherwise run as `_apt`, who cannot write into root's home.
            "APT::Sandbox::User \"root\";\n"
        } else {
            ""
        };
        format!(
            "Dir::Etc::Parts \"{d}/etc/apt.conf.d\";\n\
             Dir::Etc::Main \"/dev/null\";\n\
             Dir::Etc::SourceList \"/dev/null\";\n\
             Dir::Etc::SourceParts \"{d}/etc/sources.list.d\";\n\
             Dir::Etc::Preferences \"/dev/null\";\n\
             Dir::Etc::PreferencesParts \"{d}/etc/preferences.d\";\n\
             Dir::State \"{d}/state\";\n\
             Dir::State::Lists \"{d}/lists\";\n\
             Dir::State::status \"{d}/state/status\";\n\
             Dir::Cache \"{d}/cache\";\n\
             Dir::Log \"{d}/log\";\n\
             APT::Architecture \"amd64\";\n\
             APT::Architectures {{ \"amd64\"; }};\n\
             APT::Install-Recommends \"false\";\n\
             APT::Install-Suggests \"false\";\n\
             Acquire::Languages \"none\";\n\
             Acquire::GzipIndexes \"true\";\n\
             Acquire::Retries \"3\";\n\
             {sandbox}"
        )
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("APT_CONFIG", self.dir.join("apt.conf"))
            .env("LC_ALL", "C")
            .env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    }

    /// True when package lists were downloaded before.
    pub fn has_lists(&self) -> bool {
        fs::read_dir(self.dir.join("lists")).is_ok_and(|rd| {
            rd.flatten()
                .any(|e| e.file_name().to_string_lossy().contains("_Packages"))
        })
    }

    /// Downloads sid's package lists (about 11 MB).
    pub fn update(&self) -> Result<()> {
        println!("xtask: downloading Debian sid package lists (about 11 MB) ...");
        util::run(self.command("apt-get").arg("update"))
    }

    /// Every package (with its version) that installing `wanted` into an empty system needs,
    /// recommendations left out.
    pub fn resolve(&self, wanted: &[&str]) -> Result<Vec<Pkg>> {
        let text = util::output(
            self.command("apt-get")
                .args(["--simulate", "--quiet", "install"])
                .args(wanted),
        )?;
        let pkgs: Vec<Pkg> = text
            .lines()
            .filter_map(|l| l.strip_prefix("Inst "))
            .filter_map(|rest| {
                let mut parts = rest.splitn(2, ' ');
                let name = parts.next()?.to_string();
                let version = parts.next()?.trim_start_matches('(').split(' ').next()?;
                Some(Pkg {
                    name,
                    version: version.to_string(),
                })
            })
            .collect();
        if pkgs.is_empty() {
            bail!("apt resolved nothing for {wanted:?}:\n{text}");
        }
        Ok(pkgs)
    }

    /// Downloads `pkgs` into `into` and returns the .deb files.
    pub fn download(&self, pkgs: &[Pkg], into: &Path) -> Result<Vec<PathBuf>> {
        mkdirs(into)?;
        let specs: Vec<String> = pkgs
            .iter()
            .map(|p| format!("{}={}", p.name, p.version))
            .collect();
        println!("xtask: downloading {} Debian packages ...", pkgs.len());
        util::run(
            self.command("apt-get")
                .arg("download")
                .args(&specs)
                .current_dir(into),
        )?;
        let mut debs = Vec::new();
        for p in pkgs {
            let prefix = format!("{}_", p.name);
            let found = fs::read_dir(into)?
                .flatten()
                .map(|e| e.path())
                .find(|path| {
                    let name = path.file_name().unwrap_or_default().to_string_lossy();
                    name.starts_with(&prefix) && name.ends_with(".deb")
                });
            match found {
                Some(deb) => debs.push(deb),
                None => bail!("apt-get download left no .deb for {}", p.name),
            }
        }
        Ok(debs)
    }
}
