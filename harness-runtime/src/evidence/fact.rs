//! An order-preserving value tree for recorded facts.
//!
//! A snapshot reads best in the order the recording type declared its fields (a turn's trace
//! before its messages), and must not depend on whether this build's `serde_json::Value` keeps
//! insertion order or sorts (the `preserve_order` feature, build-wide). So values are captured
//! by a serializer of our own (`fact_capture`): struct fields in declaration order, map entries
//! sorted by key.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::redact::{Redactor, key_placeholder, number_placeholder};

/// One recorded value, with object keys in their original order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fact {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Fact>),
    Map(Vec<(String, Fact)>),
}

impl Fact {
    /// The same value as `serde_json::Value`, entries in this fact's order.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Fact::Null => Value::Null,
            Fact::Bool(b) => Value::Bool(*b),
            Fact::Int(i) => Value::from(*i),
            Fact::UInt(u) => Value::from(*u),
            Fact::Float(f) => Value::from(*f),
            Fact::Str(s) => Value::String(s.clone()),
            Fact::Seq(items) => Value::Array(items.iter().map(Fact::to_json).collect()),
            Fact::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }

    /// This fact with secrets and volatile values replaced, as
    /// [`Redactor::redact_json`](crate::redact::Redactor::redact_json) does for JSON, keeping
    /// the recorded order of map entries.
    pub(crate) fn redacted(&self, redactor: &Redactor) -> Fact {
        let number = |key: Option<&str>, fact: &Fact| -> Option<Fact> {
            let (u, f) = match fact {
                Fact::UInt(u) => (Some(*u), Some(*u as f64)),
                Fact::Int(i) => (u64::try_from(*i).ok(), Some(*i as f64)),
                Fact::Float(f) => (None, Some(*f)),
                _ => return None,
            };
            number_placeholder(key, u, f).map(|p| Fact::Str(p.into()))
        };
        match self {
            Fact::Str(s) => Fact::Str(redactor.redact(s)),
            Fact::Seq(items) => Fact::Seq(items.iter().map(|f| f.redacted(redactor)).collect()),
            Fact::Map(entries) => Fact::Map(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let redacted = match key_placeholder(k) {
                            Some(p) => Fact::Str(p.into()),
                            None => number(Some(k), v).unwrap_or_else(|| v.redacted(redactor)),
                        };
                        (redactor.redact(k), redacted)
                    })
                    .collect(),
            ),
            other => number(None, other).unwrap_or_else(|| other.clone()),
        }
    }
}

impl Serialize for Fact {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Fact::Null => serializer.serialize_unit(),
            Fact::Bool(b) => serializer.serialize_bool(*b),
            Fact::Int(i) => serializer.serialize_i64(*i),
            Fact::UInt(u) => serializer.serialize_u64(*u),
            Fact::Float(f) => serializer.serialize_f64(*f),
            Fact::Str(s) => serializer.serialize_str(s),
            Fact::Seq(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Fact::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Fact {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(FactVisitor)
    }
}

struct FactVisitor;

impl<'de> Visitor<'de> for FactVisitor {
    type Value = Fact;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Fact, E> {
        Ok(Fact::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Fact, E> {
        Ok(Fact::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Fact, D::Error> {
        Fact::deserialize(d)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Fact, E> {
        Ok(Fact::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Fact, E> {
        Ok(Fact::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Fact, E> {
        Ok(Fact::UInt(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Fact, E> {
        Ok(Fact::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Fact, E> {
        Ok(Fact::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Fact, E> {
        Ok(Fact::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Fact, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Fact::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fact, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Fact>()? {
            entries.push((k, v));
        }
        Ok(Fact::Map(entries))
    }
}
