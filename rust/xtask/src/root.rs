//! Finding the repository root at run time.
//!
//! The binary's compiled-in `CARGO_MANIFEST_DIR` names the checkout it was built from, which is
//! the wrong one when two checkouts share a `CARGO_TARGET_DIR` (cargo reuses the binary). The
//! root is therefore searched upwards from the current directory, as cargo finds its workspace.

use std::fs;
use std::path::{Path, PathBuf};

/// The workspace member that marks this repository's root manifest.
const XTASK_MEMBER: &str = "rust/xtask";

/// The nearest directory at or above `start` whose Cargo.toml has a `[workspace]` listing
/// `rust/xtask` among its members; `None` when no ancestor has one.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| {
            fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|text| workspace_has_member(&text, XTASK_MEMBER))
        })
        .map(Path::to_path_buf)
}

/// True when the manifest `text` has a `[workspace]` table whose `members` array names
/// `member`. A small reader for the array form cargo writes (strings, commas, comments, any
/// line breaks), not a TOML parser: enough to tell our manifest from another one.
pub fn workspace_has_member(text: &str, member: &str) -> bool {
    let mut in_workspace = false;
    let mut members: Option<String> = None;
    for raw in text.lines() {
        let line = strip_comment(raw).trim();
        if let Some(acc) = members.as_mut() {
            acc.push_str(line);
            acc.push('\n');
        } else if line.starts_with('[') {
            in_workspace = line == "[workspace]";
            continue;
        } else if in_workspace {
            if let Some(rest) = line.strip_prefix("members") {
                if let Some(value) = rest.trim_start().strip_prefix('=') {
                    members = Some(format!("{}\n", value.trim_start()));
                }
            }
        }
        if let Some(acc) = members.as_ref() {
            if let Some(end) = acc.find(']') {
                return array_strings(&acc[..end]).any(|m| m.trim_end_matches('/') == member);
            }
        }
    }
    false
}

/// `line` without a trailing `# comment` (a `#` inside a quoted string is kept).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The quoted strings in the body of an array (`"a", 'b'`), without their quotes.
fn array_strings(body: &str) -> impl Iterator<Item = &str> {
    body.split(',')
        .map(|item| item.trim().trim_start_matches('['))
        .map(|item| item.trim())
        .filter_map(|item| {
            item.strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .or_else(|| item.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = "[workspace]\nresolver = \"2\"\nmembers = [\"rust/vat_core\", \"rust/vat_gdext\", \"rust/xtask\"]\n";

    /// A fresh empty directory under the system temporary directory.
    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-root-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn reads_members_in_one_line_or_many() {
        assert!(workspace_has_member(OURS, "rust/xtask"));
        let multi = "[package]\nname = \"x\"\n\n[workspace] \nmembers = [\n  \"rust/vat_core\", # core\n  'rust/xtask/',\n]\n";
        assert!(workspace_has_member(multi, "rust/xtask"));
        assert!(!workspace_has_member(multi, "rust/vat_gdext"));
    }

    #[test]
    fn ignores_members_outside_the_workspace_table() {
        let package_only = "[package]\nname = \"xtask\"\nmembers = [\"rust/xtask\"]\n";
        assert!(!workspace_has_member(package_only, "rust/xtask"));
        let other = "[workspace]\nmembers = [\"crates/*\"]\n[other]\nmembers = [\"rust/xtask\"]\n";
        assert!(!workspace_has_member(other, "rust/xtask"));
        let commented = "[workspace]\n# members = [\"rust/xtask\"]\nmembers = [\"a\"]\n";
        assert!(!workspace_has_member(commented, "rust/xtask"));
    }

    #[test]
    fn finds_the_nearest_matching_ancestor() {
        let top = temp_dir("nearest");
        let inner = top.join("checkout");
        let deep = inner.join("rust/xtask/src");
        fs::create_dir_all(&deep).unwrap();
        fs::write(top.join("Cargo.toml"), OURS).unwrap();
        fs::write(inner.join("Cargo.toml"), OURS).unwrap();
        // A crate manifest between the start and the root is not a root.
        fs::write(
            inner.join("rust/xtask/Cargo.toml"),
            "[package]\nname = \"xtask\"\n",
        )
        .unwrap();
        assert_eq!(find_root(&deep), Some(inner.clone()));
        assert_eq!(find_root(&inner), Some(inner.clone()));
        assert_eq!(find_root(&top), Some(top.clone()));
        fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn skips_other_workspaces_and_finds_none_without_ours() {
        let top = temp_dir("others");
        let nested = top.join("vendor/other");
        fs::create_dir_all(&nested).unwrap();
        fs::write(
            nested.join("Cargo.toml"),
            "[workspace]\nmembers = [\"a\"]\n",
        )
        .unwrap();
        assert_eq!(find_root(&nested), None);
        fs::write(top.join("Cargo.toml"), OURS).unwrap();
        assert_eq!(find_root(&nested), Some(top.clone()));
        fs::remove_dir_all(&top).unwrap();
    }
}
