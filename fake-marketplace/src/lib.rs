//! A fake of the marketplace's Open API over real HTTP/1.1 on loopback, for tests and demos.
//!
//! [`FakeMarketplace::start`] binds `127.0.0.1` on an ephemeral port and serves until the
//! handle is dropped. It implements the OAuth 2.0 token endpoint
//! (`POST /identity/v1/oauth2/token`, all three grants, with the service's error bodies) and
//! the consent page (`GET /oauth2/authorize`, which grants at once and redirects with a code
//! in eBay's shape, such as `v^1.1#i^1#p^3#r^1#I^3#f^0#t^Ul41XzA6…=`), records every request,
//! and can be told to fail. It reads queries and forms as eBay does, leniently, unless
//! [`FakeConfig::strict_encoding`] asks it to check a client's encoding.
//!
//! ```
//! use fake_marketplace::{FakeConfig, FakeMarketplace};
//! let fake = FakeMarketplace::new();
//! assert!(fake.base_url().starts_with("http://127.0.0.1:"));
//! assert!(fake.requests().is_empty());
//! ```
//!
//! # Adding routes (the extension point)
//!
//! A route is a method, a path pattern whose `{name}` segments capture a value, and a handler
//! `Fn(&Request, &FakeState) -> Response`. Routes added later win over earlier ones and over
//! the built-in OAuth routes, so a test can also replace a built-in. A handler protects itself
//! with [`FakeState::check_bearer`], which accepts only unexpired tokens the fake issued.
//!
//! ```
//! use fake_marketplace::{FakeConfig, FakeMarketplace, Response};
//! let fake = FakeMarketplace::new();
//! fake.route("GET", "/commerce/taxonomy/v1/category_tree/{id}", |req, state| {
//!     if let Err(denied) = state.check_bearer(req) {
//!         return denied; // 401 with the service's error body
//!     }
//!     let id = req.param("id").unwrap_or_default();
//!     Response::json(200, &serde_json::json!({ "categoryTreeId": id }))
//! });
//! ```
//!
//! Routes can also be set before start with [`FakeConfig::with_route`].
//!
//! # Faults
//!
//! [`FakeMarketplace::inject`] queues a [`FaultRule`]: a method and path (or any), how many
//! times, and a [`Fault`]: a status with a body (401, 500, an OAuth error body, a body that is
//! not JSON), 429 with `Retry-After`, a delay before the normal answer, a cut-off body
//! (`Content-Length` larger than the bytes sent, then close) or a close without an answer.
//! The faulty request is recorded like any other.
//!
//! ```
//! use fake_marketplace::{Fault, FakeConfig, FakeMarketplace, TOKEN_PATH};
//! let fake = FakeMarketplace::new();
//! fake.fail_next(TOKEN_PATH, Fault::TooManyRequests { retry_after_secs: 60 });
//! ```
//!
//! `README.md` (next to this crate's manifest) shows how a project's own tests start the fake,
//! as a binary or from this library, with trees of their own.
//!
//! # Taxonomy
//!
//! The taxonomy endpoints (see [`taxonomy`]) serve the committed snapshots
//! (`<repo>/snapshots/EBAY_*.json`) and the fake's own eBay Motors tree (tree 100, in
//! `defaults/`), or the trees of another directory ([`FakeConfig::with_trees`]), in the
//! getCategoryTree shape. Every answer is gzip-compressed when the request accepts it
//! ([`FakeMarketplace::answers`] shows what was sent), connections are kept alive, and the
//! query is read as eBay reads it. The tree is at eBay's documented path
//! `/commerce/taxonomy/v1/category_tree/N` (the query form `/commerce/taxonomy/v1/category_tree/get?category_tree_id=N` only when
//! [`FakeConfig::tree_routes`] says so), plus suggestions, subtrees, aspects, the default
//! tree id, the expired categories (getExpiredCategories), the aspects of every leaf as one
//! gzipped file (fetchItemAspects; by default a made-up set for EBAY_US and EBAY_MOTORS_US,
//! [`FakeConfig::expired_files`]) and parts compatibility (getCompatibilityProperties,
//! getCompatibilityPropertyValues; enabled for eBay Motors' vehicle parts only, as eBay
//! enables it). [`FakeMarketplace::set_tree`] and
//! [`FakeMarketplace::set_tree_body`] replace what a site serves.
//!
//! # Notifications
//!
//! The fake serves getPublicKey and getUser, and sends eBay's Marketplace Account Deletion
//! notifications, signed with a key of its own, to an endpoint under test (the challenge
//! included, retries and tampered ones too), and ORDER_CONFIRMATION to the endpoints
//! subscribed for a seller when a buyer completes checkout: see [`notify`].
//!
//! # Signatures
//!
//! The fake serves the Key Management API (createSigningKey, getSigningKey, getSigningKeys;
//! its `jwe` is a format of its own) and checks eBay's digital signatures on the Finances
//! API's getTransactions and getPayouts and on Fulfillment's issueRefund: see [`signatures`];
//! issueRefund itself, on the fake's orders: see [`refunds`].
//!
//! # Inventory
//!
//! The fake serves the Inventory API's calls a listing is published with (inventory items,
//! offers, publishOffer, the three bulk calls, inventory locations), per seller, checking as
//! eBay does from its trees and aspects: see `inventory.rs`.
//!
//! # Metadata
//!
//! The fake serves the Sell Metadata API's getItemConditionPolicies for every leaf of its
//! trees: made-up policies, marked `X-Fake-Marketplace: made-up`, which publishOffer checks an
//! inventory item's condition against (errorId 25021): see [`metadata`].
//!
//! # Call quotas
//!
//! The fake counts the calls it serves per API resource (for the application and per seller),
//! answers getRateLimits and getUserRateLimits from those counts, and answers eBay's 429 past
//! a quota a test sets ([`FakeMarketplace::set_rate_limit`]): see `analytics.rs`.
//!
//! # Time
//!
//! The fake's clock is the system clock plus an offset moved by
//! [`FakeMarketplace::advance_clock`], so a test can expire the tokens it issued without
//! sleeping.

pub mod account;
mod analytics;
pub mod fulfillments;
mod http;
mod inventory;
pub mod metadata;
pub mod notify;
mod oauth;
pub mod orders;
pub mod refunds;
pub mod signatures;
pub mod taxonomy;

/// The README's examples, compiled (and run, when they can) as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

pub use http::{
    Request, Response, base64_decode, encode_query, form_decode_strict, parse_form,
    parse_form_strict, parse_query, percent_encode, query_decode,
};
pub use notify::{
    AccountDeletionNotice, Delivery, DeliveryFault, FakeUser, NotificationSigner, SentNotification,
    Tamper,
};
pub use oauth::{AUTHORIZE_PATH, CONSENT_ACCEPTED_PATH, TOKEN_PATH};

/// A route handler.
pub type Handler = Arc<dyn Fn(&Request, &FakeState) -> Response + Send + Sync>;

/// A method, a path pattern and a handler.
#[derive(Clone)]
pub struct Route {
    method: String,
    segments: Vec<String>,
    handler: Handler,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Route({} /{})", self.method, self.segments.join("/"))
    }
}

impl Route {
    /// A route for `method` (`GET`, `POST`, …, or `*` for any) and `pattern`, a path whose
    /// segments are literal or `{name}` (captured, see [`Request::param`]).
    pub fn new(
        method: &str,
        pattern: &str,
        handler: impl Fn(&Request, &FakeState) -> Response + Send + Sync + 'static,
    ) -> Self {
        Self {
            method: method.to_ascii_uppercase(),
            segments: split_path(pattern),
            handler: Arc::new(handler),
        }
    }

    /// The captures when `path` matches the pattern.
    fn matches(&self, path: &str) -> Option<Vec<(String, String)>> {
        let parts = split_path(path);
        if parts.len() != self.segments.len() {
            return None;
        }
        let mut params = Vec::new();
        for (pattern, part) in self.segments.iter().zip(&parts) {
            if let Some(name) = pattern.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                let value = form_decode_strict(part.replace('+', "%2B").as_bytes())
                    .unwrap_or_else(|_| part.clone());
                params.push((name.to_owned(), value));
            } else if pattern != part {
                return None;
            }
        }
        Some(params)
    }
}

fn split_path(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether the consent page grants or refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsentBehavior {
    /// Redirect with `code` and `state` (and `expires_in`).
    Grant,
    /// Redirect with `error=access_denied` and `state`.
    Deny,
}

/// Which getCategoryTree path forms the fake answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TreeRoutes {
    /// Only eBay's documented `/category_tree/N` (the default). A query-form request is
    /// answered as eBay answers it: tree id `get` is not found (400, errorId 62004).
    #[default]
    Path,
    /// Only `/category_tree/get?category_tree_id=N`; `/category_tree/N` is a 404 without a
    /// body (a server that does not know the documented form).
    Query,
    /// Both forms.
    Both,
}

impl TreeRoutes {
    pub(crate) fn path(self) -> bool {
        matches!(self, TreeRoutes::Path | TreeRoutes::Both)
    }

    pub(crate) fn query(self) -> bool {
        matches!(self, TreeRoutes::Query | TreeRoutes::Both)
    }
}

/// How the fake behaves. Scopes may contain `{base_url}`, replaced by the fake's address.
#[derive(Debug, Clone)]
pub struct FakeConfig {
    /// The application id the token endpoint accepts.
    pub client_id: String,
    /// The certificate id it accepts. Both defaults keep to the alphabet of eBay's real ids
    /// and secrets (letters, digits and `-`); the token endpoint takes them as eBay documents,
    /// `Authorization: Basic base64(client_id:client_secret)`, nothing encoded inside.
    pub client_secret: String,
    /// Scopes an application token may have. The default holds the fake's own
    /// `{base_url}/oauth/api_scope` family and eBay's `https://api.ebay.com/oauth/api_scope`
    /// (which production and the sandbox both use), but not the sandbox-host scope
    /// `https://api.sandbox.ebay.com/oauth/api_scope`: asked for it, the fake answers
    /// `invalid_scope` as eBay does.
    pub app_scopes: Vec<String>,
    /// Scopes a user may grant.
    pub user_scopes: Vec<String>,
    /// Lifetime of access tokens (default 2 hours).
    pub access_token_ttl: Duration,
    /// Lifetime of refresh tokens (default 18 months).
    pub refresh_token_ttl: Duration,
    /// Lifetime of authorization codes (default 299 s).
    pub code_ttl: Duration,
    /// Issue a new refresh token on every refresh (the real service keeps the old one).
    pub rotate_refresh_tokens: bool,
    /// Send `expires_in` as a string (`"7200"`) instead of a number.
    pub expires_in_as_string: bool,
    /// What the consent page does.
    pub consent: ConsentBehavior,
    /// Where the consent page sends a redirect_uri that is a RuName (not a URL); RuNames not
    /// listed go to the fake's own [`CONSENT_ACCEPTED_PATH`].
    pub ru_names: Vec<(String, String)>,
    /// Routes present from the start.
    pub routes: Vec<Route>,
    /// Where the taxonomy endpoints read the trees: one file per marketplace, named after
    /// it (`EBAY_US.json`, `EBAY_FR.json`, …) in the snapshot format (what `snapshot refresh`
    /// writes), for any marketplace of the table; default: the repository's `snapshots/`.
    /// A marketplace with no file is answered as eBay answers an unknown tree (400, errorId
    /// 62004; getDefaultCategoryTreeId: 204). Another directory than the default is checked
    /// when the fake starts: [`FakeMarketplace::start`] fails naming a file that is not a valid
    /// tree of the marketplace it is named after.
    pub snapshots_dir: std::path::PathBuf,
    /// A second trees directory, for the marketplaces [`snapshots_dir`](Self::snapshots_dir)
    /// has no tree of. Default: the fake's own `defaults/` (eBay Motors, tree 100, a small
    /// tree partly made up for tests: see its `PROVENANCE.md`), so that the default fake
    /// answers getDefaultCategoryTreeId for `EBAY_MOTORS_US` and parts compatibility where
    /// eBay enables it. [`with_trees`](Self::with_trees) sets `None`.
    pub defaults_dir: Option<std::path::PathBuf>,
    /// Expired-category files (getExpiredCategories), in the format `snapshot refresh` writes
    /// beside a snapshot (`EBAY_US.expired.json`), each for the marketplace it names; the
    /// binary's `--expired FILE`. Default: the fake's own made-up sets for `EBAY_US` and
    /// `EBAY_MOTORS_US` (in `defaults/`); [`with_trees`](Self::with_trees) takes the ones
    /// beside its trees instead. A file given here is checked when the fake starts
    /// ([`FakeMarketplace::start`] fails naming it) against the tree the fake serves for its
    /// marketplace: same tree id, every expired id no category of it, every replacement a
    /// leaf. [`expired_categories`](Self::expired_categories) wins over a file for its site.
    pub expired_files: Vec<std::path::PathBuf>,
    /// A random delay in `[min, max]` before every full-tree answer (the real service takes 2
    /// to 5 s); `None` (the default) answers at once.
    pub tree_delay: Option<(Duration, Duration)>,
    /// The getCategoryTree path forms answered (default: eBay's documented path only).
    pub tree_routes: TreeRoutes,
    /// getExpiredCategories: per site, the expired leaf categories and their replacements
    /// (`(from, to)`), over what [`expired_files`](Self::expired_files) says for the site; a
    /// site with none is answered `204 No Content`. Also set with
    /// [`FakeMarketplace::set_expired_categories`].
    pub expired_categories: Vec<(marketplaces::Marketplace, Vec<(u32, u32)>)>,
    /// Print one line per request answered on standard error (the binary's `-v`): its method,
    /// its path (never the query, which may hold an authorization code), the status answered
    /// and, for the token endpoint, the `grant_type`; never a secret, code or token. Default:
    /// off.
    pub log_requests: bool,
    /// For tests of a client's own encoding (this repository's client tests turn it on):
    /// the consent page's query and the token endpoint's form are decoded strictly (anything
    /// but unreserved characters, `*`, `+` and `%XX` is a `400`: a `:` or `^` the client did
    /// not encode is caught), and authorization codes and refresh tokens also carry the
    /// characters clients tend to mangle (`%`, `+`, `/`, `:`). Default: off, as eBay reads a
    /// query or a form leniently (`%XX` and `+` decoded, every other byte itself, as the
    /// WHATWG form parser does) and issues codes and refresh tokens of `^`, `#`, letters,
    /// digits and a trailing `=` only, so that a client which sends them raw (eBay's own
    /// `ebay-oauth-nodejs-client`) works.
    pub strict_encoding: bool,
}

impl Default for FakeConfig {
    fn default() -> Self {
        Self {
            client_id: "FakeApp-PRD-0a1b2c3d4-5e6f7a8b".into(),
            client_secret: "PRD-fa4e0c1d2b3a-9f8e-4d7c-b6a5-0f1e".into(),
            app_scopes: vec![
                "{base_url}/oauth/api_scope".into(),
                "{base_url}/oauth/api_scope/buy.item.feed".into(),
                "{base_url}/oauth/api_scope/commerce.catalog.readonly".into(),
                // The Taxonomy API's description lists it beside api_scope.
                "{base_url}/oauth/api_scope/metadata.insights".into(),
                "https://api.ebay.com/oauth/api_scope".into(),
            ],
            // Every scope eBay documents for the APIs the fake serves (and the Inventory and
            // Account APIs an application asks for beside them).
            user_scopes: [
                "",
                "/sell.inventory",
                "/sell.inventory.readonly",
                "/sell.account",
                "/sell.account.readonly",
                // issueRefund (Fulfillment API).
                "/sell.fulfillment",
                "/sell.fulfillment.readonly",
                // getTransactions, getPayouts (Finances API).
                "/sell.finances",
                // getUser's scope (the Identity API), which the consent command asks for.
                "/commerce.identity.readonly",
                // The Notification API's subscriptions.
                "/commerce.notification.subscription",
                "/commerce.notification.subscription.readonly",
            ]
            .iter()
            .map(|suffix| format!("{{base_url}}/oauth/api_scope{suffix}"))
            .collect(),
            access_token_ttl: Duration::from_secs(7200),
            refresh_token_ttl: Duration::from_secs(47_304_000),
            code_ttl: Duration::from_secs(299),
            rotate_refresh_tokens: false,
            expires_in_as_string: false,
            consent: ConsentBehavior::Grant,
            ru_names: Vec::new(),
            routes: Vec::new(),
            snapshots_dir: taxonomy::default_snapshots_dir(),
            defaults_dir: Some(taxonomy::defaults_dir()),
            expired_files: taxonomy::default_expired_files(),
            tree_delay: None,
            tree_routes: TreeRoutes::default(),
            expired_categories: Vec::new(),
            log_requests: false,
            strict_encoding: false,
        }
    }
}

impl FakeConfig {
    /// Adds a route present from the start.
    pub fn with_route(
        mut self,
        method: &str,
        pattern: &str,
        handler: impl Fn(&Request, &FakeState) -> Response + Send + Sync + 'static,
    ) -> Self {
        self.routes.push(Route::new(method, pattern, handler));
        self
    }

    /// Serves the trees of `dir` (what the binary's `--trees DIR` does): one file per
    /// marketplace of the table, named as [`taxonomy::tree_file_names`] lists
    /// (`EBAY_FR.json`, …), in the snapshot format `snapshot refresh` writes, and the
    /// expired-category files beside them (`EBAY_FR.expired.json`). Sets
    /// [`snapshots_dir`](Self::snapshots_dir), [`expired_files`](Self::expired_files) and no
    /// [`defaults_dir`](Self::defaults_dir): only `dir` is served. [`FakeMarketplace::start`]
    /// then checks every file and fails naming the one that is not valid.
    ///
    /// ```
    /// use fake_marketplace::{FakeConfig, FakeMarketplace};
    /// let trees = concat!(env!("CARGO_MANIFEST_DIR"), "/trees");
    /// let fake = FakeMarketplace::start(FakeConfig::default().with_trees(trees))
    ///     .expect("the sample trees are valid");
    /// assert_eq!(fake.tree(marketplaces::Marketplace::Fr).meta.version, "7");
    /// ```
    pub fn with_trees(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.snapshots_dir = dir.into();
        self.defaults_dir = None;
        self.expired_files = taxonomy::expired_files_in(&self.snapshots_dir);
        self
    }
}

/// A way to fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Answer `status` with `body` (and `headers`) instead of the route.
    Status {
        /// Status code.
        status: u16,
        /// Body.
        body: String,
        /// Extra headers.
        headers: Vec<(String, String)>,
    },
    /// Answer an OAuth error body `{"error": …, "error_description": …}` with `status`.
    OAuthError {
        /// Status code (400 or 401 on the real service).
        status: u16,
        /// The `error` code.
        error: String,
        /// The `error_description`.
        description: String,
    },
    /// `429 Too Many Requests` with `Retry-After`.
    TooManyRequests {
        /// The `Retry-After` seconds.
        retry_after_secs: u64,
    },
    /// Wait, then answer normally.
    Delay(Duration),
    /// Send the head of the normal answer with a `Content-Length` larger than the body, send
    /// half the body, and close.
    CutOffBody,
    /// Close the connection without answering.
    Close,
    /// Answer `200` with a body of `total` bytes, sent `chunk` bytes at a time with `interval`
    /// between chunks: a huge answer (`interval` zero) or a slow-drip one. With
    /// `announce_length` the head has a `Content-Length`; without, the body runs until the
    /// connection closes (HTTP/1.1 allows it), so a client learns the size only by reading. The body starts like a token answer (`{"access_token":"AAAA…`) and is
    /// generated as it is sent, so a gigabyte costs the fake no memory. Sending stops when
    /// the client hangs up.
    Drip {
        /// Bytes announced and sent.
        total: u64,
        /// Bytes per write.
        chunk: usize,
        /// Pause between writes.
        interval: Duration,
        /// Send `Content-Length: total`.
        announce_length: bool,
    },
    /// Run the route (what it writes stays written), then close the connection without
    /// answering: a write whose answer was lost on the way back.
    AnswerDropped,
}

/// A fault and the requests it applies to.
#[derive(Debug, Clone)]
pub struct FaultRule {
    /// Only this method (any when `None`).
    pub method: Option<String>,
    /// Only this path (any when `None`).
    pub path: Option<String>,
    /// How many requests it applies to (`None`: all, until cleared).
    pub times: Option<usize>,
    /// What happens.
    pub fault: Fault,
}

/// What the fake answered to one request, as it went on the wire: the status, the headers it
/// sent (`Content-Encoding: gzip` when it compressed the body; `Content-Length` and
/// `Connection` are not listed) and the size of the body it sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    /// The request's method.
    pub method: String,
    /// The request's path (still percent-encoded, without the query).
    pub path: String,
    /// The status sent.
    pub status: u16,
    /// The headers sent.
    pub headers: Vec<(String, String)>,
    /// The bytes of the body sent (compressed, when it was).
    pub body_len: usize,
}

impl Answered {
    /// The first header called `name` (compared without case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// An access token the fake issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedToken {
    /// `Application Access Token` or `User Access Token`.
    pub token_type: String,
    /// Its scopes.
    pub scopes: Vec<String>,
    /// Its expiry on the fake's clock.
    pub expires_at: SystemTime,
    /// The seller (the fake user's `username`) whose consent a user token comes from: the
    /// fake's user when the consent page was visited ([`FakeMarketplace::set_user`]); the
    /// Inventory, Account and Fulfillment APIs answer that seller's data. `None` for an
    /// application token.
    pub user: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct CodeGrant {
    pub redirect_uri: String,
    pub scopes: Vec<String>,
    pub expires_at: SystemTime,
    pub used: bool,
    /// The fake's user when the consent page granted the code.
    pub user: String,
}

#[derive(Debug, Clone)]
pub(crate) struct RefreshGrant {
    pub scopes: Vec<String>,
    pub expires_at: SystemTime,
    pub revoked: bool,
    /// The seller the code was granted by.
    pub user: String,
}

#[derive(Default)]
pub(crate) struct Grants {
    pub access: HashMap<String, IssuedToken>,
    pub refresh: HashMap<String, RefreshGrant>,
    pub codes: HashMap<String, CodeGrant>,
}

/// The fake's state, handed to every route handler.
pub struct FakeState {
    config: FakeConfig,
    base_url: String,
    clock_offset: Mutex<Duration>,
    counter: AtomicU64,
    pub(crate) grants: Mutex<Grants>,
    requests: Mutex<Vec<Request>>,
    answers: Mutex<Vec<Answered>>,
    faults: Mutex<Vec<FaultRule>>,
    routes: RwLock<Vec<Route>>,
    pub(crate) taxonomy: taxonomy::TaxonomyState,
    pub(crate) notify: notify::NotifyState,
    pub(crate) signing: signatures::SigningState,
    pub(crate) inventory: inventory::InventoryState,
    pub(crate) metadata: metadata::MetadataState,
    pub(crate) account: account::AccountState,
    pub(crate) orders: orders::OrdersState,
    pub(crate) analytics: analytics::AnalyticsState,
    pub(crate) fulfillments: fulfillments::FulfillmentsState,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FakeState {
    /// The configuration, with `{base_url}` replaced in the scopes.
    pub fn config(&self) -> &FakeConfig {
        &self.config
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The fake's clock.
    pub fn now(&self) -> SystemTime {
        SystemTime::now() + *lock(&self.clock_offset)
    }

    /// A number unique within this fake (for ids and tokens).
    pub fn next_id(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Checks `Authorization: Bearer <token>`: the token must be one this fake issued and not
    /// expired. The scheme is matched without case (`bearer` too: RFC 7235 §2.1 makes auth
    /// schemes case-insensitive; eBay's own samples write `Bearer`). The error is the 401
    /// answer to send.
    pub fn check_bearer(&self, request: &Request) -> Result<IssuedToken, Response> {
        let token = request
            .header("Authorization")
            .and_then(|v| {
                let (scheme, token) = v.trim_start().split_once(' ')?;
                scheme.eq_ignore_ascii_case("Bearer").then_some(token)
            })
            .map(str::trim);
        let issued = token.and_then(|t| lock(&self.grants).access.get(t).cloned());
        match issued {
            Some(t) if self.now() < t.expires_at => Ok(t),
            _ => Err(Response::json(
                401,
                &serde_json::json!({"errors": [{
                    "errorId": 1001,
                    "domain": "OAuth",
                    "category": "REQUEST",
                    "message": "Invalid access token",
                    "longMessage": "Invalid access token. Check the value of the Authorization HTTP request header."
                }]}),
            )),
        }
    }

    /// [`check_bearer`](Self::check_bearer), then the token's scopes: one of them must be
    /// `…/oauth/api_scope{suffix}` (`"/sell.finances"`; the fake's `{base_url}` form or eBay's
    /// `https://api.ebay.com/…`). The error is the answer to send: 401 as `check_bearer`'s, or
    /// eBay's insufficient-scope answer (403, errorId 1100, "Access denied", "Insufficient
    /// permissions to fulfill the request.").
    pub fn check_scope(&self, request: &Request, suffix: &str) -> Result<IssuedToken, Response> {
        let token = self.check_bearer(request)?;
        let wanted = format!("/oauth/api_scope{suffix}");
        if token.scopes.iter().any(|s| s.ends_with(&wanted)) {
            return Ok(token);
        }
        Err(self.insufficient_scope())
    }

    /// eBay's insufficient-scope answer: 403, errorId 1100, "Access denied", "Insufficient
    /// permissions to fulfill the request.".
    pub fn insufficient_scope(&self) -> Response {
        Response::json(
            403,
            &serde_json::json!({"errors": [{
                "errorId": 1100,
                "domain": "ACCESS",
                "category": "REQUEST",
                "message": "Access denied",
                "longMessage": "Insufficient permissions to fulfill the request.",
            }]}),
        )
    }

    /// The seller key (`user:{username}`) of a user token: the seller whose consent it comes
    /// from ([`IssuedToken::user`]), else the fake's current user.
    pub(crate) fn seller_of(&self, token: &IssuedToken) -> String {
        match &token.user {
            Some(user) => format!("user:{user}"),
            None => format!("user:{}", lock(&self.notify.user).username),
        }
    }

    fn take_fault(&self, request: &Request) -> Option<Fault> {
        let mut faults = lock(&self.faults);
        let index = faults.iter().position(|r| {
            r.method
                .as_deref()
                .is_none_or(|m| m.eq_ignore_ascii_case(&request.method))
                && r.path.as_deref().is_none_or(|p| p == request.path)
        })?;
        let fault = faults[index].fault.clone();
        if let Some(times) = &mut faults[index].times {
            *times = times.saturating_sub(1);
            if *times == 0 {
                faults.remove(index);
            }
        }
        Some(fault)
    }

    fn route(&self, request: &mut Request) -> Response {
        let routes = self
            .routes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mut path_matched = false;
        for route in routes.iter().rev() {
            if let Some(params) = route.matches(&request.path) {
                path_matched = true;
                if route.method == "*" || route.method == request.method {
                    request.params = params;
                    return (route.handler)(request, self);
                }
            }
        }
        if path_matched {
            Response::json(405, &serde_json::json!({"error": "method not allowed"}))
        } else {
            Response::json(
                404,
                &serde_json::json!({"errors": [{"errorId": 2002, "message": "Resource not found"}]}),
            )
        }
    }
}

/// A running fake. Dropping it stops the server.
pub struct FakeMarketplace {
    state: Arc<FakeState>,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeMarketplace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeMarketplace")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl FakeMarketplace {
    /// Starts with the default configuration on `127.0.0.1` with an ephemeral port: what
    /// most tests want.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound (this is test infrastructure: a test cannot go on
    /// without its fake).
    // No `Default`: starting a server with a thread and a socket is not a default value.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self::start(FakeConfig::default()).expect("the fake marketplace binds a loopback port")
    }

    /// Starts on `127.0.0.1` with an ephemeral port (errors as [`start_on`](Self::start_on)).
    pub fn start(config: FakeConfig) -> io::Result<Self> {
        Self::start_on(0, config)
    }

    /// Starts on `127.0.0.1:port` (0: ephemeral).
    ///
    /// Fails when the port cannot be bound, or when [`FakeConfig::snapshots_dir`] is not the
    /// default and cannot be read or holds a file that is not a valid tree (the error names
    /// it).
    ///
    /// Installs ring as rustls's process-wide provider ([`install_crypto_provider`]), so that
    /// a test's own reqwest client can be built.
    pub fn start_on(port: u16, mut config: FakeConfig) -> io::Result<Self> {
        install_crypto_provider();
        if config.snapshots_dir != taxonomy::default_snapshots_dir() {
            taxonomy::check_trees_dir(&config.snapshots_dir)?;
        }
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let base_url = format!("http://{addr}");
        for scope in config
            .app_scopes
            .iter_mut()
            .chain(config.user_scopes.iter_mut())
        {
            *scope = scope.replace("{base_url}", &base_url);
        }
        let mut routes = oauth::routes();
        routes.append(&mut taxonomy::routes());
        routes.append(&mut notify::routes());
        routes.append(&mut signatures::routes());
        routes.append(&mut inventory::routes());
        routes.append(&mut metadata::routes());
        routes.append(&mut account::routes());
        routes.append(&mut orders::routes());
        routes.append(&mut analytics::routes());
        routes.append(&mut fulfillments::routes());
        routes.append(&mut refunds::routes());
        routes.append(&mut config.routes);
        let taxonomy = taxonomy::TaxonomyState::new(
            config.snapshots_dir.clone(),
            config.defaults_dir.clone(),
            config.tree_delay,
            config.tree_routes,
        );
        taxonomy.load_expired(&config.expired_files, &config.expired_categories)?;
        let notify = notify::NotifyState::new(&base_url);
        let state = Arc::new(FakeState {
            config,
            base_url,
            clock_offset: Mutex::new(Duration::ZERO),
            counter: AtomicU64::new(0),
            grants: Mutex::new(Grants::default()),
            requests: Mutex::new(Vec::new()),
            answers: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
            routes: RwLock::new(routes),
            taxonomy,
            notify,
            signing: signatures::SigningState::default(),
            inventory: inventory::InventoryState::default(),
            metadata: metadata::MetadataState::default(),
            account: account::AccountState::default(),
            orders: orders::OrdersState::default(),
            analytics: analytics::AnalyticsState::default(),
            fulfillments: fulfillments::FulfillmentsState::default(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let state = state.clone();
            let stop = stop.clone();
            std::thread::Builder::new()
                .name(format!("fake-marketplace-{}", addr.port()))
                .spawn(move || {
                    for stream in listener.incoming() {
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let Ok(stream) = stream else { continue };
                        let state = state.clone();
                        let stop = stop.clone();
                        let _ = std::thread::Builder::new()
                            .name("fake-marketplace-conn".into())
                            .spawn(move || serve(&state, stream, &stop));
                    }
                })?
        };
        Ok(Self {
            state,
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT` (no trailing slash): the fake's `base_url`.
    pub fn base_url(&self) -> String {
        self.state.base_url.clone()
    }

    /// The consent host: the same server.
    pub fn auth_url(&self) -> String {
        self.state.base_url.clone()
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The shared state (what handlers see).
    pub fn state(&self) -> &Arc<FakeState> {
        &self.state
    }

    /// The application id the fake accepts.
    pub fn client_id(&self) -> &str {
        &self.state.config.client_id
    }

    /// The certificate id the fake accepts.
    pub fn client_secret(&self) -> &str {
        &self.state.config.client_secret
    }

    /// A scope the fake knows, as a full URL: `{base_url}/oauth/api_scope{suffix}`.
    pub fn scope(&self, suffix: &str) -> String {
        format!("{}/oauth/api_scope{suffix}", self.state.base_url)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.state.requests).clone()
    }

    /// The requests to `path`.
    pub fn requests_to(&self, path: &str) -> Vec<Request> {
        lock(&self.state.requests)
            .iter()
            .filter(|r| r.path == path)
            .cloned()
            .collect()
    }

    /// The requests to the token endpoint.
    pub fn token_requests(&self) -> Vec<Request> {
        self.requests_to(TOKEN_PATH)
    }

    /// Forgets the recorded requests (and what was answered to them).
    pub fn clear_requests(&self) {
        lock(&self.state.requests).clear();
        lock(&self.state.answers).clear();
    }

    /// What the fake answered so far, in order (a request that a fault closed or dripped has
    /// no entry).
    pub fn answers(&self) -> Vec<Answered> {
        lock(&self.state.answers).clone()
    }

    /// What the fake answered to the requests to `path`.
    pub fn answers_to(&self, path: &str) -> Vec<Answered> {
        lock(&self.state.answers)
            .iter()
            .filter(|a| a.path == path)
            .cloned()
            .collect()
    }

    /// Adds a route (see the crate docs); it wins over the routes added before it.
    pub fn route(
        &self,
        method: &str,
        pattern: &str,
        handler: impl Fn(&Request, &FakeState) -> Response + Send + Sync + 'static,
    ) {
        self.add_route(Route::new(method, pattern, handler));
    }

    /// The method and path pattern of every route the fake answers (`/a/{name}/b`, a
    /// captured segment in braces), the ones added by tests included.
    pub fn route_patterns(&self) -> Vec<(String, String)> {
        self.state
            .routes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|r| (r.method.clone(), format!("/{}", r.segments.join("/"))))
            .collect()
    }

    /// Adds a route value.
    pub fn add_route(&self, route: Route) {
        self.state
            .routes
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(route);
    }

    /// Queues a fault.
    pub fn inject(&self, rule: FaultRule) {
        lock(&self.state.faults).push(rule);
    }

    /// The next request to `path` (any method) fails with `fault`.
    pub fn fail_next(&self, path: &str, fault: Fault) {
        self.fail_times(path, fault, 1);
    }

    /// The next `times` requests to `path` fail with `fault`.
    pub fn fail_times(&self, path: &str, fault: Fault, times: usize) {
        self.inject(FaultRule {
            method: None,
            path: Some(path.to_owned()),
            times: Some(times),
            fault,
        });
    }

    /// Removes every queued fault.
    pub fn clear_faults(&self) {
        lock(&self.state.faults).clear();
    }

    /// Moves the fake's clock forward (tokens it issued expire without sleeping).
    pub fn advance_clock(&self, by: Duration) {
        *lock(&self.state.clock_offset) += by;
    }

    /// The fake's clock.
    pub fn now(&self) -> SystemTime {
        self.state.now()
    }

    /// The access token, if the fake issued it.
    pub fn issued_token(&self, token: &str) -> Option<IssuedToken> {
        lock(&self.state.grants).access.get(token).cloned()
    }

    /// How many access tokens the fake has issued.
    pub fn issued_token_count(&self) -> usize {
        lock(&self.state.grants).access.len()
    }

    /// The refresh tokens issued and not revoked.
    pub fn live_refresh_tokens(&self) -> Vec<String> {
        lock(&self.state.grants)
            .refresh
            .iter()
            .filter(|(_, g)| !g.revoked)
            .map(|(t, _)| t.clone())
            .collect()
    }

    /// Registers a signing key's public half (`public_key_pem`, a PEM `PUBLIC KEY`, Ed25519 or
    /// RSA), so that requests signed with its private key and sent with `jwe` as
    /// `x-ebay-signature-key` verify (see [`signatures`]); with `jwe` `None` the fake makes a
    /// JWE of its own. Returns the JWE. For a key the test holds, such as eBay's sample keys;
    /// createSigningKey issues new ones.
    ///
    /// # Panics
    ///
    /// When `public_key_pem` is not an Ed25519 or RSA public key (a test's own mistake).
    pub fn register_signing_key(&self, public_key_pem: &str, jwe: Option<&str>) -> String {
        self.state
            .register_signing_key(public_key_pem, jwe)
            .unwrap_or_else(|e| panic!("register_signing_key: {e}"))
    }

    /// Revokes every refresh token (as when a user withdraws consent).
    pub fn revoke_refresh_tokens(&self) {
        for grant in lock(&self.state.grants).refresh.values_mut() {
            grant.revoked = true;
        }
    }
}

impl Drop for FakeMarketplace {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(500));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Serves the requests of one connection, one after the other, while the client keeps it
/// alive (HTTP/1.1 without `Connection: close`) and the fake runs; a fault that breaks the
/// connection ends it.
fn serve(state: &FakeState, stream: TcpStream, stop: &AtomicBool) {
    // An idle kept-alive connection is closed after this long (reqwest's pool keeps idle
    // connections 90 s; a closed one is opened again).
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    // Every answer leaves at once (with the one write of `write_response`): no wait for the
    // client's delayed ACK on a kept-alive connection.
    let _ = stream.set_nodelay(true);
    let mut reader = std::io::BufReader::new(&stream);
    loop {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let request = match http::read_request(&mut reader) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                break;
            }
            Err(_) => {
                let _ = http::write_response(
                    &stream,
                    &Response::text(400, "malformed HTTP request"),
                    false,
                );
                break;
            }
        };
        if stop.load(Ordering::SeqCst) {
            break;
        }
        if !serve_one(state, &stream, request) {
            break;
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// Answers one request; false when the connection must be closed afterwards.
fn serve_one(state: &FakeState, stream: &TcpStream, mut request: Request) -> bool {
    lock(&state.requests).push(request.clone());
    let keep_alive = request.keep_alive();
    let gzip = request.accepts_gzip();
    let fault = state.take_fault(&request);
    let mut close = !keep_alive;
    let response = match fault {
        None => match analytics::meter(state, &request) {
            Some(refused) => finish(gzip, refused),
            None => finish(gzip, state.route(&mut request)),
        },
        Some(Fault::Status {
            status,
            body,
            headers,
        }) => {
            let mut r = Response::new(status, body);
            r.headers = headers;
            finish(gzip, r)
        }
        Some(Fault::OAuthError {
            status,
            error,
            description,
        }) => finish(
            gzip,
            Response::json(
                status,
                &serde_json::json!({"error": error, "error_description": description}),
            ),
        ),
        Some(Fault::TooManyRequests { retry_after_secs }) => finish(
            gzip,
            Response::json(
                429,
                &serde_json::json!({"errors": [{"errorId": 2001, "message": "Too many requests. The request limit has been reached for the resource."}]}),
            )
            .with_header("Retry-After", retry_after_secs.to_string()),
        ),
        Some(Fault::Delay(d)) => {
            std::thread::sleep(d);
            finish(gzip, state.route(&mut request))
        }
        Some(Fault::CutOffBody) => {
            let mut r = finish(gzip, state.route(&mut request));
            let full = r.body.len().max(2);
            r.body.truncate(full / 2);
            r.declared_length = Some(full + 64);
            close = true;
            r
        }
        Some(Fault::Close) => return false,
        Some(Fault::AnswerDropped) => {
            let _ = state.route(&mut request);
            return false;
        }
        Some(Fault::Drip {
            total,
            chunk,
            interval,
            announce_length,
        }) => {
            let _ = http::write_drip(stream, total, chunk, interval, announce_length);
            return false;
        }
    };
    if state.config.log_requests {
        eprintln!("{}", request_log_line(&request, response.status));
    }
    lock(&state.answers).push(Answered {
        method: request.method.clone(),
        path: request.path.clone(),
        status: response.status,
        headers: response.headers.clone(),
        body_len: response.body.len(),
    });
    http::write_response(stream, &response, !close).is_ok() && !close
}

/// The line [`FakeConfig::log_requests`] prints for `request`, answered `status`: method,
/// path (escaped), status, and a token request's `grant_type` when it is one of the grants
/// (anything else: `other`). Built from what holds no secret: no query, header or other field.
fn request_log_line(request: &Request, status: u16) -> String {
    let mut line = format!(
        "{} {} {status}",
        request.method.escape_debug(),
        request.path.escape_debug()
    );
    if request.path == TOKEN_PATH {
        let grant = request
            .form()
            .ok()
            .and_then(|form| form.into_iter().find(|(k, _)| k == "grant_type"))
            .map(|(_, v)| v);
        let named = match grant.as_deref() {
            Some(g @ ("client_credentials" | "authorization_code" | "refresh_token")) => g,
            Some(_) => "other",
            None => "none",
        };
        line.push_str(" grant_type=");
        line.push_str(named);
    }
    line
}

/// Compresses the answer with gzip when the request accepts it (every operation, as eBay
/// does) and it has a body that is not already compressed: not one with a `Content-Encoding`
/// of its own, and not a file sent as `application/octet-stream` (fetchItemAspects' gzip
/// file is the body itself).
fn finish(gzip: bool, mut response: Response) -> Response {
    let has =
        |r: &Response, name: &str| r.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let octet_stream = response.headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("Content-Type")
            && v.trim()
                .to_ascii_lowercase()
                .starts_with("application/octet-stream")
    });
    if !response.body.is_empty() && gzip && !has(&response, "Content-Encoding") && !octet_stream {
        response.body = http::gzip(&response.body);
        response = response
            .with_header("Content-Encoding", "gzip")
            .with_header("Vary", "Accept-Encoding");
    }
    response
}

/// Plays the seller's browser on the consent page at `url` (a consent request's URL on
/// a fake): the seller agrees, and the page's redirect is returned (its `Location`: the
/// application's redirect URI with the code and the state), as eBay's consent page sends
/// the browser back. Raw HTTP over loopback, so that it runs anywhere, a runtime's blocking
/// task included. An error when `url` is not an `http://` URL or the page does not
/// redirect.
pub fn consent_redirect(url: &str) -> io::Result<String> {
    use std::io::{Read as _, Write as _};
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| invalid(format!("not an http:// URL: {url}")))?;
    let (host, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(host)?;
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    answer
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("location")
                .then(|| v.trim().to_owned())
        })
        .ok_or_else(|| invalid(format!("the consent page did not redirect: {answer}")))
}

/// Installs ring as rustls's process-wide crypto provider, if none is installed yet: what a
/// test's or a bench's own reqwest client needs to be built (the workspace builds reqwest with
/// `rustls-no-provider`; marketplace-client gives its clients ring itself, and no library crate
/// installs a process-wide provider). Test code only; [`FakeMarketplace::start_on`] calls it.
pub fn install_crypto_provider() {
    // An error only says a provider is installed already (another test's, or this one).
    let _ = rustls::crypto::ring::default_provider().install_default();
}
