//! `aspects!(SITE, "179", { "Brand": "Dell", "Features": ["Bluetooth", "Wi-Fi"], "Model": model })`:
//! a listing's aspects checked at compile time against the category's pinned rules (the
//! rules `taxonomy-data` compiles in, checked by the same code as at run time).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Path, Token, braced, bracketed};
use taxonomy_data::aspects::{ListingAspects, PinnedRules, Problem, key};
use taxonomy_data::{LeafCategory, Site};

/// Every form the macro takes, for messages.
const USAGE: &str = "expected `aspects!(\"179\", { \"Brand\": \"Dell\", \"Features\": [\"Bluetooth\", \"Wi-Fi\"], \"Model\": model })`, with an optional site first (`EBAY_US`, `Site::Us`)";

/// How many allowed values a message lists.
const SHOWN: usize = 6;

/// One `"Name": value` of the object.
struct Entry {
    name: LitStr,
    value: Value,
}

/// A value: a string literal, an array of them, or any other expression (checked at run
/// time).
enum Value {
    Literals {
        /// The whole value (a literal, or the array).
        span: Span,
        items: Vec<LitStr>,
    },
    /// The expression's tokens.
    Expr(TokenStream),
}

impl Value {
    fn span(&self) -> Span {
        match self {
            Value::Literals { span, .. } => *span,
            Value::Expr(e) => span_of(e),
        }
    }
}

struct Input {
    site: Option<Path>,
    category: LitStr,
    brace: Span,
    entries: Vec<Entry>,
}

impl Input {
    /// Whether a value is an expression (checked at run time): the expansion is then a
    /// `Result`.
    fn has_expressions(&self) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(e.value, Value::Expr(_)))
    }
}

/// Whether the next token ends a value (a `,` or the end of the object).
fn at_value_end(input: ParseStream) -> bool {
    input.is_empty() || input.peek(Token![,])
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected an aspect name as a string literal, e.g. \"Brand\"",
            )
        })?;
        input.parse::<Token![:]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `:` after the aspect name, then its value",
            )
        })?;
        // A literal alone, or an array of literals alone: checked now.
        let fork = input.fork();
        if let Ok(s) = fork.parse::<LitStr>()
            && at_value_end(&fork)
        {
            input.advance_to(&fork);
            return Ok(Entry {
                name,
                value: Value::Literals {
                    span: s.span(),
                    items: vec![s],
                },
            });
        }
        if input.peek(syn::token::Bracket) {
            let fork = input.fork();
            let parsed = (|| {
                let content;
                let bracket = bracketed!(content in fork);
                let items: Punctuated<LitStr, Token![,]> =
                    content.parse_terminated(|c| c.parse::<LitStr>(), Token![,])?;
                Ok::<_, syn::Error>((bracket.span.join(), items))
            })();
            if let Ok((span, items)) = parsed
                && at_value_end(&fork)
            {
                input.advance_to(&fork);
                return Ok(Entry {
                    name,
                    value: Value::Literals {
                        span,
                        items: items.into_iter().collect(),
                    },
                });
            }
        }
        // Any other expression, up to the next `,` of the object: checked at run time.
        let mut tokens = TokenStream::new();
        while !at_value_end(input) {
            let tree: proc_macro2::TokenTree = input.parse()?;
            tokens.extend([tree]);
        }
        if tokens.is_empty() {
            return Err(input.error(format!("expected a value after `:`: {USAGE}")));
        }
        Ok(Entry {
            name,
            value: Value::Expr(tokens),
        })
    }
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(input.error(format!("missing category and aspects: {USAGE}")));
        }
        let (site, category) = crate::input::site_and_category(input, USAGE)?;
        input.parse::<Token![,]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("expected a `,` and the aspects after the category: {USAGE}"),
            )
        })?;
        let content;
        let brace = braced!(content in input);
        let entries: Punctuated<Entry, Token![,]> =
            content.parse_terminated(Entry::parse, Token![,])?;
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
        if !input.is_empty() {
            return Err(input.error(format!("unexpected tokens after the aspects: {USAGE}")));
        }
        Ok(Input {
            site,
            category,
            brace: brace.span.join(),
            entries: entries.into_iter().collect(),
        })
    }
}

/// Expands `aspects!(…)`. With literal values only, the expression is a
/// `taxonomy_data::aspects::Aspects`; with an expression among the values, a
/// `Result<Aspects, AspectsError>` (the expressions' values checked at run time against the
/// same compiled-in rules). A mistake is a `compile_error!` on the offending name or value,
/// with a placeholder of the right type.
pub fn expand_aspects(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<Input>(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let later = input.has_expressions();
    match expand_input(&input) {
        Ok(tokens) => tokens,
        Err(Failure { error, warnings }) => {
            let error = error.to_compile_error();
            let ty = if later {
                quote!(
                    ::core::result::Result<
                        ::taxonomy_data::typed::Checked<
                            ::taxonomy_data::typed::Unresolved,
                            ::taxonomy_data::aspects::Aspects,
                        >,
                        ::taxonomy_data::aspects::AspectsError,
                    >
                )
            } else {
                quote!(::taxonomy_data::typed::Checked<::taxonomy_data::typed::Unresolved, ::taxonomy_data::aspects::Aspects>)
            };
            quote!({
                #error;
                #warnings
                ::core::option::Option::<#ty>::None.unwrap()
            })
        }
    }
}

fn expand_input(input: &Input) -> Result<TokenStream, Failure> {
    let site = match &input.site {
        None => Site::Us,
        Some(path) => crate::site_of(path)?,
    };
    let span = input.category.span();
    let category =
        crate::leaf(site, &input.category.value()).map_err(|m| syn::Error::new(span, m))?;
    let leaf =
        LeafCategory::new(site, category.id()).map_err(|e| syn::Error::new(span, e.to_string()))?;
    let rules = leaf.aspects().ok_or_else(|| {
        syn::Error::new(
            span,
            format!(
                "{site} category {} \"{}\" has no pinned aspects in this build, so its listings' aspects cannot be checked.\nPin it: run `snapshot aspects pin --site {site} --category {}` at your project's root (it saves {site}-{}.json in the snapshots directory's pinned/), commit the file, and build again",
                leaf.id(),
                leaf.name(),
                leaf.id(),
                leaf.id()
            ),
        )
    })?;

    let mut listing = ListingAspects::new();
    for entry in &input.entries {
        listing = match &entry.value {
            Value::Literals { items, .. } => {
                listing.with(entry.name.value(), items.iter().map(LitStr::value))
            }
            Value::Expr(_) => listing.with_later(entry.name.value()),
        };
    }
    let (problems, warnings): (Vec<Problem>, Vec<Problem>) = rules
        .check(&listing)
        .into_iter()
        .partition(Problem::is_error);
    // A misspelt required aspect is part of the error that it is missing, not a warning.
    let typos = required_typos(&problems, &warnings);
    let warnings: Vec<Problem> = warnings
        .into_iter()
        .filter(|w| {
            !matches!(w, Problem::UnknownAspect { aspect, .. } if typos.iter().any(|t| &t.given == aspect))
        })
        .collect();
    let warnings = warnings_of(input, &warnings);
    if let Some(error) = errors(input, leaf, rules, &problems, &typos) {
        return Err(Failure { error, warnings });
    }

    let variant = Ident::new(site.marketplace().variant(), Span::call_site());
    let id = leaf.id();
    let fingerprint = site.fingerprint();
    let marketplace_id = site.marketplace_id();
    let category = crate::category_type(site, id);
    // The listing as one non-generic call over static data (the literals), so that the
    // compiler has little to check and generate per invocation.
    let call = if input.has_expressions() {
        let entries = input.entries.iter().map(|entry| {
            let name = &entry.name;
            match &entry.value {
                Value::Literals { items, .. } => {
                    quote!((#name, ::taxonomy_data::aspects::MacroValue::Literals(&[#(#items),*])))
                }
                Value::Expr(_) => quote!((#name, ::taxonomy_data::aspects::MacroValue::Later)),
            }
        });
        let later = input.entries.iter().filter_map(|entry| match &entry.value {
            Value::Expr(expr) => {
                let span = span_of(expr);
                Some(quote_spanned!(span=> ::taxonomy_data::aspects::IntoAspectValues::into_aspect_values(#expr)))
            }
            Value::Literals { .. } => None,
        });
        quote!(::taxonomy_data::aspects::Aspects::__checked_at_run_time(__taxonomy_rules, #marketplace_id, &[#(#entries),*], [#(#later),*]).map(::taxonomy_data::typed::Checked::<#category, ::taxonomy_data::aspects::Aspects>::__by_macro))
    } else {
        // Every value is literals here.
        let entries = input.entries.iter().filter_map(|entry| {
            let name = &entry.name;
            match &entry.value {
                Value::Literals { items, .. } => Some(quote!((#name, &[#(#items),*]))),
                Value::Expr(_) => None,
            }
        });
        quote!(::taxonomy_data::typed::Checked::<#category, ::taxonomy_data::aspects::Aspects>::__by_macro(::taxonomy_data::aspects::Aspects::__checked_by_macro(__taxonomy_rules, #marketplace_id, &[#(#entries),*])))
    };
    Ok(quote! {
        {
            const __TAXONOMY_LEAF: ::taxonomy_data::LeafCategory =
                ::taxonomy_data::LeafCategory::__checked_by_macro(
                    ::taxonomy_data::Site::#variant,
                    #id,
                    #fingerprint,
                );
            const _: () = __TAXONOMY_LEAF.__assert_pinned_by_macro();
            let __taxonomy_rules = __TAXONOMY_LEAF.__pinned_by_macro();
            #warnings
            #call
        }
    })
}

/// A failed expansion: the compile errors, and the warnings to show beside them.
struct Failure {
    error: syn::Error,
    warnings: TokenStream,
}

impl From<syn::Error> for Failure {
    fn from(error: syn::Error) -> Self {
        Failure {
            error,
            warnings: TokenStream::new(),
        }
    }
}

/// Stable Rust has no warnings from proc macros: each warning (an aspect the category does
/// not know, a name given twice, an aspect that will be required) is the use of a deprecated
/// constant whose note is the message, on the name (or the object) it is about. The user
/// silences them like any deprecation (`#[allow(deprecated)]`); they never fail a build that
/// does not deny warnings.
fn warnings_of(input: &Input, warnings: &[Problem]) -> TokenStream {
    let mut out = TokenStream::new();
    for (i, problem) in warnings.iter().enumerate() {
        let text = problem.to_string();
        let note = text.strip_prefix("warning: ").unwrap_or(&text).to_owned();
        let k = key(problem.aspect());
        let span = input
            .entries
            .iter()
            .find(|e| key(&e.name.value()) == k)
            .map_or(input.brace, |e| e.name.span());
        let name = Ident::new(&format!("aspect_warning_{i}"), span);
        out.extend(quote_spanned! {span=>
            #[deprecated(note = #note)]
            #[allow(non_upper_case_globals, dead_code)]
            const #name: () = ();
            let _ = #name;
        });
    }
    out
}

/// The span of an expression's tokens (joined where the compiler allows, else the first).
fn span_of(tokens: &TokenStream) -> Span {
    let mut trees = tokens.clone().into_iter();
    let first = trees.next().map_or_else(Span::call_site, |t| t.span());
    match trees.last() {
        Some(last) => first.join(last.span()).unwrap_or(first),
        None => first,
    }
}

/// The message of a problem, without the "error: " that the compiler adds itself.
fn message(problem: &Problem) -> String {
    let text = problem.to_string();
    text.strip_prefix("error: ").unwrap_or(&text).to_owned()
}

pub(crate) fn quoted(values: &[&str]) -> String {
    let mut shown: Vec<String> = values
        .iter()
        .take(SHOWN)
        .map(|v| format!("{v:?}"))
        .collect();
    if values.len() > SHOWN {
        shown.push(format!("… ({} in all)", values.len()));
    }
    shown.join(", ")
}

/// A name the category does not know that stands for a required aspect the listing lacks.
struct Typo {
    /// The name as the listing gives it (`"Tpye"`).
    given: String,
    /// The required aspect it most likely means (`"Type"`).
    meant: String,
}

/// The unknown names of `warnings` that are typos of the missing required aspects of
/// `problems`: the check's own suggestion when it is one of them, else the missing aspect
/// closest to the name (optimal string alignment, case ignored: a swap of two letters is one
/// edit), within a third of the longer name's letters (one to five). Each missing aspect is
/// taken for one name at most.
fn required_typos(problems: &[Problem], warnings: &[Problem]) -> Vec<Typo> {
    let mut missing: Vec<&str> = problems
        .iter()
        .filter_map(|p| match p {
            Problem::MissingRequired { aspect } => Some(aspect.as_str()),
            _ => None,
        })
        .collect();
    let mut typos = Vec::new();
    for warning in warnings {
        let Problem::UnknownAspect { aspect, suggestion } = warning else {
            continue;
        };
        let given = key(aspect);
        let by_check = suggestion
            .as_deref()
            .and_then(|s| missing.iter().position(|m| key(m) == key(s)));
        let by_distance = || {
            missing
                .iter()
                .enumerate()
                .filter_map(|(i, m)| {
                    let m = key(m);
                    let limit = (given.chars().count().max(m.chars().count()) / 3).clamp(1, 5);
                    let d = strsim::osa_distance(&given, &m);
                    (d <= limit).then_some((d, i))
                })
                .min()
                .map(|(_, i)| i)
        };
        if let Some(i) = by_check.or_else(by_distance) {
            typos.push(Typo {
                given: aspect.clone(),
                meant: missing.remove(i).to_owned(),
            });
        }
    }
    typos
}

/// The compile errors of `problems` (errors only), each on the name or value it is about;
/// the missing required aspects together, on the object, and a misspelt one's name (`typos`)
/// on that name too.
fn errors(
    input: &Input,
    leaf: LeafCategory,
    rules: &PinnedRules,
    problems: &[Problem],
    typos: &[Typo],
) -> Option<syn::Error> {
    let mut all: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut all {
        Some(a) => a.combine(e),
        None => all = Some(e),
    };
    let entry_of = |aspect: &str| {
        let k = key(aspect);
        input.entries.iter().find(|e| key(&e.name.value()) == k)
    };
    let value_span = |aspect: &str, value: &str| {
        let entry = entry_of(aspect)?;
        match &entry.value {
            Value::Literals { items, .. } => {
                items.iter().find(|l| l.value() == value).map(LitStr::span)
            }
            Value::Expr(e) => Some(span_of(e)),
        }
        .or_else(|| Some(entry.value.span()))
    };
    let mut missing = Vec::new();
    for problem in problems {
        match problem {
            Problem::MissingRequired { aspect } => missing.push(aspect.clone()),
            Problem::TooManyValues { aspect, .. } => {
                let span = entry_of(aspect).map_or(input.brace, |e| e.value.span());
                push(syn::Error::new(span, message(problem)));
            }
            Problem::NotAllowed { aspect, value, .. } => {
                let span = value_span(aspect, value).unwrap_or(input.brace);
                let allowed: Vec<&str> = rules.values_of(aspect).unwrap_or_default().to_vec();
                let closest = closest_values(value, &allowed);
                push(syn::Error::new(
                    span,
                    format!(
                        "{}\nThe closest allowed values: {}",
                        message(problem),
                        quoted(&closest)
                    ),
                ));
            }
            Problem::TooLong { aspect, value, .. }
            | Problem::BadFormat { aspect, value, .. }
            | Problem::ConstraintNotMet { aspect, value, .. } => {
                let span = value_span(aspect, value).unwrap_or(input.brace);
                push(syn::Error::new(span, message(problem)));
            }
            other => push(syn::Error::new(input.brace, message(other))),
        }
    }
    for typo in typos {
        let span = entry_of(&typo.given).map_or(input.brace, |e| e.name.span());
        push(syn::Error::new(
            span,
            format!(
                "{:?} is not an aspect of {} category {}: did you mean {:?}? It is required (aspectRequired)",
                typo.given,
                leaf.site(),
                leaf.id(),
                typo.meant
            ),
        ));
    }
    if !missing.is_empty() {
        let lines: Vec<String> = missing
            .iter()
            .map(|aspect| {
                let given = typos
                    .iter()
                    .find(|t| &t.meant == aspect)
                    .map(|t| format!(" (given as {:?}?)", t.given))
                    .unwrap_or_default();
                let values = rules.values_of(aspect).unwrap_or_default();
                if values.is_empty() {
                    format!("\n  {aspect:?}{given}")
                } else {
                    format!("\n  {aspect:?}{given}, e.g. {}", quoted(values))
                }
            })
            .collect();
        let rename = if typos.is_empty() {
            ""
        } else {
            ", or correct the misspelt names"
        };
        push(syn::Error::new(
            input.brace,
            format!(
                "{} category {} \"{}\" requires {} aspect(s) this listing lacks (aspectRequired):{}\nAdd them, e.g. `{:?}: \"…\"`{rename}",
                leaf.site(),
                leaf.id(),
                leaf.name(),
                missing.len(),
                lines.concat(),
                missing[0]
            ),
        ));
    }
    all
}

/// The allowed values closest to `value`: the closest one first (as the check suggests it),
/// then those sharing its first letter, then the first ones listed.
pub(crate) fn closest_values<'a>(value: &str, allowed: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = Vec::new();
    if let Some(best) = taxonomy_data::aspects::closest(value, allowed.iter().copied()) {
        out.push(best);
    }
    let first = key(value).chars().next();
    for &a in allowed {
        if out.len() >= SHOWN {
            break;
        }
        if key(a).chars().next() == first && !out.contains(&a) {
            out.push(a);
        }
    }
    for &a in allowed {
        if out.len() >= SHOWN {
            break;
        }
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_in_a_required_aspects_name_is_an_error_with_the_hint() {
        let out = expand_aspects(quote!("179", { "Brand": "Dell", "Tpye": "Desktop" })).to_string();
        assert!(out.contains("compile_error"), "{out}");
        // The hint is in the errors, not only in a deprecation warning beside them.
        assert!(
            !out.contains("is not an aspect of this category: did you mean \\\"Type\\\"?\" ]"),
            "{out}"
        );
        assert!(
            out.contains("\\\"Tpye\\\" is not an aspect of EBAY_US category 179: did you mean \\\"Type\\\"? It is required (aspectRequired)"),
            "{out}"
        );
        assert!(
            out.contains("\\n  \\\"Type\\\" (given as \\\"Tpye\\\"?), e.g."),
            "{out}"
        );
        // An unknown name that is no required aspect's typo stays a warning.
        let out = expand_aspects(
            quote!("179", { "Brand": "Dell", "Type": "Desktop", "Colour": "Black" }),
        )
        .to_string();
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("deprecated"), "{out}");
    }
}
