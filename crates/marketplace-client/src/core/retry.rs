//! The retry decisions of a call, without I/O: after each failed attempt, renew the token
//! (a 401, once), wait and try again (429, 5xx, a broken connection; `Retry-After` honoured,
//! else exponential back-off with full jitter), or give up. The fronts sleep as told.

use std::time::Duration;

use crate::api::{ApiError, ClientConfig};

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Tell the token source the token was refused, take a new one and try again at once
    /// (not counted as a retry).
    Renew,
    /// Wait this long, then try again.
    Wait(Duration),
    /// Give up: the error is the call's.
    Fail,
}

/// The attempts of one call so far.
#[derive(Debug)]
pub(crate) struct Attempts {
    max_retries: u32,
    base: Duration,
    cap: Duration,
    max_retry_after: Duration,
    renewed: bool,
    retries: u32,
    attempt: u32,
}

impl Attempts {
    /// The first attempt of a call made with `config`'s retry settings.
    pub(crate) fn new(config: &ClientConfig) -> Self {
        Self {
            max_retries: config.max_retries,
            base: config.backoff_base,
            cap: config.backoff_cap,
            max_retry_after: config.max_retry_after,
            renewed: false,
            retries: 0,
            attempt: 1,
        }
    }

    /// No retry but the token's renewal on a 401 (a call sent at most once).
    pub(crate) fn without_retries(mut self) -> Self {
        self.max_retries = 0;
        self
    }

    /// The number of the attempt about to be made (1 for the first).
    pub(crate) fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Decides what follows `error`.
    ///
    /// * A 401 renews the token once (a second 401 is the call's error).
    /// * 429, 5xx, connection failures and cut-off bodies are retried up to `max_retries`
    ///   times, after `Retry-After` when the answer has one (a longer one than
    ///   `max_retry_after` is the call's error at once), else after a random delay in
    ///   `[0, min(cap, base · 2^n)]`. Time-outs are not retried: the time budget is spent.
    pub(crate) fn after(&mut self, error: &ApiError) -> Next {
        let next = if error.status() == Some(401) && !self.renewed {
            self.renewed = true;
            Next::Renew
        } else if !error.is_retryable() || self.retries >= self.max_retries {
            Next::Fail
        } else {
            match error.retry_after() {
                Some(wait) if wait > self.max_retry_after => Next::Fail,
                Some(wait) => Next::Wait(wait),
                None => Next::Wait(full_jitter(backoff_ceiling(
                    self.base,
                    self.cap,
                    self.retries,
                ))),
            }
        };
        if let Next::Wait(_) = next {
            self.retries += 1;
        }
        if next != Next::Fail {
            self.attempt += 1;
        }
        next
    }
}

/// The upper bound of the delay before retry number `retry` (0 for the first retry):
/// `min(cap, base * 2^retry)`.
pub(crate) fn backoff_ceiling(base: Duration, cap: Duration, retry: u32) -> Duration {
    let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
    base.checked_mul(factor).unwrap_or(cap).min(cap)
}

/// A delay drawn uniformly from `[0, ceiling]` ("full jitter"). A ceiling beyond `u64::MAX`
/// nanoseconds (about 584 years, up to [`Duration::MAX`]) is taken as that.
pub(crate) fn full_jitter(ceiling: Duration) -> Duration {
    let nanos = ceiling.as_nanos().min(u128::from(u64::MAX)) as u64;
    if nanos == 0 {
        return Duration::ZERO;
    }
    let random = getrandom::u64().unwrap_or_else(|_| {
        // Without an OS random source, fall back on the clock: the spread is what matters.
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos() as u64)
    });
    // In u128, so that `nanos + 1` cannot overflow (nor wrap to a division by zero).
    let drawn = u128::from(random) % (u128::from(nanos) + 1);
    Duration::from_nanos(drawn as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_doubles_and_caps() {
        let base = Duration::from_millis(100);
        let cap = Duration::from_secs(1);
        assert_eq!(backoff_ceiling(base, cap, 0), Duration::from_millis(100));
        assert_eq!(backoff_ceiling(base, cap, 2), Duration::from_millis(400));
        assert_eq!(backoff_ceiling(base, cap, 4), cap);
        assert_eq!(backoff_ceiling(base, cap, 40), cap);
    }

    #[test]
    fn jitter_stays_below_ceiling() {
        let ceiling = Duration::from_millis(5);
        for _ in 0..100 {
            assert!(full_jitter(ceiling) <= ceiling);
        }
        assert_eq!(full_jitter(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn extreme_durations_do_not_panic() {
        // Duration::MAX overflowed `nanos + 1` (a division by zero in release builds).
        for ceiling in [
            Duration::MAX,
            Duration::from_nanos(u64::MAX),
            Duration::from_nanos(u64::MAX - 1),
        ] {
            assert!(full_jitter(ceiling) <= Duration::from_nanos(u64::MAX));
        }
        assert_eq!(
            backoff_ceiling(Duration::MAX, Duration::MAX, 40),
            Duration::MAX
        );
        assert_eq!(
            backoff_ceiling(Duration::MAX, Duration::from_secs(1), 3),
            Duration::from_secs(1)
        );
    }
}
