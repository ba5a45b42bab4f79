//! Captures a serializable value as a [`Fact`]: a struct's fields in the order the type declares
//! them, a map's entries sorted by key.
//!
//! Why not through `serde_json`: whether its `Value` keeps insertion order or sorts is a
//! build-wide feature (`preserve_order`) that any crate of the build may turn on (the ACP SDK
//! does), and a `HashMap` has no order at all. Evidence must read the same in every build, so
//! the serde shapes are told apart here: `serialize_struct` is the author's order, kept; a map
//! of known length (a `Value` object, a `HashMap`, a `BTreeMap`: collections) is sorted; a map
//! of unknown length is a struct with `#[serde(flatten)]` fields (serde's derive cannot count
//! them), kept in its fields' order.

use serde::ser::{self, Serialize};

use super::fact::Fact;

/// Why a value could not be captured (a map key that is not a string or a number, a failing
/// `Serialize` impl).
#[derive(Debug)]
pub(crate) struct Uncapturable(String);

impl std::fmt::Display for Uncapturable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Uncapturable {}

impl ser::Error for Uncapturable {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Uncapturable(msg.to_string())
    }
}

/// `serde_json`'s private name for a `RawValue` (its `raw_value` feature, also turned on by the
/// ACP SDK): the struct's one field is the JSON text itself.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

pub(crate) fn capture(value: &(impl Serialize + ?Sized)) -> Result<Fact, Uncapturable> {
    value.serialize(FactSerializer)
}

/// Captures any serializable value; a value that cannot be serialized (a map with non-string
/// keys, a failing `Serialize` impl) is recorded as a typed note, never dropped silently.
pub(crate) fn capture_or_note(value: &(impl Serialize + ?Sized)) -> Fact {
    capture(value).unwrap_or_else(|_| Fact::Str("<value failed to serialize>".into()))
}

struct FactSerializer;

type Result<T, E = Uncapturable> = std::result::Result<T, E>;

impl ser::Serializer for FactSerializer {
    type Ok = Fact;
    type Error = Uncapturable;
    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = VariantBuilder<SeqBuilder>;
    type SerializeMap = MapBuilder;
    type SerializeStruct = StructBuilder;
    type SerializeStructVariant = VariantBuilder<StructBuilder>;

    fn serialize_bool(self, v: bool) -> Result<Fact> {
        Ok(Fact::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Fact> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<Fact> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<Fact> {
        self.serialize_i64(v.into())
    }
    // As serde_json reads it back: a non-negative integer is unsigned.
    fn serialize_i64(self, v: i64) -> Result<Fact> {
        Ok(u64::try_from(v).map_or(Fact::Int(v), Fact::UInt))
    }
    fn serialize_i128(self, v: i128) -> Result<Fact> {
        match (u64::try_from(v), i64::try_from(v)) {
            (Ok(u), _) => Ok(Fact::UInt(u)),
            (_, Ok(i)) => Ok(Fact::Int(i)),
            _ => Err(Uncapturable(format!("{v} is out of JSON's integer range"))),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Fact> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<Fact> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<Fact> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<Fact> {
        Ok(Fact::UInt(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Fact> {
        u64::try_from(v)
            .map(Fact::UInt)
            .map_err(|_| Uncapturable(format!("{v} is out of JSON's integer range")))
    }
    fn serialize_f32(self, v: f32) -> Result<Fact> {
        self.serialize_f64(v.into())
    }
    // JSON has no NaN or infinity: serde_json writes them as null.
    fn serialize_f64(self, v: f64) -> Result<Fact> {
        Ok(if v.is_finite() {
            Fact::Float(v)
        } else {
            Fact::Null
        })
    }
    fn serialize_char(self, v: char) -> Result<Fact> {
        Ok(Fact::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Fact> {
        Ok(Fact::Str(v.to_owned()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Fact> {
        Ok(Fact::Seq(
            v.iter().map(|b| Fact::UInt((*b).into())).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Fact> {
        Ok(Fact::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Fact> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Fact> {
        Ok(Fact::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Fact> {
        Ok(Fact::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Fact> {
        Ok(Fact::Str(variant.to_owned()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Fact> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Fact> {
        Ok(Fact::Map(vec![(
            variant.to_owned(),
            value.serialize(self)?,
        )]))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder> {
        Ok(SeqBuilder(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<SeqBuilder> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantBuilder<SeqBuilder>> {
        Ok(VariantBuilder {
            variant,
            inner: self.serialize_seq(Some(len))?,
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<MapBuilder> {
        Ok(MapBuilder {
            sorted: len.is_some(),
            entries: Vec::with_capacity(len.unwrap_or(0)),
            key: None,
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<StructBuilder> {
        Ok(StructBuilder {
            raw: name == RAW_VALUE_TOKEN,
            entries: Vec::with_capacity(len),
        })
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantBuilder<StructBuilder>> {
        Ok(VariantBuilder {
            variant,
            inner: self.serialize_struct(name, len)?,
        })
    }
}

pub(crate) struct SeqBuilder(Vec<Fact>);

impl SeqBuilder {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.0.push(value.serialize(FactSerializer)?);
        Ok(())
    }
}

impl ser::SerializeSeq for SeqBuilder {
    type Ok = Fact;
    type Error = Uncapturable;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Fact> {
        Ok(Fact::Seq(self.0))
    }
}

impl ser::SerializeTuple for SeqBuilder {
    type Ok = Fact;
    type Error = Uncapturable;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Fact> {
        Ok(Fact::Seq(self.0))
    }
}

impl ser::SerializeTupleStruct for SeqBuilder {
    type Ok = Fact;
    type Error = Uncapturable;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Fact> {
        Ok(Fact::Seq(self.0))
    }
}

/// A map's entries: a collection's sorted by key when it ends, a later entry with the same key
/// replacing the earlier one (as in a JSON object read back); a flattened struct's as they came.
pub(crate) struct MapBuilder {
    sorted: bool,
    entries: Vec<(String, Fact)>,
    key: Option<String>,
}

impl ser::SerializeMap for MapBuilder {
    type Ok = Fact;
    type Error = Uncapturable;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key = Some(map_key(key)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let key = self
            .key
            .take()
            .ok_or_else(|| Uncapturable("a map value came before its key".into()))?;
        self.entries.push((key, value.serialize(FactSerializer)?));
        Ok(())
    }
    fn end(self) -> Result<Fact> {
        if !self.sorted {
            return Ok(Fact::Map(self.entries));
        }
        let sorted: std::collections::BTreeMap<String, Fact> = self.entries.into_iter().collect();
        Ok(Fact::Map(sorted.into_iter().collect()))
    }
}

/// A map key as JSON writes one: a string, or a number or bool as its text.
fn map_key<T: Serialize + ?Sized>(key: &T) -> Result<String> {
    match key.serialize(FactSerializer)? {
        Fact::Str(s) => Ok(s),
        Fact::Int(i) => Ok(i.to_string()),
        Fact::UInt(u) => Ok(u.to_string()),
        Fact::Bool(b) => Ok(b.to_string()),
        _ => Err(Uncapturable("a map key is not a string or a number".into())),
    }
}

pub(crate) struct StructBuilder {
    raw: bool,
    entries: Vec<(String, Fact)>,
}

impl StructBuilder {
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<()> {
        self.entries
            .push((key.to_owned(), value.serialize(FactSerializer)?));
        Ok(())
    }

    fn finish(self) -> Result<Fact> {
        if !self.raw {
            return Ok(Fact::Map(self.entries));
        }
        // A `RawValue`: its JSON text, parsed, and captured as any other value.
        match self.entries.into_iter().next() {
            Some((_, Fact::Str(text))) => serde_json::from_str::<serde_json::Value>(&text)
                .map_err(|e| Uncapturable(format!("a raw JSON value does not parse: {e}")))
                .and_then(|value| capture(&value)),
            _ => Err(Uncapturable("a raw JSON value has no text".into())),
        }
    }
}

impl ser::SerializeStruct for StructBuilder {
    type Ok = Fact;
    type Error = Uncapturable;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.field(key, value)
    }
    fn end(self) -> Result<Fact> {
        self.finish()
    }
}

/// An enum variant with fields: `{"Variant": fields}`, as serde_json writes it.
pub(crate) struct VariantBuilder<Inner> {
    variant: &'static str,
    inner: Inner,
}

impl ser::SerializeTupleVariant for VariantBuilder<SeqBuilder> {
    type Ok = Fact;
    type Error = Uncapturable;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.inner.push(value)
    }
    fn end(self) -> Result<Fact> {
        Ok(Fact::Map(vec![(
            self.variant.to_owned(),
            Fact::Seq(self.inner.0),
        )]))
    }
}

impl ser::SerializeStructVariant for VariantBuilder<StructBuilder> {
    type Ok = Fact;
    type Error = Uncapturable;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.inner.field(key, value)
    }
    fn end(self) -> Result<Fact> {
        Ok(Fact::Map(vec![(
            self.variant.to_owned(),
            self.inner.finish()?,
        )]))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[derive(serde::Serialize)]
    struct Declared {
        zebra: u8,
        apple: serde_json::Value,
    }

    fn keys(fact: &Fact) -> Vec<&str> {
        match fact {
            Fact::Map(entries) => entries.iter().map(|(k, _)| k.as_str()).collect(),
            other => panic!("not a map: {other:?}"),
        }
    }

    #[test]
    fn struct_fields_keep_their_order_and_maps_are_sorted_whatever_serde_json_keeps() {
        // Built in reverse order: with `preserve_order` a `Value` keeps it, without it sorts.
        let mut object = serde_json::Map::new();
        object.insert("b".into(), 1.into());
        object.insert("a".into(), 2.into());
        let fact = capture(&Declared {
            zebra: 1,
            apple: serde_json::Value::Object(object),
        })
        .unwrap();
        assert_eq!(keys(&fact), ["zebra", "apple"]);
        let Fact::Map(entries) = &fact else {
            unreachable!()
        };
        assert_eq!(keys(&entries[1].1), ["a", "b"]);
    }

    #[test]
    fn flattened_fields_keep_their_order() {
        #[derive(serde::Serialize)]
        struct Inner {
            zulu: u8,
            alpha: u8,
        }
        #[derive(serde::Serialize)]
        struct Outer {
            mike: u8,
            #[serde(flatten)]
            inner: Inner,
        }
        let fact = capture(&Outer {
            mike: 0,
            inner: Inner { zulu: 1, alpha: 2 },
        })
        .unwrap();
        assert_eq!(keys(&fact), ["mike", "zulu", "alpha"]);
    }

    #[test]
    fn a_hash_map_reads_the_same_every_time() {
        let map: HashMap<String, u8> = (0..32).map(|i| (format!("k{i:02}"), i)).collect();
        let fact = capture(&map).unwrap();
        let expected: Vec<String> = (0..32).map(|i| format!("k{i:02}")).collect();
        assert_eq!(keys(&fact), expected);
    }

    #[test]
    fn captures_what_serde_json_reads_back() {
        #[derive(serde::Serialize)]
        enum Shape {
            Unit,
            Newtype(i8),
            Tuple(u8, f32),
            Named { r: u8 },
        }
        let value = (
            Shape::Unit,
            Shape::Newtype(-3),
            Shape::Tuple(1, 0.5),
            Shape::Named { r: 2 },
            f64::NAN,
            Some('x'),
            HashMap::from([(7u16, true)]),
        );
        let through_json: Fact =
            serde_json::from_str(&serde_json::to_string(&value).unwrap()).unwrap();
        assert_eq!(capture(&value).unwrap(), through_json);
    }

    #[test]
    fn raw_json_is_parsed() {
        let raw = serde_json::value::RawValue::from_string(r#"{"y":1,"x":[true]}"#.into()).unwrap();
        let fact = capture(&raw).unwrap();
        assert_eq!(keys(&fact), ["x", "y"]);
    }

    #[test]
    fn a_map_key_that_is_not_a_string_or_number_is_refused() {
        let map = std::collections::BTreeMap::from([(vec![1u8], 2u8)]);
        assert!(capture(&map).is_err());
        assert_eq!(
            capture_or_note(&map),
            Fact::Str("<value failed to serialize>".into())
        );
    }
}
