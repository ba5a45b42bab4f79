//! `interaction!`: one interaction as two scenarios, `real` and `fixture`, that run the same
//! body and check its transcript against the reference.

use std::future::Future;
use std::pin::Pin;

use harness_runtime::Live;
use harness_runtime::opencode::AgentOptions;

use crate::reference;
use crate::talk::Talk;

/// Which agent an interaction runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Real `opencode serve` with the scripted model: the reference's source.
    Real,
    /// The fixture agent, which must answer as the reference says.
    Fixture,
}

impl Target {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Target::Real => "real OpenCode",
            Target::Fixture => "the fixture agent",
        }
    }
}

/// An interaction's body: talks to the agent through the [`Talk`], which records it.
pub(crate) type Body =
    for<'a> fn(&'a mut Talk) -> Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send + 'a>>;

/// Runs `body` against the scenario's agent and checks its transcript. `module` is the
/// interaction's module path (`conformance::sessions::create_titled`).
pub(crate) async fn run(
    live: &mut Live,
    target: Target,
    module: &str,
    body: Body,
) -> anyhow::Result<()> {
    let name = module
        .split_once("::")
        .map_or(module, |(_, rest)| rest)
        .to_owned();
    // The references were recorded in directories whose instance booted in their first turn
    // (its boot events are part of the stream): never a warm workspace.
    let agent = live
        .opencode_with(AgentOptions::default().fresh_workspace())
        .await?;
    let mut talk = Talk::new(live, &agent).await?;
    body(&mut talk).await?;
    let (version, transcript) = talk.finish();
    reference::check(&name, target, &version, &transcript)
}

/// `interaction!(name(talk) { … })`: a module `name` with the scenarios `real` and `fixture`,
/// each running the block with `talk: &mut Talk` and checking the transcript. Doc comments and
/// attributes before the name go on the module. `interaction!(own_server: name(talk) { … })`
/// runs the real one on a server of its own, as the fixture always is: for what answers for
/// the server's own directory and config, not for the directory a request names.
macro_rules! interaction {
    (@with [$($option:tt)*] $(#[$attr:meta])* $name:ident($talk:ident) $body:block) => {
        $(#[$attr])*
        pub(crate) mod $name {
            #[allow(unused_imports)]
            use super::*;
            use harness_runtime::prelude::*;

            pub(crate) fn body<'a>(
                $talk: &'a mut crate::talk::Talk,
            ) -> ::std::pin::Pin<
                Box<dyn ::std::future::Future<Output = anyhow::Result<()>> + Send + 'a>,
            > {
                Box::pin(async move {
                    $body
                    Ok(())
                })
            }

            #[live_agent_test(timeout = "60s" $($option)*)]
            async fn real(live: &mut Live) -> anyhow::Result<()> {
                crate::interaction::run(live, crate::interaction::Target::Real, module_path!(), body)
                    .await
            }

            #[live_agent_test(timeout = "60s", agent = "fixture")]
            async fn fixture(live: &mut Live) -> anyhow::Result<()> {
                crate::interaction::run(
                    live,
                    crate::interaction::Target::Fixture,
                    module_path!(),
                    body,
                )
                .await
            }
        }
    };
    (own_server: $($rest:tt)*) => {
        interaction!(@with [, isolation = "server"] $($rest)*);
    };
    ($($rest:tt)*) => {
        interaction!(@with [] $($rest)*);
    };
}
