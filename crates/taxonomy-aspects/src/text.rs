//! Texts compared as the service compares them (trimmed, case ignored), the closest of a list,
//! and the forms of NUMBER and DATE values.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// What a value must look like (`aspectDataType` with `aspectFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Any text (STRING, STRING_ARRAY, or no data type).
    Any,
    /// NUMBER without a format: an integer or a decimal.
    Number,
    /// NUMBER, `int32`.
    Int32,
    /// NUMBER, `double`.
    Double,
    /// DATE without a format: any of the three forms.
    Date,
    /// DATE, `YYYY`.
    DateYear,
    /// DATE, `YYYYMM`.
    DateYearMonth,
    /// DATE, `YYYYMMDD`.
    DateFull,
}

impl Format {
    /// The form of an aspect's values from its `aspectDataType` and `aspectFormat`, as sent
    /// (`None`: absent).
    pub fn from_wire(data_type: Option<&str>, format: Option<&str>) -> Self {
        let format = format.map(str::trim).unwrap_or_default();
        match data_type {
            Some("NUMBER") => match format.to_ascii_lowercase().as_str() {
                "int32" => Format::Int32,
                "double" => Format::Double,
                _ => Format::Number,
            },
            Some("DATE") => match format.to_ascii_uppercase().as_str() {
                "YYYY" => Format::DateYear,
                "YYYYMM" => Format::DateYearMonth,
                "YYYYMMDD" => Format::DateFull,
                _ => Format::Date,
            },
            _ => Format::Any,
        }
    }

    /// The variant's name, for generated code (`Format::Int32`).
    pub fn variant(self) -> &'static str {
        match self {
            Format::Any => "Any",
            Format::Number => "Number",
            Format::Int32 => "Int32",
            Format::Double => "Double",
            Format::Date => "Date",
            Format::DateYear => "DateYear",
            Format::DateYearMonth => "DateYearMonth",
            Format::DateFull => "DateFull",
        }
    }

    /// Whether `value` has this form.
    pub fn accepts(self, value: &str) -> bool {
        let v = value.trim();
        match self {
            Format::Any => true,
            Format::Int32 => v.parse::<i32>().is_ok(),
            Format::Number | Format::Double => v.parse::<f64>().is_ok_and(f64::is_finite),
            Format::DateYear => date(v, 4),
            Format::DateYearMonth => date(v, 6),
            Format::DateFull => date(v, 8),
            Format::Date => date(v, 4) || date(v, 6) || date(v, 8),
        }
    }

    /// What is expected, for messages: `NUMBER (int32: a whole number)`, `DATE (YYYYMMDD)`, …
    pub fn expected(self) -> &'static str {
        match self {
            Format::Any => "STRING",
            Format::Number => "NUMBER",
            Format::Int32 => "NUMBER (int32: a whole number)",
            Format::Double => "NUMBER (double)",
            Format::Date => "DATE (YYYY, YYYYMM or YYYYMMDD)",
            Format::DateYear => "DATE (YYYY)",
            Format::DateYearMonth => "DATE (YYYYMM)",
            Format::DateFull => "DATE (YYYYMMDD)",
        }
    }
}

/// `digits` ASCII digits forming a year, a year and month, or a valid calendar date.
fn date(v: &str, digits: usize) -> bool {
    if v.len() != digits || !v.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let n = |range: core::ops::Range<usize>| v[range].parse::<u32>().unwrap_or(0);
    let year = n(0..4);
    if digits == 4 {
        return true;
    }
    let month = n(4..6);
    if !(1..=12).contains(&month) {
        return false;
    }
    if digits == 6 {
        return true;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (1..=days).contains(&n(6..8))
}

/// The form names and values are compared in: trimmed, lower case.
pub fn key(s: &str) -> String {
    s.trim().to_lowercase()
}

/// The most cells of the edit-distance table [`closest`] fills for one value, whatever the
/// number and length of the candidates: about a millisecond of work. A suggestion is a
/// convenience; past this the best candidate found so far (if any) is given.
const MAX_CLOSEST_WORK: usize = 2_000_000;

/// The candidate closest to `given` (edit distance, case ignored), when it is close: at most
/// a third of the longer text's characters differ (at least one, at most five).
///
/// In bounded time for any value: a candidate whose length differs from the value's by more
/// than the distance allowed cannot be close and is skipped without a comparison; the others
/// are compared by a distance computed only within that band (the exact distance when it is
/// within the limit, which is all that is asked); and the work for one value is capped
/// (about a millisecond of work).
pub fn closest<'a>(given: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let given: Vec<char> = key(given).chars().collect();
    let mut best: Option<(usize, &str)> = None;
    let mut work = 0usize;
    let mut candidate_chars = Vec::new();
    for candidate in candidates {
        let lowered = key(candidate);
        let length = lowered.chars().count();
        let mut limit = (given.len().max(length) / 3).clamp(1, 5);
        if let Some((d, _)) = best {
            // Only a strictly closer candidate replaces the best.
            match d.checked_sub(1) {
                Some(tighter) => limit = limit.min(tighter),
                None => break, // an exact match (case ignored) cannot be beaten
            }
        }
        if given.len().abs_diff(length) > limit {
            continue;
        }
        candidate_chars.clear();
        candidate_chars.extend(lowered.chars());
        work += given.len().min(length).max(1) * (2 * limit + 1);
        if work > MAX_CLOSEST_WORK {
            break;
        }
        if let Some(distance) = banded_distance(&given, &candidate_chars, limit) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// The Levenshtein distance of `a` and `b` when it is at most `limit`, else `None`, in
/// `O(min(|a|, |b|) · limit)`: only the cells within `limit` of the diagonal can lead to a
/// distance within it.
fn banded_distance(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if b.len() - a.len() > limit {
        return None;
    }
    let far = limit + 1;
    // row[j]: the distance of a[..i] and b[..j]; cells outside the band hold `far`.
    let mut previous: Vec<usize> = (0..=b.len()).map(|j| j.min(far)).collect();
    let mut row = vec![far; b.len() + 1];
    for i in 1..=a.len() {
        let from = i.saturating_sub(limit).max(1);
        let to = (i + limit).min(b.len());
        row[from - 1] = if from == 1 { i.min(far) } else { far };
        let mut smallest = row[from - 1];
        for j in from..=to {
            let substitute = previous[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let cell = substitute.min(previous[j] + 1).min(row[j - 1] + 1).min(far);
            row[j] = cell;
            smallest = smallest.min(cell);
        }
        if to < b.len() {
            row[to + 1] = far;
        }
        if smallest > limit {
            return None;
        }
        core::mem::swap(&mut previous, &mut row);
    }
    Some(previous[b.len()]).filter(|&d| d <= limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banded_distance_is_levenshtein_within_its_limit() {
        let words = [
            "",
            "a",
            "ab",
            "abc",
            "kitten",
            "sitting",
            "samsung",
            "samsnug",
            "apple",
            "äpfel",
            "iphone 15",
            "iphone 16 pro",
            "galaxy s24",
            "xxxxxxxxxxxx",
            "samsung galaxy",
        ];
        for a in words {
            for b in words {
                let (ac, bc): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
                let exact = strsim::levenshtein(a, b);
                for limit in 0..=6 {
                    let expected = (exact <= limit).then_some(exact);
                    assert_eq!(
                        banded_distance(&ac, &bc, limit),
                        expected,
                        "{a:?} {b:?} {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn dates_and_numbers() {
        assert!(date("2024", 4) && date("202402", 6) && date("20240229", 8));
        assert!(
            !date("20230229", 8) && !date("202413", 6) && !date("24", 4) && !date("２０２４", 4)
        );
        assert!(Format::Double.accepts("3.5") && !Format::Double.accepts("NaN"));
        assert!(Format::Int32.accepts("-7") && !Format::Int32.accepts("4294967296"));
    }
}
