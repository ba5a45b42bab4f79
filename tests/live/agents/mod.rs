//! The same scenarios on every agent the framework drives, with the scripted model: OpenCode
//! over HTTP (`opencode serve`), and over ACP OpenCode (`opencode acp`), Qwen Code and Gemini
//! CLI. Each scenario lists its agents once (`agents = [...]`) and is one scenario per agent
//! (`agents::turns::text_turn::qwen_code`), so filters, snapshots and the report tell them
//! apart. docs/other-agents.md's table of what each agent did is rendered from the turns'
//! snapshots (a test in client_evidence holds it to them).

mod acp;
mod tools;
mod turns;
