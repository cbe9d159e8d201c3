//! The tables' contract, through `Profile` and a real `config.yaml`: every
//! key a table declares is read, shown by `entries()` (`config show`) and
//! accepted by the check, and a misspelt one is reported with a
//! did-you-mean naming it, except where the section says other keys are
//! not ours (`agent`) or the name is the user's (`platform_toolsets.NAME`,
//! `mcp_servers.NAME`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::load::join;
use super::{Declared, ProfileConfig, Severity, Source, FILE_NAME, ROOT};
use crate::Profile;

/// A profile home holding `config.yaml`, removed when dropped.
struct Home(PathBuf);

impl Home {
    fn with(yaml: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hermes-config-tables-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(FILE_NAME), yaml).unwrap();
        Home(dir)
    }

    fn load(&self) -> ProfileConfig {
        ProfileConfig::load(&Profile::new(&self.0))
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every key path the tables declare, in `config show` order.
fn declared() -> Vec<Declared> {
    let mut out = Vec::new();
    ROOT.declared("", &mut out);
    out
}

/// The keys as nested block mappings, each `name: value` on a line of its
/// own: the text and the line of each key.
fn yaml_of(keys: &[(&str, &str)]) -> (String, Vec<usize>) {
    let (mut text, mut lines) = (String::new(), Vec::new());
    let mut open: Vec<&str> = Vec::new();
    for (path, value) in keys {
        let parts: Vec<&str> = path.split('.').collect();
        let (name, parents) = parts.split_last().unwrap();
        let same = open.iter().zip(parents).take_while(|(a, b)| a == b).count();
        open.truncate(same);
        for (depth, parent) in parents.iter().enumerate().skip(same) {
            text += &format!("{}{parent}:\n", "  ".repeat(depth));
            open.push(parent);
        }
        text += &format!("{}{name}: {value}\n", "  ".repeat(parents.len()));
        lines.push(text.lines().count());
    }
    (text, lines)
}

#[test]
fn every_declared_key_is_read_shown_and_checked() {
    let declared = declared();
    assert!(declared.len() >= 30, "{}", declared.len());

    // Without a file: every row shown, each its default.
    let defaults = Home::with("").load();
    for (key, value, source) in defaults.entries() {
        assert_eq!(source, Source::Default, "{key} = {value}");
        assert!(
            declared.iter().any(|d| d.path == key),
            "{key} is not declared"
        );
    }

    // Every key with its example: no problem, and each shown from where
    // it is written, in the tables' order, nothing else shown.
    let keys: Vec<(&str, &str)> = declared
        .iter()
        .map(|d| (d.path.as_str(), d.example))
        .collect();
    let (yaml, lines) = yaml_of(&keys);
    let config = Home::with(&yaml).load();
    assert!(
        config.diagnostics.is_empty(),
        "{yaml}\n{:#?}",
        config.diagnostics
    );
    let entries = config.entries();
    let shown: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    let paths: Vec<&str> = keys.iter().map(|k| k.0).collect();
    assert_eq!(shown, paths);
    for ((key, value, source), line) in entries.iter().zip(&lines) {
        match source {
            Source::File(pos) => assert_eq!(pos.line, *line, "{key} = {value}\n{yaml}"),
            other => panic!("{key} = {value} is from {other}, not line {line}\n{yaml}"),
        }
    }

    // Each key misspelt: a warning at its path naming the key, where the
    // section checks its keys; nothing where it does not.
    for d in &declared {
        let (parent, name) = d.path.rsplit_once('.').unwrap_or(("", &d.path));
        let wrong = join(parent, &format!("{name}x"));
        let (yaml, _) = yaml_of(&[(&wrong, d.example)]);
        let problems = Home::with(&yaml).load().diagnostics;
        if !d.checked {
            assert!(problems.is_empty(), "{yaml}\n{problems:#?}");
            continue;
        }
        assert_eq!(problems.len(), 1, "{yaml}\n{problems:#?}");
        let p = &problems[0];
        assert_eq!(
            (p.severity, p.key.as_str()),
            (Severity::Warning, wrong.as_str())
        );
        let near = p
            .message
            .strip_prefix("unknown key, ignored; did you mean ")
            .and_then(|m| m.strip_suffix('?'));
        assert!(
            near.is_some_and(|n| n.split(", ").any(|n| n == name)),
            "{wrong}: {}",
            p.message
        );
    }
}

/// `mcp_servers.NAME.sampling` / `.elicitation`: the reference's keys read
/// into typed limits (its defaults when left out), a bad value refuses the
/// server with the key's path, a misspelt key gets a did-you-mean, and the
/// reference's `log_level` passes quietly.
#[test]
fn mcp_sampling_and_elicitation_keys() {
    let home = Home::with(
        "mcp_servers:
  tuned:
    command: srv
    sampling:
      enabled: true
      model: small
      max_tokens_cap: 100
      timeout: 5
      max_rpm: 3
      allowed_models: [small, tiny]
      max_tool_rounds: 0
      log_level: debug
      max_rmp: 4
    elicitation:
      enabled: false
      timeout: 9
  plain:
    command: srv
  broken:
    command: srv
    sampling:
      max_rpm: many
",
    );
    let c = home.load();
    let tuned = &c.mcp_servers["tuned"];
    assert_eq!(tuned.sampling.model.as_deref(), Some("small"));
    assert_eq!(tuned.sampling.max_tokens_cap, 100);
    assert_eq!(tuned.sampling.timeout, 5.0);
    assert_eq!(tuned.sampling.max_rpm, 3);
    assert_eq!(tuned.sampling.allowed_models, ["small", "tiny"]);
    assert_eq!(tuned.sampling.max_tool_rounds, 0);
    assert!(!tuned.elicitation.enabled);
    assert_eq!(tuned.elicitation.timeout, 9.0);
    let plain = &c.mcp_servers["plain"];
    assert_eq!(plain.sampling, super::McpSampling::default());
    assert!(plain.sampling.enabled && plain.elicitation.enabled);
    assert!(!c.mcp_servers.contains_key("broken"));
    let about = |key: &str| {
        c.diagnostics
            .iter()
            .filter(|d| d.key == key)
            .map(|d| (d.severity, d.message.clone()))
            .collect::<Vec<_>>()
    };
    let misspelt = about("mcp_servers.tuned.sampling.max_rmp");
    assert!(
        matches!(&misspelt[..], [(Severity::Warning, m)] if m.contains("max_rpm")),
        "{misspelt:?}"
    );
    assert!(about("mcp_servers.tuned.sampling.log_level").is_empty());
    let bad = about("mcp_servers.broken.sampling.max_rpm");
    assert!(
        matches!(&bad[..], [(Severity::Error, _)]),
        "{bad:?} {:?}",
        c.diagnostics
    );
}
