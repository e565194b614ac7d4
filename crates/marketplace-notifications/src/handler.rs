//! The endpoint, independent of the web framework: (method, query, headers, body) →
//! (status, headers, body).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::keys::{KeyFetchError, PublicKeyCache};
use crate::{Notification, SignatureHeader, VerificationToken, VerifyError, challenge_response};

/// The largest notification body read (eBay's are under 1 KiB).
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// How long a `notificationId` is remembered (eBay retries a notification for about a day).
pub const DEDUP_RETENTION: Duration = Duration::from_secs(24 * 3600);
/// How many `notificationId`s are remembered at most in memory (the oldest go first).
pub const DEDUP_CAPACITY: usize = 100_000;

/// An answer to send back: status, headers, body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The headers (`Content-Type` when there is a body).
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl EndpointAnswer {
    fn json(status: u16, body: String) -> Self {
        Self {
            status,
            headers: vec![("Content-Type", "application/json".to_owned())],
            body: body.into_bytes(),
        }
    }

    pub(crate) fn error(status: u16, message: impl std::fmt::Display) -> Self {
        Self::json(
            status,
            serde_json::json!({ "error": message.to_string() }).to_string(),
        )
    }

    fn no_content() -> Self {
        Self {
            status: 204,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The body as text (lossy).
    pub fn body_str(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Why the endpoint URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the notification endpoint {endpoint:?} is not an absolute http(s) URL without a fragment or query; it must be exactly the URL registered with eBay (the challenge hashes it)"
)]
pub struct EndpointError {
    /// The URL given.
    pub endpoint: String,
}

/// What the application's callback returns when it could not handle a notification: the
/// endpoint answers 500, so eBay sends the notification again later.
pub type CallbackError = Box<dyn std::error::Error + Send + Sync>;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type Callback = Arc<dyn Fn(Notification) -> BoxFuture<Result<(), CallbackError>> + Send + Sync>;

/// What the endpoint does before the application's callback (the toolkit's own part of an
/// account deletion, such as removing the seller's tokens).
pub(crate) type Hook =
    Arc<dyn Fn(Notification) -> BoxFuture<Result<(), CallbackError>> + Send + Sync>;

pub(crate) enum Seen {
    InFlight,
    Done,
}

#[derive(Default)]
pub(crate) struct Dedup {
    ids: HashMap<String, Seen>,
    order: VecDeque<(Instant, String)>,
}

/// Where the handled `notificationId`s are remembered: in this process, or in the
/// PostgreSQL token store (for the whole fleet).
pub(crate) enum Log {
    Memory(Arc<Mutex<Dedup>>),
    #[cfg(feature = "postgres")]
    Postgres(marketplace_client_postgres::notifications::NotificationLog),
}

/// What [`Log::begin`] decided.
enum Begin {
    Handle(Ticket),
    Handled,
    InFlight,
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Unavailable(String),
}

/// The claim to end with [`Log::end`].
enum Ticket {
    Memory(MemoryClaim),
    #[cfg(feature = "postgres")]
    Postgres(marketplace_client_postgres::notifications::ClaimHolder),
}

/// A `notificationId` claimed in memory. Dropped without [`Log::end`] (the handling's task
/// dropped, the runtime shutting down, a panic), it releases the claim, so that eBay's next
/// delivery is handled.
struct MemoryClaim {
    seen: Arc<Mutex<Dedup>>,
    id: String,
    ended: bool,
}

impl MemoryClaim {
    fn end(mut self, handled: bool) {
        self.ended = true;
        let mut seen = lock(&self.seen);
        if handled {
            seen.ids.insert(self.id.clone(), Seen::Done);
            seen.order.push_back((Instant::now(), self.id.clone()));
        } else {
            seen.ids.remove(&self.id);
        }
    }
}

impl Drop for MemoryClaim {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let mut seen = lock(&self.seen);
        if matches!(seen.ids.get(&self.id), Some(Seen::InFlight)) {
            seen.ids.remove(&self.id);
        }
    }
}

impl Log {
    async fn begin(&self, id: &str) -> Begin {
        match self {
            Log::Memory(shared) => {
                let mut seen = lock(shared);
                seen.prune(Instant::now());
                match seen.ids.get(id) {
                    Some(Seen::Done) => Begin::Handled,
                    Some(Seen::InFlight) => Begin::InFlight,
                    None => {
                        seen.ids.insert(id.to_owned(), Seen::InFlight);
                        Begin::Handle(Ticket::Memory(MemoryClaim {
                            seen: shared.clone(),
                            id: id.to_owned(),
                            ended: false,
                        }))
                    }
                }
            }
            #[cfg(feature = "postgres")]
            Log::Postgres(log) => {
                use marketplace_client_postgres::notifications::Claim;
                match log.claim(id).await {
                    Ok(Claim::Mine(holder)) => Begin::Handle(Ticket::Postgres(holder)),
                    Ok(Claim::Handled) => Begin::Handled,
                    Ok(Claim::InFlight) => Begin::InFlight,
                    Err(e) => Begin::Unavailable(e.to_string()),
                }
            }
        }
    }

    /// Ends the claim of `ticket`: remembered as handled when `handled`, else forgotten (so
    /// that eBay's next delivery is handled).
    async fn end(&self, id: &str, ticket: Ticket, handled: bool) {
        match (self, ticket) {
            // The memory claim knows its id.
            (Log::Memory(_), Ticket::Memory(claim)) => {
                let _ = id;
                claim.end(handled)
            }
            #[cfg(feature = "postgres")]
            (Log::Postgres(log), Ticket::Postgres(holder)) => {
                let ended = if handled {
                    log.handled(id, &holder).await
                } else {
                    log.release(id, &holder).await
                };
                if let Err(e) = ended {
                    // Handled all the same; a retry meanwhile may be handled again.
                    tracing::warn!(target: "marketplace_notifications", notification_id = %id, error = %e, "could not record the notification's outcome");
                }
            }
            #[cfg(feature = "postgres")]
            _ => {}
        }
    }
}

impl Dedup {
    fn prune(&mut self, now: Instant) {
        while let Some((at, _)) = self.order.front() {
            if now.duration_since(*at) < DEDUP_RETENTION && self.order.len() < DEDUP_CAPACITY {
                break;
            }
            if let Some((_, id)) = self.order.pop_front() {
                self.ids.remove(&id);
            }
        }
    }
}

/// eBay's notification endpoint for one application: answers the challenge, verifies each
/// notification's signature with the key of its `kid` ([`PublicKeyCache`]), decodes it, hands
/// it to the application's callback once per `notificationId` (remembered a day, in memory,
/// or in the PostgreSQL token store with the `postgres` feature), and says what to answer.
///
/// | request | answer |
/// |---|---|
/// | `GET ?challenge_code=…` | 200, `{"challengeResponse": "<hex>"}` |
/// | `POST`, signature verified, handled (or already handled) | 204 |
/// | `POST`, signature does not verify, or an unknown `kid` | 412 |
/// | no or malformed `X-EBAY-SIGNATURE`, unknown alg or digest, a body that is not a notification | 400 |
/// | a body over [`MAX_BODY_BYTES`] | 413 |
/// | the same `notificationId` while its first delivery is being handled | 409 |
/// | getPublicKey unreachable (or not asked: too many unknown `kid`s lately), or the PostgreSQL store (feature `postgres`, `with_postgres_store`) | 503 |
/// | the callback failed | 500 |
/// | another method | 405 |
///
/// Error answers are `{"error": "…"}`, naming what was wrong, never a token or a user's data.
///
/// A claimed notification is handled as a task of its own on the tokio runtime: when eBay's
/// connection drops meanwhile, the handling still runs to its end and is recorded (handled,
/// or released for eBay's next delivery), rather than leaving the `notificationId` claimed.
pub struct NotificationEndpoint {
    endpoint: String,
    token: VerificationToken,
    keys: Arc<PublicKeyCache>,
    callback: Option<Callback>,
    hooks: Vec<Hook>,
    pub(crate) log: Arc<Log>,
}

impl std::fmt::Debug for NotificationEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotificationEndpoint")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The toolkit's hooks, then the application's callback.
async fn dispatch(
    hooks: &[Hook],
    callback: Option<&Callback>,
    notification: Notification,
) -> Result<(), CallbackError> {
    for hook in hooks {
        hook(notification.clone()).await?;
    }
    if let Some(callback) = callback {
        callback(notification).await?;
    }
    Ok(())
}

/// The first query parameter called `name`, form-decoded (`+` is a space, `%XX` a byte).
fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (form_decode(key)? == name).then(|| form_decode(value))?
    })
}

fn form_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

impl NotificationEndpoint {
    /// The endpoint registered with eBay as `endpoint` (exactly that URL: the challenge
    /// hashes it; a `&str` or a `String`), with its verification token, fetching keys through
    /// `keys`.
    pub fn new(
        endpoint: impl Into<String>,
        token: VerificationToken,
        keys: Arc<PublicKeyCache>,
    ) -> Result<Self, EndpointError> {
        let endpoint: String = endpoint.into();
        let ok = (endpoint.starts_with("https://") || endpoint.starts_with("http://"))
            && endpoint.len() > "https://".len()
            && !endpoint.contains(['#', '?', ' ', '\t', '\r', '\n']);
        if !ok {
            return Err(EndpointError { endpoint });
        }
        Ok(Self {
            endpoint,
            token,
            keys,
            callback: None,
            hooks: Vec::new(),
            log: Arc::new(Log::Memory(Arc::default())),
        })
    }

    /// The application's own handling of a verified notification (deleting the user's data
    /// it keeps, for an account deletion), called once per `notificationId`. An error makes
    /// the endpoint answer 500, so eBay sends the notification again.
    pub fn on_notification<F, Fut, E>(mut self, callback: F) -> Self
    where
        F: Fn(Notification) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<CallbackError> + 'static,
    {
        let callback = Arc::new(callback);
        self.callback = Some(Arc::new(move |n| {
            let fut = callback(n);
            Box::pin(async move { fut.await.map_err(Into::into) })
        }));
        self
    }

    pub(crate) fn with_hook(mut self, hook: Hook) -> Self {
        self.hooks.push(hook);
        self
    }

    /// The endpoint URL (as registered with eBay).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The key cache.
    pub fn keys(&self) -> &Arc<PublicKeyCache> {
        &self.keys
    }

    /// Answers one request: `method` (`GET`, `POST`…), `query` (the raw query string without
    /// `?`, if any), `headers` (name, value; names compared without case), `body` as received.
    pub async fn handle(
        &self,
        method: &str,
        query: Option<&str>,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> EndpointAnswer {
        match method.to_ascii_uppercase().as_str() {
            "GET" => self.challenge(query),
            "POST" => {
                let signature = headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("X-EBAY-SIGNATURE"))
                    .map(|(_, v)| *v);
                self.notification(signature, body).await
            }
            _ => {
                let mut answer = EndpointAnswer::error(
                    405,
                    "eBay's notification endpoint answers GET (the challenge) and POST (notifications)",
                );
                answer.headers.push(("Allow", "GET, POST".to_owned()));
                answer
            }
        }
    }

    fn challenge(&self, query: Option<&str>) -> EndpointAnswer {
        let Some(code) = query.and_then(|q| query_param(q, "challenge_code")) else {
            return EndpointAnswer::error(
                400,
                "GET without a challenge_code: eBay checks the endpoint with GET ?challenge_code=…",
            );
        };
        if code.is_empty() || code.len() > 1024 {
            return EndpointAnswer::error(400, "challenge_code is empty or longer than 1024 bytes");
        }
        tracing::info!(target: "marketplace_notifications", "challenge answered");
        EndpointAnswer::json(
            200,
            challenge_response(&code, &self.token, &self.endpoint).to_json(),
        )
    }

    async fn notification(&self, signature: Option<&str>, body: &[u8]) -> EndpointAnswer {
        if body.len() > MAX_BODY_BYTES {
            return EndpointAnswer::error(
                413,
                format!(
                    "the notification is {} bytes, more than the {MAX_BODY_BYTES} read",
                    body.len()
                ),
            );
        }
        let header = match SignatureHeader::parse(signature.unwrap_or("")) {
            Ok(header) => header,
            Err(e) => return self.refused(&e),
        };
        let key = match self.keys.get(header.kid()).await {
            Ok(key) => key,
            Err(e @ KeyFetchError::UnknownKid { .. }) | Err(e @ KeyFetchError::BadKey { .. }) => {
                tracing::warn!(target: "marketplace_notifications", error = %e, "notification refused");
                return EndpointAnswer::error(412, e);
            }
            Err(e) => {
                tracing::warn!(target: "marketplace_notifications", error = %e, "public key unavailable");
                let mut answer = EndpointAnswer::error(503, e);
                answer.headers.push(("Retry-After", "60".to_owned()));
                return answer;
            }
        };
        if let Err(e) = header.verify(body, &key) {
            return self.refused(&e);
        }
        let notification = match Notification::from_json(body) {
            Ok(n) => n,
            Err(e) => return EndpointAnswer::error(400, e),
        };
        let id = notification.notification_id().to_owned();
        let ticket = match self.log.begin(&id).await {
            Begin::Handle(ticket) => ticket,
            Begin::Handled => {
                tracing::info!(target: "marketplace_notifications", notification_id = %id, "notification already handled");
                return EndpointAnswer::no_content();
            }
            Begin::InFlight => {
                return EndpointAnswer::error(
                    409,
                    "this notificationId is being handled; send it again later",
                );
            }
            Begin::Unavailable(reason) => {
                tracing::warn!(target: "marketplace_notifications", notification_id = %id, error = %reason, "the notification log is unavailable");
                let mut answer = EndpointAnswer::error(
                    503,
                    "the record of handled notifications cannot be reached; send it again later",
                );
                answer.headers.push(("Retry-After", "60".to_owned()));
                return answer;
            }
        };
        let topic = notification.topic().to_owned();
        // The handling runs to its end, and its claim is ended, even when eBay's connection
        // drops meanwhile (the web framework then drops this future): as a task of its own.
        let (hooks, callback, log, claimed) = (
            self.hooks.clone(),
            self.callback.clone(),
            self.log.clone(),
            id.clone(),
        );
        let handling = async move {
            let outcome = dispatch(&hooks, callback.as_ref(), notification).await;
            log.end(&claimed, ticket, outcome.is_ok()).await;
            outcome
        };
        let outcome = match tokio::runtime::Handle::try_current() {
            Ok(runtime) => runtime.spawn(handling).await.unwrap_or_else(|e| {
                // A panic: the claim was released as the task unwound.
                Err(CallbackError::from(format!(
                    "the notification's handling did not end: {e}"
                )))
            }),
            Err(_) => handling.await,
        };
        match outcome {
            Ok(()) => {
                tracing::info!(target: "marketplace_notifications", notification_id = %id, topic = %topic, "notification handled");
                EndpointAnswer::no_content()
            }
            Err(e) => {
                tracing::error!(target: "marketplace_notifications", notification_id = %id, topic = %topic, error = %e, "notification not handled");
                EndpointAnswer::error(
                    500,
                    "the application could not handle the notification; send it again later",
                )
            }
        }
    }

    fn refused(&self, error: &VerifyError) -> EndpointAnswer {
        tracing::warn!(target: "marketplace_notifications", error = %error, "notification refused");
        let status = if error.is_malformed() { 400 } else { 412 };
        EndpointAnswer::error(status, error)
    }
}

/// The log line of an account deletion handled by the token stores' hooks: the accounts
/// whose tokens were removed (the application's own names for its sellers, not eBay's user
/// data), or, when none matched, a warning: a seller who consented through a flow that did not
/// record their eBay user (getUser, `record_ebay_user`, `AccountUsers::record`) cannot be
/// found, and their tokens stay.
pub(crate) fn log_deletion(notification_id: &str, accounts: &[impl AsRef<str>]) {
    if accounts.is_empty() {
        tracing::warn!(
            target: "marketplace_notifications",
            notification_id,
            "account deletion matched no account: nothing removed (a deletion for a user who \
             never consented to this application is normal; a seller whose consent flow did \
             not record their eBay user with getUser cannot be found, and their tokens stay)"
        );
        return;
    }
    let names: Vec<&str> = accounts.iter().map(AsRef::as_ref).collect();
    tracing::info!(
        target: "marketplace_notifications",
        notification_id,
        accounts = %names.join(", "),
        "account deletion: the tokens of these accounts were removed"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_memory_claim_dropped_without_an_end_is_released() {
        let log = Log::Memory(Arc::default());
        let Begin::Handle(ticket) = log.begin("id-1").await else {
            panic!("the first delivery is handled");
        };
        assert!(matches!(log.begin("id-1").await, Begin::InFlight));
        drop(ticket);
        let Begin::Handle(ticket) = log.begin("id-1").await else {
            panic!("a dropped claim is released");
        };
        log.end("id-1", ticket, true).await;
        assert!(matches!(log.begin("id-1").await, Begin::Handled));
    }

    #[test]
    fn the_challenge_code_is_form_decoded() {
        assert_eq!(
            query_param("a=1&challenge_code=x%2By+z", "challenge_code").as_deref(),
            Some("x+y z")
        );
        assert_eq!(
            query_param("challenge_code", "challenge_code").as_deref(),
            Some("")
        );
        assert_eq!(query_param("challenge_code=%zz", "challenge_code"), None);
        assert_eq!(query_param("challenge_code=%e9", "challenge_code"), None);
        assert_eq!(query_param("other=1", "challenge_code"), None);
    }
}
