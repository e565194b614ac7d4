//! The macro's input, `[SITE ,] "literal" [,]`, and what the literal is.

use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Path, Token};

/// `[SITE ,] "literal" [,]`, where SITE is a marketplace id (`EBAY_DE`) or a path to a
/// `Site` variant (`Site::De`, `taxonomy_data::Site::De`).
pub(crate) struct Input {
    pub(crate) site: Option<Path>,
    pub(crate) literal: LitStr,
}

/// Every form the macro takes, for messages.
pub(crate) const USAGE: &str = "expected `category!(\"9355\")`, `category!(EBAY_DE, \"9355\")`, `category!(Site::De, \"9355\")` or `category!(\"Parent > Leaf\")`";

/// The site (optional, a path such as `EBAY_DE` or `Site::De`, then a `,`) and the category
/// literal that `category!` and `aspects!` both start with; `usage` is the macro's forms, for
/// messages.
pub(crate) fn site_and_category(
    input: ParseStream,
    usage: &str,
) -> syn::Result<(Option<Path>, LitStr)> {
    let site = if input.peek(Ident) || input.peek(Token![::]) {
        let site = Path::parse_mod_style(input)?;
        input.parse::<Token![,]>().map_err(|e| {
            syn::Error::new(e.span(), format!("expected a `,` after the site: {usage}"))
        })?;
        Some(site)
    } else {
        None
    };
    let literal: LitStr = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("expected a string literal with a category id or path: {usage}"),
        )
    })?;
    Ok((site, literal))
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(input.error(format!("missing category: {USAGE}")));
        }
        let (site, literal) = site_and_category(input, USAGE)?;
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
        if !input.is_empty() {
            return Err(input.error(format!("unexpected tokens after the category: {USAGE}")));
        }
        Ok(Input { site, literal })
    }
}

/// What a literal names, before it is looked up.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Literal {
    Empty,
    Malformed(&'static str),
    Id(u32),
    Path,
}

/// Tells an id from a path, and rejects what is neither.
pub(crate) fn classify(text: &str) -> Literal {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_ids_paths_and_mistakes() {
        assert_eq!(classify(" 9355 "), Literal::Id(9355));
        assert_eq!(classify("A > B"), Literal::Path);
        assert_eq!(classify("Collectibles"), Literal::Path);
        assert_eq!(classify("  "), Literal::Empty);
        assert!(matches!(classify("0"), Literal::Malformed(_)));
        assert!(matches!(classify("99999999999"), Literal::Malformed(_)));
        assert!(matches!(classify("93a55"), Literal::Malformed(_)));
        assert!(matches!(classify("A > > B"), Literal::Malformed(_)));
    }

    #[test]
    fn parses_the_three_forms_and_rejects_extra_tokens() {
        let input: Input = syn::parse_quote!("9355");
        assert!(input.site.is_none());
        let input: Input = syn::parse_quote!(EBAY_DE, "9355",);
        assert!(input.site.unwrap().is_ident("EBAY_DE"));
        assert_eq!(input.literal.value(), "9355");
        assert!(syn::parse2::<Input>(quote::quote!("9355" x)).is_err());
        assert!(syn::parse2::<Input>(quote::quote!(9355)).is_err());
        assert!(syn::parse2::<Input>(quote::quote!()).is_err());
    }

    #[test]
    fn a_site_may_be_written_as_a_path_to_its_variant() {
        for tokens in [
            quote::quote!(Site::De, "9355"),
            quote::quote!(taxonomy_data::Site::De, "9355"),
            quote::quote!(::taxonomy_data::Site::De, "9355",),
        ] {
            let input =
                syn::parse2::<Input>(tokens.clone()).unwrap_or_else(|e| panic!("{tokens}: {e}"));
            let site = input.site.unwrap();
            assert_eq!(site.segments.last().unwrap().ident, "De", "{tokens}");
        }
        // A site without its comma names the accepted forms.
        let error = syn::parse2::<Input>(quote::quote!(Site::De "9355"))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("category!(Site::De, "), "{error}");
    }
}
