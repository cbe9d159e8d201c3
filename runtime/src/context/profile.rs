//! The profile a call runs under: its home directory. The methods that
//! read what its files say ([`Profile::secret`], [`Profile::secrets`],
//! [`Profile::config`]) are [`crate::config`]'s, which reads those files.

use std::path::{Path, PathBuf};

/// A profile: the home directory a call runs under. State files resolve
/// against it at call time, never against a constant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Profile {
    home: PathBuf,
}

impl Profile {
    pub fn new(home: impl Into<PathBuf>) -> Self {
        Profile { home: home.into() }
    }

    /// The profile's home directory (`~/.hermes` by default).
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The home as descriptions show it to the model: under the user's home
    /// directory it starts with `~` (`~/.hermes`), elsewhere it is the full
    /// path. Substituted for `{HERMES_HOME}` in tool definitions.
    pub fn display_home(&self) -> String {
        let user_home = std::env::var_os("HOME").map(PathBuf::from);
        match user_home
            .as_deref()
            .and_then(|h| self.home.strip_prefix(h).ok())
        {
            Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
            Some(rest) => format!("~/{}", rest.display()),
            None => self.home.display().to_string(),
        }
    }

    /// The default profile: `$HERMES_HOME`, else `~/.hermes`.
    pub fn default_home() -> Self {
        if let Some(home) = std::env::var_os("HERMES_HOME") {
            return Profile::new(home);
        }
        let base = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
        Profile::new(base.join(".hermes"))
    }
}
