//! What a non-zero exit code means when it is not a failure: `grep` finding
//! nothing, `diff` finding differences, `test` being false. The reference
//! adds such a note (`exit_code_meaning`) so the model does not chase an
//! error that is none; these are the same commands and codes, in our words.

/// A note for `exit_code` of `command`, when the command that decides the
/// exit code (the last of a pipeline or list) gives it a known meaning.
pub fn meaning(command: &str, exit_code: i32) -> Option<&'static str> {
    if exit_code == 0 {
        return None;
    }
    let program = deciding_program(command)?;
    let text = match (program.as_str(), exit_code) {
        ("grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack", 1) => "nothing matched (not an error)",
        ("diff" | "colordiff", 1) => "the inputs differ (expected, not an error)",
        ("find", 1) => "some folders could not be read; the results found may still be valid",
        ("test" | "[", 1) => "the condition is false (expected, not an error)",
        ("curl", 6) => "the host name could not be resolved",
        ("curl", 7) => "the connection to the host failed",
        ("curl", 22) => "the server answered with an HTTP error status (such as 404 or 500)",
        ("curl", 28) => "the transfer timed out",
        ("git", 1) => "often not an error (git diff exits 1 when there are differences)",
        _ => return None,
    };
    Some(text)
}

/// The program name of the last command of a list or pipeline (`a && b`,
/// `a | b`, `a; b`), past `NAME=value` assignments, without its folder.
fn deciding_program(command: &str) -> Option<String> {
    let list = command.replace("||", ";").replace("&&", ";");
    let last = list
        .split(['|', ';'])
        .map(str::trim)
        .rfind(|s| !s.is_empty())?;
    let word = last
        .split_whitespace()
        .find(|w| !w.contains('=') || w.starts_with('-'))?;
    word.rsplit('/').next().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::meaning;

    #[test]
    fn known_codes_of_known_commands() {
        assert!(meaning("grep -r foo src", 1).is_some_and(|m| m.contains("matched")));
        assert!(meaning("cat x | /usr/bin/grep -q y", 1).is_some());
        assert!(meaning("LC_ALL=C diff a b", 1).is_some_and(|m| m.contains("differ")));
        assert!(meaning("make && [ -f out ]", 1).is_some());
        assert!(meaning("curl -f http://x", 22).is_some());
        assert_eq!(meaning("grep foo f", 0), None);
        assert_eq!(meaning("grep foo f", 2), None, "2 is a real grep error");
        assert_eq!(meaning("grep foo f; false", 1), None, "false decides");
        assert_eq!(meaning("false", 1), None);
        assert_eq!(meaning("  ", 1), None);
        assert!(
            meaning("grep x f 2>&1", 1).is_some(),
            "a redirection is no list"
        );
    }
}
