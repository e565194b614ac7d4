//! Dates without a date library: today's date in UTC, for snapshot provenance.

use std::time::{SystemTime, UNIX_EPOCH};

/// Today's date in UTC as `YYYY-MM-DD`.
pub fn today_utc() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date((secs / 86_400) as i64)
}

/// The `YYYY-MM-DD` date of a day number counted from 1970-01-01 (Howard Hinnant's algorithm).
///
/// ```
/// assert_eq!(taxonomy_tree::clock::civil_date(0), "1970-01-01");
/// assert_eq!(taxonomy_tree::clock::civil_date(20_455), "2026-01-02");
/// ```
pub fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
