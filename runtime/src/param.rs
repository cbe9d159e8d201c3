//! What a tool's parameter and return types must be: the bounds
//! `#[hermes_tool]` checks them against, and how a returned value becomes
//! the JSON string the model sees.

use std::fmt::Display;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A type a tool parameter may have.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "this type has no JSON Schema or cannot be decoded from JSON",
    note = "a tool parameter's type must implement `schemars::JsonSchema` and `serde::de::DeserializeOwned`; add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to it"
)]
pub trait ToolParam: JsonSchema + DeserializeOwned {}
impl<T: JsonSchema + DeserializeOwned> ToolParam for T {}

/// A type a tool may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a tool",
    label = "the model is sent JSON: this type must implement `serde::Serialize`",
    note = "return `T: Serialize` or `Result<T: Serialize, E: Display>`"
)]
pub trait ToolOutput: Serialize {}
impl<T: Serialize> ToolOutput for T {}

/// Asserts `T` can be a tool parameter. The macro emits this once per
/// parameter, spanned on its type: the one error a bad type produces.
pub const fn assert_param<T: ToolParam>() {}

/// Ok value → the JSON string the model sees. A `String` that already holds
/// a JSON document is passed through unchanged (unless it is a content
/// envelope: only a [`ToolContent`](crate::ToolContent) value makes one).
pub fn output_value<T: ToolOutput>(value: T) -> String {
    match serde_json::to_string(&value) {
        Ok(json) => {
            // A string result: pass it through when it is itself a JSON document.
            if json.starts_with('"') {
                if let Ok(inner) = serde_json::from_str::<String>(&json) {
                    // Not a content envelope: only a `ToolContent` makes one.
                    if serde_json::from_str::<serde::de::IgnoredAny>(&inner).is_ok()
                        && !crate::content::is_content_result(&inner)
                    {
                        return inner;
                    }
                }
            }
            json
        }
        Err(e) => crate::error_json(format!("Tool result could not be serialized: {e}")),
    }
}

/// `Ok` → [`output_value`]; `Err(e)` → `{"error": e.to_string()}`.
pub fn output_result<T: ToolOutput, E: Display>(result: Result<T, E>) -> String {
    match result {
        Ok(v) => output_value(v),
        Err(e) => crate::error_json(e.to_string()),
    }
}
