//! Table-driven tests for `sanitize_tool_error`, one table per rule.
//!
//! Expected outputs were checked against the reference implementation
//! (hermes-agent 0.19.0) by running it on the same inputs.

use hermes_runtime::sanitize::{sanitize_tool_error, MAX_ERROR_CHARS, TOOL_ERROR_PREFIX};

fn check(table: &[(&str, &str)]) {
    for (input, body) in table {
        let got = sanitize_tool_error(input);
        let want = format!("[TOOL_ERROR] {body}");
        assert_eq!(got, want, "input: {input:?}");
    }
}

#[test]
fn empty_message_gives_prefix_alone() {
    assert_eq!(sanitize_tool_error(""), "[TOOL_ERROR] ");
    // The prefix the constant names is the one the function writes.
    assert_eq!(sanitize_tool_error(""), TOOL_ERROR_PREFIX);
}

#[test]
fn text_is_not_trimmed() {
    check(&[
        ("   ", "   "),
        ("  plain error  ", "  plain error  "),
        ("no framing at all", "no framing at all"),
        ("line one\nline two\n", "line one\nline two\n"),
    ]);
}

#[test]
fn role_tags_are_removed_in_any_case() {
    check(&[
        ("<user>hi</user>", "hi"),
        ("<USER>hi</User>", "hi"),
        ("<Tool_Call>x</TOOL_CALL>", "x"),
        ("<function_call>f()</function_call>", "f()"),
        ("<result>r</result><response>s</response>", "rs"),
        ("<output>o</output><input>i</input>", "oi"),
        ("<system>sys</SYSTEM><assistant>a</Assistant>", "sysa"),
        // The reference also treats these non-ASCII letters as case variants.
        ("<İnput>ı<ınput>", "ı"),
        ("<ſyſtem>", ""),
        // One pass only: removing an inner tag can leave an outer one behind.
        ("<us<user>er>", "<user>"),
    ]);
}

#[test]
fn role_tag_lookalikes_are_kept() {
    check(&[
        ("<user >x", "<user >x"),
        ("< user>x", "< user>x"),
        ("<user id=1>x", "<user id=1>x"),
        ("<user/>x", "<user/>x"),
        ("<users>x", "<users>x"),
        ("<tool-call>x", "<tool-call>x"),
        ("<tool_call x=\"1\">", "<tool_call x=\"1\">"),
    ]);
}

#[test]
fn code_fences_are_removed() {
    check(&[
        // Opener with a known language tag, and the closer at a line end.
        ("```json\n{\"a\":1}\n```", "{\"a\":1}\n"),
        ("```xml\n<a/>\n```", "<a/>\n"),
        ("```html\n<p>\n```", "<p>\n"),
        ("```markdown", ""),
        ("```", ""),
        ("````", "`"),
        // Unknown or differently cased tags stay behind as text.
        ("```python\nx\n```", "python\nx\n"),
        ("```JSON\n{}\n```", "JSON\n{}\n"),
        // White space around an opener, blank lines included, goes with it.
        ("a\n   ```xml  \nb", "a\nb"),
        ("line1\n\n```\n\nline2", "line1\nline2"),
        ("a\r\n```\r\nb", "a\r\nb"),
        ("\u{3000}```json\u{3000}x", "x"),
        // A closer is a fence at a line end, with the white space before it.
        ("err: ```", "err:"),
        ("a```\nb", "a\nb"),
    ]);
}

#[test]
fn fences_mid_line_are_kept() {
    check(&[
        ("see ```json here", "see ```json here"),
        ("x ``` y", "x ``` y"),
        ("a\u{1c}```b", "a\u{1c}```b"),
    ]);
}

#[test]
fn cdata_blocks_are_removed_across_lines() {
    check(&[
        ("before<![CDATA[secret\nmore]]>after", "beforeafter"),
        ("<![CDATA[a]]>mid<![CDATA[b]]>", "mid"),
        ("<![CDATA[<user>]]>", ""),
        ("<![CDATA[```]]>x", "x"),
        ("<![CDATA[\n\n]]>", ""),
        // Unclosed or lower-case markers are not CDATA blocks.
        ("<![CDATA[unclosed", "<![CDATA[unclosed"),
        ("<![cdata[x]]>", "<![cdata[x]]>"),
    ]);
}

#[test]
fn rules_combine_in_order() {
    check(&[("<user>\n```json\n<![CDATA[x]]>\n```\n</user>", "\n")]);
}

#[test]
fn cap_counts_characters_not_bytes() {
    let cases: Vec<(String, String)> = vec![
        // At the cap: untouched.
        ("a".repeat(2000), "a".repeat(2000)),
        ("é".repeat(2000), "é".repeat(2000)),
        ("😀".repeat(2000), "😀".repeat(2000)),
        ("a".repeat(1999) + "é", "a".repeat(1999) + "é"),
        // One past the cap: first 1997 characters and "...".
        ("a".repeat(2001), "a".repeat(1997) + "..."),
        ("é".repeat(2001), "é".repeat(1997) + "..."),
        ("😀".repeat(3000), "😀".repeat(1997) + "..."),
        (
            "a".repeat(1996) + "日本語" + "xx",
            "a".repeat(1996) + "日...",
        ),
    ];
    for (input, body) in cases {
        let got = sanitize_tool_error(&input);
        assert_eq!(got, format!("[TOOL_ERROR] {body}"));
        assert!(got.chars().count() <= MAX_ERROR_CHARS + TOOL_ERROR_PREFIX.len());
    }
}

#[test]
fn cap_applies_after_removal_and_before_prefix() {
    // The tag is removed first, so 2000 characters remain: no cut.
    let input = format!("<user>{}", "a".repeat(2000));
    assert_eq!(
        sanitize_tool_error(&input),
        format!("[TOOL_ERROR] {}", "a".repeat(2000))
    );
    // The prefix is not counted: the cut body is MAX_ERROR_CHARS long.
    let out = sanitize_tool_error(&"b".repeat(5000));
    let body = format!("{}...", "b".repeat(MAX_ERROR_CHARS - 3));
    assert_eq!(out, format!("{TOOL_ERROR_PREFIX}{body}"));
}
