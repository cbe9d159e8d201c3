//! Why the sandbox refused something, read from a failed command's
//! output: the lines where a program reports `EACCES`, `EPERM` or `EROFS`
//! ("Permission denied", "Operation not permitted", "Read-only file
//! system") name the path, which the policy then explains
//! ([`super::Policy::rule_for`]). A path the policy lets be written (an
//! ordinary permission problem) is not the sandbox's doing and gets no note.

use std::path::{Path, PathBuf};

use hermes_runtime::config::SandboxNetwork;

use super::Policy;

/// What programs print for the errors the sandbox causes.
const DENIALS: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
];

/// Lines of output looked at, at most (the first ones that match).
const MAX_LINES: usize = 8;

/// The `sandbox` note for a failed command run under `policy` in `cwd`,
/// when its output shows the sandbox refused something.
pub fn explain(policy: &Policy, cwd: &Path, output: &str) -> Option<String> {
    let mut notes: Vec<String> = Vec::new();
    let mut unexplained = false;
    for line in output
        .lines()
        .filter(|l| DENIALS.iter().any(|d| l.contains(d)))
        .take(MAX_LINES)
    {
        let rules: Vec<String> = candidates(line)
            .into_iter()
            .filter_map(|c| policy.rule_for(&absolute(cwd, &c)))
            .collect();
        if rules.is_empty() {
            unexplained = true;
        }
        for rule in rules {
            if !notes.contains(&rule) {
                notes.push(rule);
            }
        }
    }
    if notes.is_empty() && unexplained && policy.network == SandboxNetwork::Off {
        notes.push(
            "the network is off (terminal.sandbox_network: off): only Unix sockets can be \
             opened"
                .to_string(),
        );
    }
    (!notes.is_empty()).then(|| format!("sandbox: {}", notes.join("; ")))
}

/// The path-like parts of an error line: quoted text (`'…'`, `"…"`,
/// `‘…’`, `` `…' ``) and the fields between `: ` that look like paths.
fn candidates(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('\'', '\''), ('"', '"'), ('‘', '’'), ('`', '\'')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let quoted = &after[..end];
            if looks_like_path(quoted) {
                out.push(quoted.to_string());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    // `program: [line N: ]PATH: error`: neither the first field (the
    // program reporting) nor the last (the error) is the path.
    let fields: Vec<&str> = line.split(": ").map(str::trim).collect();
    if fields.len() > 2 {
        for field in &fields[1..fields.len() - 1] {
            // A bare name too (`bash: f: Permission denied`).
            let plain = !field.is_empty() && !field.contains(char::is_whitespace);
            if plain && field.len() < 4096 && !out.iter().any(|o| o == field) {
                out.push(field.to_string());
            }
        }
    }
    out
}

fn looks_like_path(text: &str) -> bool {
    !text.is_empty()
        && text.len() < 4096
        && !text.contains(char::is_whitespace)
        && (text.starts_with('/') || text.starts_with('.') || text.contains('/'))
}

/// `path` made absolute against `cwd`, with the symlinks of its existing
/// part resolved (as the kernel resolved them).
fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let joined = cwd.join(path);
    let mut existing = joined.as_path();
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(existing).is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(up), Some(name)) => {
                rest.push(name.to_os_string());
                existing = up;
            }
            _ => return joined,
        }
    }
    let mut real = std::fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    for name in rest.into_iter().rev() {
        real.push(name);
    }
    real
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_paths_programs_name() {
        assert_eq!(
            candidates("touch: cannot touch '/etc/x': Read-only file system"),
            vec!["/etc/x"]
        );
        assert_eq!(
            candidates("/bin/bash: line 1: /etc/hosts: Permission denied"),
            vec!["/etc/hosts"]
        );
        assert_eq!(
            candidates("bash: .ssh/authorized_keys: Read-only file system"),
            vec![".ssh/authorized_keys"]
        );
        assert_eq!(
            candidates("mkdir: cannot create directory ‘/usr/q’: Permission denied"),
            vec!["/usr/q"]
        );
    }
}
