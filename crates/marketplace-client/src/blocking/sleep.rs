//! How the clients wait between attempts in tests (feature `test-util`): a trait, so tests can
//! record the delays instead of waiting.

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
/// use marketplace_client::test_util::{RecordingSleeper, Sleeper};
/// let s = RecordingSleeper::default();
/// s.sleep(Duration::from_secs(3));
/// assert_eq!(s.delays(), vec![Duration::from_secs(3)]);
/// ```
#[derive(Debug, Default)]
pub struct RecordingSleeper {
    delays: std::sync::Mutex<Vec<Duration>>,
}

impl RecordingSleeper {
    /// The delays asked for so far, in order.
    pub fn delays(&self) -> Vec<Duration> {
        crate::oauth::lock(&self.delays).clone()
    }
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, duration: Duration) {
        crate::oauth::lock(&self.delays).push(duration);
    }
}
