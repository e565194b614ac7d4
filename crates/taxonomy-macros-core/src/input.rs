//! The macro's input, `[SITE ,] "literal" [,]`, and what the literal is.

use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token};

/// `[SITE ,] "literal" [,]`
pub(crate) struct Input {
    pub(crate) site: Option<Ident>,
    pub(crate) literal: LitStr,
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
        assert_eq!(input.site.unwrap().to_string(), "EBAY_DE");
        assert_eq!(input.literal.value(), "9355");
        assert!(syn::parse2::<Input>(quote::quote!("9355" x)).is_err());
        assert!(syn::parse2::<Input>(quote::quote!(9355)).is_err());
        assert!(syn::parse2::<Input>(quote::quote!()).is_err());
    }
}
