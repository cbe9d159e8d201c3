//! Constraints a plain parameter states with `#[schemars(range(...))]`,
//! `length(...)`, `regex(...)` and `#[serde(default)]` (see
//! `hermes_tool_model::constraints`): written into its schema and checked
//! when its value is decoded, on the full pipeline and the direct path alike.
//!
//! Which types can carry which constraint is a trait each ([`RangeParam`],
//! [`LengthParam`], [`PatternParam`]); the macro asserts it, spanned on the
//! attribute, and reaches the checks through an autoref probe ([`Check`]) so
//! a type without the trait reports that one error.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::{Map, Value};

/// A type `#[schemars(range(...))]` applies to: a number.
#[diagnostic::on_unimplemented(
    message = "`range(...)` does not apply to `{Self}`",
    label = "`range` bounds a number",
    note = "`range(min = .., max = ..)` goes on an integer or float parameter; a string or list takes `length(...)`"
)]
pub trait RangeParam {
    fn range_value(&self) -> f64;
}

macro_rules! range_param {
    ($($t:ty),*) => {$(
        impl RangeParam for $t {
            #[allow(clippy::cast_precision_loss, clippy::cast_lossless)]
            fn range_value(&self) -> f64 {
                *self as f64
            }
        }
    )*};
}
range_param!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);

/// A type `#[schemars(length(...))]` applies to: a string (characters), a
/// list or set (items), a map (entries).
#[diagnostic::on_unimplemented(
    message = "`length(...)` does not apply to `{Self}`",
    label = "`length` bounds a string, a list or a map",
    note = "`length(min = .., max = ..)` goes on a `String`, `Vec<T>`, set or map parameter; a number takes `range(...)`"
)]
pub trait LengthParam {
    /// The schema keywords of its lower and upper bound.
    const KEYWORDS: (&'static str, &'static str);
    /// What the length counts, for errors ("characters", "items", "entries").
    const UNIT: &'static str;
    fn length(&self) -> usize;
}

impl LengthParam for String {
    const KEYWORDS: (&'static str, &'static str) = ("minLength", "maxLength");
    const UNIT: &'static str = "characters";
    fn length(&self) -> usize {
        // JSON Schema counts code points.
        self.chars().count()
    }
}

macro_rules! length_param {
    ($unit:literal, $min:literal, $max:literal, $($t:ident<$($g:ident),*>),*) => {$(
        impl<$($g),*> LengthParam for $t<$($g),*> {
            const KEYWORDS: (&'static str, &'static str) = ($min, $max);
            const UNIT: &'static str = $unit;
            fn length(&self) -> usize {
                self.len()
            }
        }
    )*};
}
length_param!("items", "minItems", "maxItems", Vec<T>, HashSet<T, S>, BTreeSet<T>);
length_param!("entries", "minProperties", "maxProperties", HashMap<K, V, S>, BTreeMap<K, V>);

/// A type `#[schemars(regex(pattern = ...))]` applies to: a string.
#[diagnostic::on_unimplemented(
    message = "`regex(...)` / `pattern(...)` does not apply to `{Self}`",
    label = "a pattern constrains a string",
    note = "a pattern goes on a `String` parameter"
)]
pub trait PatternParam {
    fn text(&self) -> &str;
}

impl PatternParam for String {
    fn text(&self) -> &str {
        self
    }
}

pub const fn assert_range<T: RangeParam>() {}
pub const fn assert_length<T: LengthParam>() {}
pub const fn assert_pattern<T: PatternParam>() {}

/// A compiled `pattern`, once per parameter and process.
#[derive(Debug)]
pub struct PatternCell(OnceLock<Option<regex::Regex>>);

impl PatternCell {
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        PatternCell(OnceLock::new())
    }

    fn regex(&self, pattern: &str) -> Option<&regex::Regex> {
        self.0
            .get_or_init(|| regex::Regex::new(pattern).ok())
            .as_ref()
    }
}

/// The probe the macro calls the checks through: `(&Check::<T>::NEW).op()`
/// picks the `Via*` impl when `T` has the trait, the fallback otherwise
/// (which only compiles; the assertion reports the error).
pub struct Check<T: ?Sized>(std::marker::PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> Check<T> {
    pub const NEW: Self = Check(std::marker::PhantomData);
}

/// Where the value came from, for errors.
#[derive(Debug, Clone, Copy)]
pub struct At {
    pub tool: &'static str,
    pub param: &'static str,
}

impl At {
    fn error(self, what: String) -> String {
        crate::error_json(format!(
            "Invalid value for parameter '{}' of tool '{}': {what}",
            self.param, self.tool
        ))
    }
}

pub trait ViaRange<T> {
    fn check_range(&self, at: At, v: &T, min: Option<f64>, max: Option<f64>) -> Result<(), String>;
}
impl<T: RangeParam> ViaRange<T> for Check<T> {
    fn check_range(&self, at: At, v: &T, min: Option<f64>, max: Option<f64>) -> Result<(), String> {
        let x = v.range_value();
        if let Some(min) = min.filter(|m| x < *m) {
            return Err(at.error(format!("{} is below the minimum {}", show(x), show(min))));
        }
        if let Some(max) = max.filter(|m| x > *m) {
            return Err(at.error(format!("{} is above the maximum {}", show(x), show(max))));
        }
        Ok(())
    }
}
pub trait RangeFallback<T> {
    fn check_range(&self, at: At, v: &T, min: Option<f64>, max: Option<f64>) -> Result<(), String>;
}
impl<T> RangeFallback<T> for &Check<T> {
    fn check_range(&self, _: At, _: &T, _: Option<f64>, _: Option<f64>) -> Result<(), String> {
        Ok(())
    }
}

pub trait ViaLength<T> {
    fn check_length(
        &self,
        at: At,
        v: &T,
        min: Option<usize>,
        max: Option<usize>,
    ) -> Result<(), String>;
    fn length_keywords(&self) -> (&'static str, &'static str);
}
impl<T: LengthParam> ViaLength<T> for Check<T> {
    fn check_length(
        &self,
        at: At,
        v: &T,
        min: Option<usize>,
        max: Option<usize>,
    ) -> Result<(), String> {
        let n = v.length();
        if let Some(min) = min.filter(|m| n < *m) {
            return Err(at.error(format!("{n} {}, at least {min} needed", T::UNIT)));
        }
        if let Some(max) = max.filter(|m| n > *m) {
            return Err(at.error(format!("{n} {}, at most {max} allowed", T::UNIT)));
        }
        Ok(())
    }
    fn length_keywords(&self) -> (&'static str, &'static str) {
        T::KEYWORDS
    }
}
pub trait LengthFallback<T> {
    fn check_length(
        &self,
        at: At,
        v: &T,
        min: Option<usize>,
        max: Option<usize>,
    ) -> Result<(), String>;
    fn length_keywords(&self) -> (&'static str, &'static str);
}
impl<T> LengthFallback<T> for &Check<T> {
    fn check_length(&self, _: At, _: &T, _: Option<usize>, _: Option<usize>) -> Result<(), String> {
        Ok(())
    }
    fn length_keywords(&self) -> (&'static str, &'static str) {
        ("minLength", "maxLength")
    }
}

pub trait ViaPattern<T> {
    fn check_pattern(
        &self,
        at: At,
        v: &T,
        pattern: &'static str,
        cell: &'static PatternCell,
    ) -> Result<(), String>;
}
impl<T: PatternParam> ViaPattern<T> for Check<T> {
    fn check_pattern(
        &self,
        at: At,
        v: &T,
        pattern: &'static str,
        cell: &'static PatternCell,
    ) -> Result<(), String> {
        match cell.regex(pattern) {
            Some(re) if re.is_match(v.text()) => Ok(()),
            Some(_) => Err(at.error(format!("does not match the pattern {pattern}"))),
            None => Err(at.error(format!(
                "the tool's pattern {pattern} is not a valid regular expression"
            ))),
        }
    }
}
pub trait PatternFallback<T> {
    fn check_pattern(
        &self,
        at: At,
        v: &T,
        pattern: &'static str,
        cell: &'static PatternCell,
    ) -> Result<(), String>;
}
impl<T> PatternFallback<T> for &Check<T> {
    fn check_pattern(
        &self,
        _: At,
        _: &T,
        _: &'static str,
        _: &'static PatternCell,
    ) -> Result<(), String> {
        Ok(())
    }
}

/// The schema's `default`: the value, when its type is `Serialize`.
pub trait ViaDefault<T> {
    fn default_json(&self, make: fn() -> T) -> Option<Value>;
}
impl<T: Serialize> ViaDefault<T> for Check<T> {
    fn default_json(&self, make: fn() -> T) -> Option<Value> {
        serde_json::to_value(make()).ok()
    }
}
pub trait DefaultFallback<T> {
    fn default_json(&self, make: fn() -> T) -> Option<Value>;
}
impl<T> DefaultFallback<T> for &Check<T> {
    fn default_json(&self, _: fn() -> T) -> Option<Value> {
        None
    }
}

/// What the macro writes into one property's schema.
#[derive(Debug, Default)]
pub struct SchemaConstraints {
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    /// (lower keyword, upper keyword, min, max).
    pub length: Option<(&'static str, &'static str, Option<usize>, Option<usize>)>,
    pub pattern: Option<&'static str>,
    pub default: Option<Value>,
}

impl SchemaConstraints {
    pub(crate) fn apply(self, schema: &mut Map<String, Value>) {
        if let Some(min) = self.minimum {
            schema.insert("minimum".into(), number(min));
        }
        if let Some(max) = self.maximum {
            schema.insert("maximum".into(), number(max));
        }
        if let Some((lo, hi, min, max)) = self.length {
            if let Some(min) = min {
                schema.insert(lo.into(), Value::from(min));
            }
            if let Some(max) = max {
                schema.insert(hi.into(), Value::from(max));
            }
        }
        if let Some(p) = self.pattern {
            schema.insert("pattern".into(), Value::String(p.into()));
        }
        if let Some(d) = self.default {
            schema.insert("default".into(), d);
        }
    }
}

/// A bound as JSON: an integer when it is one.
fn number(x: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if x.fract() == 0.0 && x.abs() < EXACT {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

fn show(x: f64) -> String {
    number(x).to_string()
}
