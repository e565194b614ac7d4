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

use std::io::Read as _;
use std::time::{Duration, Instant};

use url::Url;
use zeroize::Zeroizing;

pub(crate) use crate::core::exchange::error_chain;
use crate::core::exchange::{Answer, Collector, Failure, Flow, Limits};
use crate::options::{HttpOptions, Proxy};

/// Whether a tokio runtime is current on this thread (a task, `block_on`, `spawn_blocking`).
fn in_runtime() -> bool {
    tokio::runtime::Handle::try_current().is_ok()
}

/// Runs `work` where reqwest's blocking client may run: here when no tokio runtime is current
/// on this thread, else on a scoped thread of its own while this one waits (the runtime's
/// thread is blocked for the call, as with any blocking call, but nothing panics), with the
/// caller's `tracing` subscriber and current span. A panic of
/// `work` is resumed here. When no thread can be started, the error is `no_thread` of a
/// message saying so.
pub(crate) fn off_runtime<T: Send, E: Send>(
    work: impl FnOnce() -> Result<T, E> + Send,
    no_thread: impl FnOnce(String) -> E,
) -> Result<T, E> {
    if !in_runtime() {
        return work();
    }
    // The caller's subscriber and span go along, so that the call's traces are the same as
    // on the caller's thread (a subscriber set with `with_default` is the thread's own).
    let dispatch = tracing::dispatcher::get_default(|d| d.clone());
    let span = tracing::Span::current();
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("marketplace-client-blocking".into())
            .spawn_scoped(scope, move || {
                tracing::dispatcher::with_default(&dispatch, || span.in_scope(work))
            });
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

/// A blocking client for requests to `base_url` that carry a credential, built as
/// `options` say (never following a redirect: the credential would follow it). Built off the
/// runtime ([`off_runtime`]); the error is on one line.
pub(crate) fn client(base_url: &Url, options: &HttpOptions) -> Result<Http, String> {
    let mut builder = reqwest::blocking::Client::builder()
        .connect_timeout(options.connect_timeout)
        .timeout(options.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(options.user_agent.clone());
    match options.proxy_for(base_url) {
        Proxy::Never => builder = builder.no_proxy(),
        Proxy::Url(url) => {
            let proxy = reqwest::Proxy::all(url).map_err(|_| {
                format!(
                    "the proxy {} is not a URL",
                    crate::oauth::redact::url_for_message(url)
                )
            })?;
            builder = builder.proxy(proxy);
        }
        Proxy::Environment => {}
    }
    for pem in &options.root_certificates {
        let certificate = reqwest::Certificate::from_pem(pem)
            .map_err(|e| format!("a root certificate is not PEM: {}", error_chain(&e)))?;
        builder = builder.add_root_certificate(certificate);
    }
    off_runtime(
        || builder.build().map(Http::new).map_err(|e| error_chain(&e)),
        |message| message,
    )
}

/// Sends `request`, bounded by `timeout` from connecting to the end of the answer.
pub(crate) fn send(
    http: &Http,
    request: http::Request<Vec<u8>>,
    timeout: Duration,
) -> Result<reqwest::blocking::Response, Failure> {
    let mut request = reqwest::blocking::Request::try_from(request)
        .map_err(|e| Failure::sending(false, false, error_chain(&e)))?;
    *request.timeout_mut() = Some(timeout);
    http.execute(request)
        .map_err(|e| Failure::sending(e.is_timeout(), e.is_connect(), error_chain(&e)))
}

/// Sends `request` and reads its answer within `limits`, all of it before `timeout` has
/// passed (a slow drip is cut there, whatever the per-read time-outs allow).
pub(crate) fn exchange(
    http: &Http,
    request: http::Request<Vec<u8>>,
    timeout: Duration,
    limits: Limits,
) -> Result<Answer, Failure> {
    // A time-out too long to add to the clock (Duration::MAX) means no deadline.
    let deadline = Instant::now().checked_add(timeout);
    let response = send(http, request, timeout)?;
    collect(response, limits, timeout, deadline)
}

/// Reads the answer `response` within `limits` and before `deadline` (`timeout` after the
/// call started): the one bounded read of the blocking front.
pub(crate) fn collect(
    mut response: reqwest::blocking::Response,
    limits: Limits,
    timeout: Duration,
    deadline: Option<Instant>,
) -> Result<Answer, Failure> {
    let status = response.status().as_u16();
    let length = response.content_length();
    let headers = std::mem::take(response.headers_mut());
    let mut collector = Collector::start(status, headers, length, limits)?;
    let past_deadline = || deadline.is_some_and(|d| Instant::now() >= d);
    let mut chunk = Zeroizing::new(vec![0u8; 64 * 1024]);
    loop {
        if past_deadline() {
            return collector.broken(true, timed_out(timeout));
        }
        match response.read(&mut chunk) {
            Ok(0) => return Ok(collector.finish()),
            Ok(n) => {
                if collector.push(&chunk[..n])? == Flow::Enough {
                    return Ok(collector.finish());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let timed_out = past_deadline() || io_is_timeout(&e);
                return collector.broken(timed_out, error_chain(&e));
            }
        }
    }
}

fn timed_out(timeout: Duration) -> String {
    format!(
        "the answer was not complete after {} ms",
        timeout.as_millis()
    )
}

/// Whether a read error is a time-out (reqwest wraps its own in an `io::Error`).
pub(crate) fn io_is_timeout(e: &std::io::Error) -> bool {
    if e.kind() == std::io::ErrorKind::TimedOut {
        return true;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|r| r as _);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<reqwest::Error>()
            && r.is_timeout()
        {
            return true;
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::TimedOut
        {
            return true;
        }
        source = s.source();
    }
    false
}
