//! Error text goes into the model's context: strip what could be read as
//! instructions, cap the length, mark it as a tool error.

/// Sanitizes a tool error message (BEHAVIOUR.md §8).
pub fn sanitize_tool_error(msg: &str) -> String {
    format!("[TOOL_ERROR] {msg}")
}
