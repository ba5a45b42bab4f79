//! A suite with two scenarios of one name, as two crates sharing a module path produce (a
//! scenario's name leaves out its crate): the runner must refuse to run, naming both.

harness_runtime::main!();

mod twice {
    use harness_runtime::prelude::*;

    #[live_agent_test]
    async fn same(_live: &mut Live) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The same name registered as if from another crate (`other_crate::twice::same`).
fn same_again(_live: &mut harness_runtime::Live) -> harness_runtime::__private::ScenarioFuture<'_> {
    Box::pin(async { Ok(()) })
}

harness_runtime::__private::inventory::submit! {
    harness_runtime::__private::Scenario {
        module_path: "other_crate::twice",
        function: "same",
        file: file!(),
        line: line!(),
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
        snapshot_assertion: harness_runtime::testing::snapshot_assertion!(),
        options: harness_runtime::__private::ScenarioOptions::DEFAULT,
        body: same_again,
    }
}
