//! Back-off between retries: exponential with full jitter, `Retry-After` honoured, and the
//! sleeping behind a trait so tests can record delays instead of waiting.

use std::sync::Mutex;
use std::time::Duration;

/// Waits between attempts. The client sleeps through one of these (by default
/// [`ThreadSleeper`]); tests pass a [`RecordingSleeper`] to see the delays without waiting.
pub trait Sleeper: Send + Sync {
    /// Blocks the calling thread for `duration`.
    fn sleep(&self, duration: Duration);
}

/// Sleeps with [`std::thread::sleep`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadSleeper;

impl Sleeper for ThreadSleeper {
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// Records each requested delay and returns at once.
///
/// ```
/// use std::time::Duration;
/// use marketplace_client::taxonomy::{RecordingSleeper, Sleeper};
/// let s = RecordingSleeper::default();
/// s.sleep(Duration::from_secs(3));
/// assert_eq!(s.delays(), vec![Duration::from_secs(3)]);
/// ```
#[derive(Debug, Default)]
pub struct RecordingSleeper {
    delays: Mutex<Vec<Duration>>,
}

impl RecordingSleeper {
    /// The delays asked for so far, in order.
    pub fn delays(&self) -> Vec<Duration> {
        self.delays
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, duration: Duration) {
        self.delays
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(duration);
    }
}

/// The upper bound of the delay before retry number `retry` (0 for the first retry):
/// `min(cap, base * 2^retry)`.
pub fn backoff_ceiling(base: Duration, cap: Duration, retry: u32) -> Duration {
    let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
    base.checked_mul(factor).unwrap_or(cap).min(cap)
}

/// A delay drawn uniformly from `[0, ceiling]` ("full jitter"). A ceiling beyond `u64::MAX`
/// nanoseconds (about 584 years, up to [`Duration::MAX`]) is taken as that.
pub fn full_jitter(ceiling: Duration) -> Duration {
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
