//! `needs_peer = "other_fn"`: the scenario meets another scenario of its module inside one runner
//! process. The name must be a function of this module other than the scenario itself; the
//! expansion refers to it, so a typo is the compiler's "cannot find value" on the string.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, LitStr};

/// What the option's value must look like, for every message about it.
const SHAPE: &str = "`needs_peer` takes the name of the peer scenario's function in this \
                     module: `needs_peer = \"other_scenario\"`";

/// The peer's function name, checked to be a plain identifier.
pub(crate) fn parse(value: &Expr) -> syn::Result<LitStr> {
    let Expr::Lit(ExprLit {
        lit: Lit::Str(name),
        ..
    }) = value
    else {
        return Err(syn::Error::new(value.span(), SHAPE));
    };
    let text = name.value();
    if text.trim().is_empty() {
        return Err(syn::Error::new(
            name.span(),
            format!("the peer's name is empty: {SHAPE}"),
        ));
    }
    if syn::parse_str::<Ident>(&text).is_err() {
        let hint = match text.rsplit_once("::") {
            Some((_, last)) => format!(
                "; a peer lives in the same module, so name its function alone: \
                 `needs_peer = \"{last}\"`"
            ),
            None => String::new(),
        };
        return Err(syn::Error::new(
            name.span(),
            format!("`{text}` is not a function name{hint}"),
        ));
    }
    Ok(name.clone())
}

/// An error when the scenario names itself as its peer (it would wait for itself).
pub(crate) fn check_not_itself(peer: &LitStr, function: &Ident) -> syn::Result<()> {
    if function.unraw() == peer.value() {
        return Err(syn::Error::new(
            peer.span(),
            format!(
                "`{function}` names itself as its peer: `needs_peer` names another scenario of \
                 this module, the one it meets while both run"
            ),
        ));
    }
    Ok(())
}

/// An item that refers to the peer's function, so a name that is not one in this module fails
/// to compile on the option's string.
pub(crate) fn existence_check(peer: &LitStr) -> TokenStream {
    let ident = Ident::new(&peer.value(), peer.span());
    quote! {
        #[allow(dead_code)]
        fn __live_agent_test_peer_exists() {
            let _ = #ident;
        }
    }
}
