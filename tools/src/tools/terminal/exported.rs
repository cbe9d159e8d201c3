//! Reading back what bash's `export -p` prints: the exported variables of
//! a shell, as a session keeps them.
//!
//! `export -p` is one builtin, where listing the variables with bash's own
//! expansions took a millisecond; its text is bash's quoting, read here.
//! Each entry is a line `declare -FLAGS NAME="VALUE"` (`export NAME=...`
//! in POSIX mode), with the value in one of three forms:
//!
//! - `"..."`: `\` escapes `"`, `\`, `$` and `` ` ``; anything else is as
//!   is, newlines included;
//! - `$'...'`: ANSI-C quoting, used when the value holds a character that
//!   does not print (a newline, a control character);
//! - `(...)`: an array; arrays are not passed to programs, so they are
//!   skipped, as are names exported without a value.
//!
//! Text that does not follow this grammar ends the reading with `None`:
//! the session then keeps its previous state and says so.

use std::collections::BTreeMap;

/// The exported variables `text` (the output of `export -p`) lists;
/// `None` when it is not such output.
pub fn parse(text: &str) -> Option<BTreeMap<String, String>> {
    let mut vars = BTreeMap::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches('\n');
        if rest.is_empty() {
            return Some(vars);
        }
        let (array, after) = if let Some(after) = rest.strip_prefix("declare -") {
            let (flags, after) = after.split_once(' ')?;
            (flags.contains(['a', 'A']), after)
        } else {
            (false, rest.strip_prefix("export ")?)
        };
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let (name, after) = after.split_at(name_len);
        if name.is_empty() {
            return None;
        }
        let Some(after) = after.strip_prefix('=') else {
            // Exported without a value: not in a program's environment.
            rest = after;
            continue;
        };
        let (value, after) = if let Some(quoted) = after.strip_prefix('"') {
            double_quoted(quoted)?
        } else if let Some(quoted) = after.strip_prefix("$'") {
            ansi_c_quoted(quoted)?
        } else if let Some(inner) = after.strip_prefix('(') {
            (String::new(), skip_array(inner)?)
        } else {
            return None;
        };
        if !(after.is_empty() || after.starts_with('\n')) {
            return None;
        }
        if !array {
            vars.insert(name.to_string(), value);
        }
        rest = after;
    }
}

/// The value of `"..."` (after its opening quote) and the text after its
/// closing quote.
fn double_quoted(text: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, &text[i + 1..])),
            '\\' => match chars.next() {
                Some((_, e @ ('"' | '\\' | '$' | '`'))) => value.push(e),
                Some((_, e)) => {
                    value.push('\\');
                    value.push(e);
                }
                None => return None,
            },
            c => value.push(c),
        }
    }
    None
}

/// The value of `$'...'` (after its opening) and the text after its
/// closing quote. Escapes bash writes: `\a \b \e \E \f \n \r \t \v \\ \'
/// \"`, `\?`, octal `\NNN`, `\xHH`; an unknown escape stays as written.
fn ansi_c_quoted(text: &str) -> Option<(String, &str)> {
    let mut bytes: Vec<u8> = Vec::new();
    let raw = text.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        i += 1;
        match c {
            b'\'' => {
                let value = String::from_utf8_lossy(&bytes).into_owned();
                return Some((value, text.get(i..)?));
            }
            b'\\' => {
                let e = *raw.get(i)?;
                i += 1;
                let simple = match e {
                    b'a' => Some(0x07),
                    b'b' => Some(0x08),
                    b'e' | b'E' => Some(0x1b),
                    b'f' => Some(0x0c),
                    b'n' => Some(b'\n'),
                    b'r' => Some(b'\r'),
                    b't' => Some(b'\t'),
                    b'v' => Some(0x0b),
                    b'\\' | b'\'' | b'"' | b'?' => Some(e),
                    _ => None,
                };
                if let Some(b) = simple {
                    bytes.push(b);
                } else if (b'0'..=b'7').contains(&e) {
                    let mut n = u32::from(e - b'0');
                    for _ in 0..2 {
                        match raw.get(i) {
                            Some(d @ b'0'..=b'7') => {
                                n = n * 8 + u32::from(d - b'0');
                                i += 1;
                            }
                            _ => break,
                        }
                    }
                    bytes.push(u8::try_from(n & 0xff).unwrap_or(0));
                } else if e == b'x' {
                    let mut n = 0u32;
                    let mut digits = 0;
                    while digits < 2 {
                        match raw.get(i).and_then(|d| char::from(*d).to_digit(16)) {
                            Some(d) => {
                                n = n * 16 + d;
                                i += 1;
                                digits += 1;
                            }
                            None => break,
                        }
                    }
                    if digits == 0 {
                        bytes.extend_from_slice(b"\\x");
                    } else {
                        bytes.push(u8::try_from(n).unwrap_or(0));
                    }
                } else {
                    bytes.push(b'\\');
                    bytes.push(e);
                }
            }
            c => bytes.push(c),
        }
    }
    None
}

/// The text after an array's closing parenthesis (`inner` follows the
/// opening one): its elements' values are quoted as above.
fn skip_array(inner: &str) -> Option<&str> {
    let mut rest = inner;
    loop {
        let at = rest.find(['"', '\'', ')'])?;
        let (before, from) = rest.split_at(at);
        if let Some(after) = from.strip_prefix(')') {
            return Some(after);
        }
        rest = if let Some(quoted) = from.strip_prefix('"') {
            double_quoted(quoted)?.1
        } else if let (true, Some(quoted)) = (before.ends_with('$'), from.strip_prefix('\'')) {
            ansi_c_quoted(quoted)?.1
        } else {
            // A single quote bash does not write: not its output.
            return None;
        };
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn reads_every_form_bash_prints() {
        let text = "declare -ax ARR=([0]=\"1\" [1]=\"2 )\" [2]=$'a\\nb')\n\
                    declare -Ax AS=([k]=\"v\" )\n\
                    declare -x E=\"é\"\n\
                    declare -x F=$'\\001q\\x7f\\e'\n\
                    declare -ix I=\"5\"\n\
                    declare -x N=$'a\\nb\\'c'\n\
                    declare -x OLDPWD\n\
                    declare -x Q=\"a\\\"b\\\\c\\$d\\`e\nline two\"\n\
                    export P=\"posix\"\n";
        let vars = parse(text).expect("parses");
        let got: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            got,
            [
                ("E", "é"),
                ("F", "\u{1}q\u{7f}\u{1b}"),
                ("I", "5"),
                ("N", "a\nb'c"),
                ("P", "posix"),
                ("Q", "a\"b\\c$d`e\nline two"),
            ]
        );
    }

    #[test]
    fn what_is_not_its_output_is_refused_without_panic() {
        for text in [
            "declare -x A=\"open",
            "declare -x A=$'open\\",
            "declare -x =\"x\"",
            "declare -x A=unquoted",
            "declare -x A=\"x\" trailing",
            "declare -ax A=([0]='x')",
            "something else",
            "declare -x",
            "declare -x A=$'\\x",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
        assert_eq!(parse("").map(|v| v.len()), Some(0));
    }
}
