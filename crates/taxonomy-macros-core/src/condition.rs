//! `condition!(EBAY_US, "9355", USED_EXCELLENT)`: an item condition checked at compile time
//! against the category's condition policy (the Sell Metadata API's
//! getItemConditionPolicies) compiled into `taxonomy-data`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Path, Token};
use taxonomy_data::{Category, Condition, ConditionPolicy, LeafCategory, Site};

/// Every form the macro takes, for messages.
const USAGE: &str = "expected `condition!(\"9355\", USED_EXCELLENT)`, `condition!(EBAY_DE, \"9355\", NEW)`, `condition!(Site::De, \"9355\", NEW)` or `condition!(\"Parent > Leaf\", NEW)`";

/// `[SITE ,] "category" , CONDITION [,]`.
struct Input {
    site: Option<Path>,
    category: LitStr,
    condition: Ident,
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(input.error(format!("missing category and condition: {USAGE}")));
        }
        let (site, category) = crate::input::site_and_category(input, USAGE)?;
        input.parse::<Token![,]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("expected a `,` and the condition after the category: {USAGE}"),
            )
        })?;
        let condition: Ident = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!(
                    "expected a condition's ConditionEnum name, such as USED_EXCELLENT: {USAGE}"
                ),
            )
        })?;
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
        if !input.is_empty() {
            return Err(input.error(format!("unexpected tokens after the condition: {USAGE}")));
        }
        Ok(Input {
            site,
            category,
            condition,
        })
    }
}

/// Expands `condition!(…)`: `input` is what the macro was given (`"9355", USED_EXCELLENT`,
/// `EBAY_DE, "9355", NEW`, `Site::De, "Parent > Leaf", NEW`).
///
/// The result is a constant expression of type
/// `taxonomy_data::typed::Checked<In<EBAY_US, 9355>, Condition>` (the category in its type). A mistake expands
/// to a `compile_error!` on the offending token (the category's literal, or the condition),
/// with a placeholder of the right type.
///
/// ```
/// // The committed snapshots carry no condition policies: a clear error, not a silent pass.
/// let error = taxonomy_macros_core::expand_condition(quote::quote!(EBAY_US, "9355", NEW));
/// assert!(error.to_string().contains("condition policies are not in the snapshots"));
/// ```
pub fn expand_condition(input: TokenStream) -> TokenStream {
    crate::expand_typed(
        input,
        expand_input,
        quote!(::taxonomy_data::typed::Checked<::taxonomy_data::typed::Unresolved, ::taxonomy_data::Condition>),
    )
}

fn expand_input(input: &Input) -> syn::Result<TokenStream> {
    let site = match &input.site {
        None => Site::Us,
        Some(path) => crate::site_of(path)?,
    };
    let span = input.category.span();
    let category =
        crate::resolve(site, &input.category.value()).map_err(|m| syn::Error::new(span, m))?;
    let leaf =
        LeafCategory::new(site, category.id()).map_err(|e| syn::Error::new(span, e.to_string()))?;
    let named = input.condition.to_string();
    let condition = check(leaf.category(), leaf.condition_policy(), &named)
        .map_err(|m| syn::Error::new(input.condition.span(), m))?;
    let variant = Ident::new(site.marketplace().variant(), Span::call_site());
    let id = leaf.id();
    let fingerprint = site.fingerprint();
    let condition = Ident::new(&format!("{condition:?}"), Span::call_site());
    let category = crate::category_type(site, id);
    Ok(quote! {
        {
            const __TAXONOMY_CONDITION: ::taxonomy_data::Condition =
                ::taxonomy_data::LeafCategory::__checked_by_macro(
                    ::taxonomy_data::Site::#variant,
                    #id,
                    #fingerprint,
                )
                .__condition_checked_by_macro(::taxonomy_data::Condition::#condition);
            ::taxonomy_data::typed::Checked::<#category, ::taxonomy_data::Condition>::__by_macro(__TAXONOMY_CONDITION)
        }
    })
}

/// The condition `named` (a `ConditionEnum` name) in leaf `category` whose policy is
/// `policy` (`None`: not known), or the message saying what is wrong and what to write.
fn check(
    category: Category,
    policy: Option<&ConditionPolicy<'_>>,
    named: &str,
) -> Result<Condition, String> {
    let site = category.site();
    let Some(condition) = Condition::from_name(named) else {
        return Err(unknown_name_message(named));
    };
    let at = format!("{site} {} \"{}\"", category.id(), category.name());
    let Some(policy) = policy else {
        return Err(no_policy_message(site, &at));
    };
    if !policy.refuses(condition) {
        return Ok(condition);
    }
    if policy.conditions.is_empty() {
        // getItemConditionPolicies lists no itemConditions: no condition is right here.
        let mut message = format!(
            "{named} is not allowed in {at}: this category takes no item condition (leave the listing's condition out)"
        );
        if site.condition_policies_made_up() {
            message.push_str(&made_up_note(site));
        }
        return Err(message);
    }
    let mut message = format!(
        "{named} is not allowed in {at}: it allows {}",
        policy.names()
    );
    if policy.required {
        message.push_str("; the category requires a condition (itemConditionRequired)");
    }
    if site.condition_policies_made_up() {
        message.push_str(&made_up_note(site));
    }
    Err(message)
}

/// What `condition!` says of a leaf without a known policy.
fn no_policy_message(site: Site, at: &str) -> String {
    let file = format!("{}.conditions.json", site.marketplace_id());
    let how = format!(
        "run `snapshot refresh --sites {site}` with credentials at your project's root (it writes {file} beside {site}'s tree, from getItemConditionPolicies), commit the file, and build again"
    );
    if site.has_condition_policies() {
        format!(
            "{at} has no known condition policy: {file} does not name it (the service's answer did not include it). To refresh the file, {how}"
        )
    } else {
        format!(
            "{at} has no known condition policy: {site}'s condition policies are not in the snapshots (there is no {file} beside {}.json), so a condition cannot be checked. To get them, {how}",
            site.marketplace_id()
        )
    }
}

fn made_up_note(site: Site) -> String {
    format!(
        "\nNote: {site}'s condition policies in this build were made up by the fake marketplace ({}), not eBay's",
        site.condition_policies_source().unwrap_or("unknown source")
    )
}

/// An identifier that is no `ConditionEnum` name, with the closest names.
fn unknown_name_message(named: &str) -> String {
    let all: Vec<&str> = Condition::ALL.iter().map(|c| c.name()).collect();
    let closest = closest_names(named);
    let mut message = format!("`{named}` is not a condition (a ConditionEnum name)");
    if closest.is_empty() {
        message.push_str(&format!("; expected one of {}", all.join(", ")));
    } else {
        message.push_str(&format!(": did you mean {}?", closest.join(" or ")));
    }
    message
}

/// The `ConditionEnum` names closest to `named` (case and `_` ignored), best first, at most
/// three: the one spelled the same but for case and `_` alone when there is one.
fn closest_names(named: &str) -> Vec<&'static str> {
    let key = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != '_')
            .map(|c| c.to_ascii_uppercase())
            .collect()
    };
    let wanted = key(named);
    if let Some(same) = Condition::ALL.iter().find(|c| key(c.name()) == wanted) {
        return vec![same.name()];
    }
    let mut scored: Vec<(f64, &'static str)> = Condition::ALL
        .iter()
        .map(|c| (strsim::jaro_winkler(&wanted, &key(c.name())), c.name()))
        .filter(|(score, _)| *score >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.into_iter().take(3).map(|(_, name)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use taxonomy_data::AllowedCondition;

    const NEW_OR_USED: ConditionPolicy<'static> = ConditionPolicy {
        required: true,
        conditions: &[
            AllowedCondition {
                condition: Condition::New,
                descriptors: &[],
            },
            AllowedCondition {
                condition: Condition::UsedGood,
                descriptors: &[],
            },
        ],
    };

    fn phones() -> Category {
        Site::Us.category(9355).unwrap()
    }

    #[test]
    fn an_allowed_condition_is_its_value() {
        assert_eq!(
            check(phones(), Some(&NEW_OR_USED), "USED_GOOD"),
            Ok(Condition::UsedGood)
        );
    }

    #[test]
    fn a_disallowed_condition_names_the_allowed_ones_and_the_requirement() {
        let message = check(phones(), Some(&NEW_OR_USED), "USED_EXCELLENT").unwrap_err();
        assert_eq!(
            message,
            "USED_EXCELLENT is not allowed in EBAY_US 9355 \"Cell Phones & Smartphones\": it allows NEW, USED_GOOD; the category requires a condition (itemConditionRequired)"
        );
        let none = ConditionPolicy {
            required: false,
            conditions: &[],
        };
        let message = check(phones(), Some(&none), "NEW").unwrap_err();
        assert!(
            message.ends_with(
                ": this category takes no item condition (leave the listing's condition out)"
            ),
            "{message}"
        );
    }

    #[test]
    fn a_restricted_condition_the_policy_does_not_list_is_not_refused() {
        // getItemConditionPolicies lists the refurbished conditions only to eligible sellers'
        // user tokens: an application token's policy cannot refuse them.
        assert_eq!(
            check(phones(), Some(&NEW_OR_USED), "CERTIFIED_REFURBISHED"),
            Ok(Condition::CertifiedRefurbished)
        );
        let none = ConditionPolicy {
            required: false,
            conditions: &[],
        };
        assert!(check(phones(), Some(&none), "CERTIFIED_REFURBISHED").is_err());
    }

    #[test]
    fn a_leaf_without_a_policy_says_how_to_get_the_sites_policies() {
        let message = check(phones(), None, "NEW").unwrap_err();
        assert!(
            message.contains("EBAY_US's condition policies are not in the snapshots (there is no EBAY_US.conditions.json beside EBAY_US.json)"),
            "{message}"
        );
        assert!(
            message.contains("`snapshot refresh --sites EBAY_US` with credentials"),
            "{message}"
        );
    }

    #[test]
    fn an_unknown_condition_name_suggests_the_closest() {
        let message = check(phones(), Some(&NEW_OR_USED), "USED_EXCELENT").unwrap_err();
        assert!(
            message.starts_with("`USED_EXCELENT` is not a condition (a ConditionEnum name): did you mean USED_EXCELLENT"),
            "{message}"
        );
        assert_eq!(closest_names("UsedExcellent"), ["USED_EXCELLENT"]);
        assert_eq!(closest_names("used_good"), ["USED_GOOD"]);
        let message = unknown_name_message("BROKEN");
        assert!(
            message.contains("expected one of NEW, LIKE_NEW"),
            "{message}"
        );
    }

    #[test]
    fn the_expansion_is_a_checked_constant_or_an_error_on_the_condition() {
        // No committed policies: every leaf is an error, and a parse error is the error alone.
        let error = expand_condition(quote!(EBAY_GB, "9355", NEW)).to_string();
        assert!(
            error.contains("EBAY_GB's condition policies are not in the snapshots"),
            "{error}"
        );
        assert!(error.contains("None . unwrap ()"), "{error}");
        let error = expand_condition(quote!("15032", NEW)).to_string();
        assert!(error.contains("is not a leaf"), "{error}");
        let error = expand_condition(quote!("9355")).to_string();
        assert!(
            error.contains("expected a `,` and the condition"),
            "{error}"
        );
        let error = expand_condition(quote!("9355", NEW extra)).to_string();
        assert!(
            error.contains("unexpected tokens after the condition"),
            "{error}"
        );
    }
}
