//! The same turns on every agent the framework drives, with the scripted model: OpenCode over
//! HTTP (`opencode serve`), OpenCode over ACP (`opencode acp`) and Qwen Code over ACP. One module
//! per agent, so names (`agents::qwen_code::text_turn`) and snapshots tell them apart; the ACP
//! agents share their bodies (`acp_bodies.rs`). docs/other-agents.md's table of what each agent
//! did is rendered from these snapshots (a test in client_evidence holds it to them).

mod acp_bodies;
mod opencode_acp;
mod opencode_http;
mod qwen_code;
