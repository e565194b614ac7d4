//! # taxonomy-macros-core
//!
//! The logic behind `taxonomy_macros::category!` (and `aspects!`, `condition!`), as a plain library so that it can be unit
//! tested and benchmarked: parsing the macro's input, resolving the id or path against
//! `taxonomy-data`'s tables, the suggestions and error messages, and the expansion.
//! `taxonomy-macros` is a thin shim over [`expand`].
//!
//! ```
//! let tokens = taxonomy_macros_core::expand(quote::quote!(EBAY_DE, "9355"));
//! assert!(tokens.to_string().contains("__checked_by_macro"));
//!
//! let error = taxonomy_macros_core::expand(quote::quote!("15032"));
//! assert!(error.to_string().contains("is not a leaf"));
//! ```

mod aspects;
mod condition;
mod input;
mod suggest;
mod variations;

pub use aspects::expand_aspects;
pub use condition::expand_condition;
pub use variations::expand_variations;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;
use taxonomy_data::{Category, Site};

use crate::input::{Input, Literal, classify};

/// Expands `category!(…)`: `input` is what the macro was given (`"9355"`, `EBAY_DE, "9355"`
/// or `"Parent > Leaf"`).
///
/// The result is a constant expression of type `taxonomy_data::typed::Checked<In<EBAY_US, 9355>,
/// LeafCategory>` (the category in its type; `.leaf()` gives the `LeafCategory`). A mistake
/// expands to a `compile_error!` pointing at the literal; when the input parsed, it comes with
/// a placeholder expression of the right type, so the rest of the code still type-checks.
pub fn expand(input: TokenStream) -> TokenStream {
    expand_typed(
        input,
        expand_input,
        quote!(::taxonomy_data::typed::Checked<::taxonomy_data::typed::Unresolved, ::taxonomy_data::LeafCategory>),
    )
}

/// The type of leaf `id` of `site` (`::taxonomy_data::typed::In<…EBAY_US, 179>`) that the
/// macros' values carry (`taxonomy_data::typed::Checked`), so that typed code can require
/// the same category of each.
fn category_type(site: Site, id: u32) -> TokenStream {
    let marker = Ident::new(site.marketplace_id(), Span::call_site());
    quote!(::taxonomy_data::typed::In<::taxonomy_data::typed::#marker, #id>)
}

/// Parses a macro's `input` and expands it with `expand_input`; a mistake becomes its
/// `compile_error!` with a placeholder expression of type `ty`. The placeholder keeps the
/// expression typed so the rest of the code still checks (and IDEs cope) without diverging:
/// `unreachable!()` made rustc warn "unreachable statement" on the user's next line. It is
/// never evaluated: the error stops the build, and in a `const` it taints the body, so no
/// second error.
fn expand_typed<I: syn::parse::Parse>(
    input: TokenStream,
    expand_input: fn(&I) -> syn::Result<TokenStream>,
    ty: TokenStream,
) -> TokenStream {
    let input = match syn::parse2::<I>(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    match expand_input(&input) {
        Ok(tokens) => tokens,
        Err(error) => {
            let error = error.to_compile_error();
            quote!({
                #error;
                ::core::option::Option::<#ty>::None.unwrap()
            })
        }
    }
}

const ACCEPTED_LITERALS: &str = "a decimal category id like \"9355\" or a full path like \"Cell Phones & Accessories > Cell Phones & Smartphones\"";
/// What a user does about a category the compiled-in tree lacks, in their own project (where
/// the snapshots are theirs and `snapshot` is the installed command, README: "Use it in your
/// project").
const REFRESH_HINT: &str = "if the category is new, refresh your snapshots: run `snapshot refresh` at your project's root (installing the command: the toolkit's README, \"Use it in your project\")";

/// How many choices an error lists.
const SHOWN: usize = 5;

fn expand_input(input: &Input) -> syn::Result<TokenStream> {
    let site = match &input.site {
        None => Site::Us,
        Some(path) => site_of(path)?,
    };
    let span = input.literal.span();
    let category = resolve(site, &input.literal.value()).map_err(|m| syn::Error::new(span, m))?;
    let variant = Ident::new(site.marketplace().variant(), Span::call_site());
    let id = category.id();
    let fingerprint = site.fingerprint();
    let category = category_type(site, id);
    Ok(quote! {
        {
            const __TAXONOMY_LEAF: ::taxonomy_data::LeafCategory =
                ::taxonomy_data::LeafCategory::__checked_by_macro(
                    ::taxonomy_data::Site::#variant,
                    #id,
                    #fingerprint,
                );
            ::taxonomy_data::typed::Checked::<#category, ::taxonomy_data::LeafCategory>::__by_macro(__TAXONOMY_LEAF)
        }
    })
}

/// The site a macro's SITE names: what the one parser of site names takes
/// ([`taxonomy_data::Marketplace::parse`]: `EBAY_DE`, or `DE`), or a path ending in a `Site`
/// variant (`Site::De`, `taxonomy_data::Site::De`). A name it refuses is answered with the
/// marketplace it most likely meant (`EBAY_UK`: EBAY_GB).
fn site_of(path: &syn::Path) -> syn::Result<Site> {
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    if let (Some(id), None) = (path.get_ident(), path.leading_colon) {
        let text = id.to_string();
        return text.parse::<Site>().map_err(|problem| {
            let meant = problem
                .closest()
                .map(|m| format!("did you mean {} ({})? ", m.marketplace_id(), m.name()))
                .unwrap_or_default();
            syn::Error::new(
                id.span(),
                format!("unknown site `{id}`: {meant}expected {}", accepted_sites()),
            )
        });
    }
    let found = match names.as_slice() {
        [.., site, variant] if site == "Site" => Site::ALL
            .iter()
            .copied()
            .find(|s| s.marketplace().variant() == variant),
        _ => None,
    };
    found.ok_or_else(|| {
        // `Site::Uk`: the variant the name most likely meant.
        let meant = names
            .last()
            .and_then(|variant| match variant.parse::<Site>() {
                Ok(site) => Some(site.marketplace()),
                Err(problem) => problem.closest(),
            })
            .map(|m| format!("did you mean `Site::{}` ({})? ", m.variant(), m.name()))
            .unwrap_or_default();
        syn::Error::new_spanned(
            path,
            format!(
                "unknown site `{}`: {meant}expected a `Site` variant such as `Site::De` (one of {}), \
                 or {}",
                names.join("::"),
                Site::ALL
                    .iter()
                    .map(|s| format!("Site::{}", s.marketplace().variant()))
                    .collect::<Vec<_>>()
                    .join(", "),
                accepted_sites()
            ),
        )
    })
}

/// The leaf category `text` (an id or a full path, as `category!` takes it) names on
/// `site`, or `category!`'s message saying what is wrong and what to write instead (close ids
/// and paths, some leaves of a parent, the replacement of an expired category). Other tools
/// that take a category from a person (`snapshot aspects pin`) refuse what the macro refuses,
/// with the same words.
///
/// ```
/// use taxonomy_data::Site;
/// assert_eq!(taxonomy_macros_core::leaf(Site::Us, "9355").unwrap().id(), 9355);
/// assert!(taxonomy_macros_core::leaf(Site::Us, "15032").unwrap_err().contains("is not a leaf"));
/// ```
pub fn leaf(site: Site, text: &str) -> Result<Category, String> {
    resolve(site, text)
}

/// The leaf category `text` names on `site`, or the message that says what is wrong.
fn resolve(site: Site, text: &str) -> Result<Category, String> {
    if !site.is_compiled_in() {
        return Err(format!(
            "{site} is not compiled into this build of taxonomy-data: it has no snapshot, or TAXONOMY_SITES leaves it out (unset it to compile in every site with a snapshot). `snapshot refresh --sites {site}`, run at your project's root, makes one (installing the command: the toolkit's README, \"Use it in your project\")"
        ));
    }
    let category = match classify(text) {
        Literal::Empty => return Err(format!("empty category: expected {ACCEPTED_LITERALS}")),
        Literal::Malformed(why) => {
            return Err(format!(
                "malformed category {text:?}: {why}; expected {ACCEPTED_LITERALS}"
            ));
        }
        Literal::Id(id) => match (site.category(id), site.replacement(id)) {
            (Some(category), _) => category,
            // Retired by the service and mapped to a replacement (getExpiredCategories): the
            // same message as `LeafError::Expired` at run time, and what to write instead.
            (None, Some(replacement)) => return Err(expired_message(site, id, replacement)),
            (None, None) => return Err(unknown_id_message(site, id)),
        },
        Literal::Path => site
            .category_by_path(text)
            .ok_or_else(|| unknown_path_message(site, text))?,
    };
    if !category.is_leaf() {
        return Err(not_leaf_message(category));
    }
    Ok(category)
}

/// The sites `category!` accepts, for messages: every marketplace, the compiled-in ones
/// first.
fn accepted_sites() -> String {
    let compiled: Vec<&str> = Site::compiled_in().map(Site::marketplace_id).collect();
    let others = Site::ALL.len() - compiled.len();
    let mut text = format!(
        "a marketplace id: {} (EBAY_US is the default)",
        compiled.join(", ")
    );
    if others > 0 {
        text.push_str(&format!(
            ", or one of the {others} other marketplaces once it has a snapshot"
        ));
    }
    text
}

fn expired_message(site: Site, id: u32, replacement: taxonomy_data::LeafCategory) -> String {
    let error = taxonomy_data::LeafError::Expired {
        site,
        id,
        replacement,
    };
    // The default site is written without its name, as `category!` allows.
    let site_arg = if site == Site::Us {
        String::new()
    } else {
        format!("{site}, ")
    };
    format!(
        "{error}\nThe service retired this category (getExpiredCategories); write category!({site_arg}\"{}\") instead",
        replacement.id()
    )
}

/// What `category!` says of a category that is not a leaf: its id and path, and some of its
/// leaf categories to pick from.
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

fn not_a_leaf_mark(category: Category) -> &'static str {
    if category.is_leaf() {
        ""
    } else {
        " [not a leaf]"
    }
}

fn unknown_id_message(site: Site, id: u32) -> String {
    let mut message = format!(
        "{site} has no category {id} (tree version {}, taken {})",
        site.tree_version(),
        site.taken_at()
    );
    let close = suggest::close_ids(site, id);
    if !close.is_empty() {
        message.push_str("\nDid you mean:");
        for &c in close.iter().take(SHOWN) {
            message.push_str(&format!(
                "\n  {} ({}){}",
                c.id(),
                c.path(),
                not_a_leaf_mark(c)
            ));
        }
    }
    let elsewhere: Vec<(Site, Category)> = Site::compiled_in()
        .filter(|&other| other != site)
        .filter_map(|other| Some((other, other.category(id)?)))
        .collect();
    if let Some(&(first, _)) = elsewhere.first() {
        let sites: Vec<String> = elsewhere
            .iter()
            .map(|(other, c)| format!("{other} ({})", c.name()))
            .collect();
        message.push_str(&format!(
            "\nThis id exists on {}: name the site, e.g. `category!({first}, \"{id}\")`",
            sites.join(", "),
        ));
    }
    message.push_str(&format!("\nCheck the id; {REFRESH_HINT}"));
    message
}

fn unknown_path_message(site: Site, text: &str) -> String {
    let mut message = format!(
        "{site} has no category at the path {text:?} (tree version {}, taken {}); a path names every category from the top level down, separated by `>`",
        site.tree_version(),
        site.taken_at()
    );
    let suggestions = suggest::path_suggestions(site, text);
    if suggestions.is_empty() {
        message.push_str(&format!("\n{REFRESH_HINT}"));
    } else {
        message.push_str("\nDid you mean:");
        for &c in suggestions.iter().take(SHOWN) {
            message.push_str(&format!(
                "\n  \"{}\" ({}){}",
                c.path(),
                c.id(),
                not_a_leaf_mark(c)
            ));
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leaf_by_id_or_path_resolves() {
        assert_eq!(resolve(Site::Us, "9355").map(|c| c.id()), Ok(9355));
        let by_path = resolve(
            Site::Us,
            "Cell Phones & Accessories > Cell Phones & Smartphones",
        );
        assert_eq!(by_path.map(|c| c.id()), Ok(9355));
        assert_eq!(
            resolve(Site::De, "Handys & Kommunikation > Handys & Smartphones").map(|c| c.id()),
            Ok(9355)
        );
    }

    #[test]
    fn a_parent_is_refused_with_some_of_its_leaves() {
        let message = resolve(Site::Us, "15032").unwrap_err();
        assert!(
            message
                .starts_with("EBAY_US category 15032 \"Cell Phones & Accessories\" is not a leaf"),
            "{message}"
        );
        assert!(
            message.contains("\n  9355 (Cell Phones & Accessories > Cell Phones & Smartphones)"),
            "{message}"
        );
        assert!(message.ends_with("\n  …"), "{message}");
    }

    #[test]
    fn an_unknown_id_names_close_ids_and_other_sites() {
        let message = resolve(Site::Au, "157119").unwrap_err();
        assert!(
            message.contains("\n  159119 (Sporting Goods > Gridiron > Training Aids)"),
            "{message}"
        );
        assert!(message.contains("This id exists on EBAY_DE (Flaschen & Gefäße): name the site, e.g. `category!(EBAY_DE, \"157119\")`"), "{message}");
        assert!(message.ends_with(REFRESH_HINT), "{message}");
    }

    #[test]
    fn an_unknown_path_lists_suggestions_marking_parents() {
        let message =
            resolve(Site::Us, "Toys & Hobbies > Action Figures > Fantasy Figure").unwrap_err();
        assert!(message.contains("Did you mean:\n  \"Toys & Hobbies > Action Figures & Accessories\" (246) [not a leaf]"), "{message}");
        let message = resolve(Site::Us, "Qwxz > Zzyzx").unwrap_err();
        assert!(!message.contains("Did you mean"), "{message}");
        assert!(message.ends_with(REFRESH_HINT), "{message}");
    }

    #[test]
    fn a_near_miss_path_suggests_the_leaf_under_the_deepest_match() {
        let message = resolve(
            Site::Gb,
            "Computers/Tablets & Networking > Computer Components & Parts > Graphics Cards",
        )
        .unwrap_err();
        assert!(
            message.contains("Did you mean:\n  \"Computers/Tablets & Networking > Computer Components & Parts > Graphics/Video Cards\" (27386)\n"),
            "{message}"
        );
        assert!(!message.contains(REFRESH_HINT), "{message}");
    }

    #[test]
    fn malformed_and_empty_literals_say_what_is_expected() {
        assert!(
            resolve(Site::Us, "")
                .unwrap_err()
                .starts_with("empty category")
        );
        assert!(
            resolve(Site::Us, "93a55")
                .unwrap_err()
                .contains("an id has decimal digits only")
        );
    }

    #[test]
    fn the_expansion_is_a_checked_constant_or_an_error_with_a_placeholder() {
        let ok = expand(quote!(EBAY_GB, "9355")).to_string();
        assert!(ok.contains(":: taxonomy_data :: Site :: Gb"), "{ok}");
        assert!(ok.contains("9355u32"), "{ok}");
        let error = expand(quote!("15032")).to_string();
        assert!(error.contains("compile_error"), "{error}");
        // A placeholder of the right type that does not diverge (no "unreachable statement"
        // warning on the user's next line; taxonomy-macros/tests/ui/fail_then_more_code.rs).
        assert!(error.contains("None . unwrap ()"), "{error}");
        assert!(!error.contains("unreachable"), "{error}");
        let error = expand(quote!(EBAY_XX, "9355")).to_string();
        assert!(
            error.contains("unknown site `EBAY_XX`: expected"),
            "{error}"
        );
        // The one parser of site names: the commands' forms, and the site a name meant.
        let ok = expand(quote!(gb, "9355")).to_string();
        assert!(ok.contains(":: taxonomy_data :: Site :: Gb"), "{ok}");
        let error = expand(quote!(EBAY_UK, "9355")).to_string();
        assert!(
            error.contains("unknown site `EBAY_UK`: did you mean EBAY_GB (United Kingdom)?"),
            "{error}"
        );
        let error = expand(quote!(Site::Uk, "9355")).to_string();
        assert!(
            error.contains("unknown site `Site::Uk`: did you mean `Site::Gb` (United Kingdom)?"),
            "{error}"
        );
        // A marketplace without a snapshot is a site, with nothing compiled in.
        let error = expand(quote!(EBAY_FR, "9355")).to_string();
        assert!(
            error.contains("EBAY_FR is not compiled into this build")
                && error.contains("refresh --sites EBAY_FR"),
            "{error}"
        );
        // The site as a path to its `Site` variant.
        let ok = expand(quote!(Site::De, "9355")).to_string();
        assert!(ok.contains(":: taxonomy_data :: Site :: De"), "{ok}");
        let ok = expand(quote!(::taxonomy_data::Site::Gb, "9355")).to_string();
        assert!(ok.contains(":: taxonomy_data :: Site :: Gb"), "{ok}");
        let error = expand(quote!(Site::Xx, "9355")).to_string();
        assert!(
            error.contains("unknown site `Site::Xx`") && error.contains("`Site::De`"),
            "{error}"
        );
        // A parse error is the error alone.
        let error = expand(quote!(9355)).to_string();
        assert!(
            error.contains("compile_error") && !error.contains("unreachable"),
            "{error}"
        );
    }
}
