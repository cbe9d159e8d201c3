//! The direct decode: a call's raw JSON text straight into the tool's
//! parameter types, with no `serde_json::Value` in between.
//!
//! Coercion only ever changes a value whose JSON type the schema does not
//! accept, and the schema is derived from the parameter types. So when the
//! raw text decodes into those types as it is, coercion would have changed
//! nothing, and dispatch skips it (and the `Value`). When it does not decode
//! — a wrong type, a `null` for a required parameter, a duplicate key, a
//! missing parameter, anything but an object — the decode gives up without
//! a message and the call takes the `Value` path (coercion, then the
//! per-parameter decode with its error messages). One consequence,
//! documented in ARCHITECTURE.md: a parameter type whose `Deserialize`
//! accepts more than its schema admits sees the model's value as sent.
//!
//! The macro builds a tuple of [`Slot`]s, one per property in declaration
//! order, and calls [`decode_direct`] with a `match` from key to slot.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};

/// One property's place in a direct decode.
pub trait Slot {
    /// What the tool function receives.
    type Out;
    /// Decodes the property's value from `map` (its key was just read).
    fn fill<'de, A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<(), A::Error>;
    /// The value, or `None` when a required property never came.
    fn finish(self) -> Option<Self::Out>;
}

/// A required parameter of type `T`: present and not `null`.
pub struct Required<T>(Option<T>);

/// An `Option<T>` parameter: absent or `null` is `None`.
pub struct Optional<T>(Option<Option<T>>);

/// The slot of a type that cannot be a parameter. The macro's
/// `assert_param` has already failed the build for it; this only keeps the
/// rest of the expansion free of follow-on errors. Never run.
pub struct Unsupported<T>(PhantomData<fn() -> T>);

impl<T> Default for Required<T> {
    fn default() -> Self {
        Required(None)
    }
}

impl<T> Default for Optional<T> {
    fn default() -> Self {
        Optional(None)
    }
}

impl<T> Default for Unsupported<T> {
    fn default() -> Self {
        Unsupported(PhantomData)
    }
}

fn duplicate<E: de::Error>() -> E {
    E::custom("duplicate key")
}

impl<T: DeserializeOwned> Slot for Required<T> {
    type Out = T;
    fn fill<'de, A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<(), A::Error> {
        if self.0.is_some() {
            return Err(duplicate());
        }
        match map.next_value::<Option<T>>()? {
            Some(v) => {
                self.0 = Some(v);
                Ok(())
            }
            None => Err(de::Error::custom("null for a required parameter")),
        }
    }
    fn finish(self) -> Option<T> {
        self.0
    }
}

impl<T: DeserializeOwned> Slot for Optional<T> {
    type Out = Option<T>;
    fn fill<'de, A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<(), A::Error> {
        if self.0.is_some() {
            return Err(duplicate());
        }
        self.0 = Some(map.next_value::<Option<T>>()?);
        Ok(())
    }
    fn finish(self) -> Option<Option<T>> {
        Some(self.0.unwrap_or(None))
    }
}

impl<T> Slot for Unsupported<T> {
    type Out = T;
    fn fill<'de, A: MapAccess<'de>>(&mut self, _: &mut A) -> Result<(), A::Error> {
        Err(de::Error::custom("unsupported parameter type"))
    }
    fn finish(self) -> Option<T> {
        None
    }
}

/// A tuple of [`Slot`]s, addressed by position.
pub trait Slots {
    type Out;
    fn fill<'de, A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error>;
    fn finish(self) -> Option<Self::Out>;
}

macro_rules! slots {
    ($($s:ident $i:tt),*) => {
        impl<$($s: Slot),*> Slots for ($($s,)*) {
            type Out = ($($s::Out,)*);
            #[allow(unused_variables)]
            fn fill<'de, A: MapAccess<'de>>(
                &mut self,
                index: usize,
                map: &mut A,
            ) -> Result<(), A::Error> {
                match index {
                    $($i => self.$i.fill(map),)*
                    _ => map.next_value::<IgnoredAny>().map(drop),
                }
            }
            fn finish(self) -> Option<Self::Out> {
                Some(($(self.$i.finish()?,)*))
            }
        }
    };
}

// Up to 12 properties: the macro's `MAX_DIRECT_PARAMS`. A tool with more
// always takes the `Value` path.
slots!();
slots!(S0 0);
slots!(S0 0, S1 1);
slots!(S0 0, S1 1, S2 2);
slots!(S0 0, S1 1, S2 2, S3 3);
slots!(S0 0, S1 1, S2 2, S3 3, S4 4);
slots!(S0 0, S1 1, S2 2, S3 3, S4 4, S5 5);
slots!(S0 0, S1 1, S2 2, S3 3, S4 4, S5 5, S6 6);
slots!(S0 0, S1 1, S2 2, S3 3, S4 4, S5 5, S6 6, S7 7);
slots!(S0 0, S1 1, S2 2, S3 3, S4 4, S5 5, S6 6, S7 7, S8 8);
slots!(S0 0, S1 1, S2 2, S3 3, S4 4, S5 5, S6 6, S7 7, S8 8, S9 9);
slots!(S0 0, S1 1, S2 2, S3 3, S4 4, S5 5, S6 6, S7 7, S8 8, S9 9, S10 10);
slots!(S0 0, S1 1, S2 2, S3 3, S4 4, S5 5, S6 6, S7 7, S8 8, S9 9, S10 10, S11 11);

/// Decodes `raw` (a JSON object) into `slots`; `slot_of` maps a key to its
/// slot's position (`usize::MAX`: not a parameter, skipped). `None` when
/// anything is off; the caller then takes the `Value` path, which explains
/// the problem.
pub fn decode_direct<S: Slots, K: Fn(&str) -> usize + Copy>(
    raw: &str,
    slot_of: K,
    slots: S,
) -> Option<S::Out> {
    let mut de = serde_json::Deserializer::from_str(raw);
    let out = ObjectSeed { slot_of, slots }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(out)
}

/// The `args: T` form: the whole object into `T`. Only an object: serde's
/// derived structs would also accept an array.
pub fn decode_whole<T: DeserializeOwned>(raw: &str) -> Option<T> {
    if !raw.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str(raw).ok()
}

struct ObjectSeed<S, K> {
    slot_of: K,
    slots: S,
}

impl<'de, S: Slots, K: Fn(&str) -> usize + Copy> DeserializeSeed<'de> for ObjectSeed<S, K> {
    type Value = S::Out;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<S::Out, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, S: Slots, K: Fn(&str) -> usize + Copy> Visitor<'de> for ObjectSeed<S, K> {
    type Value = S::Out;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an arguments object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<S::Out, A::Error> {
        while let Some(index) = map.next_key_seed(KeySeed(self.slot_of))? {
            self.slots.fill(index, &mut map)?;
        }
        self.slots
            .finish()
            .ok_or_else(|| de::Error::custom("a required parameter is missing"))
    }
}

/// A key, as its slot's position (`usize::MAX`: not a parameter).
struct KeySeed<K>(K);

impl<'de, K: Fn(&str) -> usize> DeserializeSeed<'de> for KeySeed<K> {
    type Value = usize;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, K: Fn(&str) -> usize> Visitor<'de> for KeySeed<K> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a property name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<usize, E> {
        Ok((self.0)(key))
    }
}
