//! `variations!(SITE, "27386", { "Memory Size": ["8 GB", "16 GB"], … })`: a listing with
//! variations' axes checked at compile time against the category's pinned rules
//! (getItemAspectsForCategory's `aspectEnabledForVariations`, `aspectMode`) and eBay's limits
//! (`taxonomy_aspects::variation_limits`, which `marketplace-listing`'s group check reads too).

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, LitStr, Path, Token, braced, bracketed};
use taxonomy_data::aspects::{PinnedRules, RuleSet, key, variation_limits};
use taxonomy_data::{LeafCategory, Site};

use crate::aspects::{closest_values, quoted};

/// Every form the macro takes, for messages.
const USAGE: &str = "expected `variations!(\"15687\", { \"Size\": [\"S\", \"M\", \"L\"], \"Color\": [\"Black\", \"White\"] })`, with an optional site first (`EBAY_US`, `Site::Us`)";

/// One `"Axis": ["value", …]` of the object.
struct Axis {
    name: LitStr,
    /// The list (or the single literal).
    span: Span,
    values: Vec<LitStr>,
}

impl Parse for Axis {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected an axis (an aspect's name) as a string literal, e.g. \"Size\"",
            )
        })?;
        input.parse::<Token![:]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `:` after the axis, then its values as `[\"S\", \"M\"]`",
            )
        })?;
        if input.peek(LitStr) {
            let value: LitStr = input.parse()?;
            return Ok(Axis {
                name,
                span: value.span(),
                values: vec![value],
            });
        }
        let content;
        let bracket = bracketed!(content in input);
        let values: Punctuated<LitStr, Token![,]> = content
            .parse_terminated(|c| c.parse::<LitStr>(), Token![,])
            .map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected the axis's values as string literals, e.g. [\"S\", \"M\"]",
                )
            })?;
        Ok(Axis {
            name,
            span: bracket.span.join(),
            values: values.into_iter().collect(),
        })
    }
}

struct Input {
    site: Option<Path>,
    category: LitStr,
    brace: Span,
    axes: Vec<Axis>,
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(input.error(format!("missing category and axes: {USAGE}")));
        }
        let (site, category) = crate::input::site_and_category(input, USAGE)?;
        input.parse::<Token![,]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("expected a `,` and the axes after the category: {USAGE}"),
            )
        })?;
        let content;
        let brace = braced!(content in input);
        let axes: Punctuated<Axis, Token![,]> = content.parse_terminated(Axis::parse, Token![,])?;
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
        if !input.is_empty() {
            return Err(input.error(format!("unexpected tokens after the axes: {USAGE}")));
        }
        Ok(Input {
            site,
            category,
            brace: brace.span.join(),
            axes: axes.into_iter().collect(),
        })
    }
}

/// Expands `variations!(…)` to a constant `taxonomy_data::aspects::Variations` carrying its
/// marketplace and category in its type; a mistake is a `compile_error!` on the offending
/// axis or value, with a placeholder of the right type.
pub fn expand_variations(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<Input>(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    match expand_input(&input) {
        Ok(tokens) => tokens,
        Err(error) => {
            let error = error.to_compile_error();
            quote!({
                #error;
                ::core::option::Option::<::taxonomy_data::typed::Checked<::taxonomy_data::typed::Unresolved, ::taxonomy_data::aspects::Variations>>::None.unwrap()
            })
        }
    }
}

fn expand_input(input: &Input) -> syn::Result<TokenStream> {
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
                "{site} category {} \"{}\" has no pinned aspects in this build, so its variation axes cannot be checked.\nPin it: run `snapshot aspects pin --site {site} --category {}` at your project's root (it saves {site}-{}.json in the snapshots directory's pinned/), commit the file, and build again",
                leaf.id(),
                leaf.name(),
                leaf.id(),
                leaf.id()
            ),
        )
    })?;
    let names = check(input, leaf, rules)?;

    let variant = Ident::new(site.marketplace().variant(), Span::call_site());
    let id = leaf.id();
    let fingerprint = site.fingerprint();
    let marketplace_id = site.marketplace_id();
    let category = crate::category_type(site, id);
    let axes = input.axes.iter().zip(&names).map(|(axis, name)| {
        let values = &axis.values;
        quote!((#name, &[#(#values),*]))
    });
    Ok(quote! {
        {
            const __TAXONOMY_LEAF: ::taxonomy_data::LeafCategory =
                ::taxonomy_data::LeafCategory::__checked_by_macro(
                    ::taxonomy_data::Site::#variant,
                    #id,
                    #fingerprint,
                );
            const _: () = __TAXONOMY_LEAF.__assert_pinned_by_macro();
            ::taxonomy_data::typed::Checked::<#category, ::taxonomy_data::aspects::Variations>::__by_macro(
                ::taxonomy_data::aspects::Variations::__checked_by_macro(#marketplace_id, #id, &[#(#axes),*]),
            )
        }
    })
}

/// Every mistake of the axes, each on the name or value it is about (combined); else each
/// axis's aspect name as the category spells it.
fn check(input: &Input, leaf: LeafCategory, rules: &PinnedRules) -> syn::Result<Vec<String>> {
    let mut all: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut all {
        Some(a) => a.combine(e),
        None => all = Some(e),
    };
    let site = leaf.site();
    let id = leaf.id();
    // The aspects the category enables for variations, for the messages.
    let enabled: Vec<&str> = (0..rules.aspect_count())
        .map(|i| rules.rule(i))
        .filter(|r| r.enabled_for_variations && key(r.name) != "brand")
        .map(|r| r.name)
        .collect();
    let enabled_text = |given: &str| {
        if enabled.is_empty() {
            format!(
                "{site} category {id} \"{}\" has no aspect enabled for variations in its pinned rules (aspectEnabledForVariations), so it cannot be listed with variations",
                leaf.name()
            )
        } else {
            format!(
                "The closest aspects enabled for variations: {}",
                quoted(&closest_values(given, &enabled))
            )
        }
    };
    if input.axes.is_empty() {
        push(syn::Error::new(
            input.brace,
            "a listing with variations needs at least one axis (variesBy.specifications), e.g. `\"Size\": [\"S\", \"M\"]`",
        ));
    }
    if input.axes.len() > variation_limits::AXES {
        push(syn::Error::new(
            input.brace,
            format!(
                "{} axes, at most {} allowed (variesBy.specifications: MaxNamesPerVariationSpecificsSet)",
                input.axes.len(),
                variation_limits::AXES
            ),
        ));
    }
    let mut names = Vec::new();
    for (i, axis) in input.axes.iter().enumerate() {
        let given = axis.name.value();
        let k = key(&given);
        if input.axes[..i].iter().any(|a| key(&a.name.value()) == k) {
            push(syn::Error::new(
                axis.name.span(),
                format!("axis {given:?} named twice: each axis once, with all its values"),
            ));
            continue;
        }
        if k == "brand" {
            push(syn::Error::new(
                axis.name.span(),
                format!(
                    "Brand is not allowed as a variation specific: give it once, among the group's shared aspects\n{}",
                    enabled_text(&given)
                ),
            ));
            continue;
        }
        let Some(index) = rules.find_aspect(&k) else {
            push(syn::Error::new(
                axis.name.span(),
                format!(
                    "{given:?} is not an aspect of {site} category {id} \"{}\", so not enabled for variations (getItemAspectsForCategory)\n{}",
                    leaf.name(),
                    enabled_text(&given)
                ),
            ));
            continue;
        };
        let rule = rules.rule(index);
        if !rule.enabled_for_variations {
            push(syn::Error::new(
                axis.name.span(),
                format!(
                    "{:?} is not enabled for variations in {site} category {id} \"{}\" (aspectEnabledForVariations false)\n{}",
                    rule.name,
                    leaf.name(),
                    enabled_text(&given)
                ),
            ));
            // Its values are checked too: every mistake at once.
        }
        names.push(rule.name.to_owned());
        if axis.values.is_empty() {
            push(syn::Error::new(
                axis.span,
                format!(
                    "axis {:?} has no values: give each value the variants take",
                    rule.name
                ),
            ));
        }
        if axis.values.len() > variation_limits::VALUES_PER_AXIS {
            push(syn::Error::new(
                axis.span,
                format!(
                    "{} values for axis {:?}, at most {} allowed (MaxValuesPerVariationSpecificsSetName)",
                    axis.values.len(),
                    rule.name,
                    variation_limits::VALUES_PER_AXIS
                ),
            ));
        }
        for (j, value) in axis.values.iter().enumerate() {
            let v = value.value();
            if axis.values[..j].iter().any(|w| key(&w.value()) == key(&v)) {
                push(syn::Error::new(
                    value.span(),
                    format!("value {v:?} given twice for axis {:?}", rule.name),
                ));
                continue;
            }
            if v.trim().is_empty() {
                push(syn::Error::new(
                    value.span(),
                    format!("an empty value for axis {:?}", rule.name),
                ));
                continue;
            }
            if rule.selection_only && rules.find_value(index, &v).is_none() {
                let allowed = rules.values_of(rule.name).unwrap_or_default();
                push(syn::Error::new(
                    value.span(),
                    format!(
                        "{v:?} is not an allowed value of {:?}, a selection-only aspect (aspectMode SELECTION_ONLY) of {site} category {id}\nThe closest allowed values: {}",
                        rule.name,
                        quoted(&closest_values(&v, allowed))
                    ),
                ));
            }
        }
    }
    match all {
        Some(error) => Err(error),
        None => Ok(names),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_axis_not_enabled_for_variations_is_refused_on_its_name() {
        // EBAY_US 179's pinned rules enable no aspect for variations.
        let out =
            expand_variations(quote!("179", { "Type": ["Desktop", "All-in-One"] })).to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(
            out.contains("\\\"Type\\\" is not enabled for variations in EBAY_US category 179"),
            "{out}"
        );
        assert!(
            out.contains("has no aspect enabled for variations"),
            "{out}"
        );
    }
}
