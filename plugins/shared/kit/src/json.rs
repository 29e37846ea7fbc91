//! A JSON value that keeps object keys in file order and refuses duplicate keys at any depth
//! (the safetensors header, a PaddlePaddle PIR program).
//!
//! serde_json's own `Value` keeps the last of two equal keys, which is how a header can say one
//! thing to this reader and another to a reader that keeps the first: a parser differential.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A non-negative integer that fits in 64 bits.
    Unsigned(u64),
    /// A negative integer.
    Negative(i64),
    /// Any other number.
    Float(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, keys in file order, no key twice.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Unsigned(_) | Json::Negative(_) | Json::Float(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// The message a duplicate key produces; the caller recognises it by this prefix.
pub const DUPLICATE_KEY: &str = "duplicate key ";

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Unsigned(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(if v >= 0 {
            Json::Unsigned(v.unsigned_abs())
        } else {
            Json::Negative(v)
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        // No size hint is trusted: the vector grows with the elements actually present.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries: Vec<(String, Json)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format_args!("{DUPLICATE_KEY}{key:?}")));
            }
            let value = map.next_value()?;
            entries.push((key, value));
        }
        Ok(Json::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Json, serde_json::Error> {
        serde_json::from_str(s)
    }

    #[test]
    fn keeps_order_and_refuses_duplicates_at_depth() {
        let v = parse(r#"{"b":1,"a":[true,null,-3,1.5,"x"]}"#).unwrap();
        let Json::Object(entries) = v else { panic!() };
        assert_eq!(entries[0].0, "b");
        assert_eq!(
            entries[1].1,
            Json::Array(vec![
                Json::Bool(true),
                Json::Null,
                Json::Negative(-3),
                Json::Float(1.5),
                Json::String("x".into())
            ])
        );
        let err = parse(r#"{"a":{"k":1,"k":2}}"#).unwrap_err();
        assert!(err.to_string().starts_with(DUPLICATE_KEY), "{err}");
    }

    #[test]
    fn escaped_duplicate_is_a_duplicate() {
        // "\u0061" is "a": the same key spelled differently must still be caught.
        let err = parse(r#"{"a":1,"\u0061":2}"#).unwrap_err();
        assert!(err.to_string().contains("duplicate key"), "{err}");
    }

    #[test]
    fn big_integers_are_floats() {
        assert_eq!(
            parse("18446744073709551616").unwrap(),
            Json::Float(18446744073709551616.0)
        );
        assert_eq!(
            parse("18446744073709551615").unwrap(),
            Json::Unsigned(u64::MAX)
        );
    }
}
