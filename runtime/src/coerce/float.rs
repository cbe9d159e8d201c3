//! Python's `float()` (and `int()` through it) on a string: what a numeric
//! string becomes, digit for digit.

use super::*;

/// Zero code points of every run of ten non-ASCII decimal digits (Unicode 14
/// `Nd`, the set CPython 3.11's `float()` accepts), sorted.
pub(super) const DIGIT_ZEROS: [u32; 65] = [
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6,
    0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50,
    0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The ASCII digit for a non-ASCII Unicode decimal digit.
pub(super) fn unicode_digit(c: char) -> Option<u8> {
    let cp = u32::from(c);
    let idx = DIGIT_ZEROS.partition_point(|&z| z <= cp).checked_sub(1)?;
    let offset = cp - DIGIT_ZEROS[idx];
    // `offset < 10` makes the narrowing exact.
    (offset < 10).then(|| b'0' + offset as u8)
}

/// A number string in Python `float()` syntax, split into its parts.
pub(super) struct Decimal {
    negative: bool,
    /// Integer-part digits followed by fraction digits, ASCII, no underscores.
    digits: Vec<u8>,
    /// How many of `digits` are fraction digits.
    frac_len: usize,
    /// The exponent, saturated to +-EXP_CAP.
    exp: i64,
}

pub(super) const EXP_CAP: i64 = 1_000_000_000_000_000;

/// Reads `s` with the syntax of Python's `float()`. `None` for anything else,
/// and for `nan` / `inf` / `infinity`, which stay strings.
pub(super) fn parse_decimal(s: &str) -> Option<Decimal> {
    let t = s.trim_matches(char::is_whitespace);
    let ascii: Cow<'_, [u8]> = if t.is_ascii() {
        Cow::Borrowed(t.as_bytes())
    } else {
        let mut mapped = Vec::with_capacity(t.len());
        for c in t.chars() {
            if c.is_ascii() {
                mapped.push(c as u8);
            } else {
                mapped.push(unicode_digit(c)?);
            }
        }
        Cow::Owned(mapped)
    };
    let b: &[u8] = &ascii;
    let mut pos = 0;
    let mut negative = false;
    if let Some(&sign @ (b'+' | b'-')) = b.first() {
        negative = sign == b'-';
        pos = 1;
    }
    let mut int_digits = Vec::with_capacity(b.len());
    pos = digit_part(b, pos, &mut int_digits)?;
    let int_len = int_digits.len();
    let mut frac_digits = Vec::new();
    if b.get(pos) == Some(&b'.') {
        pos = digit_part(b, pos + 1, &mut frac_digits)?;
    }
    let frac_len = frac_digits.len();
    if int_len == 0 && frac_len == 0 {
        return None; // also covers nan / inf / infinity
    }
    let mut exp: i64 = 0;
    if let Some(b'e' | b'E') = b.get(pos) {
        pos += 1;
        let mut exp_negative = false;
        if let Some(&sign @ (b'+' | b'-')) = b.get(pos) {
            exp_negative = sign == b'-';
            pos += 1;
        }
        let mut exp_digits = Vec::new();
        pos = digit_part(b, pos, &mut exp_digits)?;
        if exp_digits.is_empty() {
            return None;
        }
        for d in exp_digits {
            exp = (exp * 10 + i64::from(d - b'0')).min(EXP_CAP);
        }
        if exp_negative {
            exp = -exp;
        }
    }
    if pos != b.len() {
        return None;
    }
    let mut digits = int_digits;
    digits.append(&mut frac_digits);
    Some(Decimal {
        negative,
        digits,
        frac_len,
        exp,
    })
}

/// Reads `digit (["_"] digit)*` at `pos` into `out` and returns the position
/// after it; returns `pos` itself when no digit starts there, and `None` when an
/// underscore is not followed by a digit.
pub(super) fn digit_part(b: &[u8], mut pos: usize, out: &mut Vec<u8>) -> Option<usize> {
    loop {
        match b.get(pos) {
            Some(d) if d.is_ascii_digit() => {
                out.push(*d);
                pos += 1;
            }
            // An underscore only ever follows a digit here (after a digit was read).
            Some(b'_') if !out.is_empty() => {
                if !b.get(pos + 1).is_some_and(u8::is_ascii_digit) {
                    return None;
                }
                pos += 1;
            }
            _ => return Some(pos),
        }
    }
}

/// A whole number as a JSON integer, if it fits `i64` or `u64`.
pub(super) fn int_value(negative: bool, magnitude: u128) -> Option<Value> {
    if negative {
        let v = i64::try_from(-i128::try_from(magnitude).ok()?).ok()?;
        Some(Value::from(v))
    } else {
        Some(Value::from(u64::try_from(magnitude).ok()?))
    }
}

/// The number rule: `integer_only` for `integer`, else `number`.
#[inline]
pub(super) fn coerce_number(s: &str, integer_only: bool) -> Option<Value> {
    // Fast path: a plain ASCII integer of at most 18 digits.
    let b = s.as_bytes();
    let (negative, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        let v = digits
            .iter()
            .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
        return Some(Value::from(if negative { -v } else { v }));
    }
    coerce_number_text(s, integer_only)
}

/// [`coerce_number`] past its fast path: Python `float()` syntax.
pub(super) fn coerce_number_text(s: &str, integer_only: bool) -> Option<Value> {
    let dec = parse_decimal(s)?;
    let Some(first) = dec.digits.iter().position(|&d| d != b'0') else {
        return Some(Value::from(0)); // any zero, including "-0" and "-0.0e5"
    };
    let last = dec.digits.iter().rposition(|&d| d != b'0').unwrap_or(first);
    let significant = &dec.digits[first..=last];
    let trailing_zeros = dec.digits.len() - 1 - last;
    let frac_len = i64::try_from(dec.frac_len).unwrap_or(i64::MAX);
    let trailing = i64::try_from(trailing_zeros).unwrap_or(i64::MAX);
    let exp10 = dec.exp.saturating_sub(frac_len).saturating_add(trailing);
    if exp10 >= 0 {
        // The exact value is whole: kept exactly when it fits 64 bits.
        let total = i64::try_from(significant.len())
            .unwrap_or(i64::MAX)
            .saturating_add(exp10);
        if total <= 20 {
            let mut magnitude: u128 = 0;
            for d in significant {
                magnitude = magnitude * 10 + u128::from(d - b'0');
            }
            for _ in 0..exp10 {
                magnitude *= 10;
            }
            if let Some(v) = int_value(dec.negative, magnitude) {
                return Some(v);
            }
        }
    }
    // Not whole, or beyond 64 bits: a correctly rounded f64, as Python's
    // float() gives.
    let mut text = String::with_capacity(significant.len() + 24);
    if dec.negative {
        text.push('-');
    }
    text.extend(significant.iter().map(|&d| char::from(d)));
    text.push('e');
    text.push_str(&exp10.to_string());
    let f: f64 = text.parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 {
        // Rounded to a whole float, as the reference does for e.g. "4.0000000000000001".
        if f == 0.0 {
            return Some(Value::from(0));
        }
        const TWO_63: f64 = 9_223_372_036_854_775_808.0;
        const TWO_64: f64 = 18_446_744_073_709_551_616.0;
        // The range checks make the conversions exact.
        if f.abs() < TWO_63 {
            return Some(Value::from(f as i64));
        }
        if f > 0.0 && f < TWO_64 {
            return Some(Value::from(f as u64));
        }
        if f == -TWO_63 {
            return Some(Value::from(i64::MIN));
        }
        // Beyond 64 bits: the float, for `integer` too (the reference's
        // whole number, which no 64-bit integer holds).
        return Number::from_f64(f).map(Value::Number);
    }
    if integer_only {
        return None;
    }
    Number::from_f64(f).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digit_table_is_sorted_and_runs_do_not_overlap() {
        assert!(DIGIT_ZEROS.windows(2).all(|w| w[0] + 10 <= w[1]));
        assert_eq!(unicode_digit('\u{665}'), Some(b'5'));
        assert_eq!(unicode_digit('\u{1D7FF}'), Some(b'9'));
        assert_eq!(unicode_digit('\u{66A}'), None);
        assert_eq!(unicode_digit('\u{65F}'), None);
    }
}
