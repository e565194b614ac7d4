//! The blocking front: the key cache and the endpoint for a blocking backend (a
//! thread-per-request server such as `tiny_http` or `rouille`, or plain `std::net`).
//!
//! Written once: each call hands the async implementation ([`crate::PublicKeyCache`],
//! [`crate::NotificationEndpoint`]) to a current-thread tokio runtime that the cache owns, on
//! a thread of its own (as reqwest's blocking client does), and waits for its answer. So a
//! burst of notifications from many threads still makes one getPublicKey call, and a call
//! from inside a tokio runtime neither panics nor deadlocks (it blocks that thread while it
//! waits, though: in async code the async front is the better fit). The application's
//! callback runs on the runtime's blocking pool, never on the runtime's thread.
//!
//! Dropping the last of a cache and its endpoints stops the runtime and joins its thread
//! (a notification in flight is answered first: a call holds the cache borrowed).
//!
//! ```no_run
//! use std::sync::Arc;
//! use marketplace_client::aio::api::{ApiClient, ClientConfig};
//! use marketplace_client::aio::oauth::{ApplicationTokenProvider, OAuthClient, OAuthConfig};
//! use marketplace_notifications::{Notification, VerificationToken, blocking};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let oauth_config: OAuthConfig = todo!();
//! // getPublicKey with an application token (the async client: the cache's runtime drives it).
//! let tokens = Arc::new(ApplicationTokenProvider::new(OAuthClient::from_config(&oauth_config)?));
//! let api = ApiClient::new(ClientConfig::production(), tokens)?;
//! let keys = blocking::PublicKeyCache::new(marketplace_notifications::PublicKeyCache::new(api))?;
//! let endpoint = blocking::NotificationEndpoint::new(
//!     "https://seller.example/ebay/notifications", // exactly as registered with eBay
//!     VerificationToken::new(std::env::var("EBAY_VERIFICATION_TOKEN")?)?,
//!     &keys,
//! )?
//! .on_notification(|notification| {
//!     if let Notification::AccountDeletion(deletion) = notification {
//!         // delete what the application keeps about deletion.user_id …
//!     }
//!     Ok::<(), std::io::Error>(())
//! });
//! // In the server's request handler, on any thread:
//! # let (method, query, headers, body): (&str, Option<&str>, Vec<(&str, &str)>, Vec<u8>) = todo!();
//! let answer = endpoint.handle(method, query, &headers, &body);
//! // … answer.status, answer.headers, answer.body
//! # Ok(()) }
//! ```

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::thread::JoinHandle;

use crate::handler::{CallbackError, EndpointAnswer, EndpointError};
use crate::keys::KeyFetchError;
use crate::{Notification, PublicKey, VerificationToken};

/// Why the blocking front could not start: the runtime or its thread could not be created.
#[derive(Debug, thiserror::Error)]
#[error("the notifications' runtime could not start: {0}")]
pub struct RuntimeError(#[source] pub std::io::Error);

type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

static DRIVERS: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// The driver whose threads (its runtime's and its blocking pool's) this one is, if any.
    static DRIVER_OF: Cell<usize> = const { Cell::new(0) };
}

/// The runtime and its thread, shared by a cache and its endpoints.
struct Driver {
    id: usize,
    runtime_thread: std::thread::ThreadId,
    jobs: Option<tokio::sync::mpsc::UnboundedSender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Driver {
    fn start() -> Result<Arc<Self>, RuntimeError> {
        let id = DRIVERS.fetch_add(1, Ordering::Relaxed);
        let (jobs, mut queue) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let (started, start) = std::sync::mpsc::sync_channel::<std::io::Result<()>>(1);
        // The runtime is built and dropped on its own thread: neither may happen in an
        // async context.
        let thread = std::thread::Builder::new()
            .name("marketplace-notifications".to_owned())
            .spawn(move || {
                DRIVER_OF.with(|d| d.set(id));
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .thread_name("marketplace-notifications-blocking")
                    .on_thread_start(move || DRIVER_OF.with(|d| d.set(id)))
                    .build();
                let runtime = match runtime {
                    Ok(runtime) => {
                        let _ = started.send(Ok(()));
                        runtime
                    }
                    Err(e) => {
                        let _ = started.send(Err(e));
                        return;
                    }
                };
                runtime.block_on(async move {
                    while let Some(job) = queue.recv().await {
                        tokio::spawn(job);
                    }
                });
                // Dropping the runtime waits for its blocking pool (the callbacks).
            })
            .map_err(RuntimeError)?;
        match start.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(RuntimeError(e));
            }
            Err(_) => {
                let _ = thread.join();
                return Err(RuntimeError(std::io::Error::other(
                    "the runtime's thread ended before starting",
                )));
            }
        }
        Ok(Arc::new(Self {
            id,
            runtime_thread: thread.thread().id(),
            jobs: Some(jobs),
            thread: Some(thread),
        }))
    }

    /// Runs `future` on the runtime and waits for its output; `None` when the runtime is
    /// gone, or when called on the runtime's thread (waiting there would deadlock; its
    /// blocking pool, where the callbacks run, may wait).
    fn run<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Option<T> {
        if std::thread::current().id() == self.runtime_thread {
            return None;
        }
        let (done, output) = std::sync::mpsc::sync_channel(1);
        let job: Job = Box::pin(async move {
            let _ = done.send(future.await);
        });
        self.jobs.as_ref()?.send(job).ok()?;
        output.recv().ok()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Closing the queue ends the runtime's loop; the runtime is dropped on its thread.
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            // On the runtime's own threads (a callback that held the last endpoint), joining
            // would wait for itself: the thread ends by itself once the callback returns.
            if DRIVER_OF.with(Cell::get) != self.id {
                let _ = thread.join();
            }
        }
    }
}

/// [`crate::PublicKeyCache`] for blocking code: the same cache (one getPublicKey call for a
/// burst of notifications with one `kid`, from any number of threads), driven on a runtime
/// of its own.
pub struct PublicKeyCache {
    keys: Arc<crate::PublicKeyCache>,
    driver: Arc<Driver>,
}

impl std::fmt::Debug for PublicKeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::PublicKeyCache")
            .field("keys", &self.keys)
            .finish_non_exhaustive()
    }
}

impl PublicKeyCache {
    /// Drives `keys` (configured as wanted: [`crate::PublicKeyCache::with_ttl`], …) on a
    /// current-thread runtime started on a thread of its own. Its `ApiClient` should be this
    /// cache's alone (its connections belong to the runtime that opened them).
    pub fn new(keys: crate::PublicKeyCache) -> Result<Self, RuntimeError> {
        Ok(Self {
            keys: Arc::new(keys),
            driver: Driver::start()?,
        })
    }

    /// The key of `kid`: cached, or from getPublicKey.
    pub fn get(&self, kid: &str) -> Result<PublicKey, KeyFetchError> {
        let keys = self.keys.clone();
        let owned = kid.to_owned();
        self.driver
            .run(async move { keys.get(&owned).await })
            .unwrap_or_else(|| {
                Err(KeyFetchError::Stopped {
                    kid: crate::signature::shorten(kid),
                })
            })
    }

    /// How many `kid`s are held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when no `kid` is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Forgets every key.
    pub fn clear(&self) {
        self.keys.clear()
    }

    /// The async cache driven (to share it with async code on another runtime: its
    /// getPublicKey calls are then made on that runtime).
    pub fn as_async(&self) -> &Arc<crate::PublicKeyCache> {
        &self.keys
    }
}

type BlockingCallback = Arc<dyn Fn(Notification) -> Result<(), CallbackError> + Send + Sync>;

/// [`crate::NotificationEndpoint`] for blocking code: the same endpoint (challenge,
/// signature, the answers' table, each `notificationId` handled once), driven on the runtime
/// of its [`PublicKeyCache`], with a blocking callback.
pub struct NotificationEndpoint {
    inner: Arc<crate::NotificationEndpoint>,
    callback: Arc<RwLock<Option<BlockingCallback>>>,
    driver: Arc<Driver>,
}

impl std::fmt::Debug for NotificationEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::NotificationEndpoint")
            .field("endpoint", &self.inner.endpoint())
            .finish_non_exhaustive()
    }
}

impl NotificationEndpoint {
    /// The endpoint registered with eBay as `endpoint` (exactly that URL: the challenge
    /// hashes it; a `&str` or a `String`), with its verification token, fetching keys through
    /// `keys` (and running on its runtime).
    pub fn new(
        endpoint: impl Into<String>,
        token: VerificationToken,
        keys: &PublicKeyCache,
    ) -> Result<Self, EndpointError> {
        let endpoint = crate::NotificationEndpoint::new(endpoint, token, keys.keys.clone())?;
        Ok(Self::from_async(endpoint, keys))
    }

    /// Drives `endpoint`, configured as an async one (`delete_tokens_of_deleted_users`,
    /// `with_postgres_store` with the feature `postgres`…), on the runtime of `keys`, which
    /// should be the blocking front of the endpoint's own cache (built with
    /// [`PublicKeyCache::as_async`]). The application's callback is this front's
    /// [`on_notification`](Self::on_notification) (one given to `endpoint` is replaced).
    pub fn from_async(endpoint: crate::NotificationEndpoint, keys: &PublicKeyCache) -> Self {
        let callback: Arc<RwLock<Option<BlockingCallback>>> = Arc::default();
        let slot = callback.clone();
        let inner = endpoint.on_notification(move |notification| {
            let callback = slot.read().unwrap_or_else(|e| e.into_inner()).clone();
            async move {
                let Some(callback) = callback else {
                    return Ok(());
                };
                // On the blocking pool: the callback may block (a database, a file).
                match tokio::task::spawn_blocking(move || callback(notification)).await {
                    Ok(outcome) => outcome,
                    Err(e) => Err(CallbackError::from(format!(
                        "the notification callback did not return: {e}"
                    ))),
                }
            }
        });
        Self {
            inner: Arc::new(inner),
            callback,
            driver: keys.driver.clone(),
        }
    }

    /// The application's own handling of a verified notification, called once per
    /// `notificationId` (on a thread of the runtime's blocking pool). An error makes the
    /// endpoint answer 500, so eBay sends the notification again.
    pub fn on_notification<F, E>(self, callback: F) -> Self
    where
        F: Fn(Notification) -> Result<(), E> + Send + Sync + 'static,
        E: Into<CallbackError> + 'static,
    {
        let callback: BlockingCallback = Arc::new(move |n| callback(n).map_err(Into::into));
        *self.callback.write().unwrap_or_else(|e| e.into_inner()) = Some(callback);
        self
    }

    /// The endpoint URL (as registered with eBay).
    pub fn endpoint(&self) -> &str {
        self.inner.endpoint()
    }

    /// Answers one request, as [`crate::NotificationEndpoint::handle`] does: `method`,
    /// `query` (the raw query string without `?`, if any), `headers` (name, value), `body` as
    /// received. Blocks until the answer is ready (503 if the runtime is not running).
    pub fn handle(
        &self,
        method: &str,
        query: Option<&str>,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> EndpointAnswer {
        let inner = self.inner.clone();
        let (method, query, body) = (method.to_owned(), query.map(str::to_owned), body.to_vec());
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let answer = self.driver.run(async move {
            let headers: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            inner
                .handle(&method, query.as_deref(), &headers, &body)
                .await
        });
        answer.unwrap_or_else(|| {
            let mut answer = EndpointAnswer::error(
                503,
                "the notification endpoint's runtime is not running here; send it again later",
            );
            answer.headers.push(("Retry-After", "60".to_owned()));
            answer
        })
    }
}
