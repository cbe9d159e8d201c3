//! Keys of the reference's `config.yaml` (hermes-agent 0.19.0) that this
//! project does not read: they are accepted without a word, so an existing
//! `~/.hermes/config.yaml` loads as it is. Each list is named by its
//! section's table (`reference:` in `mod.rs`); a key neither in its list
//! nor in the table is a warning with a did-you-mean. A key this project
//! comes to read moves from here to its table.

/// Every top-level key the reference knows.
pub(crate) const REFERENCE_ROOT: &[&str] = &[
    "_config_version",
    "agent",
    "always_log_local",
    "approvals",
    "auxiliary",
    "bedrock",
    "browser",
    "checkpoints",
    "command_allowlist",
    "compression",
    "computer_use",
    "context",
    "context_file_max_chars",
    "credential_pool_strategies",
    "cron",
    "curator",
    "custom_providers",
    "dashboard",
    "desktop",
    "discord",
    "display",
    "fallback_model",
    "fallback_providers",
    "file_read_max_chars",
    "filter_silence_narration",
    "gateway",
    "goals",
    "group_sessions_per_user",
    "honcho",
    "hooks",
    "hooks_auto_accept",
    "human_delay",
    "image_gen",
    "kanban",
    "known_plugin_toolsets",
    "logging",
    "lsp",
    "matrix",
    "mattermost",
    "max_concurrent_sessions",
    "max_live_sessions",
    "mcp",
    "mcp_discovery_timeout",
    "mcp_servers",
    "memory",
    "moa",
    "model_catalog",
    "multiplex_profiles",
    "network",
    "onboarding",
    "openrouter",
    "paste_collapse_char_threshold",
    "paste_collapse_threshold",
    "paste_collapse_threshold_fallback",
    "personalities",
    "platform_hints",
    "platform_toolsets",
    "platforms",
    "plugins",
    "prefill_messages_file",
    "privacy",
    "profile_routes",
    "prompt_caching",
    "providers",
    "quick_commands",
    "require_mention",
    "reset_triggers",
    "secrets",
    "security",
    "session_reset",
    "sessions",
    "signal",
    "skills",
    "slack",
    "smart_model_routing",
    "streaming",
    "stt",
    "stt_echo_transcripts",
    "telegram",
    "terminal",
    "thread_sessions_per_user",
    "timezone",
    "tool_loop_guardrails",
    "tool_output",
    "tools",
    "toolsets",
    "tts",
    "unauthorized_dm_behavior",
    "updates",
    "vertex",
    "video_gen",
    "voice",
    "web",
    "whatsapp",
    "x_search",
];

/// `terminal` keys of the reference for backends and shells this project
/// does not have (containers, remote hosts, shell snapshots).
pub(crate) const REFERENCE_TERMINAL: &[&str] = &[
    "auto_source_bashrc",
    "container_disk",
    "container_persistent",
    "daytona_image",
    "docker_env",
    "docker_extra_args",
    "docker_forward_env",
    "docker_run_as_host_user",
    "home_mode",
    "modal_image",
    "modal_mode",
    "persistent_shell",
    "shell_init_files",
    "singularity_image",
];

/// `security` keys of the reference for features this project does not have.
pub(crate) const REFERENCE_SECURITY: &[&str] = &[
    "acked_advisories",
    "allow_lazy_installs",
    "tirith_enabled",
    "tirith_fail_open",
    "tirith_path",
    "tirith_timeout",
];

/// `approvals` keys of the reference about its interactive front ends.
pub(crate) const REFERENCE_APPROVALS: &[&str] =
    &["destructive_slash_confirm", "mcp_reload_confirm"];

/// Keys of one `mcp_servers` entry the reference reads and this project
/// does not (yet): TLS, lifecycle.
pub(crate) const REFERENCE_MCP_SERVER: &[&str] = &[
    "client_cert",
    "client_key",
    "lifecycle",
    "log_level",
    "skip_preflight",
    "transport",
];

/// The warning for a reference key of a section this project reads whose
/// value asks for a protection or a way of running commands this project
/// does not have (so the user would be less protected than they think),
/// when it does: Tirith (no scanner here), an MCP server's client
/// certificate. The rest of the reference's keys stay quiet.
pub(crate) fn unhonoured(section: &str, name: &str, value: Option<&str>) -> Option<String> {
    let value = value.map(str::trim);
    let why = match (section, name) {
        ("security", "tirith_enabled" | "tirith_fail_open" | "tirith_path" | "tirith_timeout")
            if !matches!(
                (name, value),
                ("tirith_enabled", Some("true" | "True" | "yes"))
            ) =>
        {
            "not honoured: there is no Tirith scanner here; commands are judged by the \
             command rules and the approval policy"
        }
        (_, "client_cert" | "client_key") if section.starts_with("mcp_servers") => {
            "not honoured: MCP servers are reached without client certificates here"
        }
        _ => return None,
    };
    Some(why.to_string())
}

/// `delegation` keys this project does not read: a child uses the
/// parent's endpoint and approvals.
pub(crate) const REFERENCE_DELEGATION: &[&str] = &[
    "api_key",
    "api_mode",
    "base_url",
    "inherit_mcp_toolsets",
    "max_summary_chars",
    "model",
    "provider",
    "reasoning_effort",
    "subagent_auto_approve",
];
