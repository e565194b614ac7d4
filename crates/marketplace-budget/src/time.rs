//! ISO 8601 UTC time stamps (`2018-08-04T07:09:00.000Z`, the form of `Rate::reset`) to and
//! from `SystemTime`, without a date crate.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01 (`civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `YYYY-MM-DDTHH:MM:SS[.fff…]Z` as a time; `None` for anything else (or before 1970).
pub(crate) fn parse(text: &str) -> Option<SystemTime> {
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || *b.last()? != b'Z' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut nanos = 0u32;
    let rest = &text[19..text.len() - 1];
    if let Some(fraction) = rest.strip_prefix('.') {
        if fraction.is_empty()
            || fraction.len() > 9
            || !fraction.bytes().all(|c| c.is_ascii_digit())
        {
            return None;
        }
        nanos = fraction.parse::<u32>().ok()? * 10u32.pow(9 - fraction.len() as u32);
    } else if !rest.is_empty() {
        return None;
    }
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

/// `time` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (milliseconds, as eBay writes `reset`).
pub fn format(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() as i64;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let day = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        day / 3600,
        day % 3600 / 60,
        day % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ebays_example_reset_reads_and_writes_back_the_same() {
        let t = parse("2018-08-04T07:09:00.000Z").unwrap();
        assert_eq!(t, UNIX_EPOCH + Duration::from_secs(1_533_366_540));
        assert_eq!(format(t), "2018-08-04T07:09:00.000Z");
        assert_eq!(
            parse("2024-02-29T23:59:59Z").map(format).as_deref(),
            Some("2024-02-29T23:59:59.000Z")
        );
    }

    #[test]
    fn a_reset_that_is_not_an_iso_time_is_none() {
        for bad in [
            "",
            "2018-08-04",
            "2018-13-04T07:09:00Z",
            "2018-08-04T07:09:00.Z",
            "2018-08-04T07:09:00+01:00",
            "２018-08-04T07:09:00Z",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
