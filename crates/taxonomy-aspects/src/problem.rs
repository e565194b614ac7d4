//! What a check finds: typed problems, each with a message a person can act on.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

/// Whether the service refuses the listing for a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The service refuses the listing (or will, as soon as it is submitted).
    Error,
    /// Worth fixing, but the listing goes out.
    Warning,
}

/// One problem of a listing's aspects against a category's rules. Each names the aspect, the
/// value, the rule (the Taxonomy API's field) and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// A required aspect (`aspectRequired`) is missing, or has no non-empty value.
    MissingRequired {
        /// The aspect, as the category names it.
        aspect: String,
    },
    /// More values than the aspect takes: more than one for an aspect whose
    /// `itemToAspectCardinality` is `SINGLE`, more than
    /// [`limits::MULTI_VALUES`](crate::limits::MULTI_VALUES) for a `MULTI` one.
    TooManyValues {
        /// The aspect.
        aspect: String,
        /// The first values given (at most [`limits::SHOWN_VALUES`](crate::limits::SHOWN_VALUES)).
        values: Vec<String>,
        /// How many values were given.
        count: usize,
        /// How many the aspect takes (1: `SINGLE`).
        max: usize,
    },
    /// A value not among `aspectValues` of an aspect whose `aspectMode` is `SELECTION_ONLY`.
    NotAllowed {
        /// The aspect.
        aspect: String,
        /// The value given.
        value: String,
        /// The closest allowed value, when one is close.
        suggestion: Option<String>,
    },
    /// A value longer than `aspectMaxLength` characters.
    TooLong {
        /// The aspect.
        aspect: String,
        /// The value given.
        value: String,
        /// Its length in characters (Unicode scalar values, as the service counts).
        length: usize,
        /// The limit.
        max: u32,
    },
    /// A value that does not match `aspectDataType` and `aspectFormat` (a NUMBER that is not
    /// an `int32` or a `double`, a DATE that is not `YYYY`, `YYYYMM` or `YYYYMMDD`).
    BadFormat {
        /// The aspect.
        aspect: String,
        /// The value given.
        value: String,
        /// What is expected: `NUMBER (int32)`, `DATE (YYYYMMDD)`, …
        expected: String,
    },
    /// A value allowed only when another aspect (the control aspect) has one of some values
    /// (`valueConstraints`), and it has not.
    ConstraintNotMet {
        /// The aspect.
        aspect: String,
        /// The value given.
        value: String,
        /// The control aspect.
        control: String,
        /// The control aspect's values that allow `value`.
        allowed: Vec<String>,
        /// The control aspect's first values in the listing (at most
        /// [`limits::SHOWN_VALUES`](crate::limits::SHOWN_VALUES); empty: not given).
        found: Vec<String>,
        /// How many values the control aspect has in the listing.
        found_count: usize,
    },
    /// A warning: an aspect the category does not know (the service ignores it or refuses
    /// it), with the closest known name.
    UnknownAspect {
        /// The name given.
        aspect: String,
        /// The closest aspect of the category, when one is close.
        suggestion: Option<String>,
    },
    /// A warning: the listing gives one aspect under several names that differ only in case
    /// (`"Brand"` and `"brand"`). The service takes them as one aspect, and so does the check:
    /// their values are counted together (a `SINGLE` aspect given a value under each is
    /// [`TooManyValues`](Self::TooManyValues)).
    SpelledTwice {
        /// The aspect, as the category names it.
        aspect: String,
        /// The first names the listing gives it under, in its order (at most
        /// [`limits::SHOWN_VALUES`](crate::limits::SHOWN_VALUES)).
        spellings: Vec<String>,
        /// How many names the listing gives it under.
        count: usize,
    },
    /// More problems of an aspect's values than are listed (at most
    /// [`limits::PROBLEMS_PER_ASPECT`](crate::limits::PROBLEMS_PER_ASPECT) are): how many
    /// more, each an error.
    MoreProblems {
        /// The aspect.
        aspect: String,
        /// How many problems were not listed.
        count: usize,
    },
    /// A warning: more aspects the category does not know than are listed one by one (at most
    /// [`limits::UNKNOWN_ASPECTS`](crate::limits::UNKNOWN_ASPECTS) are).
    MoreUnknownAspects {
        /// The first of them, as given.
        aspect: String,
        /// How many were not listed (`aspect` included).
        count: usize,
    },
    /// A warning: an aspect not required yet that will be from `expectedRequiredByDate`,
    /// missing from the listing.
    RequiredSoon {
        /// The aspect.
        aspect: String,
        /// `expectedRequiredByDate`, as the service sent it.
        from: String,
    },
}

impl Problem {
    /// [`Severity::Warning`] for [`UnknownAspect`](Self::UnknownAspect),
    /// [`SpelledTwice`](Self::SpelledTwice) and [`RequiredSoon`](Self::RequiredSoon),
    /// [`Severity::Error`] for the rest.
    pub fn severity(&self) -> Severity {
        match self {
            Problem::UnknownAspect { .. }
            | Problem::SpelledTwice { .. }
            | Problem::MoreUnknownAspects { .. }
            | Problem::RequiredSoon { .. } => Severity::Warning,
            _ => Severity::Error,
        }
    }

    /// `true` when the service refuses the listing for it.
    pub fn is_error(&self) -> bool {
        self.severity() == Severity::Error
    }

    /// The aspect it is about.
    pub fn aspect(&self) -> &str {
        match self {
            Problem::MissingRequired { aspect }
            | Problem::TooManyValues { aspect, .. }
            | Problem::NotAllowed { aspect, .. }
            | Problem::TooLong { aspect, .. }
            | Problem::BadFormat { aspect, .. }
            | Problem::ConstraintNotMet { aspect, .. }
            | Problem::UnknownAspect { aspect, .. }
            | Problem::SpelledTwice { aspect, .. }
            | Problem::MoreProblems { aspect, .. }
            | Problem::MoreUnknownAspects { aspect, .. }
            | Problem::RequiredSoon { aspect, .. } => aspect,
        }
    }
}

/// A value as shown in a message: quoted and escaped, and cut to 60 characters.
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 60;
        match self.0.char_indices().nth(SHOWN) {
            Some((cut, _)) => write!(f, "{:?}…", &self.0[..cut]),
            None => write!(f, "{:?}", self.0),
        }
    }
}

/// The first [`limits::SHOWN_VALUES`](crate::limits::SHOWN_VALUES) of `values`, shown, and
/// how many more of `count` there are: `"a", "b" and 3 more`.
fn list(values: &[String], count: usize) -> String {
    if values.is_empty() && count == 0 {
        return "none".into();
    }
    let shown: Vec<&String> = values.iter().take(crate::limits::SHOWN_VALUES).collect();
    let mut text = shown
        .iter()
        .map(|v| Shown(v).to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let more = count.saturating_sub(shown.len());
    if more > 0 {
        text.push_str(&alloc::format!(" and {more} more"));
    }
    text
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{severity}: ")?;
        match self {
            Problem::MissingRequired { aspect } => write!(
                f,
                "{} is required (aspectRequired) and missing: add it with a value",
                Shown(aspect)
            ),
            Problem::TooManyValues {
                aspect,
                values,
                count,
                max: 1,
            } => write!(
                f,
                "{} takes one value (itemToAspectCardinality SINGLE), got {count}: {}; keep one",
                Shown(aspect),
                list(values, *count)
            ),
            Problem::TooManyValues {
                aspect,
                values,
                count,
                max,
            } => write!(
                f,
                "{} takes at most {max} values (itemToAspectCardinality MULTI), got {count}: {}; keep {max}",
                Shown(aspect),
                list(values, *count)
            ),
            Problem::NotAllowed {
                aspect,
                value,
                suggestion,
            } => {
                write!(
                    f,
                    "{} = {} is not an allowed value (aspectMode SELECTION_ONLY): ",
                    Shown(aspect),
                    Shown(value)
                )?;
                match suggestion {
                    Some(s) => write!(f, "did you mean {}?", Shown(s)),
                    None => f.write_str("use one of the category's aspectValues"),
                }
            }
            Problem::TooLong {
                aspect,
                value,
                length,
                max,
            } => write!(
                f,
                "{} = {} is {length} characters, over the limit of {max} (aspectMaxLength): shorten it",
                Shown(aspect),
                Shown(value)
            ),
            Problem::BadFormat {
                aspect,
                value,
                expected,
            } => write!(
                f,
                "{} = {} is not a {expected} (aspectDataType, aspectFormat): give the value in that form",
                Shown(aspect),
                Shown(value)
            ),
            Problem::ConstraintNotMet {
                aspect,
                value,
                control,
                allowed,
                found,
                found_count,
            } => write!(
                f,
                "{} = {} is allowed only when {} is {} (valueConstraints), but it is {}: change one of them",
                Shown(aspect),
                Shown(value),
                Shown(control),
                list(allowed, allowed.len()),
                list(found, *found_count)
            ),
            Problem::UnknownAspect { aspect, suggestion } => {
                write!(f, "{} is not an aspect of this category", Shown(aspect))?;
                match suggestion {
                    Some(s) => write!(f, ": did you mean {}?", Shown(s)),
                    None => f.write_str(": check the name"),
                }
            }
            Problem::SpelledTwice {
                aspect,
                spellings,
                count,
            } => write!(
                f,
                "{} is given under {count} spellings ({}); the service takes them as one aspect: give it once",
                Shown(aspect),
                list(spellings, *count)
            ),
            Problem::MoreProblems { aspect, count } => write!(
                f,
                "{} has {count} more problems of its values, not listed (at most {} an aspect are): fix those above and check again",
                Shown(aspect),
                crate::limits::PROBLEMS_PER_ASPECT
            ),
            Problem::MoreUnknownAspects { aspect, count } => write!(
                f,
                "{} and {} more are not aspects of this category (at most {} are listed one by one): check the names",
                Shown(aspect),
                count.saturating_sub(1),
                crate::limits::UNKNOWN_ASPECTS
            ),
            Problem::RequiredSoon { aspect, from } => write!(
                f,
                "{} will be required from {} (expectedRequiredByDate) and is missing: add it now",
                Shown(aspect),
                Shown(from)
            ),
        }
    }
}
