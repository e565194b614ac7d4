//! # taxonomy-macros
//!
//! `category!` turns a category id or a full path into a [`taxonomy_data::LeafCategory`],
//! checked at compile time against the very tables `taxonomy-data` compiles into your program.
//! Only leaf categories accept listings, so anything else is a compile error that says what to
//! write instead.
//!
//! ```
//! use taxonomy_data::{LeafCategory, Site};
//! use taxonomy_macros::category;
//!
//! // An id on the US site (the default site).
//! const PHONES: LeafCategory = category!("9355");
//! // Another site, named by its marketplace id.
//! let handys = category!(EBAY_DE, "9355");
//! // A full path, from the top level down (leaf names alone are not unique).
//! let by_path = category!("Cell Phones & Accessories > Cell Phones & Smartphones");
//!
//! assert_eq!(PHONES, by_path);
//! assert_eq!(handys.site(), Site::De);
//! assert_eq!(handys.name(), "Handys & Smartphones");
//! ```
//!
//! Listing code depends on both `taxonomy-data` and `taxonomy-macros`; the expansion names
//! `::taxonomy_data`.

use std::collections::HashSet;
use std::sync::OnceLock;

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token};
use taxonomy_data::{Category, Site};

/// A leaf category checked at compile time: `category!("9355")`, `category!(EBAY_DE, "9355")`
/// or `category!("Cell Phones & Accessories > Cell Phones & Smartphones")`.
///
/// The site defaults to `EBAY_US`; the others are `EBAY_GB`, `EBAY_DE` and `EBAY_AU`. The
/// literal is a decimal category id or a full path of names separated by `>`. The expansion is
/// a constant expression of type `taxonomy_data::LeafCategory`, usable in `const` items.
///
/// Compile errors point at the literal: a category that is not a leaf (with some of its leaves
/// to choose from), an unknown id or path (with close matches), an unknown site, a malformed
/// or empty literal.
#[proc_macro]
pub fn category(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as Input);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(error) => {
            let error = error.to_compile_error();
            // Keep the expression typed so the rest of the code still checks (and IDEs cope).
            quote!({
                #error;
                ::core::unreachable!() as ::taxonomy_data::LeafCategory
            })
            .into()
        }
    }
}

/// `[SITE ,] "literal" [,]`
struct Input {
    site: Option<Ident>,
    literal: LitStr,
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        const USAGE: &str = "expected `category!(\"9355\")`, `category!(EBAY_DE, \"9355\")` or `category!(\"Parent > Leaf\")`";
        if input.is_empty() {
            return Err(input.error(format!("missing category: {USAGE}")));
        }
        let site = if input.peek(Ident) {
            let site: Ident = input.parse()?;
            input.parse::<Token![,]>().map_err(|e| {
                syn::Error::new(e.span(), format!("expected a `,` after the site: {USAGE}"))
            })?;
            Some(site)
        } else {
            None
        };
        let literal: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("expected a string literal with a category id or path: {USAGE}"),
            )
        })?;
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
        if !input.is_empty() {
            return Err(input.error(format!("unexpected tokens after the category: {USAGE}")));
        }
        Ok(Input { site, literal })
    }
}

const ACCEPTED_SITES: &str = "EBAY_US (the default), EBAY_GB, EBAY_DE or EBAY_AU";
const ACCEPTED_LITERALS: &str = "a decimal category id like \"9355\" or a full path like \"Cell Phones & Accessories > Cell Phones & Smartphones\"";
const REFRESH_HINT: &str =
    "if the category is new, refresh the snapshots with `cargo run --bin snapshot -- refresh`";

/// How many choices an error lists.
const SHOWN: usize = 5;

fn expand(input: &Input) -> syn::Result<proc_macro2::TokenStream> {
    let site = match &input.site {
        None => Site::Us,
        Some(ident) => Site::from_marketplace_id(&ident.to_string()).ok_or_else(|| {
            syn::Error::new(
                ident.span(),
                format!("unknown site `{ident}`: expected {ACCEPTED_SITES}"),
            )
        })?,
    };
    let span = input.literal.span();
    if !site.is_compiled_in() {
        return Err(syn::Error::new(
            span,
            format!(
                "{site} is not compiled into this build of taxonomy-data: add it to TAXONOMY_SITES, or unset TAXONOMY_SITES to compile in every site"
            ),
        ));
    }
    let text = input.literal.value();
    let category = match classify(&text) {
        Literal::Empty => {
            return Err(syn::Error::new(
                span,
                format!("empty category: expected {ACCEPTED_LITERALS}"),
            ));
        }
        Literal::Malformed(why) => {
            return Err(syn::Error::new(
                span,
                format!("malformed category {text:?}: {why}; expected {ACCEPTED_LITERALS}"),
            ));
        }
        Literal::Id(id) => match (site.category(id), site.replacement(id)) {
            (Some(category), _) => category,
            // Retired by the service and mapped to a replacement (getExpiredCategories): the
            // same message as `LeafError::Expired` at run time.
            (None, Some(replacement)) => {
                let error = taxonomy_data::LeafError::Expired {
                    site,
                    id,
                    replacement,
                };
                return Err(syn::Error::new(
                    span,
                    format!(
                        "{error}\nThe service retired this category (getExpiredCategories); write category!({}\"{}\") instead",
                        input
                            .site
                            .as_ref()
                            .map_or(String::new(), |s| format!("{s}, ")),
                        replacement.id()
                    ),
                ));
            }
            (None, None) => return Err(syn::Error::new(span, unknown_id_message(site, id))),
        },
        Literal::Path => site
            .category_by_path(&text)
            .ok_or_else(|| syn::Error::new(span, unknown_path_message(site, &text)))?,
    };
    if !category.is_leaf() {
        return Err(syn::Error::new(span, not_leaf_message(category)));
    }
    let variant = Ident::new(variant_name(site), Span::call_site());
    let id = category.id();
    let fingerprint = site.fingerprint();
    Ok(quote! {
        {
            const __TAXONOMY_LEAF: ::taxonomy_data::LeafCategory =
                ::taxonomy_data::LeafCategory::__checked_by_macro(
                    ::taxonomy_data::Site::#variant,
                    #id,
                    #fingerprint,
                );
            __TAXONOMY_LEAF
        }
    })
}

fn variant_name(site: Site) -> &'static str {
    match site {
        Site::Us => "Us",
        Site::Gb => "Gb",
        Site::De => "De",
        Site::Au => "Au",
    }
}

enum Literal {
    Empty,
    Malformed(&'static str),
    Id(u32),
    Path,
}

fn classify(text: &str) -> Literal {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Literal::Empty;
    }
    if trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return match trimmed.parse::<u32>() {
            Ok(0) => Literal::Malformed("0 is the tree's root, not a category"),
            Ok(id) => Literal::Id(id),
            Err(_) => Literal::Malformed("the id is out of range"),
        };
    }
    if text.contains('>') {
        if text.split('>').any(|s| s.trim().is_empty()) {
            return Literal::Malformed("a path has a name on each side of every `>`");
        }
        return Literal::Path;
    }
    let first = trimmed.as_bytes()[0];
    if first.is_ascii_digit() || first == b'-' || first == b'+' {
        return Literal::Malformed("an id has decimal digits only");
    }
    // A single name: a top-level category (rarely a leaf; the error explains paths).
    Literal::Path
}

fn not_leaf_message(category: Category) -> String {
    let site = category.site();
    let leaves: Vec<String> = category
        .leaves()
        .take(SHOWN)
        .map(|leaf| format!("\n  {} ({})", leaf.id(), leaf.path()))
        .collect();
    let total = category.leaves().count();
    format!(
        "{site} category {} \"{}\" is not a leaf: only leaf categories accept listings.\nPick one of its {total} leaf categories, for example:{}{}",
        category.id(),
        category.path(),
        leaves.concat(),
        if total > SHOWN { "\n  …" } else { "" },
    )
}

fn unknown_id_message(site: Site, id: u32) -> String {
    let wanted = id.to_string();
    let mut close: Vec<Category> = site
        .categories()
        .filter(|c| strsim::damerau_levenshtein(&wanted, &c.id().to_string()) == 1)
        .collect();
    // Leaves first: they are what the author can use.
    close.sort_by_key(|c| (!c.is_leaf(), c.id()));
    let mut message = format!(
        "{site} has no category {id} (tree version {}, taken {})",
        site.tree_version(),
        site.taken_at()
    );
    if !close.is_empty() {
        message.push_str("\nDid you mean:");
        for c in close.iter().take(SHOWN) {
            message.push_str(&format!(
                "\n  {} ({}){}",
                c.id(),
                c.path(),
                if c.is_leaf() { "" } else { " [not a leaf]" }
            ));
        }
    }
    let elsewhere: Vec<String> = Site::compiled_in()
        .filter(|&other| other != site)
        .filter_map(|other| {
            other
                .category(id)
                .map(|c| format!("{other} ({})", c.name()))
        })
        .collect();
    if !elsewhere.is_empty() {
        message.push_str(&format!(
            "\nThis id exists on {}: name the site, e.g. `category!({}, \"{id}\")`",
            elsewhere.join(", "),
            elsewhere[0].split(' ').next().unwrap_or("EBAY_US")
        ));
    }
    message.push_str(&format!("\nCheck the id; {REFRESH_HINT}"));
    message
}

/// The full paths of every category of a site, built once per compiler process.
fn paths(site: Site) -> &'static [(String, Category)] {
    static PATHS: [OnceLock<Vec<(String, Category)>>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let slot = match site {
        Site::Us => &PATHS[0],
        Site::Gb => &PATHS[1],
        Site::De => &PATHS[2],
        Site::Au => &PATHS[3],
    };
    slot.get_or_init(|| {
        site.categories()
            .map(|c| (c.path().to_string().to_lowercase(), c))
            .collect()
    })
}

fn normalize(path: &str) -> String {
    path.split('>')
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(" > ")
        .to_lowercase()
}

fn unknown_path_message(site: Site, text: &str) -> String {
    let wanted = normalize(text);
    let last = wanted.rsplit(" > ").next().unwrap_or(&wanted).to_string();
    let mut seen = HashSet::new();
    let mut suggestions: Vec<(f64, Category)> = Vec::new();
    for (path, category) in paths(site) {
        let same_name = path.rsplit(" > ").next() == Some(last.as_str());
        let score = if same_name {
            2.0
        } else {
            strsim::normalized_damerau_levenshtein(&wanted, path)
        };
        if score >= 0.85 && seen.insert(category.id()) {
            suggestions.push((score, *category));
        }
    }
    suggestions.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.1.is_leaf().cmp(&a.1.is_leaf()))
            .then(a.1.id().cmp(&b.1.id()))
    });
    let mut message = format!(
        "{site} has no category at the path {text:?} (tree version {}, taken {}); a path names every category from the top level down, separated by `>`",
        site.tree_version(),
        site.taken_at()
    );
    if !suggestions.is_empty() {
        message.push_str("\nDid you mean:");
        for (_, c) in suggestions.iter().take(SHOWN) {
            message.push_str(&format!(
                "\n  \"{}\" ({}){}",
                c.path(),
                c.id(),
                if c.is_leaf() { "" } else { " [not a leaf]" }
            ));
        }
    } else {
        message.push_str(&format!("\n{REFRESH_HINT}"));
    }
    message
}
