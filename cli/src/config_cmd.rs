//! `hermes-tools config show|check|path`: the profile's `config.yaml` as the
//! tools see it (`hermes_runtime::config`).

use std::process::ExitCode;

use clap::Subcommand;
use hermes_mcp_client::naming;
use hermes_runtime::config::{ProfileConfig, Severity};
use hermes_runtime::{Profile, Registry};

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Print every effective setting and where it came from (default,
    /// config.yaml:LINE:COL, .env NAME, flag).
    Show {
        /// Also show the toolsets `schema` / `serve` would offer for this
        /// platform (`platform_toolsets`).
        #[arg(long, value_name = "NAME")]
        platform: Option<String>,
        /// ... or for these toolsets given as a flag (which wins).
        #[arg(long, value_delimiter = ',')]
        toolsets: Option<Vec<String>>,
    },
    /// Validate the file: print each problem as FILE:LINE:COL: KEY: MESSAGE;
    /// exit 1 when there is an error (warnings alone exit 0).
    Check,
    /// Print the file's path (it need not exist).
    Path,
}

pub fn run(command: ConfigCommand, registry: &Registry, profile: &Profile) -> (String, ExitCode) {
    // Read now, not from the cache: the file as it is this moment.
    let mut config = ProfileConfig::load(profile);
    check_toolset_names(&mut config, registry);
    // `terminal.backend` names a row of the tools' backend table.
    config.check_backend_name(
        |name| hermes_tools::backend::entry(name).is_some(),
        hermes_tools::backend::names(),
    );
    match command {
        ConfigCommand::Path => (format!("{}\n", config.path.display()), ExitCode::SUCCESS),
        ConfigCommand::Show { platform, toolsets } => {
            let mut rows = config.entries();
            if platform.is_some() || toolsets.is_some() {
                if let Some(set) = config.select_toolsets(toolsets, platform.as_deref()) {
                    rows.insert(
                        0,
                        (
                            "(selected toolsets)".to_string(),
                            format!("[{}]", set.value.join(", ")),
                            set.source,
                        ),
                    );
                }
            }
            let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
            let mut text = format!("# {}\n", describe_file(&config));
            for (key, value, source) in rows {
                text += &format!("{key:<width$}  {value}  ({source})\n");
            }
            for d in &config.diagnostics {
                eprintln!("{}", d.render(&config.path));
            }
            (text, ExitCode::SUCCESS)
        }
        ConfigCommand::Check => {
            let mut text = String::new();
            for d in &config.diagnostics {
                text += &d.render(&config.path);
                text.push('\n');
            }
            let count = |s: Severity| {
                config
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == s)
                    .count()
            };
            let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
            text += &format!(
                "{}: {errors} error(s), {warnings} warning(s)\n",
                describe_file(&config)
            );
            let code = if errors > 0 {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
            (text, code)
        }
    }
}

/// Every toolset name the file writes must be one `schema` and `serve`
/// accept: the registry's answer, or a configured MCP server's toolset
/// (`mcp-<server>`, or its alias `<server>`), which exists only once the
/// server is connected (`config` connects none).
fn check_toolset_names(config: &mut ProfileConfig, registry: &Registry) {
    let servers: Vec<String> = config
        .mcp_servers
        .keys()
        .flat_map(|s| [naming::toolset(s), s.clone()])
        .collect();
    let mut candidates = registry.toolsets().toolset_names();
    candidates.extend(servers.iter().cloned());
    config.check_toolset_names(
        |name| registry.knows_toolset(name) || servers.iter().any(|s| s == name),
        candidates.iter().map(String::as_str),
    );
}

fn describe_file(config: &ProfileConfig) -> String {
    if config.present {
        config.path.display().to_string()
    } else {
        format!("{} (absent: the defaults apply)", config.path.display())
    }
}

/// One line on stderr when the profile's file has errors, for the front
/// ends that read it (`schema`, `serve`).
pub fn warn_on_errors(profile: &Profile) {
    let config = profile.config();
    let errors = config
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    if errors > 0 {
        eprintln!(
            "warning: {} has {errors} error(s); those values keep their defaults \
             (see `hermes-tools config check`)",
            config.path.display()
        );
    }
}
