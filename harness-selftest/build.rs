//! Names the soak scenarios of `src/bin/selftest-scenarios/reliability/soak.rs`: `f000`..`f999`
//! on the fixture agent and `o00`..`o49` on real OpenCode. Too many to list by hand, and
//! `macro_rules!` cannot build an identifier from digits, so this writes the two macro calls
//! that file includes.

use std::path::PathBuf;

/// How many soak scenarios run on the fixture agent.
const FIXTURE: usize = 1_000;
/// How many run on real OpenCode.
const OPENCODE: usize = 50;

/// `prefix` and `0..count`, zero-padded to one width, space-separated.
fn names(prefix: &str, count: usize) -> String {
    let width = (count - 1).to_string().len();
    (0..count)
        .map(|i| format!("{prefix}{i:0width$}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let text = format!(
        "fixture_scenarios! {{ {} }}\nopencode_scenarios! {{ {} }}\n",
        names("f", FIXTURE),
        names("o", OPENCODE)
    );
    std::fs::write(out.join("soak_names.rs"), text).expect("write the soak scenarios' names");
}
