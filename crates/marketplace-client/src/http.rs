//! What the OAuth and Taxonomy clients share about HTTP: one way to build a blocking client,
//! one place that keeps it off a tokio runtime's threads, one way to put a transport error on
//! a line.
//!
//! reqwest's blocking client runs its own runtime on a thread of its own, and panics when it
//! is built or waited on from a thread that runs a tokio runtime ("Cannot drop a runtime in a
//! context where blocking is not allowed"): a `#[tokio::main]` program or a server's handler
//! that asks for a token would die of it. So every call that builds, uses or drops one goes
//! through [`off_runtime`] (or [`Http`]'s drop): when a runtime is current on the calling
//! thread, the work runs on a thread of its own and the caller waits for it; otherwise it runs
//! where it is, at no cost.

use std::time::Duration;

use url::Url;

use crate::oauth::is_loopback;

/// Whether a tokio runtime is current on this thread (a task, `block_on`, `spawn_blocking`).
fn in_runtime() -> bool {
    tokio::runtime::Handle::try_current().is_ok()
}

/// Runs `work` where reqwest's blocking client may run: here when no tokio runtime is current
/// on this thread, else on a scoped thread of its own while this one waits (the runtime's
/// thread is blocked for the call, as with any blocking call, but nothing panics). A panic of
/// `work` is resumed here. When no thread can be started, the error is `no_thread` of a
/// message saying so.
pub(crate) fn off_runtime<T: Send, E: Send>(
    work: impl FnOnce() -> Result<T, E> + Send,
    no_thread: impl FnOnce(String) -> E,
) -> Result<T, E> {
    if !in_runtime() {
        return work();
    }
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("marketplace-client-blocking".into())
            .spawn_scoped(scope, work);
        match handle {
            Ok(handle) => match handle.join() {
                Ok(value) => value,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(e) => Err(no_thread(format!(
                "no thread could be started for the blocking call inside a tokio runtime: {e}"
            ))),
        }
    })
}

/// A blocking reqwest client that is dropped off the runtime: when the last reference goes
/// while a tokio runtime is current, it is handed to a thread of its own to be dropped there
/// (dropping it stops and joins reqwest's own runtime thread).
pub(crate) struct Http {
    client: reqwest::blocking::Client,
    /// Declared after `client`, so dropped after it: it holds the last reference.
    _last: LastReference,
}

impl Http {
    /// Wraps `client` (built by [`client`], or given by the caller).
    pub(crate) fn new(client: reqwest::blocking::Client) -> Self {
        Self {
            _last: LastReference(Some(client.clone())),
            client,
        }
    }
}

impl std::ops::Deref for Http {
    type Target = reqwest::blocking::Client;

    fn deref(&self) -> &reqwest::blocking::Client {
        &self.client
    }
}

/// A clone of the client, dropped last and, inside a runtime, on a thread of its own.
struct LastReference(Option<reqwest::blocking::Client>);

impl Drop for LastReference {
    fn drop(&mut self) {
        if let Some(client) = self.0.take()
            && in_runtime()
        {
            // Not waited for: the runtime's thread goes on at once. Should no thread start,
            // the client is dropped here, which blocks briefly but does not panic.
            let _ = std::thread::Builder::new()
                .name("marketplace-client-drop".into())
                .spawn(move || drop(client));
        }
    }
}

/// A blocking client for requests to `base_url` that carry a credential: it never follows a
/// redirect (the credential would follow it), bypasses proxies on loopback, and names itself.
/// Built off the runtime ([`off_runtime`]); the error is on one line.
pub(crate) fn client(
    base_url: &Url,
    connect_timeout: Duration,
    timeout: Duration,
) -> Result<Http, String> {
    let mut builder = reqwest::blocking::Client::builder()
        .connect_timeout(connect_timeout)
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("marketplace-toolkit/", env!("CARGO_PKG_VERSION")));
    if is_loopback(base_url) {
        builder = builder.no_proxy();
    }
    off_runtime(
        || builder.build().map(Http::new).map_err(|e| error_chain(&e)),
        |message| message,
    )
}

/// An error and its sources on one line, without repeating a source its parent already quotes.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
    }
    message
}
