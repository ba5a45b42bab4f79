//! Checks that the annotated item is `async fn name(live: &mut Live) -> R`, with spans on the
//! offending tokens.

use syn::{FnArg, ItemFn, Type};

/// Every problem with the function's shape, combined into one error.
pub(crate) fn check(item: &ItemFn) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    let sig = &item.sig;

    for attr in &item.attrs {
        let path = attr.path();
        let Some(last) = path.segments.last() else {
            continue;
        };
        if last.ident == "test" || last.ident == "live_agent_test" {
            let shown = path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect::<Vec<_>>()
                .join("::");
            errors.push(syn::Error::new_spanned(
                attr,
                format!(
                    "`#[{shown}]` cannot be combined with `#[live_agent_test]`, which already \
                     registers the scenario with the runner: remove it"
                ),
            ));
        }
    }
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span,
            "a live scenario must be an `async fn`: write `async fn`",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        // `new_spanned` covers the whole `<…>` (or `where …`), not just its first token.
        let message = "a live scenario cannot be generic: remove the generic parameters";
        errors.push(if sig.generics.params.is_empty() {
            syn::Error::new_spanned(&sig.generics.where_clause, message)
        } else {
            syn::Error::new_spanned(&sig.generics, message)
        });
    }
    match sig.inputs.len() {
        0 => errors.push(syn::Error::new(
            sig.paren_token.span.join(),
            "a live scenario takes one argument: `live: &mut Live`",
        )),
        1 => {}
        _ => errors.push(syn::Error::new_spanned(
            sig.inputs.iter().nth(1),
            "a live scenario takes exactly one argument, `live: &mut Live`: remove this one",
        )),
    }
    match sig.inputs.first() {
        Some(FnArg::Receiver(receiver)) => errors.push(syn::Error::new_spanned(
            receiver,
            "a live scenario is a free function, not a method: remove `self`",
        )),
        Some(FnArg::Typed(arg)) if !is_mut_live(&arg.ty) => errors.push(syn::Error::new_spanned(
            &arg.ty,
            "the argument of a live scenario must be `&mut Live`",
        )),
        _ => {}
    }

    let mut errors = errors.into_iter();
    match errors.next() {
        None => Ok(()),
        Some(mut first) => {
            errors.for_each(|e| first.combine(e));
            Err(first)
        }
    }
}

/// `&mut Live` or `&mut some::path::Live`, without an explicit lifetime.
fn is_mut_live(ty: &Type) -> bool {
    let Type::Reference(reference) = ty else {
        return false;
    };
    if reference.mutability.is_none() || reference.lifetime.is_some() {
        return false;
    }
    match &*reference.elem {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .is_some_and(|last| last.ident == "Live" && last.arguments.is_none()),
        _ => false,
    }
}
