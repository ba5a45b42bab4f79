//! A small checker for the subset of JSON Schema that OpenCode's `GET /doc` components use:
//! `$ref`, `anyOf`/`oneOf`, `type`, `enum`, `pattern`, `required`, `properties`,
//! `additionalProperties` (false or a schema), `items`, `minimum`.

use std::collections::HashMap;

use serde_json::Value;

pub struct Shapes {
    doc: Value,
    /// Event `type` to its component's `$ref`, from the `Event` union.
    events: HashMap<String, String>,
}

impl Shapes {
    /// OpenCode 1.18.33's own `GET /doc`, the one committed copy (scripts/opencode-upgrade
    /// compares a new version's against it).
    pub fn load() -> Shapes {
        let text = include_str!("../data/opencode/openapi-1.18.33.json");
        let doc: Value = serde_json::from_str(text).unwrap();
        let mut events = HashMap::new();
        for variant in doc["components"]["schemas"]["Event"]["anyOf"]
            .as_array()
            .expect("the OpenAPI has an `Event` union")
        {
            let reference = variant["$ref"]
                .as_str()
                .expect("an `Event` variant is a $ref");
            let name = reference.rsplit('/').next().unwrap();
            let kind = &doc["components"]["schemas"][name]["properties"]["type"];
            let kinds = match kind["enum"].as_array() {
                Some(kinds) => kinds.clone(),
                None => vec![kind["const"].clone()],
            };
            for kind in kinds {
                events.insert(kind.as_str().unwrap().to_owned(), reference.to_owned());
            }
        }
        Shapes { doc, events }
    }

    /// Checks a route's answer: `route` like `GET /session/{sessionID}`.
    pub fn check_route(&self, route: &str, status: u16, body: &Value) -> Result<(), String> {
        let (method, path) = route.split_once(' ').expect("a route is `METHOD /path`");
        let answer =
            &self.doc["paths"][path][method.to_lowercase()]["responses"][status.to_string()];
        if answer.is_null() {
            return Err(format!("{route} has no documented {status} answer"));
        }
        // An answer without content (e.g. `prompt_async`'s 204) has no body.
        let schema = &answer["content"]["application/json"]["schema"];
        if schema.is_null() {
            return if body.is_null() {
                Ok(())
            } else {
                Err(format!("{route} {status} must have no body, got {body}"))
            };
        }
        self.check(schema, body, "$")
            .map_err(|e| format!("{route} {status}: {e}"))
    }

    /// Checks one event against its `Event…` component; types without one (e.g.
    /// `server.heartbeat`) must still be `{id: "evt_…", type, properties: {}}`.
    pub fn check_event(&self, event: &Value) -> Result<(), String> {
        let kind = event["type"].as_str().ok_or("event without a type")?;
        match self.events.get(kind) {
            Some(reference) => self
                .check(&serde_json::json!({"$ref": reference}), event, "$")
                .map_err(|e| format!("{kind}: {e}")),
            None => {
                let id_ok = event["id"].as_str().is_some_and(|i| i.starts_with("evt_"));
                let props_ok = event["properties"].is_object();
                let keys = event.as_object().map(|o| o.len()) == Some(3);
                if id_ok && props_ok && keys {
                    Ok(())
                } else {
                    Err(format!(
                        "{kind}: not an {{id,type,properties}} event: {event}"
                    ))
                }
            }
        }
    }

    fn resolve<'a>(&'a self, reference: &str) -> &'a Value {
        let name = reference.rsplit('/').next().unwrap();
        let schema = &self.doc["components"]["schemas"][name];
        assert!(!schema.is_null(), "the OpenAPI has no schema {name}");
        schema
    }

    pub fn check(&self, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
        if let Some(reference) = schema["$ref"].as_str() {
            return self.check(self.resolve(reference), value, at);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = schema[key].as_array() {
                let errors: Vec<String> = options
                    .iter()
                    .filter_map(|o| self.check(o, value, at).err())
                    .collect();
                if errors.len() == options.len() {
                    return Err(format!(
                        "{at}: matches no alternative: {}",
                        errors.join(" | ")
                    ));
                }
            }
        }
        if let Some(allowed) = schema["enum"].as_array() {
            if !allowed.contains(value) {
                return Err(format!("{at}: {value} not in {allowed:?}"));
            }
        }
        match &schema["type"] {
            Value::String(kind) => type_ok(kind, value, at)?,
            Value::Array(kinds)
                if !kinds
                    .iter()
                    .any(|k| type_ok(k.as_str().unwrap_or(""), value, at).is_ok()) =>
            {
                return Err(format!("{at}: {value} is none of {kinds:?}"));
            }
            _ => {}
        }
        if let (Some(pattern), Some(text)) = (schema["pattern"].as_str(), value.as_str()) {
            if !regex::Regex::new(pattern).unwrap().is_match(text) {
                return Err(format!("{at}: {text:?} does not match {pattern}"));
            }
        }
        if let (Some(min), Some(n)) = (schema["minimum"].as_f64(), value.as_f64()) {
            if n < min {
                return Err(format!("{at}: {n} < {min}"));
            }
        }
        if let Some(object) = value.as_object() {
            for name in schema["required"].as_array().into_iter().flatten() {
                let name = name.as_str().unwrap();
                if !object.contains_key(name) {
                    return Err(format!("{at}: missing required `{name}`"));
                }
            }
            let properties = schema["properties"].as_object();
            for (key, item) in object {
                match properties.and_then(|p| p.get(key)) {
                    Some(sub) => self.check(sub, item, &format!("{at}.{key}"))?,
                    None => match &schema["additionalProperties"] {
                        Value::Bool(false) => {
                            return Err(format!("{at}: unexpected property `{key}`"));
                        }
                        extra @ Value::Object(_) => {
                            self.check(extra, item, &format!("{at}.{key}"))?
                        }
                        _ => {}
                    },
                }
            }
        }
        if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
            for (i, item) in array.iter().enumerate() {
                self.check(items, item, &format!("{at}[{i}]"))?;
            }
        }
        Ok(())
    }
}

fn type_ok(kind: &str, value: &Value, at: &str) -> Result<(), String> {
    let ok = match kind {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{at}: {value} is not {kind}"))
    }
}
