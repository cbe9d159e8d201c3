//! The one list of paths no tool and no command may write: the files the
//! profile's policy is read from (`config.yaml`, `.env`, `approvals.json`,
//! the website block-list files), the credentials and session state of
//! Hermes, other profiles' folders, the credential files of the user's
//! homes and the system's folders.
//!
//! [`write_protected`] lists them for a profile, as absolute real paths
//! (symlinks followed where the path exists, `..` applied after them); an
//! entry that is a folder protects everything under it. The file tools'
//! write guard (`tools/file/guard.rs`) refuses a write that reaches one;
//! the command sandbox keeps them out of every command's reach.
//!
//! "The user's home" is every home a tool or a command may take for it:
//! the agent's `$HOME`, the password database's home of the current user
//! id, a `HOME` the profile's `.env` gives its commands, and `/root` when
//! the agent runs as root (a home one folder deep is a home like any
//! other).
//!
//! Profiles are walled off from each other: for a profile under
//! `<root>/profiles/<name>`, the other profiles' folders and the root
//! profile's own state (`skills/`, `plugins/`, `cron/`, `memories/`, and
//! its policy and credential files) are protected; for the root profile,
//! every profile under its `profiles/`. [`other_profile`] says the same of a
//! profile folder that does not exist yet.

use std::path::{Component, Path, PathBuf};

use hermes_runtime::approval::ALWAYS_FILE;
use hermes_runtime::paths::real_write_path;
use hermes_runtime::Profile;

use crate::child_env::ChildEnv;

/// A path never written by a tool or a command, and why.
#[derive(Debug, Clone)]
pub struct Protected {
    /// Absolute; the real path where it exists. A folder protects what is
    /// under it.
    pub path: PathBuf,
    /// The rule, as a clause the refusal quotes ("it is the Hermes config
    /// file of this profile, which holds its security settings").
    pub rule: String,
}

/// Files in the profile's home and the Hermes root that hold credentials:
/// never read by the file tools, never written.
pub const CREDENTIAL_STORES: &[&str] = &[
    "auth.json",
    "auth.lock",
    ".anthropic_oauth.json",
    ".env",
    "webhook_subscriptions.json",
    "auth/google_oauth.json",
    "cache/bws_cache.json",
];
/// Folders in the profile's home and the Hermes root holding credentials.
pub const CREDENTIAL_DIRS: &[&str] = &["mcp-tokens", "pairing"];
/// Session state in the profile's home and the Hermes root, which Hermes
/// manages itself (files and folders).
pub const STATE_PATHS: &[&str] = &["state.db", "sessions"];
/// The folders of a profile that belong to that profile alone (the
/// reference's profile-scoped areas).
pub const PROFILE_AREAS: &[&str] = &["skills", "plugins", "cron", "memories"];
/// Credential files in the user's home, never written.
pub const HOME_DENIED_FILES: &[&str] = &[
    ".ssh/authorized_keys",
    ".ssh/id_rsa",
    ".ssh/id_ed25519",
    ".ssh/config",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
];
/// Credential folders in the user's home, never written into.
pub const HOME_DENIED_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube",
    ".docker",
    ".azure",
    ".config/gh",
    ".config/gcloud",
];
/// System files never written.
pub const SYSTEM_DENIED_FILES: &[&str] = &[
    "/etc/sudoers",
    "/etc/passwd",
    "/etc/shadow",
    "/var/run/docker.sock",
    "/run/docker.sock",
];
/// System folders never written into.
pub const SYSTEM_DENIED_DIRS: &[&str] = &[
    "/etc",
    "/boot",
    "/usr/lib/systemd",
    "/private/etc",
    "/private/var",
];

/// The most sibling profiles listed (a `profiles/` folder of thousands is
/// still read in bounded time; [`other_profile`] covers the rest).
const MAX_PROFILES_LISTED: usize = 1024;

const CREDENTIAL: &str = "it is a protected credential file or folder (SSH keys, cloud and \
                          package-registry logins, the secrets of Hermes)";
const SYSTEM: &str = "it is a protected system location";
const STATE: &str = "it is session state that Hermes manages itself (state.db, sessions/)";

/// Absolute paths (real paths where they exist) never writable by a tool or a command.
pub fn write_protected(profile: &Profile) -> Vec<Protected> {
    let mut out = Vec::new();
    let mut add = |path: PathBuf, rule: &str| {
        let real = real_path(&path);
        for p in [real, path] {
            if !out.iter().any(|e: &Protected| e.path == p) {
                out.push(Protected {
                    path: p,
                    rule: rule.to_string(),
                });
            }
        }
    };
    let own = absolute(profile.home());
    let root = hermes_root(&own);
    let mut hermes_dirs = vec![(own.clone(), "this profile")];
    if let Some(root) = root.as_ref().filter(|r| **r != own) {
        hermes_dirs.push((root.clone(), "the root profile"));
    }
    for (dir, whose) in &hermes_dirs {
        add(
            dir.join("config.yaml"),
            &format!("it is the Hermes config file of {whose}, which holds its security settings"),
        );
        add(
            dir.join(ALWAYS_FILE),
            &format!("it holds the user's own answers to approval questions for {whose}"),
        );
        for name in CREDENTIAL_STORES.iter().chain(CREDENTIAL_DIRS) {
            add(dir.join(name), CREDENTIAL);
        }
        for name in STATE_PATHS {
            add(dir.join(name), STATE);
        }
    }
    // The website block-list's files are policy too.
    for file in &profile
        .config()
        .security
        .website_blocklist
        .shared_files
        .value
    {
        add(
            own.join(file),
            "it is a website block-list file of this profile's security settings",
        );
    }
    if let Some(root) = &root {
        let named = own.strip_prefix(root.join("profiles")).is_ok();
        if named {
            for area in PROFILE_AREAS {
                add(
                    root.join(area),
                    "it belongs to the root Hermes profile; a profile's tools write only \
                     their own profile",
                );
            }
        }
        if let Ok(entries) = std::fs::read_dir(root.join("profiles")) {
            for entry in entries.flatten().take(MAX_PROFILES_LISTED) {
                let path = entry.path();
                if real_path(&path) != real_path(&own) {
                    add(
                        path,
                        &other_profile_rule(&entry.file_name().to_string_lossy()),
                    );
                }
            }
        }
    }
    for home in homes(profile) {
        for name in HOME_DENIED_FILES.iter().chain(HOME_DENIED_DIRS) {
            add(home.join(name), CREDENTIAL);
        }
    }
    for path in SYSTEM_DENIED_FILES.iter().chain(SYSTEM_DENIED_DIRS) {
        add(PathBuf::from(path), SYSTEM);
    }
    out
}

/// The first entry of `list` that `real` (a real path) is or is under.
pub fn protecting<'a>(list: &'a [Protected], real: &Path) -> Option<&'a Protected> {
    list.iter().find(|e| real.starts_with(&e.path))
}

/// Why `real` (a real path) is in another profile's folder, when it is:
/// under `<root>/profiles/<other>` for any other name, whether that folder
/// exists yet or not.
pub fn other_profile(profile: &Profile, real: &Path) -> Option<String> {
    let own = real_path(&absolute(profile.home()));
    let root = hermes_root(&absolute(profile.home()))?;
    let profiles = real_path(&root.join("profiles"));
    let name = real.strip_prefix(&profiles).ok()?.components().next()?;
    let Component::Normal(name) = name else {
        return None;
    };
    // Its own folder when it is a named profile; the root profile owns none.
    (!own.starts_with(profiles.join(name))).then(|| other_profile_rule(&name.to_string_lossy()))
}

fn other_profile_rule(name: &str) -> String {
    format!(
        "it belongs to another Hermes profile ({name}); a profile's tools write only their \
         own profile"
    )
}

/// Every home a tool or a command may take for the user's (module docs),
/// real paths, without duplicates.
pub fn homes(profile: &Profile) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let candidates = [
        std::env::var_os("HOME").map(PathBuf::from),
        ChildEnv::base().get("HOME").map(PathBuf::from),
        profile.secret("HOME").map(PathBuf::from),
        nix::unistd::geteuid()
            .is_root()
            .then(|| PathBuf::from("/root")),
    ];
    for home in candidates.into_iter().flatten() {
        // `/` as a home (no account) would protect everything below it.
        if !home.is_absolute() || home.parent().is_none() {
            continue;
        }
        let real = real_path(&home);
        if !out.contains(&real) {
            out.push(real);
        }
    }
    out
}

/// The Hermes root for a profile home: `<root>` for `<root>/profiles/<name>`,
/// `~/.hermes` when the home is under it, else the home itself when it has
/// a `profiles/` folder (it is a root), else none.
pub fn hermes_root(profile_home: &Path) -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let native = PathBuf::from(home).join(".hermes");
        if profile_home.starts_with(&native) {
            return Some(native);
        }
    }
    let parent = profile_home.parent()?;
    if parent.file_name().is_some_and(|n| n == "profiles") {
        return parent.parent().map(Path::to_path_buf);
    }
    profile_home
        .join("profiles")
        .is_dir()
        .then(|| profile_home.to_path_buf())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// [`real_write_path`](hermes_runtime::paths::real_write_path), or `path` itself when it cannot be made absolute.
fn real_path(path: &Path) -> PathBuf {
    real_write_path(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_files_and_homes_are_listed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().join("root");
        let me = root.join("profiles/me");
        std::fs::create_dir_all(&me).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(root.join("profiles/other")).unwrap_or_else(|e| panic!("{e}"));
        let list = write_protected(&Profile::new(&me));
        let real_me = real_path(&me);
        let real_root = real_path(&root);
        let hit = |p: &Path| protecting(&list, p).map(|e| e.rule.clone());
        for name in [
            "config.yaml",
            ".env",
            ALWAYS_FILE,
            "mcp-tokens/x",
            "state.db",
        ] {
            assert!(hit(&real_me.join(name)).is_some(), "{name}");
            assert!(hit(&real_root.join(name)).is_some(), "root {name}");
        }
        assert!(hit(&real_root.join("profiles/other/skills/x/SKILL.md"))
            .is_some_and(|r| r.contains("another Hermes profile")));
        assert!(hit(&real_root.join("skills/x")).is_some());
        assert!(hit(&real_me.join("skills/x")).is_none());
        assert!(hit(&real_me.join("notes.md")).is_none());
        assert!(hit(Path::new("/etc/hosts")).is_some());
        // Not yet created profiles are another profile's too.
        let p = Profile::new(&me);
        assert!(other_profile(&p, &real_root.join("profiles/new/x")).is_some());
        assert!(other_profile(&p, &real_me.join("x")).is_none());
        // From the root profile, every named one is another's.
        let r = Profile::new(&root);
        assert!(other_profile(&r, &real_root.join("profiles/new/x")).is_some());
        assert!(other_profile(&r, &real_root.join("notes.md")).is_none());
        for e in &list {
            assert!(e.path.is_absolute(), "{e:?}");
        }
    }
}
