//! The snapshot a scenario writes belongs to the scenario's crate: `source:` names the scenario's
//! file, and insta looks for the workspace from the test crate's folder. Expanded inside the
//! runtime, insta's macros named the runtime's file and ran `cargo metadata` in the runtime's
//! folder, which in an adopter's build is the dependency's folder in the cargo registry.
//!
//! insta finds the workspace with `$CARGO metadata`; here `CARGO` is a script that records the
//! folder it runs in and hands over to the real cargo.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// The scenario of `selftest-scenarios` that asserts its evidence.
const SCENARIO: &str = "snapshot::names_its_own_file";

#[test]
fn a_scenario_snapshot_names_its_file_and_the_test_crate_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let snapshots = tmp.path().join("snapshots");
    let log = tmp.path().join("cargo-dirs");
    let cargo = tmp.path().join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\npwd >> \"$SELFTEST_CARGO_LOG\"\nexec \"$SELFTEST_REAL_CARGO\" \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();

    let mut command = Command::new(env!("CARGO_BIN_EXE_selftest-scenarios"));
    command.args(["--exact", SCENARIO]);
    // `cargo insta test` sets `INSTA_WORKSPACE_ROOT`, which would skip `cargo metadata`.
    for var in [
        "CI",
        "INSTA_UPDATE",
        "INSTA_FORCE_PASS",
        "INSTA_WORKSPACE_ROOT",
        "INSTA_PENDING_DIR",
        "LIVE_STRICT",
    ] {
        command.env_remove(var);
    }
    let real_cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = command
        .env("SELFTEST_SCRATCH", tmp.path())
        .env("LIVE_SNAPSHOT_DIR", &snapshots)
        .env("INSTA_UPDATE", "always")
        .env("CARGO", &cargo)
        .env("SELFTEST_CARGO_LOG", &log)
        .env("SELFTEST_REAL_CARGO", real_cargo)
        .output()
        .expect("run selftest-scenarios");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && printed.contains(&format!("test {SCENARIO} ... ok")),
        "{printed}"
    );

    let snapshot = std::fs::read_to_string(snapshots.join("snapshot__names_its_own_file.snap"))
        .unwrap_or_else(|e| panic!("no snapshot written ({e})\n{printed}"));
    assert!(
        snapshot.contains("\nsource: harness-selftest/src/bin/selftest-scenarios/snapshot.rs\n"),
        "{snapshot}"
    );
    assert!(
        snapshot.contains("- scenario: \"snapshot::names_its_own_file\""),
        "{snapshot}"
    );

    let dirs = std::fs::read_to_string(&log).unwrap_or_default();
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    let dirs: Vec<_> = dirs
        .lines()
        .map(|dir| Path::new(dir).canonicalize().unwrap())
        .collect();
    assert_eq!(dirs, [crate_dir], "where insta ran `cargo metadata`");
}
