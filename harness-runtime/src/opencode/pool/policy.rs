//! Whether an agent may be a directory on a shared server, or needs a server of its own.
//!
//! Sharing changes nothing a scenario can observe only when the server-wide parts of the agent
//! (its process, environment, whole config, readiness) are the harness's defaults; anything
//! else falls back to a server of its own, which is always correct, only slower.

use crate::Isolation;
use crate::cassette::ModelPlan;
use crate::opencode::AgentOptions;
use crate::opencode::config::CONFIG_ENV;
use crate::opencode::options::{DEFAULT_READY_CEILING, DEFAULT_STOP_GRACE};
use crate::scenario::{AgentKind, ScenarioOptions};

/// The isolation a scenario gets: its attribute's, else `LIVE_ISOLATION`'s.
pub(crate) fn level(options: &ScenarioOptions) -> Isolation {
    options.isolation.unwrap_or_else(crate::settings::isolation)
}

/// Whether the scenario's first agent will likely be a directory on a shared server: what its
/// attribute says, before the options its body passes are known (for warming the pool).
pub(crate) fn likely(scenario: &ScenarioOptions) -> bool {
    level(scenario) == Isolation::Shared
        && scenario.agent == AgentKind::OpenCode
        && !scenario.requires.contains(&CONFIG_ENV)
}

/// Whether a scenario whose model is served as `plan` may share a server: a replayed cassette
/// shares like the scripted model; the real model (live, or recorded through the relay) does not.
pub(crate) fn plan_shares(plan: &ModelPlan) -> bool {
    !plan.is_real_model()
}

/// `Ok` when the agent may share a server; else why it gets its own (shown as progress).
/// `plan` is how the scenario's model is served ([`plan_shares`]).
pub(crate) fn check(
    scenario: &ScenarioOptions,
    plan: &ModelPlan,
    options: &AgentOptions,
    agents_so_far: usize,
) -> Result<(), &'static str> {
    if scenario.agent == AgentKind::Fixture {
        return Err("the fixture agent's faults are per process");
    }
    if agents_so_far > 0 {
        return Err("a second agent of one scenario is a second server");
    }
    if !options.env.is_empty() {
        return Err("`AgentOptions::env` sets the server's environment");
    }
    if options.config.is_some() {
        return Err("`AgentOptions::config` replaces the server's whole config");
    }
    if let Some(reason) = options
        .product_config
        .as_ref()
        .and_then(crate::opencode::config_layer::unshareable)
    {
        return Err(reason);
    }
    if !options.read_only.is_empty() || !options.writable.is_empty() {
        return Err("`AgentOptions::read_only` and `writable` widen the server's sandbox");
    }
    if options.ready_ceiling != DEFAULT_READY_CEILING {
        return Err("`AgentOptions::ready_ceiling` is about the server's start");
    }
    if options.stop_grace != DEFAULT_STOP_GRACE {
        return Err("`AgentOptions::stop_grace` is about stopping the server");
    }
    if !plan_shares(plan) {
        return Err("a real-model config holds secrets that stay out of files");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn only_default_server_wide_options_share() {
        let scenario = ScenarioOptions::DEFAULT;
        let default = AgentOptions::default();
        assert_eq!(check(&scenario, &ModelPlan::Scripted, &default, 0), Ok(()));
        // A permission policy is per directory: it shares.
        let asking = AgentOptions::default().permission(serde_json::json!({"bash": "ask"}));
        assert_eq!(check(&scenario, &ModelPlan::Scripted, &asking, 0), Ok(()));
        // So are the product's settings, unless they reach beyond the directory.
        let product = AgentOptions::default().product_config(serde_json::json!({
            "instructions": ["RULES.md"],
        }));
        assert_eq!(check(&scenario, &ModelPlan::Scripted, &product, 0), Ok(()));
        let plugin = AgentOptions::default().product_config(serde_json::json!({"plugin": ["p"]}));
        assert!(check(&scenario, &ModelPlan::Scripted, &plugin, 0).is_err());
        assert!(check(&scenario, &ModelPlan::Scripted, &default, 1).is_err());
        assert!(
            check(
                &scenario,
                &ModelPlan::Scripted,
                &AgentOptions::default().env("A", "b"),
                0
            )
            .is_err()
        );
        assert!(
            check(
                &scenario,
                &ModelPlan::Scripted,
                &AgentOptions::default().config(serde_json::json!({})),
                0
            )
            .is_err()
        );
        for widened in [
            AgentOptions::default().read_only("/srv"),
            AgentOptions::default().writable("/srv"),
        ] {
            assert!(check(&scenario, &ModelPlan::Scripted, &widened, 0).is_err());
        }
        let slow = AgentOptions::default().ready_ceiling(Duration::from_secs(1));
        assert!(check(&scenario, &ModelPlan::Scripted, &slow, 0).is_err());
        let quick_stop = AgentOptions::default().stop_grace(Duration::from_secs(1));
        assert!(check(&scenario, &ModelPlan::Scripted, &quick_stop, 0).is_err());
        let fixture = ScenarioOptions {
            agent: AgentKind::Fixture,
            ..ScenarioOptions::DEFAULT
        };
        assert!(check(&fixture, &ModelPlan::Scripted, &default, 0).is_err());
        // A scenario that requires the user's config gets the real model: it never shares.
        let real = ScenarioOptions {
            requires: &[CONFIG_ENV],
            ..ScenarioOptions::DEFAULT
        };
        let plan = crate::cassette::plan(&real, "t::real", std::path::Path::new("/m")).unwrap();
        assert_eq!(plan, ModelPlan::Live);
        assert!(check(&real, &plan, &default, 0).is_err());
    }

    /// A `cassette` scenario shares only while it replays: the real model's config, also the
    /// relay's, stays on a server of its own.
    #[test]
    fn a_cassette_shares_only_in_replay() {
        let cassette = ScenarioOptions {
            cassette: true,
            ..ScenarioOptions::DEFAULT
        };
        let default = AgentOptions::default();
        let path = std::path::PathBuf::from("cassettes/t__x.json");
        assert_eq!(
            check(
                &cassette,
                &ModelPlan::Replay { path: path.clone() },
                &default,
                0
            ),
            Ok(())
        );
        assert_eq!(
            check(&cassette, &ModelPlan::Record { path }, &default, 0),
            Err("a real-model config holds secrets that stay out of files")
        );
        assert_eq!(
            check(&cassette, &ModelPlan::Live, &default, 0),
            Err("a real-model config holds secrets that stay out of files")
        );
    }

    #[test]
    fn the_attribute_outranks_the_environment() {
        let server = ScenarioOptions {
            isolation: Some(Isolation::Server),
            ..ScenarioOptions::DEFAULT
        };
        assert_eq!(level(&server), Isolation::Server);
        let shared = ScenarioOptions {
            isolation: Some(Isolation::Shared),
            ..ScenarioOptions::DEFAULT
        };
        assert_eq!(level(&shared), Isolation::Shared);
    }
}
