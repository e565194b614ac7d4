//! The public keys of eBay's notifications, by `kid`, from the Notification API's
//! getPublicKey, cached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use marketplace_client::aio::api::{ApiClient, ApiError, ApiRequest};
use tokio::time::Instant;

use crate::{KeyError, PublicKey, signature::shorten};

/// How long a key is kept (eBay's SDKs keep them about an hour).
pub const DEFAULT_KEY_TTL: Duration = Duration::from_secs(3600);
/// How long a `kid` that getPublicKey does not know is remembered as unknown.
pub const DEFAULT_UNKNOWN_TTL: Duration = Duration::from_secs(300);
/// How many `kid`s are kept (eBay uses a handful at a time).
pub const DEFAULT_CAPACITY: usize = 64;
/// The longest `kid` asked for.
pub const MAX_KID_CHARS: usize = 128;

/// Why the key of a `kid` is not at hand.
#[derive(Debug, thiserror::Error)]
pub enum KeyFetchError {
    /// getPublicKey does not know the `kid` (404), or it is not one eBay could have sent.
    #[error("no public key for kid {kid:?}: getPublicKey does not know it")]
    UnknownKid {
        /// The `kid` (shortened).
        kid: String,
    },
    /// getPublicKey answered a key that is not an ECDSA P-256 key for SHA-1.
    #[error(
        "getPublicKey answered for kid {kid:?} a key that cannot verify notifications: {reason}"
    )]
    BadKey {
        /// The `kid` (shortened).
        kid: String,
        /// What was wrong.
        reason: String,
    },
    /// getPublicKey failed (network, token, the service's error).
    #[error("getPublicKey failed for kid {kid:?}: {source}")]
    Api {
        /// The `kid` (shortened).
        kid: String,
        /// The client's error (sanitized: no token).
        #[source]
        source: ApiError,
    },
    /// The blocking front's runtime is not running (`blocking::PublicKeyCache::get` called
    /// on that runtime's own thread, where waiting would deadlock).
    #[error(
        "the public key of kid {kid:?} cannot be fetched: the key cache's runtime is not running here"
    )]
    Stopped {
        /// The `kid` (shortened).
        kid: String,
    },
}

impl KeyFetchError {
    /// Whether eBay could succeed later with the same notification (the service or the
    /// network failed), rather than the `kid` being wrong.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            KeyFetchError::Api { .. } | KeyFetchError::Stopped { .. }
        )
    }
}

#[derive(Clone)]
enum SlotState {
    Empty,
    Key { key: PublicKey, fetched: Instant },
    Unknown { since: Instant },
}

struct Slot {
    created: Instant,
    state: tokio::sync::Mutex<SlotState>,
}

/// The public keys of eBay's notifications by `kid`, from getPublicKey
/// (`GET /commerce/notification/v1/public_key/{kid}`, with an application token), kept
/// [`DEFAULT_KEY_TTL`] (an hour), at most [`DEFAULT_CAPACITY`] `kid`s (the oldest goes), with
/// single flight: a burst of notifications signed with one `kid` makes one getPublicKey call,
/// the others wait for its answer. A `kid` that getPublicKey does not know is remembered as
/// unknown for [`DEFAULT_UNKNOWN_TTL`], so a flood of forged `kid`s costs one call each.
///
/// Async; a blocking backend drives this same cache through [`crate::blocking::PublicKeyCache`]
/// (a runtime of its own, on a thread of its own).
pub struct PublicKeyCache {
    api: ApiClient,
    ttl: Duration,
    unknown_ttl: Duration,
    capacity: usize,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    #[cfg(feature = "postgres")]
    pub(crate) shared: Option<marketplace_client_postgres::notifications::PublicKeyTable>,
}

impl std::fmt::Debug for PublicKeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublicKeyCache")
            .field("ttl", &self.ttl)
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

#[derive(serde::Deserialize)]
struct PublicKeyAnswer {
    algorithm: Option<String>,
    digest: Option<String>,
    key: String,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl PublicKeyCache {
    /// A cache that calls getPublicKey through `api`, a client of the API host whose tokens
    /// are application tokens (`marketplace_client::aio::oauth::ApplicationTokenProvider`, the
    /// default scope `https://api.ebay.com/oauth/api_scope`).
    pub fn new(api: ApiClient) -> Self {
        Self {
            api,
            ttl: DEFAULT_KEY_TTL,
            unknown_ttl: DEFAULT_UNKNOWN_TTL,
            capacity: DEFAULT_CAPACITY,
            slots: Mutex::new(HashMap::new()),
            #[cfg(feature = "postgres")]
            shared: None,
        }
    }

    /// Keeps keys `ttl` instead of an hour.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Keeps at most `capacity` `kid`s (at least 1).
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// How many `kid`s are held.
    pub fn len(&self) -> usize {
        lock(&self.slots).len()
    }

    /// True when no `kid` is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every key (the next notification fetches its key again).
    pub fn clear(&self) {
        lock(&self.slots).clear();
    }

    fn slot(&self, kid: &str) -> Arc<Slot> {
        let mut slots = lock(&self.slots);
        if let Some(slot) = slots.get(kid) {
            return slot.clone();
        }
        while slots.len() >= self.capacity {
            let oldest = slots
                .iter()
                .min_by_key(|(_, s)| s.created)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => slots.remove(&k),
                None => break,
            };
        }
        let slot = Arc::new(Slot {
            created: Instant::now(),
            state: tokio::sync::Mutex::new(SlotState::Empty),
        });
        slots.insert(kid.to_owned(), slot.clone());
        slot
    }

    /// The key of `kid`: cached, or from getPublicKey (one call for all the callers that ask
    /// at once).
    pub async fn get(&self, kid: &str) -> Result<PublicKey, KeyFetchError> {
        if kid.is_empty()
            || kid.chars().count() > MAX_KID_CHARS
            || !kid
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(KeyFetchError::UnknownKid { kid: shorten(kid) });
        }
        let slot = self.slot(kid);
        // Held across the call: the callers of the same kid wait here (single flight).
        let mut state = slot.state.lock().await;
        match &*state {
            SlotState::Key { key, fetched } if fetched.elapsed() < self.ttl => {
                return Ok(key.clone());
            }
            SlotState::Unknown { since } if since.elapsed() < self.unknown_ttl => {
                return Err(KeyFetchError::UnknownKid { kid: shorten(kid) });
            }
            _ => {}
        }
        let fetched = self.fetch_shared(kid).await;
        match &fetched {
            Ok(key) => {
                *state = SlotState::Key {
                    key: key.clone(),
                    fetched: Instant::now(),
                }
            }
            Err(KeyFetchError::UnknownKid { .. }) => {
                *state = SlotState::Unknown {
                    since: Instant::now(),
                }
            }
            Err(_) => {}
        }
        fetched
    }

    /// The key from the fleet's table, else from getPublicKey (then written to the table).
    #[cfg(feature = "postgres")]
    async fn fetch_shared(&self, kid: &str) -> Result<PublicKey, KeyFetchError> {
        let Some(table) = &self.shared else {
            return self.fetch(kid).await.map(|(key, _)| key);
        };
        match table.get(kid, self.ttl).await {
            Ok(Some(pem)) => {
                if let Ok(key) = PublicKey::from_pem(&pem) {
                    return Ok(key);
                }
                tracing::warn!(target: "marketplace_notifications", "a shared public key is not a P-256 PEM; asking getPublicKey");
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(target: "marketplace_notifications", error = %e, "the shared public keys cannot be read; asking getPublicKey");
            }
        }
        let (key, pem) = self.fetch(kid).await?;
        if let Err(e) = table.put(kid, &pem).await {
            tracing::warn!(target: "marketplace_notifications", error = %e, "could not share a public key");
        }
        Ok(key)
    }

    #[cfg(not(feature = "postgres"))]
    async fn fetch_shared(&self, kid: &str) -> Result<PublicKey, KeyFetchError> {
        self.fetch(kid).await.map(|(key, _)| key)
    }

    /// getPublicKey: the key, and its PEM as answered.
    async fn fetch(&self, kid: &str) -> Result<(PublicKey, String), KeyFetchError> {
        let request =
            ApiRequest::get_segments(["commerce", "notification", "v1", "public_key", kid])
                .operation("getPublicKey");
        let answer = match self.api.send(request).await {
            Ok(answer) => answer,
            Err(e) if e.status() == Some(404) => {
                return Err(KeyFetchError::UnknownKid { kid: shorten(kid) });
            }
            Err(source) => {
                return Err(KeyFetchError::Api {
                    kid: shorten(kid),
                    source,
                });
            }
        };
        let bad = |reason: String| KeyFetchError::BadKey {
            kid: shorten(kid),
            reason,
        };
        let answer: PublicKeyAnswer = answer.json().map_err(|e| bad(e.to_string()))?;
        if let Some(algorithm) = &answer.algorithm
            && !algorithm.eq_ignore_ascii_case("ecdsa")
        {
            return Err(bad(format!(
                "algorithm {:?}, not ECDSA",
                shorten(algorithm)
            )));
        }
        if let Some(digest) = &answer.digest
            && !digest.eq_ignore_ascii_case("sha1")
        {
            return Err(bad(format!("digest {:?}, not SHA1", shorten(digest))));
        }
        let key = PublicKey::from_pem(&answer.key).map_err(|e: KeyError| bad(e.to_string()))?;
        Ok((key, answer.key))
    }
}
