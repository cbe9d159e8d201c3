//! A listed tool's `outputSchema`: compiled once when the tool is
//! registered ([`OutputCheck::new`]), then every successful result's
//! `structuredContent` checked against it ([`OutputCheck::check`]), as
//! the MCP specification asks of clients. A result that does not match
//! becomes an error result naming the mismatch: the model is never handed
//! a document that contradicts the schema the tool declared.

use serde_json::Value;

/// The most mismatches an error names.
const MAX_REPORTED: usize = 3;
/// The most characters of one mismatch's text (it may quote the value).
const MAX_MISMATCH_CHARS: usize = 200;

/// A compiled `outputSchema`.
pub struct OutputCheck {
    validator: jsonschema::Validator,
}

impl OutputCheck {
    /// Compiles `schema`; `Err` says why it cannot be used.
    pub fn new(schema: &Value) -> Result<Self, String> {
        jsonschema::validator_for(schema)
            .map(|validator| OutputCheck { validator })
            .map_err(|e| e.to_string())
    }

    /// What is wrong with a `tools/call` result (its JSON form) of `tool`,
    /// or `None`: an error result is not checked; a success must carry
    /// `structuredContent` matching the schema.
    pub fn check(&self, tool: &str, result: &Value) -> Option<String> {
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return None;
        }
        let Some(structured) = result.get("structuredContent").filter(|s| !s.is_null()) else {
            return Some(format!(
                "MCP tool '{tool}' declares an outputSchema but its result has no structuredContent"
            ));
        };
        let mismatches: Vec<String> = self
            .validator
            .iter_errors(structured)
            .take(MAX_REPORTED)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() { "/" } else { &path };
                let text: String = e.to_string().chars().take(MAX_MISMATCH_CHARS).collect();
                format!("at {at}: {text}")
            })
            .collect();
        if mismatches.is_empty() {
            return None;
        }
        Some(format!(
            "MCP tool '{tool}' returned structuredContent that does not match its outputSchema: {}",
            mismatches.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check() -> OutputCheck {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        OutputCheck::new(&schema).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn matching_and_failed_results_pass() {
        assert_eq!(
            check().check("t", &json!({"structuredContent": {"n": 3}})),
            None
        );
        assert_eq!(
            check().check("t", &json!({"isError": true, "content": []})),
            None
        );
    }

    #[test]
    fn a_mismatch_is_named() {
        let why = check()
            .check("t", &json!({"structuredContent": {"n": "three"}}))
            .unwrap_or_default();
        assert!(
            why.contains("at /n:") && why.contains("outputSchema"),
            "{why}"
        );
        let why = check()
            .check("t", &json!({"content": []}))
            .unwrap_or_default();
        assert!(why.contains("no structuredContent"), "{why}");
    }

    #[test]
    fn an_unusable_schema_says_why() {
        assert!(OutputCheck::new(&json!({"type": 12})).is_err());
    }
}
