//! eBay's timestamps: ISO 8601 in UTC with milliseconds, `2016-03-21T08:25:43.511Z`, as the
//! Fulfillment API writes `creationDate` and `lastModifiedDate` and reads the getOrders
//! filter's `creationdate` and `lastmodifieddate` ranges. Written and read here without a date
//! crate (days from the civil date: the proleptic Gregorian calendar).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::OrdersError;

/// The last second eBay's four-digit years can write: 9999-12-31T23:59:59.999Z.
const MAX_SECONDS: u64 = 253_402_300_799;

/// `time` as eBay writes it: `2016-03-21T08:25:43.511Z` (UTC, milliseconds, truncated).
/// Refused ([`OrdersError::Invalid`], naming `what`) before 1970 or after the year 9999.
pub fn format_timestamp(time: SystemTime, what: &'static str) -> Result<String, OrdersError> {
    let since = time
        .duration_since(UNIX_EPOCH)
        .map_err(|_| OrdersError::Invalid {
            what,
            reason: "a time before 1970-01-01T00:00:00.000Z cannot be sent to eBay".to_owned(),
        })?;
    let secs = since.as_secs();
    if secs > MAX_SECONDS {
        return Err(OrdersError::Invalid {
            what,
            reason: "a time after the year 9999 cannot be written in eBay's format".to_owned(),
        });
    }
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let rest = secs % 86_400;
    Ok(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    ))
}

/// A timestamp eBay wrote (`2016-03-21T08:25:43.511Z`; the fraction may have 0 to 9 digits,
/// the zone `Z` or `+00:00`), as a `SystemTime`; `None` for anything else.
pub fn parse_timestamp(text: &str) -> Option<SystemTime> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<u64> {
        let part = text.get(from..to)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut nanos = 0u32;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        let value: u32 = fraction[..digits].parse().ok()?;
        nanos = value * 10u32.pow(9 - digits as u32);
        rest = &fraction[digits..];
    }
    if rest != "Z" && rest != "+00:00" {
        return None;
    }
    let days = days_from_civil(year as i64, month, day);
    let secs = u64::try_from(days).ok()? * 86_400 + hour * 3600 + minute * 60 + second;
    UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
}

fn is_leap(year: u64) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// (year, month, day) of the day `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u64, u64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u64;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u64;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days from 1970-01-01 to the civil date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u64, day: u64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = month as i64;
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64, millis: u32) -> SystemTime {
        UNIX_EPOCH + Duration::new(secs, millis * 1_000_000)
    }

    #[test]
    fn the_timestamp_of_ebays_filter_example_is_written_and_read_back() {
        // getOrders' filter example: creationdate:[2016-03-21T08:25:43.511Z..]
        let time = at(1_458_548_743, 511);
        assert_eq!(
            format_timestamp(time, "t").unwrap(),
            "2016-03-21T08:25:43.511Z"
        );
        assert_eq!(parse_timestamp("2016-03-21T08:25:43.511Z"), Some(time));
    }

    #[test]
    fn the_epoch_a_leap_day_and_the_last_writable_millisecond_are_written_exactly() {
        assert_eq!(
            format_timestamp(UNIX_EPOCH, "t").unwrap(),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(
            format_timestamp(at(1_709_164_800, 7), "t").unwrap(),
            "2024-02-29T00:00:00.007Z"
        );
        assert_eq!(
            format_timestamp(at(MAX_SECONDS, 999), "t").unwrap(),
            "9999-12-31T23:59:59.999Z"
        );
        // Sub-millisecond parts are cut, never rounded up into the next millisecond.
        let almost = UNIX_EPOCH + Duration::new(0, 999_999_999);
        assert_eq!(
            format_timestamp(almost, "t").unwrap(),
            "1970-01-01T00:00:00.999Z"
        );
    }

    #[test]
    fn every_day_of_four_centuries_reads_back_as_written() {
        for day in (0..146_097u64).step_by(7) {
            let time = at(day * 86_400 + 45_296, 123);
            let text = format_timestamp(time, "t").unwrap();
            assert_eq!(parse_timestamp(&text), Some(time), "{text}");
        }
    }

    #[test]
    fn a_time_outside_what_ebay_can_read_is_refused_naming_the_field() {
        let before = UNIX_EPOCH - Duration::from_secs(1);
        let err = format_timestamp(before, "lastmodifieddate's start").unwrap_err();
        assert!(
            err.to_string().contains("lastmodifieddate's start"),
            "{err}"
        );
        assert!(err.to_string().contains("before 1970"), "{err}");
        assert!(format_timestamp(at(MAX_SECONDS + 1, 0), "t").is_err());
    }

    #[test]
    fn timestamps_in_other_shapes_are_not_read() {
        assert_eq!(
            parse_timestamp("2016-03-21T08:25:43Z"),
            Some(at(1_458_548_743, 0))
        );
        assert_eq!(
            parse_timestamp("2016-03-21T08:25:43.5+00:00"),
            Some(at(1_458_548_743, 500))
        );
        for bad in [
            "",
            "2016-03-21",
            "2016-03-21T08:25:43.511",
            "2016-03-21T08:25:43.511+02:00",
            "2016-02-30T08:25:43.511Z",
            "2015-02-29T00:00:00Z",
            "2016-13-01T00:00:00Z",
            "2016-03-21T24:00:00Z",
            "2016-03-21T08:25:43.Z",
            "2016-03-21 08:25:43Z",
            "+016-03-21T08:25:43Z",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }
}
