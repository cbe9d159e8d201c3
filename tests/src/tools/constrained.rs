//! A tool whose plain parameters state constraints in serde's and
//! schemars' attribute language: bounds, lengths, a pattern, defaults and a
//! renamed property, written into the schema and checked on decoding.

use hermes_macros::hermes_tool;
use serde::{Deserialize, Serialize};

/// How `constrained` answers.
#[derive(Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Plain,
    Loud,
}

fn default_limit() -> u64 {
    500
}

/// Echoes its constrained arguments.
#[hermes_tool(
    toolset = "edges",
    allow(
        dialect_incompatible = "a test tool of every constraint, `maxLength` among them, offered to no provider"
    )
)]
pub async fn constrained(
    /// URLs to read, one to five.
    #[schemars(length(min = 1, max = 5))]
    urls: Vec<String>,
    /// How many lines.
    #[schemars(range(min = 1, max = 2000))]
    #[serde(default = "default_limit")]
    limit: u64,
    /// A three-letter code.
    #[schemars(regex(pattern = "^[a-z]{3}$"))]
    code: Option<String>,
    /// A shift.
    #[schemars(range(min = -10, max = 10.5))]
    #[serde(default)]
    shift: f64,
    /// How to answer.
    #[serde(rename = "type", default)]
    mode: Mode,
    /// A label of at most four characters.
    #[schemars(length(max = 4))]
    label: Option<String>,
) -> serde_json::Value {
    serde_json::json!({
        "urls": urls, "limit": limit, "code": code, "shift": shift, "type": mode, "label": label,
    })
}
