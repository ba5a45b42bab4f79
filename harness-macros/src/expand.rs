//! Renders the registration next to the untouched function, or the item plus `compile_error!`.

use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{ItemFn, ReturnType, parse_quote};

use crate::budget::BudgetOptions;
use crate::options::{Agent, AnyAgent, Isolation, ModelApi, Options};
use crate::signature;

/// The attribute's entry point, on `proc_macro2` tokens so it can be unit-tested.
pub(crate) fn live_agent_test(args: TokenStream, item: TokenStream) -> TokenStream {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(error) => return with_error(item, error),
    };
    let options = syn::parse2::<Options>(args);
    let shape = signature::check(&func);
    match (options, shape) {
        (Ok(options), Ok(())) => render(&func, &options),
        (Err(mut first), Err(second)) => {
            first.combine(second);
            with_error(without_test_attrs(func), first)
        }
        (Err(error), Ok(())) | (Ok(_), Err(error)) => with_error(without_test_attrs(func), error),
    }
}

/// The original item (so IDEs keep resolving it) plus the errors.
fn with_error(item: impl quote::ToTokens, error: syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    quote! { #item #errors }
}

/// Drops a second test attribute from the echoed item: its own expansion would only add noise.
fn without_test_attrs(mut func: ItemFn) -> ItemFn {
    func.attrs.retain(|attr| {
        attr.path()
            .segments
            .last()
            .is_none_or(|s| s.ident != "test")
    });
    func
}

fn render(func: &ItemFn, options: &Options) -> TokenStream {
    let krate: syn::Path = options
        .krate
        .clone()
        .unwrap_or_else(|| parse_quote!(::harness_runtime));
    let ident = &func.sig.ident;
    let function = ident.unraw().to_string();
    let line = line_of(ident);

    let mut fields = Vec::new();
    if let Some(millis) = options.timeout_ms {
        fields.push(quote! {
            timeout: ::core::option::Option::Some(::core::time::Duration::from_millis(#millis)),
        });
    }
    if let Some(vars) = &options.requires {
        fields.push(quote! { requires: &[#(#vars),*], });
    }
    if let Some(reason) = &options.ignore {
        fields.push(quote! { ignore: ::core::option::Option::Some(#reason), });
    }
    if let Some(agent) = options.agent {
        let variant = match agent {
            Agent::OpenCode => quote!(OpenCode),
            Agent::Fixture => quote!(Fixture),
        };
        fields.push(quote! { agent: #krate::AgentKind::#variant, });
    }
    if let Some(points) = &options.gates {
        fields.push(quote! { gates: &[#(#points),*], });
    }
    if let Some(isolation) = options.isolation {
        let variant = match isolation {
            Isolation::Server => quote!(Server),
            Isolation::Shared => quote!(Shared),
        };
        fields
            .push(quote! { isolation: ::core::option::Option::Some(#krate::Isolation::#variant), });
    }

    if options.cassette.is_some() {
        fields.push(quote! { cassette: true, });
    }
    if let Some((api, _)) = options.model_api {
        let variant = match api {
            ModelApi::OpenAiCompatible => quote!(OpenAiCompatible),
            ModelApi::OpenAi => quote!(OpenAi),
            ModelApi::Anthropic => quote!(Anthropic),
            ModelApi::Google => quote!(Google),
        };
        fields.push(quote! { model_api: #krate::ModelApi::#variant, });
    }
    if let Some(runs) = options.explore {
        let within = match &options.explore_for {
            Some((millis, _)) => quote! {
                ::core::option::Option::Some(::core::time::Duration::from_millis(#millis))
            },
            None => quote!(::core::option::Option::None),
        };
        let points = options
            .explore_points
            .as_ref()
            .map(|(points, _)| points.as_slice())
            .unwrap_or_default();
        fields.push(quote! {
            explore: ::core::option::Option::Some(#krate::__private::ExploreOptions {
                runs: #runs,
                ceiling: #within,
                points: &[#(#points),*],
            }),
        });
    }

    if let Some(passes) = &options.passes {
        let (needed, runs) = (passes.needed, passes.runs);
        fields.push(quote! {
            passes: ::core::option::Option::Some(#krate::__private::Passes { needed: #needed, runs: #runs }),
        });
    }
    if let Some(budget) = budget(&krate, &options.budget) {
        fields.push(quote! { budget: #budget, });
    }
    let peer_exists = match &options.needs_peer {
        Some(peer) => {
            if let Err(error) = crate::peer::check_not_itself(peer, ident) {
                return with_error(without_test_attrs(func.clone()), error);
            }
            fields.push(quote! { needs_peer: ::core::option::Option::Some(#peer), });
            crate::peer::existence_check(peer)
        }
        None => TokenStream::new(),
    };

    // Spanned at the function's name, so insta's `line!()` inside reports the line `line` holds.
    let snapshot_assertion = respan(
        quote!(#krate::__private::snapshot_assertion!()),
        ident.span(),
    );

    // The conversion carries the return type's span, so `R: IntoOutcome` errors point at it.
    let output_span = match &func.sig.output {
        ReturnType::Default => ident.span(),
        ReturnType::Type(_, ty) => ty.span(),
    };
    let into_outcome = quote_spanned! {output_span=>
        #krate::__private::IntoOutcome::into_outcome(__value)
    };

    // One registration per agent listed: named `<fn>::<agent>`, so filters and the report
    // tell them apart, all calling the one body.
    let registrations: Vec<(String, TokenStream)> = match &options.agents {
        None => vec![(function, TokenStream::new())],
        Some((agents, _)) => agents
            .iter()
            .map(|(agent, entry)| {
                let variant = match agent {
                    AnyAgent::OpenCodeHttp => quote!(OpenCodeHttp),
                    AnyAgent::OpenCodeAcp => quote!(OpenCodeAcp),
                    AnyAgent::QwenCode => quote!(QwenCode),
                    AnyAgent::GeminiCli => quote!(GeminiCli),
                };
                let name = format!("{function}::{}", entry.value().replace('-', "_"));
                let field = quote! {
                    any_agent: ::core::option::Option::Some(
                        #krate::any_agent::AnyAgentKind::#variant
                    ),
                };
                (name, field)
            })
            .collect(),
    };
    let submits = registrations.iter().map(|(name, agent_field)| {
        quote! {
            #krate::__private::inventory::submit! {
                #krate::__private::Scenario {
                    module_path: ::core::module_path!(),
                    function: #name,
                    file: ::core::file!(),
                    line: #line,
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                    snapshot_assertion: #snapshot_assertion,
                    options: #krate::__private::ScenarioOptions {
                        #(#fields)*
                        #agent_field
                        ..#krate::__private::ScenarioOptions::DEFAULT
                    },
                    body: __live_agent_test_body,
                }
            }
        }
    });

    quote! {
        #func

        const _: () = {
            #peer_exists

            fn __live_agent_test_body<'live>(
                live: &'live mut #krate::Live,
            ) -> #krate::__private::ScenarioFuture<'live> {
                ::std::boxed::Box::pin(async move {
                    let __value = #ident(live).await;
                    #into_outcome
                })
            }

            #(#submits)*
        };
    }
}

/// The `Budget` literal, or `None` when the scenario sets no limit (the runtime's default).
fn budget(krate: &syn::Path, budget: &BudgetOptions) -> Option<TokenStream> {
    let some = |value: Option<TokenStream>| match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    };
    let tokens = |limit: Option<u64>| some(limit.map(|limit| quote!(#limit)));
    let millis = |limit: Option<u64>| {
        some(limit.map(|millis| quote!(::core::time::Duration::from_millis(#millis))))
    };
    let limited = budget.tokens.is_some()
        || budget.input_tokens.is_some()
        || budget.output_tokens.is_some()
        || budget.reasoning_tokens.is_some()
        || budget.cost.is_some()
        || budget.first_token_ms.is_some()
        || budget.turn_ms.is_some();
    if !limited {
        return None;
    }
    let total = tokens(budget.tokens);
    let input = tokens(budget.input_tokens);
    let output = tokens(budget.output_tokens);
    let reasoning = tokens(budget.reasoning_tokens);
    let cost = some(budget.cost.map(|cost| {
        let cost = Literal::f64_suffixed(cost);
        quote!(#cost)
    }));
    let first_token = millis(budget.first_token_ms);
    let turn = millis(budget.turn_ms);
    Some(quote! {
        #krate::__private::Budget {
            tokens: #total,
            input_tokens: #input,
            output_tokens: #output,
            reasoning_tokens: #reasoning,
            cost: #cost,
            first_token: #first_token,
            turn: #turn,
        }
    })
}

/// `tokens` with every span set to `span` (a path and a macro call's empty parentheses).
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect()
}

/// The line of the function's name; `line!()` (the attribute's line) where spans carry no lines.
fn line_of(ident: &syn::Ident) -> TokenStream {
    match ident.span().start().line {
        0 => quote!(::core::line!()),
        line => {
            let line = Literal::u32_unsuffixed(line as u32);
            quote!(#line)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::live_agent_test;
    use quote::quote;

    fn expand(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
        live_agent_test(args, item).to_string()
    }

    #[test]
    fn keeps_the_function_and_registers_it() {
        let out = expand(
            quote!(timeout = "90s", requires = ["A"], gate = "abort"),
            quote!(
                async fn smoke(live: &mut Live) {}
            ),
        );
        assert!(out.starts_with("async fn smoke"), "{out}");
        assert!(out.contains("inventory :: submit !"), "{out}");
        assert!(out.contains("from_millis (90000u64)"), "{out}");
        assert!(out.contains("requires : & [\"A\"]"), "{out}");
        assert!(out.contains("gates : & [\"abort\"]"), "{out}");
        assert!(out.contains("function : \"smoke\""), "{out}");
        // insta's assertion is expanded here, in the test crate, not inside the runtime.
        assert!(
            out.contains(
                "snapshot_assertion : :: harness_runtime :: __private :: snapshot_assertion ! ()"
            ),
            "{out}"
        );
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn cassette_is_emitted_only_when_given() {
        let item = quote!(
            async fn probe(live: &mut Live) {}
        );
        let out = expand(quote!(cassette, timeout = "600s"), item.clone());
        assert!(out.contains("cassette : true"), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
        let out = expand(quote!(timeout = "600s"), item);
        assert!(!out.contains("cassette"), "{out}");
    }

    #[test]
    fn model_api_is_emitted_and_checked() {
        let item = quote!(
            async fn probe(live: &mut Live) {}
        );
        let out = expand(quote!(model_api = "anthropic"), item.clone());
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains("model_api : :: harness_runtime :: ModelApi :: Anthropic"),
            "{out}"
        );
        assert!(!expand(quote!(), item.clone()).contains("model_api"));
        let out = expand(quote!(model_api = "claude"), item.clone());
        assert!(out.contains("unknown model API `claude`"), "{out}");
        let out = expand(quote!(model_api = anthropic), item.clone());
        assert!(out.contains("`model_api` takes one of"), "{out}");
        let out = expand(quote!(cassette, model_api = "google"), item);
        assert!(out.contains("remove `model_api` or `cassette`"), "{out}");
    }

    #[test]
    fn agents_register_one_scenario_each() {
        let item = quote!(
            async fn text_turn(live: &mut Live) {}
        );
        let out = expand(
            quote!(agents = ["opencode-http", "qwen-code"]),
            item.clone(),
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert_eq!(out.matches("inventory :: submit !").count(), 2, "{out}");
        assert!(out.contains("\"text_turn::opencode_http\""), "{out}");
        assert!(out.contains("\"text_turn::qwen_code\""), "{out}");
        assert!(out.contains("AnyAgentKind :: QwenCode"), "{out}");
        // One body for all of them.
        assert_eq!(out.matches("fn __live_agent_test_body").count(), 1, "{out}");
        let out = expand(quote!(), item.clone());
        assert!(!out.contains("any_agent"), "{out}");
        assert!(out.contains("\"text_turn\""), "{out}");
    }

    #[test]
    fn agents_are_checked() {
        let item = quote!(
            async fn text_turn(live: &mut Live) {}
        );
        for (args, message) in [
            (
                quote!(agents = ["gemini"]),
                "unknown agent `gemini`: expected one of \\\"opencode-http\\\"",
            ),
            (
                quote!(agents = ["qwen-code", "qwen-code"]),
                "agent `qwen-code` is listed twice",
            ),
            (quote!(agents = []), "`agents` is empty"),
            (
                quote!(agents = "qwen-code"),
                "`agents` takes a list of agents",
            ),
            (
                quote!(agents = ["qwen-code"], agent = "fixture"),
                "remove `agent`",
            ),
            (
                quote!(agents = ["qwen-code"], needs_peer = "other"),
                "remove one of them",
            ),
        ] {
            let out = expand(args, item.clone());
            assert!(out.contains("compile_error"), "{out}");
            assert!(out.contains(message), "{message}: {out}");
        }
    }

    /// A user's `macro_rules!` that passes `$value:literal` on to the attribute: the value
    /// arrives in an invisible group and reads as the bare literal.
    #[test]
    fn a_value_from_a_macro_fragment_reads_as_the_bare_value() {
        use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
        let item = quote!(
            async fn probe(live: &mut Live) {}
        );
        let wrapped = |value: TokenStream| TokenTree::Group(Group::new(Delimiter::None, value));
        let server = wrapped(quote!("server"));
        let runs = wrapped(quote!(200));
        let out = expand(quote!(isolation = #server, explore = #runs), item.clone());
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("Isolation :: Server"), "{out}");
        assert!(out.contains("runs : 200u32"), "{out}");
        let bad = wrapped(quote!("nowhere"));
        let out = expand(quote!(isolation = #bad), item);
        assert!(out.contains("unknown isolation `nowhere`"), "{out}");
    }

    #[test]
    fn cassette_takes_no_value_and_no_fixture() {
        let item = quote!(
            async fn probe(live: &mut Live) {}
        );
        let out = expand(quote!(cassette = true), item.clone());
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("takes no value"), "{out}");
        let out = expand(quote!(agent = "fixture", cassette), item.clone());
        assert!(out.contains("the fixture agent never sends"), "{out}");
        assert!(!out.contains("submit"), "{out}");
        let out = expand(quote!(agent = "opencode", cassette), item);
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn explore_is_emitted_with_its_budget_and_points() {
        let item = quote!(
            async fn race(live: &mut Live) {}
        );
        let out = expand(
            quote!(
                explore = 200,
                explore_for = "2m",
                explore_points = "event session.idle"
            ),
            item.clone(),
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains("explore : :: core :: option :: Option :: Some (:: harness_runtime :: __private :: ExploreOptions { runs : 200u32 , ceiling : :: core :: option :: Option :: Some (:: core :: time :: Duration :: from_millis (120000u64)) , points : & [\"event session.idle\"] , })"),
            "{out}"
        );
        let out = expand(quote!(explore = 5), item.clone());
        assert!(
            out.contains(
                "runs : 5u32 , ceiling : :: core :: option :: Option :: None , points : & [] ,"
            ),
            "{out}"
        );
        let out = expand(quote!(timeout = "60s"), item);
        assert!(!out.contains("explore"), "{out}");
    }

    #[test]
    fn explore_options_need_explore_and_wire_or_product_points() {
        let item = quote!(
            async fn race(live: &mut Live) {}
        );
        for (args, message) in [
            (quote!(explore = 0), "`explore = 0` is out of range"),
            (
                quote!(explore = 100001),
                "`explore = 100001` is out of range",
            ),
            (
                quote!(explore = -1),
                "`explore` takes a number of schedules",
            ),
            (
                quote!(explore = "x"),
                "`explore` takes a number of schedules",
            ),
            (quote!(explore), "`explore` needs a value"),
            (quote!(explore_for = "5m"), "add `explore = N`"),
            (
                quote!(explore_points = "event session.idle"),
                "add `explore = N`",
            ),
            (quote!(explore = 3, explore_for = "0s"), "longer than zero"),
            (
                quote!(explore = 3, explore_for = 5),
                "takes a duration in a string",
            ),
            (
                quote!(explore = 3, explore_points = ["abort"]),
                "`abort` is a client gate point",
            ),
            (
                quote!(explore = 3, explore_points = ["event server.heartbeat"]),
                "heartbeats pass at once",
            ),
            (
                quote!(explore = 3, explore_points = ["product x", "product x"]),
                "listed twice",
            ),
            (
                quote!(explore = 3, explore_points = ["event session.idl"]),
                "names no event type",
            ),
        ] {
            let out = expand(args.clone(), item.clone());
            assert!(out.contains("compile_error"), "{args}: {out}");
            assert!(out.contains(message), "{args}: {out}");
            assert!(!out.contains("submit"), "{args}: {out}");
        }
        let both = expand(
            quote!(explore_for = "5m", explore_points = "product x"),
            item,
        );
        assert!(
            both.contains("`explore_for` shapes an exploration"),
            "{both}"
        );
        assert!(
            both.contains("`explore_points` shapes an exploration"),
            "{both}"
        );
    }

    #[test]
    fn passes_and_budgets_are_emitted_only_when_given() {
        let item = quote!(
            async fn probe(live: &mut Live) {}
        );
        let out = expand(
            quote!(
                cassette,
                passes = "3 of 5",
                max_tokens = 4000,
                max_cost = 0.05,
                max_first_token = "2s"
            ),
            item.clone(),
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(
            out.contains("passes : :: core :: option :: Option :: Some (:: harness_runtime :: __private :: Passes { needed : 3u32 , runs : 5u32 })"),
            "{out}"
        );
        assert!(
            out.contains("tokens : :: core :: option :: Option :: Some (4000u64)"),
            "{out}"
        );
        assert!(
            out.contains("input_tokens : :: core :: option :: Option :: None"),
            "{out}"
        );
        assert!(
            out.contains("cost : :: core :: option :: Option :: Some (0.05f64)"),
            "{out}"
        );
        assert!(
            out.contains("first_token : :: core :: option :: Option :: Some (:: core :: time :: Duration :: from_millis (2000u64))"),
            "{out}"
        );
        assert!(
            out.contains("turn : :: core :: option :: Option :: None"),
            "{out}"
        );
        let out = expand(
            quote!(
                requires = ["OPENCODE_CONFIG_CONTENT"],
                passes = "1 of 1",
                max_cost = "2"
            ),
            item.clone(),
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("Some (2f64)"), "{out}");
        let out = expand(quote!(timeout = "60s"), item);
        assert!(!out.contains("passes"), "{out}");
        assert!(!out.contains("budget"), "{out}");
    }

    #[test]
    fn passes_and_budgets_refuse_what_they_cannot_mean() {
        let item = quote!(
            async fn probe(live: &mut Live) {}
        );
        for (args, message) in [
            (quote!(cassette, passes = "3/5"), "malformed `passes"),
            (quote!(cassette, passes = 3), "`passes` takes"),
            (quote!(cassette, passes = "0 of 5"), "K must be at least 1"),
            (quote!(cassette, passes = "0 of 0"), "N must be at least 1"),
            (quote!(cassette, passes = "4 of 3"), "k > n"),
            (quote!(cassette, passes = "3 of 500"), "at most 100 runs"),
            (quote!(passes = "3 of 5"), "add `cassette`"),
            (
                quote!(requires = ["TEST_MODEL"], passes = "3 of 5"),
                "add `cassette`",
            ),
            (
                quote!(cassette, explore = 3, passes = "3 of 5"),
                "remove one of them",
            ),
            (quote!(max_tokens = 0), "allows no token"),
            (
                quote!(max_input_tokens = "4000"),
                "`max_input_tokens` takes a whole number",
            ),
            (
                quote!(max_output_tokens = 1.5),
                "`max_output_tokens` takes a whole number",
            ),
            (
                quote!(max_reasoning_tokens = -1),
                "`max_reasoning_tokens` takes a whole number",
            ),
            (quote!(max_tokens), "`max_tokens` needs a value"),
            (quote!(max_cost = 0.0), "allows no cost"),
            (
                quote!(max_cost = -0.5),
                "`max_cost` takes a positive number",
            ),
            (
                quote!(max_cost = "cheap"),
                "`max_cost` takes a positive number",
            ),
            (
                quote!(max_cost = "inf"),
                "`max_cost` takes a positive number",
            ),
            (
                quote!(max_first_token = 2),
                "`max_first_token` takes a duration in a string",
            ),
            (quote!(max_turn = "30"), "`max_turn`: missing unit"),
            (quote!(max_turn = "0s"), "longer than zero"),
        ] {
            let out = expand(args.clone(), item.clone());
            assert!(out.contains("compile_error"), "{args}: {out}");
            assert!(out.contains(message), "{args}: {out}");
            assert!(!out.contains("submit"), "{args}: {out}");
        }
    }

    #[test]
    fn crate_override_replaces_the_path() {
        let out = expand(
            quote!(crate = "my::rt"),
            quote!(
                async fn smoke(live: &mut Live) {}
            ),
        );
        assert!(out.contains("my :: rt :: __private :: Scenario"), "{out}");
        assert!(!out.contains("harness_runtime"), "{out}");
    }

    #[test]
    fn errors_keep_the_item() {
        let out = expand(
            quote!(),
            quote!(
                fn smoke(live: &mut Live) {}
            ),
        );
        assert!(out.starts_with("fn smoke"), "{out}");
        assert!(out.contains("compile_error"), "{out}");
        assert!(!out.contains("submit"), "{out}");
    }
}
