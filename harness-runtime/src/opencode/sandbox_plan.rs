//! The sandbox of one agent server: beyond the system's part, its program, its root, the ports
//! its config names, and what the scenario's [`AgentOptions`] add.

use std::path::Path;

use serde_json::Value;

use super::AgentOptions;
use crate::sandbox::{Policy, program_paths};

/// Why a shared server's TCP connect is not restricted.
pub(crate) const SHARED_TCP: &str =
    "a shared server talks to the model of every scenario that leases it";

/// The policy of a server of its own on `root`, running `program` with `config`: it writes
/// beneath `root` (and the options' writable paths), reads its program and the options'
/// read-only paths, and connects to the ports of the config's providers (its own port is added
/// at each start). The second value says why TCP connect is left unrestricted, when it is.
pub(crate) fn own_server(
    root: &Path,
    program: &Path,
    config: &Value,
    options: &AgentOptions,
) -> (Policy, Option<String>) {
    let mut policy = Policy::system();
    for path in program_paths(program) {
        policy.allow_read(path);
    }
    policy.allow_write(root);
    for path in &options.read_only {
        policy.allow_read(path);
    }
    for path in &options.writable {
        policy.allow_write(path);
    }
    let tcp_open = match provider_ports(config) {
        Ok(ports) => {
            for port in ports {
                policy.allow_connect(port);
            }
            None
        }
        Err(why) => {
            policy.connect_anywhere();
            Some(why)
        }
    };
    (policy, tcp_open)
}

/// The policy of a shared server of `program`: it writes beneath the pool's directory (its own
/// root and every leasing scenario's are there) and connects anywhere ([`SHARED_TCP`]).
pub(crate) fn shared_server(pool: &Path, program: &Path) -> Policy {
    let mut policy = Policy::system();
    for path in program_paths(program) {
        policy.allow_read(path);
    }
    policy.allow_write(pool);
    policy.connect_anywhere();
    policy
}

/// The ports of every provider's `options.baseURL` (the scripted model, a cassette's replay, the
/// recording relay, the user's real model); an error names a provider whose port is unknown.
fn provider_ports(config: &Value) -> Result<Vec<u16>, String> {
    let mut ports = Vec::new();
    let Some(providers) = config.get("provider").and_then(Value::as_object) else {
        return Ok(ports);
    };
    for (id, provider) in providers {
        let base = provider
            .pointer("/options/baseURL")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("provider `{id}` has no options.baseURL"))?;
        let port = reqwest::Url::parse(base)
            .ok()
            .and_then(|url| url.port_or_known_default())
            .ok_or_else(|| format!("the port of provider `{id}`'s baseURL is unknown"))?;
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    #[test]
    fn ports_come_from_every_providers_base_url() {
        let config = json!({"provider": {
            "scripted": {"options": {"baseURL": "http://127.0.0.1:41234/v1"}},
            "remote": {"options": {"baseURL": "https://models.example/api", "apiKey": "k"}},
        }});
        let mut ports = provider_ports(&config).unwrap();
        ports.sort_unstable();
        assert_eq!(ports, [443, 41234]);
        assert_eq!(provider_ports(&json!({})), Ok(vec![]));
    }

    /// A provider whose address OpenCode knows by itself (no baseURL): its port is unknown, so
    /// TCP connect stays open and the reason names the provider, not a value of its options.
    #[test]
    fn a_provider_without_a_base_url_leaves_tcp_open() {
        let config = json!({"provider": {"anthropic": {"options": {"apiKey": "sk-secret"}}}});
        let (policy, why) = own_server(
            Path::new("/tmp/root"),
            Path::new("/no/such/opencode"),
            &config,
            &AgentOptions::default(),
        );
        assert_eq!(policy.connect, None);
        let why = why.unwrap();
        assert!(
            why.contains("`anthropic`") && !why.contains("sk-secret"),
            "{why}"
        );
    }

    #[test]
    fn a_server_of_its_own_writes_its_root_and_what_the_options_add() {
        let config =
            json!({"provider": {"scripted": {"options": {"baseURL": "http://127.0.0.1:5/v1"}}}});
        let options = AgentOptions::default()
            .read_only("/srv/fixtures")
            .writable("/srv/out");
        let (policy, why) = own_server(Path::new("/tmp/root"), Path::new("sh"), &config, &options);
        assert_eq!(why, None);
        assert_eq!(policy.connect, Some(vec![5]));
        assert!(policy.write.contains(&PathBuf::from("/tmp/root")));
        assert!(policy.write.contains(&PathBuf::from("/srv/out")));
        assert!(policy.read.contains(&PathBuf::from("/srv/fixtures")));
        assert!(!policy.write.contains(&PathBuf::from("/srv/fixtures")));
    }

    #[test]
    fn a_shared_server_writes_the_pool_and_connects_anywhere() {
        let policy = shared_server(Path::new("/tmp/pool"), Path::new("sh"));
        assert!(policy.write.contains(&PathBuf::from("/tmp/pool")));
        assert_eq!(policy.connect, None);
    }
}
