//! Exit codes the commands share beyond success (0) and failure (1).

/// The exit code of `mcp test NAME` and `mcp conformance NAME` when the
/// server needs a login (no token, a refused one, or a call refused for
/// want of scope): `mcp login NAME`, then the command again, helps.
pub const NEEDS_LOGIN: u8 = 3;
