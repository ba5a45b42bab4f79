//! Agents spoken to over ACP with the scripted model: the same scenario bodies on each agent
//! (`bodies.rs`), one module per agent, so names (`acp::qwen_code::text_turn`) tell them apart.

mod bodies;
mod opencode;
mod qwen_code;
