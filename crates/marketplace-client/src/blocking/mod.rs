//! The blocking front: thin wrappers that drive the async front ([`crate::aio`]) on a tokio
//! runtime the library owns. The I/O, the retries, the single flight and the caches exist
//! once, in `aio`; this module only waits for their futures, and bridges what users implement
//! as blocking traits (a token source, a refresh-token store, a shared token cache) to the
//! async ones.
//!
//! Its public types are re-exported from [`crate::api`], [`crate::oauth`] and
//! [`crate::taxonomy`].
//!
//! # The runtime
//!
//! One multi-thread runtime (one worker thread, plus tokio's blocking pool on demand) is
//! shared by every blocking client alive in the process ([`Driver`]): a token provider and
//! the taxonomy client that asks it for tokens use the same runtime, so the connections a
//! client pooled are never tied to a runtime that is gone. It is started with the first client
//! and shut down when the last one is dropped.
//!
//! A call waits for its future ([`Driver::wait`]) where it is made:
//!
//! * on a thread without a runtime (or on `spawn_blocking`'s): `block_on` on the caller's
//!   thread, which polls the future itself (no thread hop);
//! * in a task of a multi-thread runtime: the same inside `tokio::task::block_in_place`,
//!   which hands the caller's runtime work to another thread while the call waits, so that
//!   runtime is not blocked;
//! * anywhere else inside a runtime's context (a current-thread runtime, a `block_on`, an
//!   entered handle): on a scoped thread of its own while the caller waits (as any blocking
//!   call would block it). Tokio does not say whether `block_in_place` is allowed there: a
//!   multi-thread runtime's handle entered inside a current-thread runtime's `block_on`
//!   reports "multi-thread", and `block_in_place` would panic.

pub(crate) mod api;
pub(crate) mod bridge;
pub(crate) mod oauth;
pub(crate) mod provider;
pub(crate) mod source;
pub(crate) mod taxonomy;

use std::future::Future;
use std::sync::{Arc, Mutex, Weak};

use tokio::runtime::{Handle, Runtime, RuntimeFlavor};

/// What the blocking `ApiClient` and `TaxonomyClient` share over their async client (`$inner`,
/// the field `inner`, beside `driver`): `Debug`, `Send + Sync`, the constructors, `config`,
/// `with_sleeper` and the wait of a call.
macro_rules! client_wrapper {
    ($name:ident, $inner:ty) => {
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.inner.fmt(f)
            }
        }

        const _: () = {
            const fn send_sync<T: Send + Sync>() {}
            send_sync::<$name>();
        };

        impl $name {
            /// A client with its own HTTP options (proxy, user agent, extra root
            /// certificates); the time-outs are the configuration's
            /// ([`ClientConfig::timeout`](crate::ClientConfig::timeout),
            /// [`ClientConfig::connect_timeout`](crate::ClientConfig::connect_timeout)).
            pub fn with_options(
                config: crate::ClientConfig,
                tokens: std::sync::Arc<dyn crate::oauth::AccessTokenSource>,
                options: crate::HttpOptions,
            ) -> Result<Self, crate::api::ApiError> {
                let url = config.base_url.to_string();
                let source = std::sync::Arc::new(crate::blocking::bridge::Source(tokens));
                let inner = <$inner>::with_options(config, source, options)?;
                let driver = crate::blocking::Driver::shared()
                    .map_err(|message| crate::api::ApiError::Transport { url, message })?;
                Ok(Self { inner, driver })
            }

            /// A client of the API host of `config` that takes its tokens from `tokens` (for
            /// example [`ApplicationTokenProvider::source`](crate::oauth::ApplicationTokenProvider::source),
            /// an [`ApplicationTokenProvider`](crate::oauth::ApplicationTokenProvider) or a
            /// [`UserTokenProvider`](crate::oauth::UserTokenProvider)).
            pub fn new(
                config: crate::ClientConfig,
                tokens: std::sync::Arc<dyn crate::oauth::AccessTokenSource>,
            ) -> Result<Self, crate::api::ApiError> {
                Self::with_options(config, tokens, Default::default())
            }

            /// The configuration.
            pub fn config(&self) -> &crate::ClientConfig {
                self.inner.config()
            }

            /// Replaces the way the client waits between attempts (tests pass a
            /// [`RecordingSleeper`](crate::test_util::RecordingSleeper); feature `test-util`).
            #[cfg(feature = "test-util")]
            pub fn with_sleeper(
                self,
                sleeper: std::sync::Arc<dyn crate::test_util::Sleeper>,
            ) -> Self {
                Self {
                    inner: self.inner.with_sleeper(sleeper),
                    driver: self.driver,
                }
            }

            /// Waits for `call` on the blocking front's runtime.
            fn wait<T: Send>(
                &self,
                call: impl std::future::Future<Output = Result<T, crate::api::ApiError>> + Send,
            ) -> Result<T, crate::api::ApiError> {
                self.driver
                    .wait(call, |message| crate::api::ApiError::Transport {
                        url: self.inner.config().base_url.to_string(),
                        message,
                    })
            }
        }
    };
}
pub(crate) use client_wrapper;

/// The process's runtime of the blocking front, while a client holds it.
static SHARED: Mutex<Weak<Owned>> = Mutex::new(Weak::new());

/// The runtime, shut down when the last client that holds it goes.
struct Owned(Option<Runtime>);

impl Drop for Owned {
    fn drop(&mut self) {
        let Some(runtime) = self.0.take() else { return };
        if Handle::try_current().is_ok() {
            // Dropping a runtime waits for its threads, which a runtime's thread must not
            // do (tokio panics: "Cannot drop a runtime in a context where blocking is not
            // allowed"): the threads are told to stop and end on their own, at once.
            runtime.shutdown_background();
        } else {
            // Joins the worker and the blocking pool's threads: none is left behind.
            drop(runtime);
        }
    }
}

/// A blocking client's hold on the shared runtime, and the one way it waits for a future.
#[derive(Clone)]
pub(crate) struct Driver(Arc<Owned>);

impl Driver {
    /// The shared runtime, started when no client holds it; the error (the runtime's threads
    /// could not be started) is on one line.
    pub(crate) fn shared() -> Result<Self, String> {
        let mut shared = crate::oauth::lock(&SHARED);
        if let Some(owned) = shared.upgrade() {
            return Ok(Self(owned));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("marketplace-client")
            .enable_all()
            .build()
            .map_err(|e| format!("the HTTP client's runtime could not be started: {e}"))?;
        let owned = Arc::new(Owned(Some(runtime)));
        *shared = Arc::downgrade(&owned);
        Ok(Self(owned))
    }

    fn runtime(&self) -> &Runtime {
        self.0
            .0
            .as_ref()
            .expect("the runtime is taken only on drop")
    }

    /// Runs `future` to its end on the shared runtime and returns its output, from any
    /// thread (see the [module](self) for where it is polled). Should the thread a call on a
    /// current-thread runtime needs not start, the error is `no_thread` of a message saying
    /// so.
    pub(crate) fn wait<T: Send, E: Send>(
        &self,
        future: impl Future<Output = Result<T, E>> + Send,
        no_thread: impl FnOnce(String) -> E,
    ) -> Result<T, E> {
        match Handle::try_current().map(|h| h.runtime_flavor()) {
            Err(_) => self.runtime().block_on(future),
            // A task of a multi-thread runtime: `block_in_place` lets its worker go on with
            // the runtime's other tasks while this one waits.
            Ok(RuntimeFlavor::MultiThread) if tokio::task::try_id().is_some() => {
                tokio::task::block_in_place(|| self.runtime().block_on(future))
            }
            // Anywhere else inside a runtime's context (a current-thread runtime, a `block_on`,
            // a handle entered with `Handle::enter`, possibly inside another runtime's
            // `block_on` where `block_in_place` would panic although the handle says
            // "multi-thread"): a thread of its own.
            Ok(_) => on_thread_of_its_own(|| self.runtime().block_on(future))
                .unwrap_or_else(|message| Err(no_thread(message))),
        }
    }
}

/// Runs `work` on a scoped thread of its own while this one waits, with the caller's
/// `tracing` subscriber and current span (a subscriber set with `with_default` is the
/// thread's own). A panic of `work` is resumed here; should no thread start, the error says
/// so.
pub(crate) fn on_thread_of_its_own<T: Send>(work: impl FnOnce() -> T + Send) -> Result<T, String> {
    let dispatch = tracing::dispatcher::get_default(|d| d.clone());
    let span = tracing::Span::current();
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("marketplace-client-blocking".into())
            .spawn_scoped(scope, move || {
                tracing::dispatcher::with_default(&dispatch, || span.in_scope(work))
            });
        match handle {
            Ok(handle) => Ok(handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))),
            Err(e) => Err(format!(
                "no thread could be started for the blocking call inside a tokio runtime: {e}"
            )),
        }
    })
}
