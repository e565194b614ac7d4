//! What the clients tell `tracing` (issue 13 §4): a capturing subscriber at TRACE over the
//! whole flow against the fake (application token, consent exchange, refresh, a 401 then a
//! retry, a 403 whose message echoes the token, a 429), then: no secret anywhere in what was
//! captured, every `http` span with its fields, and the token events. The leak detector is
//! one function ([`leaks`]), shown to catch a token that is logged; the `snapshot` command
//! shows the spans with `-v`. A plain `fmt` subscriber (no span events) prints one line per
//! answer (issue 25 §2), and a token read from a shared cache (a real PostgreSQL) is told
//! apart from one requested.

use crate::common;
use crate::oauth_support;
use crate::pg;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use fake_marketplace::{
    FakeMarketplace, Fault, Response, TOKEN_PATH, percent_encode,
    taxonomy::{DEFAULT_TREE_ID_PATH, tree_path},
};
use marketplace_client::oauth::{
    AccessTokenSource, ApplicationTokenProvider, MemoryStore, ScopeSet, UserTokenProvider,
};
use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient};
use marketplace_client::test_util::ManualClock;
use marketplace_client::test_util::RecordingSleeper;
use marketplaces::Marketplace;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

// ---------------------------------------------------------------------------------------
// The capturing subscriber

/// A span or an event's fields, by name, as text.
type Fields = BTreeMap<String, String>;

/// A closed span: its name, target and every field value (those recorded later included).
#[derive(Debug, Clone)]
struct SpanRecord {
    name: String,
    fields: Fields,
}

/// An event: its target, level, fields (`message` among them) and the spans it happened in,
/// outermost first.
#[derive(Debug, Clone)]
struct EventRecord {
    target: String,
    fields: Fields,
    scope: Vec<SpanRecord>,
}

impl EventRecord {
    fn message(&self) -> &str {
        self.fields.get("message").map_or("", String::as_str)
    }

    /// The value of `field` in the innermost enclosing span named `span` that has it.
    fn in_span(&self, span: &str, field: &str) -> Option<&str> {
        self.scope
            .iter()
            .rev()
            .filter(|s| s.name == span)
            .find_map(|s| s.fields.get(field))
            .map(String::as_str)
    }
}

/// Everything captured: every span and event as text (each field value in full, as
/// recorded), the closed spans and the events, and what a `fmt` layer printed.
#[derive(Debug, Default)]
struct Captured {
    lines: Vec<String>,
    spans: Vec<SpanRecord>,
    events: Vec<EventRecord>,
    formatted: Vec<u8>,
}

impl Captured {
    /// Every text captured, the `fmt` layer's output included.
    fn texts(&self) -> Vec<String> {
        let mut texts = self.lines.clone();
        texts.push(String::from_utf8_lossy(&self.formatted).into_owned());
        texts
    }

    fn http_spans(&self) -> Vec<&SpanRecord> {
        self.spans.iter().filter(|s| s.name == "http").collect()
    }

    fn token_events(&self, message: &str) -> Vec<&EventRecord> {
        self.events
            .iter()
            .filter(|e| e.target == "marketplace_client::token" && e.message() == message)
            .collect()
    }
}

/// Fields as a visitor sees them; strings unquoted, everything else by `Debug`.
struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// The layer: records every span (at creation, at each `record`, at close) and every event.
#[derive(Clone, Default)]
struct CaptureLayer(Arc<Mutex<Captured>>);

/// A span's fields so far, kept in its extensions.
struct SpanFields(Fields);

fn render(kind: &str, name: &str, fields: &Fields) -> String {
    let mut line = format!("{kind} {name}");
    for (k, v) in fields {
        let _ = write!(line, " {k}={v}");
    }
    line
}

impl<S> tracing_subscriber::Layer<S> for CaptureLayer
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        attrs.record(&mut Visitor(&mut fields));
        let span = ctx.span(id).expect("a new span is known");
        let line = render("span", span.name(), &fields);
        span.extensions_mut().insert(SpanFields(fields));
        self.0.lock().unwrap().lines.push(line);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        values.record(&mut Visitor(&mut fields));
        let span = ctx.span(id).expect("a recorded span is known");
        let line = render("record", span.name(), &fields);
        if let Some(SpanFields(known)) = span.extensions_mut().get_mut::<SpanFields>() {
            known.extend(fields);
        }
        self.0.lock().unwrap().lines.push(line);
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        event.record(&mut Visitor(&mut fields));
        let scope = ctx
            .event_scope(event)
            .map(|scope| {
                scope
                    .from_root()
                    .map(|span| SpanRecord {
                        name: span.name().to_owned(),
                        fields: span
                            .extensions()
                            .get::<SpanFields>()
                            .map(|f| f.0.clone())
                            .unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let meta = event.metadata();
        let line = render(
            &format!("event {} {}", meta.level(), meta.target()),
            "",
            &fields,
        );
        let mut captured = self.0.lock().unwrap();
        captured.lines.push(line);
        captured.events.push(EventRecord {
            target: meta.target().to_owned(),
            fields,
            scope,
        });
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let span = ctx.span(&id).expect("a closed span is known");
        let fields = span
            .extensions()
            .get::<SpanFields>()
            .map(|f| f.0.clone())
            .unwrap_or_default();
        let mut captured = self.0.lock().unwrap();
        captured.lines.push(render("close", span.name(), &fields));
        captured.spans.push(SpanRecord {
            name: span.name().to_owned(),
            fields,
        });
    }
}

/// A writer into the capture's `formatted` bytes, for a `fmt` layer.
struct FormattedWriter(Arc<Mutex<Captured>>);

impl std::io::Write for FormattedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().formatted.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The turn of a test of this module that installs a subscriber (one at a time), once a
/// second dispatcher ([`SECOND_DISPATCH`]) is alive, to the end of the binary. tracing caches
/// a callsite's interest when the callsite is first reached; while only one dispatcher
/// exists, tracing-core lets that first reach take the interest of the reaching thread's own
/// default, without a lock: a thread of another test, with no subscriber, cached "never" for
/// everyone and this test's events were dropped (seen once: "token invalidated" missing, in
/// a cold CI run). With two dispatchers, every callsite asks them all.
fn subscribed_turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    std::sync::LazyLock::force(&SECOND_DISPATCH);
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A dispatcher that records nothing, kept alive so that tracing-core never sees a single
/// dispatcher (see [`subscribed_turn`]).
static SECOND_DISPATCH: std::sync::LazyLock<tracing::Dispatch> = std::sync::LazyLock::new(|| {
    tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default())
});

/// Runs `f` on this thread (and on the threads it hands the dispatcher to) with a subscriber
/// that captures everything at TRACE: the capturing layer and a `fmt` layer that prints
/// every span's opening and closing, as `-v` output would.
fn capture<T>(f: impl FnOnce() -> T) -> (T, Captured) {
    let _turn = subscribed_turn();
    let shared = Arc::new(Mutex::new(Captured::default()));
    let writer = shared.clone();
    let subscriber = tracing_subscriber::registry()
        .with(CaptureLayer(shared.clone()))
        .with(
            tracing_subscriber::fmt::layer()
                .with_span_events(tracing_subscriber::fmt::format::FmtSpan::FULL)
                .with_writer(move || FormattedWriter(writer.clone())),
        );
    let out = tracing::subscriber::with_default(subscriber, f);
    let captured = std::mem::take(&mut *shared.lock().unwrap());
    (out, captured)
}

// ---------------------------------------------------------------------------------------
// The leak detector

/// A secret in play, by what it is.
#[derive(Debug, Clone)]
struct Secret {
    what: String,
    value: String,
}

/// The forms a secret may take in a text, by name: as is, percent-encoded (two encoders: the
/// fake's, the `url` crate's form encoding), with a form's `+` for spaces, and escaped as
/// `Debug` escapes it.
fn encodings(value: &str) -> Vec<(&'static str, String)> {
    let mut forms = vec![
        ("as is", value.to_owned()),
        ("percent-encoded", percent_encode(value)),
        ("form-encoded", percent_encode(value).replace("%20", "+")),
        (
            "form-encoded (url)",
            url::form_urlencoded::byte_serialize(value.as_bytes()).collect(),
        ),
        (
            "Debug-escaped",
            format!("{value:?}").trim_matches('"').to_owned(),
        ),
    ];
    forms.sort_by(|a, b| a.1.cmp(&b.1));
    forms.dedup_by(|a, b| a.1 == b.1);
    forms
}

/// Every secret (in any of its [`encodings`]) found in any of `texts`: what it is, in which
/// form, and the text just before it (never the secret itself, so a failing test prints
/// none). Empty: nothing leaked. The one detector of this file: the flow's test, the
/// commands' test and the detector's own test use it alike.
fn leaks(texts: &[String], secrets: &[Secret]) -> Vec<String> {
    let mut found = Vec::new();
    for secret in secrets {
        assert!(
            secret.value.len() >= 8,
            "{} is too short to look for without false alarms",
            secret.what
        );
        for (form_name, form) in encodings(&secret.value) {
            for text in texts {
                if let Some(at) = text.find(&form) {
                    let start = text[..at]
                        .char_indices()
                        .rev()
                        .nth(80)
                        .map_or(0, |(i, _)| i);
                    found.push(format!(
                        "{} ({form_name}) after: …{}",
                        secret.what,
                        &text[start..at]
                    ));
                }
            }
        }
    }
    found
}

/// Every secret the fake saw: each `Authorization` value (Basic and Bearer, and what follows
/// the scheme), and each code and refresh token of a token request's form.
fn secrets_seen_by(fake: &FakeMarketplace) -> Vec<Secret> {
    let mut secrets = vec![Secret {
        what: "client secret".into(),
        value: fake.client_secret().to_owned(),
    }];
    for request in fake.requests() {
        for value in request.headers_named("authorization") {
            secrets.push(Secret {
                what: "Authorization header".into(),
                value: value.to_owned(),
            });
            if let Some((scheme, credential)) = value.split_once(' ') {
                secrets.push(Secret {
                    what: format!("{scheme} credential"),
                    value: credential.to_owned(),
                });
            }
        }
        if request.path == TOKEN_PATH {
            for (name, value) in request.form().unwrap_or_default() {
                if name == "code" || name == "refresh_token" {
                    secrets.push(Secret { what: name, value });
                }
            }
        }
    }
    for token in fake.live_refresh_tokens() {
        secrets.push(Secret {
            what: "refresh token".into(),
            value: token,
        });
    }
    secrets
}

// ---------------------------------------------------------------------------------------
// The flow

/// A 403 whose error body echoes the bearer token three ways (raw in `message`, without the
/// scheme in `longMessage`, percent-encoded in a parameter), as a careless service might.
fn echo_token_route(fake: &FakeMarketplace) {
    fake.route("GET", DEFAULT_TREE_ID_PATH, |request, _state| {
        let authorization = request.header("authorization").unwrap_or_default();
        let token = authorization.trim_start_matches("Bearer ");
        Response::json(
            403,
            &serde_json::json!({ "errors": [{
                "errorId": 1100,
                "domain": "ACCESS",
                "category": "REQUEST",
                "message": format!("Access denied: insufficient permissions for {authorization}"),
                "longMessage": format!("The token {token} lacks the scope."),
                "parameters": [{ "name": "token", "value": percent_encode(token) }],
            }]}),
        )
    });
}

/// What the flow hands back that the fake did not see as a request: tokens issued.
struct Issued(Vec<Secret>);

impl Issued {
    fn add(&mut self, what: &str, value: &str) {
        self.0.push(Secret {
            what: what.into(),
            value: value.into(),
        });
    }
}

/// The whole flow against `fake`; every token it obtains goes into the result.
fn run_flow(fake: &FakeMarketplace) -> Issued {
    let mut issued = Issued(Vec::new());

    // Application token: one request, then a cache hit.
    let app = Arc::new(ApplicationTokenProvider::new(oauth_support::client(fake)));
    let first = app.access_token().expect("application token");
    issued.add("application token", first.secret());
    assert!(app.access_token().expect("cached").ct_eq(&first));

    // Taxonomy calls with it: a 401 (renewal, then a retry), a 429 with Retry-After, and a
    // 403 that echoes the token.
    let sleeper = Arc::new(RecordingSleeper::default());
    let config = ClientConfig::for_base_url(&fake.base_url())
        .expect("loopback")
        .with_backoff(Duration::from_millis(1), Duration::from_millis(8));
    let tokens: Arc<dyn AccessTokenSource> = app.clone();
    let taxonomy = TaxonomyClient::new(config, tokens)
        .expect("taxonomy client")
        .with_sleeper(sleeper.clone());
    fake.fail_next(
        &tree_path(0),
        Fault::Status {
            status: 401,
            body: r#"{"errors":[{"errorId":1001,"domain":"OAuth","category":"REQUEST","message":"Invalid access token","longMessage":"Invalid access token. Check the value of the Authorization HTTP request header."}]}"#.into(),
            headers: vec![],
        },
    );
    taxonomy
        .fetch_tree_body(Marketplace::Us, None)
        .expect("the retry after a 401 succeeds");
    fake.fail_next(
        &tree_path(0),
        Fault::TooManyRequests {
            retry_after_secs: 2,
        },
    );
    taxonomy
        .fetch_tree_body(Marketplace::Us, None)
        .expect("the retry after a 429 succeeds");
    assert_eq!(sleeper.delays(), [Duration::from_secs(2)]);
    echo_token_route(fake);
    let denied = taxonomy.default_tree_id("EBAY_US").unwrap_err();
    assert_eq!(denied.status(), Some(403));
    let renewed = app.access_token().expect("renewed application token");
    issued.add("renewed application token", renewed.secret());

    // Consent: the code from the fake's consent page, exchanged by a user-token provider.
    let client = oauth_support::client(fake);
    let scopes = ScopeSet::new([fake.scope("/sell.account")]);
    let request = client.consent_request(&scopes).expect("consent request");
    issued.add("consent state", request.state().secret());
    let location = oauth_support::consent_redirect(fake, &request);
    let code = request.complete(&location).expect("code");
    issued.add("authorization code", code.secret());
    let clock = Arc::new(ManualClock::new(std::time::SystemTime::now()));
    let user = UserTokenProvider::new(client, Arc::new(MemoryStore::new()), "seller-1")
        .with_clock(clock.clone());
    let record = user.exchange_code(&code, &scopes).expect("code exchange");
    issued.add("refresh token", record.refresh_token.secret());
    let user_token = user.access_token().expect("user token from the cache");
    issued.add("user token", user_token.secret());

    // Refresh: after expiry the provider renews; a direct refresh too.
    clock.advance(Duration::from_secs(3 * 60 * 60));
    let refreshed = user.access_token().expect("refreshed user token");
    assert!(!refreshed.ct_eq(&user_token));
    issued.add("refreshed user token", refreshed.secret());
    let direct = oauth_support::client(fake)
        .refresh(&record.refresh_token, &scopes)
        .expect("direct refresh");
    issued.add(
        "directly refreshed user token",
        direct.access_token.secret(),
    );
    if let Some(rotated) = &direct.refresh_token {
        issued.add("rotated refresh token", rotated.secret());
    }

    // Single flight: four threads ask a fresh provider at once while its request is slow.
    let fresh = ApplicationTokenProvider::new(oauth_support::client(fake));
    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_millis(300)));
    let dispatch = tracing::dispatcher::get_default(|d| d.clone());
    let barrier = Barrier::new(4);
    let tokens: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    tracing::dispatcher::with_default(&dispatch, || {
                        barrier.wait();
                        fresh
                            .access_token()
                            .expect("shared token")
                            .secret()
                            .to_owned()
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        tokens.iter().all(|t| *t == tokens[0]),
        "one request for all"
    );
    issued.add("single-flight token", &tokens[0]);
    issued
}

// ---------------------------------------------------------------------------------------
// The tests

#[test]
fn the_whole_flow_traces_every_attempt_and_no_secret() {
    let fake = oauth_support::strict_fake();
    let (issued, captured) = capture(|| run_flow(&fake));
    let mut secrets = secrets_seen_by(&fake);
    secrets.extend(issued.0);
    assert!(secrets.len() > 10, "{secrets:?}");

    // No secret, in any form, anywhere.
    let found = leaks(&captured.texts(), &secrets);
    assert!(
        found.is_empty(),
        "secrets in the traces:\n{}",
        found.join("\n")
    );

    // Every attempt's span has its fields.
    let spans = captured.http_spans();
    assert!(spans.len() >= 10, "{spans:#?}");
    for span in &spans {
        let f = &span.fields;
        for field in [
            "operation",
            "method",
            "url",
            "attempt",
            "status",
            "elapsed_ms",
        ] {
            assert!(f.contains_key(field), "{field} missing: {span:?}");
        }
        assert!(f["url"].starts_with(&fake.base_url()), "{span:?}");
        if f["operation"] == "token" {
            assert_eq!(f["method"], "POST");
            assert!(
                f.contains_key("grant") && f.contains_key("scopes"),
                "{span:?}"
            );
            if f["status"] == "200" {
                assert!(f.contains_key("expires_in_s"), "{span:?}");
            }
        } else {
            assert_eq!(f["method"], "GET");
            assert_eq!(f["marketplace"], "EBAY_US", "{span:?}");
        }
        if f["status"].parse::<u16>().unwrap() >= 400 && f["status"] != "429" {
            assert!(f.contains_key("error_ids"), "{span:?}");
        }
        if f["status"] == "429" {
            assert_eq!(f.get("retry_after_s").map(String::as_str), Some("2"));
        }
    }
    let find = |pred: &dyn Fn(&Fields) -> bool| spans.iter().any(|s| pred(&s.fields));
    let is = |f: &Fields, k: &str, v: &str| f.get(k).is_some_and(|x| x == v);
    // getCategoryTree: a 401 with its errorId, then the retry as attempt 2.
    assert!(find(&|f| is(f, "operation", "getCategoryTree")
        && is(f, "status", "401")
        && is(f, "attempt", "1")
        && is(f, "error_ids", "1001")));
    assert!(find(&|f| is(f, "operation", "getCategoryTree")
        && is(f, "status", "200")
        && is(f, "attempt", "2")));
    assert!(find(&|f| is(f, "operation", "getCategoryTree")
        && is(f, "status", "429")
        && is(f, "retry_after_s", "2")));
    assert!(find(&|f| is(f, "operation", "getDefaultCategoryTreeId")
        && is(f, "status", "403")
        && is(f, "error_ids", "1100")));
    for grant in ["client_credentials", "authorization_code", "refresh_token"] {
        assert!(
            find(&|f| is(f, "operation", "token")
                && is(f, "grant", grant)
                && is(f, "status", "200")
                && f.get("expires_in_s")
                    .is_some_and(|s| s.parse::<u64>().unwrap() > 0)),
            "no answered token request of grant {grant}"
        );
    }
    assert!(find(
        &|f| is(f, "grant", "client_credentials") && f["scopes"].ends_with("/oauth/api_scope")
    ));

    // The token events, inside the provider's `token` span that names grant and scopes.
    let hits = captured.token_events("cache hit");
    assert!(!hits.is_empty());
    assert!(
        hits.iter()
            .any(|e| e.in_span("token", "grant") == Some("client_credentials"))
    );
    assert!(
        hits.iter()
            .any(|e| e.in_span("token", "grant") == Some("refresh_token")),
        "the user token was handed out from the cache"
    );
    assert!(!captured.token_events("single-flight wait").is_empty());
    let firsts = captured.token_events("token request");
    assert!(firsts.iter().all(|e| e.fields["renewal"] == "false"));
    assert!(firsts.iter().any(|e| {
        e.in_span("token", "scopes")
            .is_some_and(|s| s.ends_with("/oauth/api_scope"))
    }));
    let renewals = captured.token_events("token renewal");
    let reasons: Vec<&str> = renewals
        .iter()
        .map(|e| e.fields["reason"].as_str())
        .collect();
    assert!(reasons.contains(&"invalidated"), "{reasons:?}");
    assert!(reasons.contains(&"expired"), "{reasons:?}");
    assert!(renewals.iter().all(|e| e.fields["renewal"] == "true"));
    assert!(
        renewals
            .iter()
            .any(|e| e.in_span("token", "grant") == Some("refresh_token"))
    );
    let received = captured.token_events("token received");
    // A user-token provider learns the scopes from its store, so they name the refresh's
    // answer (and the span when it closes), not the request's start.
    assert!(
        received
            .iter()
            .any(|e| e.in_span("token", "grant") == Some("refresh_token")
                && e.in_span("token", "scopes") == Some(fake.scope("/sell.account").as_str()))
    );
    // A user token's events name the seller's account; an application token's name none.
    assert!(
        received
            .iter()
            .filter(|e| e.in_span("token", "grant") == Some("refresh_token"))
            .all(|e| e.in_span("token", "account") == Some("seller-1"))
    );
    assert!(
        received
            .iter()
            .filter(|e| e.in_span("token", "grant") == Some("client_credentials"))
            .all(|e| e.in_span("token", "account").is_none())
    );
    assert!(
        received
            .iter()
            .all(|e| e.fields["expires_in_s"].parse::<u64>().unwrap() > 0)
    );
    assert!(received.iter().any(|e| e.fields["renewal"] == "true"));
    assert!(!captured.token_events("token invalidated").is_empty());
    assert!(
        !captured
            .token_events("token installed (new consent)")
            .is_empty()
    );

    // The fmt layer's output shows the spans with their fields.
    let printed = String::from_utf8_lossy(&captured.formatted);
    assert!(
        printed.contains("operation=\"getCategoryTree\"")
            || printed.contains("operation=getCategoryTree"),
        "{printed}"
    );
}

#[test]
fn the_detector_catches_a_token_that_is_logged() {
    let fake = oauth_support::strict_fake();
    let client = oauth_support::client(&fake);
    let (token, captured) = capture(|| {
        let token = client
            .client_credentials(&ScopeSet::default())
            .expect("application token")
            .access_token;
        // What a careless line would do: the token as a field, and percent-encoded in a
        // message.
        tracing::info!(token = token.secret(), "got a token");
        tracing::debug!("sending ?access_token={}", percent_encode(token.secret()));
        token
    });
    let secrets = vec![Secret {
        what: "application token".into(),
        value: token.secret().to_owned(),
    }];
    let found = leaks(&captured.texts(), &secrets);
    assert!(
        found
            .iter()
            .any(|f| f.contains("(as is)") && f.contains("got a token token=")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|f| f.contains("(percent-encoded)") && f.contains("access_token=")),
        "the percent-encoded form is caught too: {found:#?}"
    );
    assert!(
        found.iter().all(|f| !f.contains(token.secret())),
        "the report names no secret"
    );
    // The client's own traces of the same request are clean: the leak is the test's lines.
    let clean: Vec<String> = captured
        .lines
        .iter()
        .filter(|l| !l.contains("got a token") && !l.contains("sending ?access_token"))
        .cloned()
        .collect();
    assert!(leaks(&clean, &secrets).is_empty());
    let mut all = secrets_seen_by(&fake);
    all.extend(secrets);
    assert!(!leaks(&captured.texts(), &all).is_empty());
}

#[test]
fn snapshot_verbose_prints_the_spans_on_stderr_without_a_token() {
    let fake = oauth_support::strict_fake();
    let dir = common::copy_of_snapshots();
    let output = common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .args([
            "refresh",
            "--sites",
            "EBAY_US",
            "--dry-run",
            "--force",
            "-v",
            "--dir",
        ])
        .arg(dir.path())
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env_remove("RUST_LOG")
        .output()
        .expect("snapshot runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("http{") && l.contains("operation=getCategoryTree")),
        "{stderr}"
    );
    assert!(
        stderr.lines().any(|l| l.contains("http{")
            && l.contains("operation=token")
            && l.contains("grant=client_credentials")),
        "{stderr}"
    );
    assert!(!stdout.contains("http{"), "traces go to stderr: {stdout}");
    let found = leaks(&[stderr, stdout], &secrets_seen_by(&fake));
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn snapshot_without_verbose_prints_no_span() {
    let fake = oauth_support::strict_fake();
    let dir = common::copy_of_snapshots();
    let output = common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .args([
            "refresh",
            "--sites",
            "EBAY_US",
            "--dry-run",
            "--force",
            "--dir",
        ])
        .arg(dir.path())
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env_remove("RUST_LOG")
        .output()
        .expect("snapshot runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("http{"), "{stderr}");
    // RUST_LOG alone turns them on.
    let output = common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .args([
            "refresh",
            "--sites",
            "EBAY_US",
            "--dry-run",
            "--force",
            "--dir",
        ])
        .arg(dir.path())
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env("RUST_LOG", "marketplace_client=debug")
        .output()
        .expect("snapshot runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("operation=getCategoryTree"), "{stderr}");
}

#[test]
fn consent_takes_the_verbose_flag() {
    let output = common::clean_command(env!("CARGO_BIN_EXE_consent"))
        .arg("--help")
        .output()
        .expect("consent runs");
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("-v, --verbose"), "{help}");
    assert!(help.contains("RUST_LOG"), "{help}");
}

#[test]
fn a_plain_fmt_subscriber_prints_one_line_per_answer_without_a_secret() {
    let fake = oauth_support::strict_fake();
    let buffer = Arc::new(Mutex::new(Captured::default()));
    let writer = buffer.clone();
    // What a user of the library writes: no span events, only a filter.
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter("marketplace_client=debug")
        .with_writer(move || FormattedWriter(writer.clone()))
        .finish();
    let app = Arc::new(ApplicationTokenProvider::new(oauth_support::client(&fake)));
    let _turn = subscribed_turn();
    let token = tracing::subscriber::with_default(subscriber, || {
        let config = ClientConfig::for_base_url(&fake.base_url()).expect("loopback");
        let tokens: Arc<dyn AccessTokenSource> = app.clone();
        let taxonomy = TaxonomyClient::new(config, tokens).expect("taxonomy client");
        taxonomy.default_tree_id("EBAY_US").expect("tree id");
        app.access_token().expect("cached token")
    });
    let printed = String::from_utf8_lossy(&buffer.lock().unwrap().formatted).into_owned();
    let line = printed
        .lines()
        .find(|l| l.contains("getDefaultCategoryTreeId"))
        .unwrap_or_else(|| panic!("no line names the operation:\n{printed}"));
    for part in [
        "method=GET",
        &format!("url={}{DEFAULT_TREE_ID_PATH}", fake.base_url()),
        "attempt=1",
        "status=200",
        "elapsed_ms=",
    ] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    // One line per answer: the token request's and the call's.
    assert_eq!(
        printed.lines().filter(|l| l.contains("status=")).count(),
        2,
        "{printed}"
    );
    assert!(
        printed
            .lines()
            .any(|l| l.contains("operation=token") && l.contains("status=200")),
        "{printed}"
    );
    let secrets = [
        Secret {
            what: "access token".into(),
            value: token.secret().to_owned(),
        },
        Secret {
            what: "client secret".into(),
            value: fake.client_secret().to_owned(),
        },
    ];
    let found = leaks(std::slice::from_ref(&printed), &secrets);
    assert!(found.is_empty(), "{found:#?}");
    assert!(!printed.contains(token.secret()) && !printed.contains(fake.client_secret()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_read_from_the_shared_cache_is_not_logged_as_requested() {
    use marketplace_client_postgres::{Keyring, TokenKey, blocking::TokenStore};

    let db = pg::TestDb::new().await;
    let fake = oauth_support::strict_fake();
    let url = db.url();
    let (asking, reading, again) = tokio::task::block_in_place(|| {
        let store =
            TokenStore::connect(&url, Keyring::new(TokenKey::from_bytes([42u8; 32]))).unwrap();
        store.migrate().unwrap();
        // Two processes of a fleet: providers of their own over one shared cache.
        let process = || {
            ApplicationTokenProvider::new(oauth_support::client(&fake))
                .with_shared_cache(store.token_cache())
        };
        let (first, asking) = capture(|| process().access_token().expect("first process"));
        let second = process();
        let (shared, reading) = capture(|| second.access_token().expect("second process"));
        assert!(shared.ct_eq(&first), "the fleet's token");
        let (_, again) = capture(|| second.access_token().expect("in-process cache"));
        (asking, reading, again)
    });
    assert_eq!(fake.token_requests().len(), 1, "one request for the fleet");
    let count = |captured: &Captured, message: &str| captured.token_events(message).len();
    let token_spans = |captured: &Captured| {
        captured
            .http_spans()
            .iter()
            .filter(|s| s.fields["operation"] == "token")
            .count()
    };

    // The process that asked the token endpoint says so.
    assert_eq!(count(&asking, "shared cache lookup"), 1);
    assert_eq!(count(&asking, "token request"), 1, "{:#?}", asking.lines);
    assert_eq!(count(&asking, "token received"), 1);
    assert_eq!(count(&asking, "token read from the shared cache"), 0);
    assert_eq!(token_spans(&asking), 1, "{:#?}", asking.lines);

    // The one that read the fleet's token says that, and no token request.
    assert_eq!(count(&reading, "shared cache lookup"), 1);
    assert_eq!(count(&reading, "token read from the shared cache"), 1);
    for message in ["token request", "token renewal", "token received"] {
        assert_eq!(
            count(&reading, message),
            0,
            "{message}: {:#?}",
            reading.lines
        );
    }
    assert_eq!(token_spans(&reading), 0);
    let read = &reading.token_events("token read from the shared cache")[0];
    assert_eq!(read.in_span("token", "grant"), Some("client_credentials"));
    assert!(read.fields["expires_in_s"].parse::<u64>().unwrap() > 0);

    // Then its own cache: a hit, neither the shared cache nor the endpoint.
    assert_eq!(count(&again, "cache hit"), 1);
    for message in [
        "shared cache lookup",
        "token request",
        "token received",
        "token read from the shared cache",
    ] {
        assert_eq!(count(&again, message), 0, "{message}");
    }
    drop(db);
}
