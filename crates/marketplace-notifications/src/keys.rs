//! The public keys of eBay's notifications, by `kid`, from the Notification API's
//! getPublicKey, cached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use marketplace_client::aio::api::{ApiClient, ApiError, ApiRequest};
use tokio::sync::OnceCell;
use tokio::time::Instant;

use crate::{KeyError, PublicKey, signature::shorten};

/// How long a key is kept (eBay's SDKs keep them about an hour).
pub const DEFAULT_KEY_TTL: Duration = Duration::from_secs(3600);
/// How long a `kid` that getPublicKey does not know is remembered as unknown.
pub const DEFAULT_UNKNOWN_TTL: Duration = Duration::from_secs(300);
/// How many keys are kept (eBay uses a handful at a time).
pub const DEFAULT_CAPACITY: usize = 64;
/// The longest `kid` asked for.
pub const MAX_KID_CHARS: usize = 128;

/// How long a failed getPublicKey call (the network, the service's error, a key that cannot
/// verify) is the answer for its `kid` without asking again.
const FAILURE_TTL: Duration = Duration::from_secs(30);
/// How many unknown (or failed) `kid`s are remembered at most (the oldest go first).
const UNKNOWN_CAPACITY: usize = 1024;
/// getPublicKey calls for `kid`s the cache holds no key of: at most this many at once …
const NEW_KID_BURST: u32 = 10;
/// … and one more each this long (eBay limits getPublicKey's calls a day).
const NEW_KID_INTERVAL: Duration = Duration::from_secs(60);

/// Why the key of a `kid` is not at hand.
#[derive(Debug, Clone, thiserror::Error)]
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
    /// getPublicKey failed (network, token, the service's error). The one failure is the
    /// answer of every caller that waited for that call, and of the callers of the next
    /// 30 seconds.
    #[error("getPublicKey failed for kid {kid:?}: {source}")]
    Api {
        /// The `kid` (shortened).
        kid: String,
        /// The client's error (sanitized: no token), shared by the callers it answers.
        #[source]
        source: Arc<ApiError>,
    },
    /// getPublicKey was not asked: more `kid`s the cache holds no key of were asked for
    /// lately than it looks up (10 at once, then one a minute), as a flood of forged
    /// notifications does. eBay's retry of a genuine notification is answered later.
    #[error(
        "the public key of kid {kid:?} is not held, and getPublicKey is not asked now: too many unknown kids lately"
    )]
    RateLimited {
        /// The `kid` (shortened).
        kid: String,
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
    /// network failed, or getPublicKey was not asked), rather than the `kid` being wrong.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            KeyFetchError::Api { .. }
                | KeyFetchError::RateLimited { .. }
                | KeyFetchError::Stopped { .. }
        )
    }
}

type Outcome = Result<PublicKey, KeyFetchError>;

/// One getPublicKey lookup in progress: its outcome, for every caller of its `kid`.
type Flight = Arc<OnceCell<Outcome>>;

struct Known {
    key: PublicKey,
    fetched: Instant,
}

/// The lookups of `kid`s that no key is held of: a token bucket.
struct Budget {
    available: u32,
    refilled: Instant,
}

impl Budget {
    fn full() -> Self {
        Self {
            available: NEW_KID_BURST,
            refilled: Instant::now(),
        }
    }

    fn take(&mut self, now: Instant) -> bool {
        let periods =
            now.duration_since(self.refilled).as_secs_f64() / NEW_KID_INTERVAL.as_secs_f64();
        let periods = periods as u32;
        if periods > 0 {
            self.available = self.available.saturating_add(periods).min(NEW_KID_BURST);
            self.refilled = if self.available == NEW_KID_BURST {
                now
            } else {
                self.refilled + NEW_KID_INTERVAL * periods
            };
        }
        if self.available == 0 {
            return false;
        }
        self.available -= 1;
        true
    }
}

struct State {
    /// The keys, at most `capacity`: only a new key evicts one.
    keys: HashMap<String, Known>,
    /// `kid`s getPublicKey does not know, since when; apart from the keys.
    unknown: HashMap<String, Instant>,
    /// `kid`s whose lookup failed otherwise, since when, and how.
    failed: HashMap<String, (Instant, KeyFetchError)>,
    /// The lookups in progress.
    flights: HashMap<String, Flight>,
    budget: Budget,
}

/// Remembers `value` for `kid` in `map`, at most [`UNKNOWN_CAPACITY`] entries: the expired
/// ones go first, then the oldest.
fn remember<V>(
    map: &mut HashMap<String, V>,
    kid: &str,
    value: V,
    since: impl Fn(&V) -> Instant,
    ttl: Duration,
) {
    if map.len() >= UNKNOWN_CAPACITY && !map.contains_key(kid) {
        map.retain(|_, v| since(v).elapsed() < ttl);
        if map.len() >= UNKNOWN_CAPACITY
            && let Some(oldest) = map
                .iter()
                .min_by_key(|(_, v)| since(v))
                .map(|(k, _)| k.clone())
        {
            map.remove(&oldest);
        }
    }
    map.insert(kid.to_owned(), value);
}

/// The public keys of eBay's notifications by `kid`, from getPublicKey
/// (`GET /commerce/notification/v1/public_key/{kid}`, with an application token), kept
/// [`DEFAULT_KEY_TTL`] (an hour), at most [`DEFAULT_CAPACITY`] keys (the oldest goes, for a
/// new key only), with single flight: a burst of notifications signed with one `kid` makes
/// one getPublicKey call, the others wait for its outcome, a failure included.
///
/// What is not a key is remembered apart, so that forged `kid`s never evict eBay's key: a
/// `kid` getPublicKey does not know, for [`DEFAULT_UNKNOWN_TTL`]; a failed call (the network,
/// the service's error), for 30 seconds. And getPublicKey, whose calls eBay counts by the
/// day, is asked about `kid`s no key is held of at most 10 times at once, then once a
/// minute ([`KeyFetchError::RateLimited`] meanwhile): a flood of forged `kid`s costs a
/// handful of calls, not one each.
///
/// Async; a blocking backend drives this same cache through [`crate::blocking::PublicKeyCache`]
/// (a runtime of its own, on a thread of its own).
pub struct PublicKeyCache {
    api: ApiClient,
    ttl: Duration,
    unknown_ttl: Duration,
    capacity: usize,
    state: Mutex<State>,
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

/// Whether `kid` is one eBay could send: ASCII letters, digits, `-`, `_` and `.`, at most
/// [`MAX_KID_CHARS`], and not `.` or `..` (path segments of their own in getPublicKey's URL).
fn plausible(kid: &str) -> bool {
    !kid.is_empty()
        && kid.len() <= MAX_KID_CHARS
        && kid
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && kid != "."
        && kid != ".."
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
            state: Mutex::new(State {
                keys: HashMap::new(),
                unknown: HashMap::new(),
                failed: HashMap::new(),
                flights: HashMap::new(),
                budget: Budget::full(),
            }),
            #[cfg(feature = "postgres")]
            shared: None,
        }
    }

    /// Keeps keys `ttl` instead of an hour.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Keeps at most `capacity` keys (at least 1).
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// How many keys are held (the `kid`s remembered as unknown aside).
    pub fn len(&self) -> usize {
        lock(&self.state).keys.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every key, unknown `kid` and failure (the next notification fetches its key
    /// again).
    pub fn clear(&self) {
        let mut state = lock(&self.state);
        state.keys.clear();
        state.unknown.clear();
        state.failed.clear();
    }

    /// The key of `kid`: cached, or from getPublicKey (one call for all the callers that ask
    /// at once; its failure is theirs too).
    pub async fn get(&self, kid: &str) -> Result<PublicKey, KeyFetchError> {
        if !plausible(kid) {
            return Err(KeyFetchError::UnknownKid { kid: shorten(kid) });
        }
        let flight = {
            let mut state = lock(&self.state);
            if let Some(known) = state.keys.get(kid)
                && known.fetched.elapsed() < self.ttl
            {
                return Ok(known.key.clone());
            }
            if let Some(since) = state.unknown.get(kid) {
                if since.elapsed() < self.unknown_ttl {
                    return Err(KeyFetchError::UnknownKid { kid: shorten(kid) });
                }
                state.unknown.remove(kid);
            }
            if let Some((since, error)) = state.failed.get(kid) {
                if since.elapsed() < FAILURE_TTL {
                    return Err(error.clone());
                }
                state.failed.remove(kid);
            }
            state.flights.entry(kid.to_owned()).or_default().clone()
        };
        // One lookup at a time for a kid; should its caller go away (a dropped connection),
        // a waiting caller runs it.
        flight
            .get_or_init(|| self.lookup(kid, &flight))
            .await
            .clone()
    }

    /// The lookup of `kid`, its outcome recorded.
    async fn lookup(&self, kid: &str, flight: &Flight) -> Outcome {
        // A kid of a held key (expired) is eBay's: its renewal is not counted.
        let held = lock(&self.state).keys.contains_key(kid);
        let outcome = self.fetch_shared(kid, held).await;
        let mut state = lock(&self.state);
        let now = Instant::now();
        match &outcome {
            Ok(key) => {
                state.failed.remove(kid);
                if !state.keys.contains_key(kid) && state.keys.len() >= self.capacity {
                    let oldest = state
                        .keys
                        .iter()
                        .min_by_key(|(_, k)| k.fetched)
                        .map(|(k, _)| k.clone());
                    if let Some(oldest) = oldest {
                        state.keys.remove(&oldest);
                    }
                }
                state.keys.insert(
                    kid.to_owned(),
                    Known {
                        key: key.clone(),
                        fetched: now,
                    },
                );
            }
            Err(KeyFetchError::UnknownKid { .. }) => {
                state.keys.remove(kid);
                state.failed.remove(kid);
                let ttl = self.unknown_ttl;
                remember(&mut state.unknown, kid, now, |since| *since, ttl);
            }
            // Nothing was asked: nothing learnt.
            Err(KeyFetchError::RateLimited { .. } | KeyFetchError::Stopped { .. }) => {}
            Err(error) => {
                let entry = (now, error.clone());
                remember(
                    &mut state.failed,
                    kid,
                    entry,
                    |(since, _)| *since,
                    FAILURE_TTL,
                );
            }
        }
        if state
            .flights
            .get(kid)
            .is_some_and(|f| Arc::ptr_eq(f, flight))
        {
            state.flights.remove(kid);
        }
        outcome
    }

    /// Takes one of the lookups of `kid`s no key is held of, unless `held`.
    fn may_ask(&self, kid: &str, held: bool) -> Result<(), KeyFetchError> {
        if held || lock(&self.state).budget.take(Instant::now()) {
            return Ok(());
        }
        tracing::warn!(target: "marketplace_notifications", kid = %shorten(kid), "getPublicKey not asked: too many unknown kids lately");
        Err(KeyFetchError::RateLimited { kid: shorten(kid) })
    }

    /// The key from the fleet's table, else from getPublicKey (then written to the table).
    #[cfg(feature = "postgres")]
    async fn fetch_shared(&self, kid: &str, held: bool) -> Result<PublicKey, KeyFetchError> {
        let Some(table) = &self.shared else {
            self.may_ask(kid, held)?;
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
        self.may_ask(kid, held)?;
        let (key, pem) = self.fetch(kid).await?;
        if let Err(e) = table.put(kid, &pem).await {
            tracing::warn!(target: "marketplace_notifications", error = %e, "could not share a public key");
        }
        Ok(key)
    }

    #[cfg(not(feature = "postgres"))]
    async fn fetch_shared(&self, kid: &str, held: bool) -> Result<PublicKey, KeyFetchError> {
        self.may_ask(kid, held)?;
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
                    source: Arc::new(source),
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
