//! What makes a warm workspace ("seat") reusable: OpenCode caches a directory's config in its
//! booted instance, so a seat is reused only by a scenario whose config is the same once the
//! model's address is set aside. The seat's config names the seat's own stable model port
//! (its [`ModelRelay`](super::ModelRelay)) instead of the scenario's.

use std::hash::{Hash, Hasher};

use serde_json::Value;

/// The loopback address every harness-served model (scripted, a cassette's replay) listens on.
const LOOPBACK: &str = "http://127.0.0.1:";

/// A scenario's config split into what a seat must match and the model port it names. Sent to
/// a nextest run's pool owner, which keeps the seats.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SeatConfig {
    /// The config with the model's port set to 0: equal keys, equal configs.
    template: Value,
    /// A digest of `template`, short enough to compare and send.
    pub(crate) key: String,
    /// The scenario's model port the seat's relay forwards to.
    pub(crate) model_port: u16,
}

impl SeatConfig {
    /// The config a seat writes: the template naming the seat's relay port.
    pub(crate) fn for_port(&self, port: u16) -> Value {
        let mut config = self.template.clone();
        for url in base_urls(&mut config) {
            if let Some((_, rest)) = split(url) {
                *url = Value::String(format!("{LOOPBACK}{port}{rest}"));
            }
        }
        config
    }
}

/// The seat terms of `config`, or `None` when it names no model on loopback or more than one
/// model port (nothing one relay could stand in for).
pub(crate) fn seat_config(config: &Value) -> Option<SeatConfig> {
    let mut template = config.clone();
    let mut ports = Vec::new();
    for url in base_urls(&mut template) {
        let (port, rest) = split(url)?;
        ports.push(port);
        *url = Value::String(format!("{LOOPBACK}0{rest}"));
    }
    ports.dedup();
    let [model_port] = ports[..] else {
        return None;
    };
    // serde_json's map is ordered by key: equal configs print the same.
    let text = template.to_string();
    let digest = |salt: u8| {
        let mut hasher = std::hash::DefaultHasher::new();
        salt.hash(&mut hasher);
        text.hash(&mut hasher);
        hasher.finish()
    };
    Some(SeatConfig {
        key: format!("{:016x}{:016x}", digest(1), digest(2)),
        template,
        model_port,
    })
}

/// Every provider's `options.baseURL`.
fn base_urls(config: &mut Value) -> Vec<&mut Value> {
    let Some(providers) = config.get_mut("provider").and_then(Value::as_object_mut) else {
        return Vec::new();
    };
    providers
        .values_mut()
        .filter_map(|p| p.get_mut("options")?.get_mut("baseURL"))
        .collect()
}

/// `http://127.0.0.1:<port><rest>` as its port and rest.
fn split(url: &Value) -> Option<(u16, String)> {
    let after = url.as_str()?.strip_prefix(LOOPBACK)?;
    let digits = after
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(after.len());
    let port = after[..digits].parse().ok()?;
    Some((port, after[digits..].to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scripted(port: u16, bash: &str) -> Value {
        json!({
            "provider": {"scripted": {"options": {"baseURL": format!("http://127.0.0.1:{port}/v1")}}},
            "permission": {"bash": bash},
        })
    }

    #[test]
    fn configs_that_differ_only_in_the_model_port_share_a_key() {
        let a = seat_config(&scripted(4100, "allow")).unwrap();
        let b = seat_config(&scripted(4200, "allow")).unwrap();
        assert_eq!(a.key, b.key);
        assert_eq!((a.model_port, b.model_port), (4100, 4200));
        assert_eq!(a.for_port(5000), scripted(5000, "allow"));
        let asking = seat_config(&scripted(4100, "ask")).unwrap();
        assert_ne!(asking.key, a.key);
    }

    #[test]
    fn a_config_without_one_loopback_model_has_no_seat() {
        assert_eq!(seat_config(&json!({"permission": {}})), None);
        let remote = json!({"provider": {"p": {"options": {"baseURL": "https://api.example/v1"}}}});
        assert_eq!(seat_config(&remote), None);
        let two = json!({"provider": {
            "a": {"options": {"baseURL": "http://127.0.0.1:1/v1"}},
            "b": {"options": {"baseURL": "http://127.0.0.1:2/v1"}},
        }});
        assert_eq!(seat_config(&two), None);
    }
}
