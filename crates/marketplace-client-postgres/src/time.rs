//! Conversions between `SystemTime` and the driver's `timestamptz` type, without panics.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::{DateTime, Utc};

use crate::error::Error;

pub(crate) fn to_db(time: SystemTime, what: &'static str) -> Result<DateTime<Utc>, Error> {
    let out_of_range = || Error::TimeOutOfRange { what };
    let (secs, nanos) = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => (
            i64::try_from(after.as_secs()).map_err(|_| out_of_range())?,
            after.subsec_nanos(),
        ),
        Err(before) => {
            let before = before.duration();
            let secs = i64::try_from(before.as_secs()).map_err(|_| out_of_range())?;
            if before.subsec_nanos() == 0 {
                (-secs, 0)
            } else {
                (-secs - 1, 1_000_000_000 - before.subsec_nanos())
            }
        }
    };
    DateTime::from_timestamp(secs, nanos).ok_or_else(out_of_range)
}

pub(crate) fn from_db(time: DateTime<Utc>, what: &'static str) -> Result<SystemTime, Error> {
    let out_of_range = || Error::TimeOutOfRange { what };
    let secs = time.timestamp();
    let nanos = time.timestamp_subsec_nanos();
    let at = if secs >= 0 {
        UNIX_EPOCH.checked_add(Duration::new(secs.unsigned_abs(), nanos))
    } else {
        UNIX_EPOCH
            .checked_sub(Duration::from_secs(secs.unsigned_abs()))
            .and_then(|t| t.checked_add(Duration::from_nanos(u64::from(nanos))))
    };
    at.ok_or_else(out_of_range)
}

pub(crate) fn from_db_opt(
    time: Option<DateTime<Utc>>,
    what: &'static str,
) -> Result<Option<SystemTime>, Error> {
    time.map(|t| from_db(t, what)).transpose()
}

pub(crate) fn to_db_opt(
    time: Option<SystemTime>,
    what: &'static str,
) -> Result<Option<DateTime<Utc>>, Error> {
    time.map(|t| to_db(t, what)).transpose()
}

/// The moment `wait` from now on tokio's clock; a wait beyond what the clock can hold
/// (`Duration::MAX`) is a century, as good as no deadline, instead of a panic.
pub(crate) fn deadline_in(wait: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(wait)
        .or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 86_400)))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrips_at_microsecond_precision() {
        for t in [
            UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_000),
            UNIX_EPOCH - Duration::new(5, 250_000_000),
            UNIX_EPOCH,
        ] {
            assert_eq!(from_db(to_db(t, "t").unwrap(), "t").unwrap(), t);
        }
    }
}
