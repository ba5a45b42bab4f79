//! Which pool a shared scenario leases from: this process's own (`cargo test` runs a suite in
//! one process), or, under nextest (one process per test), the run's: one pool per
//! `NEXTEST_RUN_ID`, kept by a pool owner process that every test process of the run leases
//! from (`owner`, `remote`).

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::settings::{self, Role};

/// The run's id (a UUID), as messages name it.
const RUN_ID: &str = settings::NEXTEST_RUN_ID;

/// The run's pool directory, `$TMPDIR/live-pool-<run id>-<binary>`, when this process's shared
/// servers are the run's; `None`: a pool of this process's own. One pool per test binary of the
/// run: a shared server's sandbox lets it run only the binary that started it (its scenarios'
/// bash commands go through that binary's sandbox launcher), and two binaries of one run may
/// be built from different versions of the harness. Under nextest (`NEXTEST=1`) a missing or
/// malformed run id falls back to a pool per process, said once on stderr.
pub(crate) fn run_dir() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let id = settings::nextest_run_id();
        let valid = id.as_deref().and_then(run_id);
        if valid.is_none() && settings::under_nextest() {
            let what = if id.is_some() {
                "not a UUID"
            } else {
                "missing"
            };
            eprintln!(
                "live: {RUN_ID} is {what}: shared servers are pooled per test process, not \
                 across the nextest run"
            );
        }
        valid.map(|id| std::env::temp_dir().join(format!("live-pool-{id}-{}", binary_tag())))
    })
    .clone()
}

/// Whether this process leases from the run's pool owner (it is not the owner itself).
pub(crate) fn leases_from_owner() -> bool {
    !matches!(settings::role(), Ok(Some(Role::Pool))) && run_dir().is_some()
}

/// Eight hex digits naming this test binary (its path): short, since the pool's socket path
/// must fit in 108 bytes.
fn binary_tag() -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .unwrap_or_default()
        .hash(&mut hasher);
    format!("{:08x}", hasher.finish() as u32)
}

/// `text` as a run id, lowercased, if it is a UUID (`8-4-4-4-12` hex digits): nothing else may
/// name a directory.
fn run_id(text: &str) -> Option<String> {
    let groups: Vec<&str> = text.split('-').collect();
    let shaped = groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()));
    shaped.then(|| text.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::run_id;

    #[test]
    fn only_a_uuid_is_a_run_id() {
        assert_eq!(
            run_id("0F1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0").as_deref(),
            Some("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
        );
        for bad in [
            "",
            "nextest-run",
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f",
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-",
            "0f1e2d3c/4b5a-6978-8796-a5b4c3d2e1f0",
            "../../../../tmp/x-4b5a-6978-8796-a5b4c3d2e1f0",
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1g0",
        ] {
            assert_eq!(run_id(bad), None, "{bad}");
        }
    }
}
