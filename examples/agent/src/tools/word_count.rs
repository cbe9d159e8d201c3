use std::io::{BufRead, BufReader, Read};

use hermes_macros::hermes_tool;
use hermes_runtime::ToolContext;

/// Counts the lines, words and characters of a text file.
///
/// # Arguments
/// * `path` - The file, relative to the working directory.
#[hermes_tool(toolset = "file", emoji = "🔢")]
pub fn word_count(ctx: &ToolContext, path: String) -> Result<serde_json::Value, String> {
    let full = ctx.cwd().join(&path);
    let file = std::fs::File::open(&full).map_err(|e| format!("cannot open {path}: {e}"))?;
    let (mut lines, mut words, mut chars) = (0u64, 0u64, 0u64);
    // Line by line, each line at most 1 MiB: a huge file is counted in
    // bounded memory.
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    loop {
        line.clear();
        let n = (&mut reader)
            .take(1 << 20)
            .read_line(&mut line)
            .map_err(|e| format!("cannot read {path}: {e}"))?;
        if n == 0 {
            break;
        }
        if line.ends_with('\n') {
            lines += 1;
        }
        words += line.split_whitespace().count() as u64;
        chars += line.chars().count() as u64;
    }
    Ok(serde_json::json!({ "path": path, "lines": lines, "words": words, "chars": chars }))
}
