//! Bounded capture of a command's output: the first `head` bytes and the
//! last `tail` bytes are kept, the middle is counted and dropped, so a
//! chatty command never grows memory without bound. Rendering marks the cut
//! clearly and strips terminal escape sequences.

use std::collections::VecDeque;

/// Captured output of one command.
#[derive(Debug, Clone)]
pub struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl Capture {
    pub fn new(head_cap: usize, tail_cap: usize) -> Self {
        Capture {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap,
            total: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Bytes written so far, kept or not.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Bytes dropped from the middle.
    pub fn omitted_bytes(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// The output as text: head, a notice where the middle was dropped,
    /// tail; escape sequences stripped, `\r\n` as `\n`.
    pub fn render(&self) -> String {
        let omitted = self.omitted_bytes();
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if omitted == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return clean(&String::from_utf8_lossy(&all));
        }
        format!(
            "{}\n\n... [OUTPUT TRUNCATED - {omitted} bytes omitted out of {} total] ...\n\n{}",
            clean(&decode_head(&self.head)),
            self.total,
            clean(&decode_tail(&tail)),
        )
    }

    /// The last `n` characters of [`Capture::render`].
    pub fn render_tail(&self, n: usize) -> String {
        last_chars(&self.render(), n)
    }
}

/// The last `n` characters of `text`.
pub fn last_chars(text: &str, n: usize) -> String {
    let count = text.chars().count();
    text.chars().skip(count.saturating_sub(n)).collect()
}

/// Decodes bytes cut at the end: an incomplete last character is dropped.
fn decode_head(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(e) if e.error_len().is_none() => {
            String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Decodes bytes cut at the start: leading continuation bytes are dropped.
fn decode_tail(bytes: &[u8]) -> String {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0b1100_0000) == 0b1000_0000)
        .count();
    String::from_utf8_lossy(&bytes[skip..]).into_owned()
}

/// Strips ANSI escape sequences (CSI, OSC and two-byte escapes) and turns
/// `\r\n` into `\n`, so the model never sees terminal formatting.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates, then one final byte.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ESC \.
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' if chars.peek() == Some(&'\n') => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_below_the_caps() {
        let mut c = Capture::new(4, 4);
        c.push(b"abc");
        c.push(b"defgh");
        assert_eq!(c.render(), "abcdefgh");
        assert_eq!(c.omitted_bytes(), 0);
    }

    #[test]
    fn drops_the_middle_and_says_so() {
        let mut c = Capture::new(3, 3);
        for chunk in [&b"abcd"[..], b"efgh", b"ijkl"] {
            c.push(chunk);
        }
        assert_eq!(c.total_bytes(), 12);
        assert_eq!(
            c.render(),
            "abc\n\n... [OUTPUT TRUNCATED - 6 bytes omitted out of 12 total] ...\n\njkl"
        );
        let mut big = Capture::new(2, 2);
        big.push(b"0123456789");
        assert!(big.render().starts_with("01\n") && big.render().ends_with("\n89"));
    }

    #[test]
    fn never_splits_a_character() {
        let mut c = Capture::new(2, 2);
        c.push("é..é".as_bytes()); // 6 bytes: c3 a9 2e 2e c3 a9
        c.push("xé".as_bytes());
        let text = c.render();
        assert!(!text.contains('\u{fffd}'), "{text:?}");
        assert!(text.starts_with('é') && text.ends_with('é'), "{text:?}");
    }

    #[test]
    fn strips_escape_sequences() {
        assert_eq!(
            clean("\u{1b}[1;31mred\u{1b}[0m ok\r\n\u{1b}]0;title\u{7}x"),
            "red ok\nx"
        );
        assert_eq!(last_chars("héllo", 3), "llo");
    }
}
