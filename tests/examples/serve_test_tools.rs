//! The test tools served over MCP on stdio, as `hermes-tools serve --mcp`
//! serves the built-in ones: `tests/tests/content.rs` starts it and reads
//! it with rmcp's client. Arguments: the profile's home, then the
//! toolsets (comma-separated).

use std::time::Duration;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(home), Some(toolsets)) = (args.next(), args.next()) else {
        eprintln!("usage: serve_test_tools HOME TOOLSETS");
        std::process::exit(2);
    };
    let limits = hermes_mcp_server::Limits {
        max_message_bytes: 64 << 20,
        max_connections: 4,
        max_sessions: 4,
        session_idle_timeout: Duration::from_secs(60),
        header_read_timeout: Duration::from_secs(30),
    };
    let options = hermes_mcp_server::ServeOptions {
        toolsets: toolsets.split(',').map(str::to_string).collect(),
        disable: Vec::new(),
        profile: hermes_runtime::Profile::new(&home),
        cwd: std::path::PathBuf::from(&home),
        http: None,
        token: None,
        limits,
        drain_grace: Duration::from_secs(hermes_mcp_server::ServeOptions::DEFAULT_DRAIN_GRACE_SECS),
        stateless: false,
    };
    if let Err(e) = hermes_mcp_server::serve(hermes_tests::registry(), options) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
