//! A scenario's spend, read where it is when the scenario ends: the messages its agents
//! reported (their observers saw every one, whoever drove the turn) and its model's requests
//! (the relay's or the replayed cassette's).

use super::spend::{Clock, Spend};
use crate::model::{ModelPlan, ModelSlot};
use crate::opencode::AgentSlot;

/// What the scenario of `agents` and `model` spent. Call it before the agents stop. `exact`:
/// let the events the agents already sent arrive first (a request to each running agent) —
/// for a budget or the run's ceiling; the report alone takes what has arrived.
pub(crate) async fn measure(agents: &AgentSlot, model: &ModelSlot, exact: bool) -> Spend {
    let messages = agents.messages_seen(exact).await;
    let requests = crate::cassette::model_requests(model);
    let clock = match model.plan() {
        ModelPlan::Replay { .. } => Clock::Recorded,
        ModelPlan::Scripted | ModelPlan::Live | ModelPlan::Record { .. } => Clock::Wall,
    };
    Spend::measure(&messages, &requests, clock)
}

/// Whether the scenario's model was the real one (live or recording): its spend counts
/// against the run's ceiling.
pub(crate) fn is_live_model(plan: &ModelPlan) -> bool {
    plan.is_real_model()
}
