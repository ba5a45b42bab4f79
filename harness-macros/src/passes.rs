//! `passes = "K of N"`: a verdict over several runs of a real-model scenario.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit};

/// The most runs a verdict may take: beyond it a scenario is a flake to fix, not to sample, and
/// no CI run affords that many real-model runs of one scenario.
pub(crate) const MAX_VERDICT_RUNS: u32 = 100;

/// A parsed `passes = "K of N"`, with the value's span (where a conflict is reported).
pub(crate) struct PassesOption {
    pub(crate) needed: u32,
    pub(crate) runs: u32,
    pub(crate) span: Span,
}

const FORM: &str = "`passes` takes \"K of N\" (K passes needed out of at most N runs), such as \
                    \"3 of 5\"";

/// Parses and validates the value of `passes`.
pub(crate) fn parse(value: &Expr) -> syn::Result<PassesOption> {
    let Expr::Lit(ExprLit {
        lit: Lit::Str(text),
        ..
    }) = value
    else {
        return Err(syn::Error::new(value.span(), FORM));
    };
    let span = text.span();
    let (needed, runs) = k_of_n(&text.value()).map_err(|message| syn::Error::new(span, message))?;
    Ok(PassesOption { needed, runs, span })
}

/// `"K of N"` into `(K, N)`, or what is wrong with it.
pub(crate) fn k_of_n(text: &str) -> Result<(u32, u32), String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let [k, "of", n] = words.as_slice() else {
        return Err(format!("malformed `passes = \"{text}\"`: {FORM}"));
    };
    let number = |word: &str| -> Result<u32, String> {
        if word.is_empty() || !word.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "malformed `passes = \"{text}\"`: `{word}` is not a whole number; {FORM}"
            ));
        }
        word.parse::<u32>().map_err(|_| {
            format!("`passes = \"{text}\"`: `{word}` is too large; at most {MAX_VERDICT_RUNS} runs")
        })
    };
    let (needed, runs) = (number(k)?, number(n)?);
    if runs == 0 {
        return Err(format!(
            "`passes = \"{text}\"` allows no run at all: N must be at least 1, such as \"3 of 5\""
        ));
    }
    if needed == 0 {
        return Err(format!(
            "`passes = \"{text}\"` needs no pass, so it could never fail: K must be at least 1, \
             such as \"3 of 5\""
        ));
    }
    if needed > runs {
        return Err(format!(
            "k > n: `passes = \"{text}\"` needs {needed} passes from at most {runs} runs, which \
             can never happen: K must be at most N, such as \"3 of 5\""
        ));
    }
    if runs > MAX_VERDICT_RUNS {
        return Err(format!(
            "`passes = \"{text}\"` takes too many runs: at most {MAX_VERDICT_RUNS} runs of a \
             real model per scenario"
        ));
    }
    Ok((needed, runs))
}

#[cfg(test)]
mod tests {
    use super::k_of_n;

    #[test]
    fn reads_k_of_n() {
        assert_eq!(k_of_n("3 of 5"), Ok((3, 5)));
        assert_eq!(k_of_n(" 1  of 1 "), Ok((1, 1)));
        assert_eq!(k_of_n("100 of 100"), Ok((100, 100)));
    }

    #[test]
    fn refuses_what_cannot_be_a_verdict() {
        for (bad, message) in [
            ("3/5", "malformed"),
            ("3 out of 5", "malformed"),
            ("three of 5", "not a whole number"),
            ("-1 of 5", "not a whole number"),
            ("3 of 5.0", "not a whole number"),
            ("", "malformed"),
            ("0 of 5", "K must be at least 1"),
            ("0 of 0", "N must be at least 1"),
            ("6 of 5", "k > n"),
            ("3 of 101", "at most 100 runs"),
            ("3 of 99999999999", "too large"),
        ] {
            let error = k_of_n(bad).expect_err(bad);
            assert!(error.contains(message), "{bad:?}: {error}");
        }
    }
}
