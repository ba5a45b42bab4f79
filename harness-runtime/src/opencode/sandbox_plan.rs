//! The sandbox of one agent server: beyond the system's part, its program, its root, the ports
//! its config names, and what the scenario's [`AgentOptions`] add; and of the bash commands of a
//! scenario on a shared server, which its workspace's shell confines further.

use std::path::Path;

use serde_json::Value;

use super::AgentOptions;
use crate::sandbox::{Policy, program_paths};

/// What the progress line adds for a directory on a shared server: which of its processes are
/// confined to its own root and model, and which stay at the pool's confinement.
pub(crate) const SHARED_SCOPE: &str = "its bash commands confined to its own root and model \
     port; its file tools (read, write, edit) and the processes the shared server starts itself \
     (git, ripgrep, LSP servers, formatters, MCP servers) to the pool's directory, tcp \
     unrestricted";

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
/// root and every leasing scenario's are there) and connects anywhere (it talks to the model of
/// every scenario that leases it). It runs the sandbox launcher too (this binary): each leasing
/// scenario's shell confines its bash commands further ([`leased_shell`]).
pub(crate) fn shared_server(pool: &Path, program: &Path) -> Policy {
    let mut policy = Policy::system();
    let launcher = crate::process::role_command().map(|(launcher, _)| launcher);
    for path in program_paths(program)
        .into_iter()
        .chain(launcher.iter().flat_map(|l| program_paths(l)))
    {
        policy.allow_read(path);
    }
    policy.allow_write(pool);
    policy.connect_anywhere();
    policy
}

/// The policy of the bash commands of a scenario whose root is `root` on a shared server of
/// `program`, its workspace configured with `config`: what a server of its own would allow them
/// (they write beneath `root`, read what the server reads, connect to the config's providers'
/// ports: the scenario's model, or a seat's stand-in for it), but never the shared server's port,
/// through which every workspace on it is reachable. Landlock stacks it on the shared server's
/// own policy. The second value says why TCP connect is left unrestricted, when it is.
pub(crate) fn leased_shell(
    root: &Path,
    program: &Path,
    config: &Value,
) -> (Policy, Option<String>) {
    own_server(root, program, config, &AgentOptions::default())
}

/// Why the TCP connect of a server or shell with `config` is left unrestricted, when it is.
pub(crate) fn tcp_open(config: &Value) -> Option<String> {
    provider_ports(config).err()
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

    /// It runs the sandbox launcher (this binary) for its leases' shells, and reads nothing else
    /// beside it.
    #[test]
    fn a_shared_server_writes_the_pool_connects_anywhere_and_runs_the_launcher() {
        let policy = shared_server(Path::new("/tmp/pool"), Path::new("sh"));
        assert!(policy.write.contains(&PathBuf::from("/tmp/pool")));
        assert_eq!(policy.connect, None);
        let (launcher, _) = crate::process::role_command().unwrap();
        let launcher = launcher.canonicalize().unwrap();
        assert!(policy.read.contains(&launcher), "{:?}", policy.read);
        assert!(
            !policy
                .read
                .contains(&launcher.parent().unwrap().to_path_buf())
        );
    }

    /// A lease's bash commands: its root, its model's port, not the pool.
    #[test]
    fn a_leased_shell_writes_its_root_and_connects_to_its_model_alone() {
        let config =
            json!({"provider": {"scripted": {"options": {"baseURL": "http://127.0.0.1:7/v1"}}}});
        let (policy, why) = leased_shell(Path::new("/tmp/pool/lease"), Path::new("sh"), &config);
        assert_eq!(why, None);
        assert_eq!(policy.connect, Some(vec![7]));
        assert!(policy.write.contains(&PathBuf::from("/tmp/pool/lease")));
        assert!(!policy.write.contains(&PathBuf::from("/tmp/pool")));
    }
}
