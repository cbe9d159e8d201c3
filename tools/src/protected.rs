//! PLACEHOLDER: the policy branch owns this file
//!
//! The paths no tool and no command may write: the profile's policy files
//! and the machine's credential and system folders, each with the rule
//! that protects it.

use std::path::PathBuf;

/// One protected path and the rule that protects it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protected {
    pub path: PathBuf,
    pub rule: String,
}

/// The absolute paths never writable for `profile`.
pub fn write_protected(profile: &hermes_runtime::Profile) -> Vec<Protected> {
    let home = profile.home();
    let mut all = vec![
        Protected {
            path: home.join("config.yaml"),
            rule: "the profile's configuration".into(),
        },
        Protected {
            path: home.join(".env"),
            rule: "the profile's secrets".into(),
        },
        Protected {
            path: home.join("approvals.json"),
            rule: "the profile's approvals".into(),
        },
        Protected {
            path: PathBuf::from("/etc"),
            rule: "the system's configuration".into(),
        },
    ];
    if let Some(user_home) = std::env::var_os("HOME") {
        all.push(Protected {
            path: PathBuf::from(user_home).join(".ssh"),
            rule: "SSH keys and authorized logins".into(),
        });
    }
    all
}
