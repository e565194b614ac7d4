//! What tests drive the clients with instead of time and a browser (feature `test-util`):
//! a sleeper that records the client's waits, a clock that moves only when told, the consent
//! flow's parts, and the limits the clients apply, for assertions.
//!
//! ```
//! use std::time::Duration;
//! use marketplace_client::test_util::{RecordingSleeper, Sleeper};
//! let s = RecordingSleeper::default();
//! s.sleep(Duration::from_secs(3));
//! assert_eq!(s.delays(), vec![Duration::from_secs(3)]);
//! ```

use std::time::Duration;

pub use crate::core::cache::{Clock, ManualClock, SystemClock};
pub use crate::oauth::consent::{AuthorizationResponse, consent_url, parse_redirect};

/// The most of a server's text an [`OAuthError`](crate::oauth::OAuthError) keeps, in bytes.
pub const MAX_BODY_IN_ERROR: usize = crate::oauth::redact::MAX_BODY_IN_ERROR;
/// The largest token answer read, in bytes.
pub const MAX_TOKEN_ANSWER: usize = crate::core::token::MAX_TOKEN_ANSWER;
/// The longest `Retry-After` a provider honours.
pub const MAX_RETRY_AFTER: std::time::Duration = crate::oauth::MAX_RETRY_AFTER;
/// A provider's wait after a failed grant, unless set.
pub const DEFAULT_RETRY_BACKOFF: std::time::Duration = crate::core::cache::DEFAULT_RETRY_BACKOFF;
/// What a secret prints as.
pub const REDACTED: &str = crate::oauth::secret::REDACTED;
/// The most a fetchItemAspects file may decompress to, unless set.
pub const DEFAULT_MAX_DECOMPRESSED_BYTES: u64 = crate::config::DEFAULT_MAX_DECOMPRESSED_BYTES;

/// What a client waits between attempts with, instead of tokio's timer (`with_sleeper`):
/// tests pass a [`RecordingSleeper`] to see the delays without waiting. It is called on the
/// runtime that drives the call, so it must return at once.
pub trait Sleeper: Send + Sync {
    /// Takes note of a wait of `duration`, without waiting.
    fn sleep(&self, duration: Duration);
}

/// Records each requested delay and returns at once
/// (see the module's example).
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
