//! `Registry::dispatch_json` with a tool picked by the first byte and the
//! rest of the input as the raw argument text the model sent.
//!
//! Only tools that touch nothing outside the sandbox run (`terminal`,
//! `process`, `web_*`, `clarify` and `tool_call` never do), and only with
//! argument text that names no other folder ([`raw_confined`]). Checked:
//! no panic anywhere (libfuzzer-sys aborts on any panic, even one dispatch
//! would contain), no hang (`-timeout`), bounded memory (`-rss_limit_mb`),
//! and the answer is always one JSON object.
#![no_main]

use hermes_fuzz::{block_on, check_result, confined, registry, Sandbox};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// The names dispatched: the sandbox-safe built-in tools, the agent-loop
/// and bridge tools that answer without side effects, and near misses of
/// real names (the "did you mean" path).
const TOOLS: &[&str] = &[
    "read_file",
    "search_files",
    "write_file",
    "patch",
    "todo",
    "memory",
    "skills_list",
    "skill_view",
    "tool_search",
    "tool_describe",
    "session_search",
    "delegate_task",
    "read_fil",
    "Patch",
    "",
];

/// The tools of [`TOOLS`] that change the sandbox (the others only read it).
const WRITERS: &[&str] = &["write_file", "patch", "memory"];

/// The working folder every input starts from.
const FIXTURES: &[(&str, &[u8])] = &[
    ("notes.txt", b"alpha\nbeta\ngamma\nalpha beta\n"),
    ("main.rs", b"fn main() {\n    println!(\"hi\");\n}\n"),
    ("crlf.txt", b"one\r\ntwo\r\nthree\r\n"),
    ("data.bin", b"\x00\x01\x02binary\x00"),
    ("latin1.txt", b"caf\xe9 cr\xe8me\n"),
    ("empty.txt", b""),
    // Over `read_file`'s line cut (2000 characters), and no longer: a
    // search's cost grows with line length times pattern size (`x{2000}`),
    // and the runs here must stay well under `-timeout`.
    ("long.txt", &[b'x'; 2100]),
    (".gitignore", b"ignored.log\n"),
    ("ignored.log", b"alpha hidden\n"),
    (".hidden", b"alpha\n"),
    ("sub/deep.md", b"# Deep\nalpha\n"),
];

/// Whether raw argument text can only name paths inside the working
/// folder: no `/`, no `..`, and no escape that decodes to `/`, `\` or `.`
/// (so the decoded strings, and strings nested in them as JSON, hold no
/// separator either). Checked on the raw text, before any parser, so that
/// no decoder's reading of it matters.
fn raw_confined(raw: &str) -> bool {
    if raw.contains('/') || raw.contains("..") {
        return false;
    }
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            match bytes.get(i + 1) {
                Some(b'"' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u') => {
                    let hex = raw.get(i + 2..i + 6).unwrap_or("");
                    match u32::from_str_radix(hex, 16) {
                        Ok(0x2f | 0x5c | 0x2e) => return false,
                        _ => i += 2,
                    }
                }
                // `\\`, `\/` and anything else: refused.
                _ => return false,
            }
        } else {
            i += 1;
        }
    }
    true
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let tool = TOOLS[usize::from(pick) % TOOLS.len()];
    let raw = String::from_utf8_lossy(rest);
    if !raw_confined(&raw) {
        return;
    }
    if let Ok(value) = serde_json::from_str::<Value>(raw.trim()) {
        // Implied by `raw_confined`; checked again on what a decoder made of it.
        if !confined(&value) {
            return;
        }
    }
    let sandbox = Sandbox::get();
    sandbox.prepare(FIXTURES, WRITERS.contains(&tool));
    let session = sandbox.session();
    let result = block_on(registry().dispatch_json(tool, &raw, &session.context()));
    session.end();
    check_result(tool, &raw, &result);
});
