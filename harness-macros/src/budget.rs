//! The budget options: `max_tokens`, `max_input_tokens`, `max_output_tokens`,
//! `max_reasoning_tokens` (whole numbers), `max_cost` (a positive number) and `max_first_token`,
//! `max_turn` (durations, as `timeout`).

use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit};

use crate::duration::parse_millis;

/// The budget option names, in the order the docs list them.
pub(crate) const NAMES: &[&str] = &[
    "max_tokens",
    "max_input_tokens",
    "max_output_tokens",
    "max_reasoning_tokens",
    "max_cost",
    "max_first_token",
    "max_turn",
];

/// The parsed limits; `None` is no limit.
#[derive(Default)]
pub(crate) struct BudgetOptions {
    pub(crate) tokens: Option<u64>,
    pub(crate) input_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
    pub(crate) reasoning_tokens: Option<u64>,
    pub(crate) cost: Option<f64>,
    pub(crate) first_token_ms: Option<u64>,
    pub(crate) turn_ms: Option<u64>,
}

impl BudgetOptions {
    /// Sets the limit `name` (one of [`NAMES`]) from its value, validated on the value's span.
    pub(crate) fn set(&mut self, name: &str, value: &Expr) -> syn::Result<()> {
        match name {
            "max_tokens" => self.tokens = Some(tokens(name, value)?),
            "max_input_tokens" => self.input_tokens = Some(tokens(name, value)?),
            "max_output_tokens" => self.output_tokens = Some(tokens(name, value)?),
            "max_reasoning_tokens" => self.reasoning_tokens = Some(tokens(name, value)?),
            "max_cost" => self.cost = Some(cost(value)?),
            "max_first_token" => self.first_token_ms = Some(duration(name, value, "2s")?),
            "max_turn" => self.turn_ms = Some(duration(name, value, "30s")?),
            _ => unreachable!("`{name}` is not a budget option"),
        }
        Ok(())
    }
}

/// A token limit: an integer literal of at least 1.
fn tokens(name: &str, value: &Expr) -> syn::Result<u64> {
    let expected =
        format!("`{name}` takes a whole number of tokens of at least 1: `{name} = 4000`");
    let Expr::Lit(ExprLit {
        lit: Lit::Int(number),
        ..
    }) = value
    else {
        return Err(syn::Error::new(value.span(), expected));
    };
    match number.base10_parse::<u64>() {
        Ok(limit) if limit >= 1 => Ok(limit),
        Ok(_) => Err(syn::Error::new(
            number.span(),
            format!("`{name} = 0` allows no token at all: {expected}"),
        )),
        Err(_) => Err(syn::Error::new(number.span(), expected)),
    }
}

/// The cost limit: a float or integer literal (or a string holding one), positive and finite.
fn cost(value: &Expr) -> syn::Result<f64> {
    const EXPECTED: &str = "`max_cost` takes a positive number, in the currency of the model's \
                            configured prices: `max_cost = 0.05`";
    let (parsed, span) = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Float(number),
            ..
        }) => (number.base10_parse::<f64>().ok(), number.span()),
        Expr::Lit(ExprLit {
            lit: Lit::Int(number),
            ..
        }) => (number.base10_parse::<f64>().ok(), number.span()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) => (text.value().trim().parse::<f64>().ok(), text.span()),
        other => return Err(syn::Error::new(other.span(), EXPECTED)),
    };
    match parsed {
        Some(limit) if limit.is_finite() && limit > 0.0 => Ok(limit),
        Some(limit) if limit.is_finite() => Err(syn::Error::new(
            span,
            format!("`max_cost = {limit}` allows no cost at all: {EXPECTED}"),
        )),
        _ => Err(syn::Error::new(span, EXPECTED)),
    }
}

/// A time limit: a duration string, as `timeout` takes.
fn duration(name: &str, value: &Expr, example: &str) -> syn::Result<u64> {
    let Expr::Lit(ExprLit {
        lit: Lit::Str(text),
        ..
    }) = value
    else {
        return Err(syn::Error::new(
            value.span(),
            format!("`{name}` takes a duration in a string: `{name} = \"{example}\"`"),
        ));
    };
    parse_millis(&text.value())
        .map_err(|message| syn::Error::new(text.span(), format!("`{name}`: {message}")))
}
