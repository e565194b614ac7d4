//! The blocking API used from inside a tokio runtime, as a server or a `#[tokio::main]`
//! program would: every blocking client is created, called and dropped in each of five
//! contexts (a plain thread, a task of a multi-thread runtime, `block_on` of a multi-thread
//! and of a current-thread runtime, `spawn_blocking`), against the fake over loopback, and
//! must give its answer without a panic. reqwest's blocking client panics when it is built or
//! used on a runtime thread; the clients do that I/O on a thread of their own.

use crate::common;
use crate::oauth_support;
use crate::taxonomy_support;

use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fake_marketplace::FakeMarketplace;
use marketplace_client::oauth::{
    AccessTokenSource, ApplicationTokenProvider, AuthorizationCode, MemoryStore, OAuthClient,
    RefreshTokenStore, ScopeSet, UserTokenProvider,
};
use marketplace_client::taxonomy::TaxonomyClient;
use marketplace_client::test_util::ManualClock;
use marketplace_client::trees;
use marketplaces::Marketplace;

/// Where a blocking call is made.
#[derive(Debug, Clone, Copy)]
enum Context {
    /// A thread with no runtime.
    PlainThread,
    /// A task spawned on a multi-thread runtime (an axum handler).
    TaskOfMultiThread,
    /// `block_on` of a multi-thread runtime (`#[tokio::main]`).
    BlockOnMultiThread,
    /// `block_on` of a current-thread runtime (`#[tokio::main(flavor = "current_thread")]`).
    BlockOnCurrentThread,
    /// `tokio::task::spawn_blocking` (what the docs recommend).
    SpawnBlocking,
}

const CONTEXTS: [Context; 5] = [
    Context::PlainThread,
    Context::TaskOfMultiThread,
    Context::BlockOnMultiThread,
    Context::BlockOnCurrentThread,
    Context::SpawnBlocking,
];

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

fn panic_text(payload: Box<dyn Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Runs `work` in `context`; `Err` with the panic's text when it panicked.
fn run_in<T: Send + 'static>(
    context: Context,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    match context {
        Context::PlainThread => std::thread::spawn(work).join().map_err(panic_text),
        Context::TaskOfMultiThread => {
            let runtime = multi_thread();
            let task = runtime.spawn(async move { work() });
            runtime
                .block_on(task)
                .map_err(|e| panic_text(e.into_panic()))
        }
        Context::BlockOnMultiThread => {
            let runtime = multi_thread();
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                runtime.block_on(async move { work() })
            }))
            .map_err(panic_text)
        }
        Context::BlockOnCurrentThread => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                runtime.block_on(async move { work() })
            }))
            .map_err(panic_text)
        }
        Context::SpawnBlocking => {
            let runtime = multi_thread();
            let task = runtime.spawn_blocking(work);
            runtime
                .block_on(task)
                .map_err(|e| panic_text(e.into_panic()))
        }
    }
}

/// Runs `case` in every context; each must return the answer `check` accepts. Failures of all
/// contexts are reported together.
fn in_every_context<T: Send + 'static>(
    name: &str,
    case: impl Fn() -> T + Send + Sync + Clone + 'static,
    check: impl Fn(&T),
) {
    let mut failures = Vec::new();
    for context in CONTEXTS {
        match run_in(context, case.clone()) {
            Ok(answer) => check(&answer),
            Err(panic) => failures.push(format!("{name} in {context:?} panicked: {panic}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_oauth_client_works_in_every_context() {
    let fake = Arc::new(FakeMarketplace::new());
    let oauth_config = oauth_support::oauth_config(&fake);
    in_every_context(
        "OAuthClient::client_credentials",
        move || {
            let client = OAuthClient::from_config(&oauth_config).map_err(|e| e.to_string())?;
            let token = client
                .client_credentials(&ScopeSet::default())
                .map_err(|e| e.to_string())?;
            drop(client);
            Ok::<_, String>(token)
        },
        |answer| {
            let token = answer.as_ref().unwrap();
            assert_eq!(token.token_type, "Application Access Token");
            assert!(fake.issued_token(token.access_token.secret()).is_some());
        },
    );
}

/// A blocking call inside a current-thread runtime's `block_on` while a multi-thread
/// runtime's handle is entered (a program that keeps another runtime's handle): the handle
/// says "multi-thread", but `block_in_place` would panic on this thread, which runs the
/// current-thread scheduler. The call takes a thread of its own and succeeds.
#[test]
fn a_call_under_another_runtimes_entered_handle_does_not_panic() {
    let fake = FakeMarketplace::new();
    let oauth_config = oauth_support::oauth_config(&fake);
    let multi = multi_thread();
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let token = current.block_on(async {
        let _entered = multi.handle().enter();
        let provider = ApplicationTokenProvider::source(&oauth_config).unwrap();
        provider.access_token()
    });
    let token = token.expect("the call succeeds");
    assert!(fake.issued_token(token.secret()).is_some());
}

#[test]
fn the_application_token_provider_works_in_every_context() {
    let fake = Arc::new(FakeMarketplace::new());
    let oauth_config = oauth_support::oauth_config(&fake);
    in_every_context(
        "ApplicationTokenProvider::access_token",
        move || {
            let client = OAuthClient::from_config(&oauth_config).map_err(|e| e.to_string())?;
            let provider = ApplicationTokenProvider::new(client);
            let first = provider.access_token().map_err(|e| e.to_string())?;
            let cached = provider.access_token().map_err(|e| e.to_string())?;
            drop(provider);
            Ok::<_, String>((first, cached))
        },
        |answer| {
            let (first, cached) = answer.as_ref().unwrap();
            assert_eq!(first, cached, "the second call is answered from the cache");
            assert!(fake.issued_token(first.secret()).is_some());
        },
    );
}

/// Consent against the fake, on the test's own thread (it plays the browser): a fresh code.
fn consent_code(fake: &FakeMarketplace, scopes: &ScopeSet) -> AuthorizationCode {
    let client = oauth_support::client(fake);
    let consent = client.consent_request(scopes).unwrap();
    consent
        .complete(&oauth_support::consent_redirect(fake, &consent))
        .unwrap()
}

#[test]
fn the_user_token_provider_works_in_every_context() {
    let fake = Arc::new(FakeMarketplace::new());
    let scopes = ScopeSet::new([fake.scope("")]);
    let mut failures = Vec::new();
    for context in CONTEXTS {
        // Each context consents anew: a code is good for one exchange.
        let code = consent_code(&fake, &scopes);
        let oauth_config = oauth_support::oauth_config(&fake);
        let store = Arc::new(MemoryStore::new());
        let granted = scopes.clone();
        let in_context = store.clone();
        let answer = run_in(context, move || {
            let clock = Arc::new(ManualClock::new(SystemTime::now()));
            let client = OAuthClient::from_config(&oauth_config).map_err(|e| e.to_string())?;
            let provider =
                UserTokenProvider::new(client, in_context, "seller-1").with_clock(clock.clone());
            provider
                .exchange_code(&code, &granted)
                .map_err(|e| e.to_string())?;
            let consented = provider.access_token().map_err(|e| e.to_string())?;
            // Past the renewal time: a refresh-token grant.
            clock.advance(Duration::from_secs(7200 - 60));
            let refreshed = provider.access_token().map_err(|e| e.to_string())?;
            drop(provider);
            Ok::<_, String>((consented, refreshed))
        });
        match answer {
            Ok(answer) => {
                let (consented, refreshed) = answer.unwrap();
                assert_ne!(consented, refreshed, "{context:?}: renewed");
                let issued = fake.issued_token(refreshed.secret()).unwrap();
                assert_eq!(issued.token_type, "User Access Token", "{context:?}");
                assert!(store.load("seller-1").unwrap().is_some(), "{context:?}");
            }
            Err(panic) => failures.push(format!(
                "UserTokenProvider in {context:?} panicked: {panic}"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_taxonomy_client_works_in_every_context() {
    let fake = Arc::new(FakeMarketplace::new());
    let config = taxonomy_support::config(&fake);
    let oauth_config = oauth_support::oauth_config(&fake);
    in_every_context(
        "TaxonomyClient::default_tree_id",
        move || {
            let oauth = OAuthClient::from_config(&oauth_config).map_err(|e| e.to_string())?;
            let tokens = Arc::new(ApplicationTokenProvider::new(oauth));
            let client = TaxonomyClient::new(config.clone(), tokens).map_err(|e| e.to_string())?;
            let answer = client
                .default_tree_id(Marketplace::Gb.marketplace_id())
                .map_err(|e| e.to_string())?;
            drop(client);
            Ok::<_, String>(answer)
        },
        |answer| assert_eq!(answer.as_ref().unwrap().tree_id, Marketplace::Gb.tree_id()),
    );
}

#[test]
fn the_concurrent_refresh_works_in_every_context() {
    let fake = Arc::new(FakeMarketplace::new());
    fake.set_tree(
        Marketplace::Us,
        taxonomy_support::small_tree(Marketplace::Us),
    );
    let config = taxonomy_support::config(&fake);
    let oauth_config = oauth_support::oauth_config(&fake);
    // No snapshot held: the tree is prepared as a new one, and nothing is written.
    let snapshots = Arc::new(tempfile::tempdir().unwrap());
    let dir = snapshots.clone();
    in_every_context(
        "trees::fetch_and_prepare",
        move || {
            let oauth = OAuthClient::from_config(&oauth_config).map_err(|e| e.to_string())?;
            let tokens = Arc::new(ApplicationTokenProvider::new(oauth));
            let client = TaxonomyClient::new(config.clone(), tokens).map_err(|e| e.to_string())?;
            let results =
                trees::fetch_and_prepare(&client, &[Marketplace::Us], None, dir.path(), &|_, _| {});
            drop(client);
            results
                .into_iter()
                .map(|r| {
                    r.map(|p| (p.site, p.tree.categories.len()))
                        .map_err(|e| e.to_string())
                })
                .collect::<Result<Vec<_>, String>>()
        },
        |answer| assert_eq!(answer.as_ref().unwrap(), &[(Marketplace::Us, 5)]),
    );
    assert_eq!(std::fs::read_dir(snapshots.path()).unwrap().count(), 0);
}

/// A user's program, outside the workspace: the blocking API in each of the five contexts,
/// configured from the environment as the README shows.
const PROGRAM: &str = r#"
use marketplace_client::oauth::{
    AccessTokenSource, ApplicationTokenProvider, OAuthClient, OAuthConfig, ScopeSet,
};
use marketplace_client::taxonomy::TaxonomyClient;
use tokio::runtime::Builder;

/// Creates, calls and drops every blocking client; what they answered, on one line.
fn blocking_calls(context: &str) -> String {
    let config = OAuthConfig::from_env().expect("configuration");
    let client = OAuthClient::from_config(&config).expect("OAuth client");
    let grant = client.client_credentials(&ScopeSet::default()).expect("grant");
    let provider =
        ApplicationTokenProvider::new(OAuthClient::from_config(&config).expect("OAuth client"));
    let token = provider.access_token().expect("provider");
    let taxonomy = TaxonomyClient::from_env().expect("taxonomy client");
    let tree = taxonomy.default_tree_id("EBAY_GB").expect("getDefaultCategoryTreeId");
    drop((client, provider, taxonomy));
    format!("{context}: {}, token {}, tree {}", grant.token_type, !token.secret().is_empty(), tree.tree_id)
}

fn main() {
    println!("{}", std::thread::spawn(|| blocking_calls("plain thread")).join().unwrap());
    let multi = Builder::new_multi_thread().build().unwrap();
    let task = multi.spawn(async { blocking_calls("task") });
    println!("{}", multi.block_on(task).unwrap());
    println!("{}", multi.block_on(async { blocking_calls("block_on multi-thread") }));
    let blocking = multi.spawn_blocking(|| blocking_calls("spawn_blocking"));
    println!("{}", multi.block_on(blocking).unwrap());
    let current = Builder::new_current_thread().build().unwrap();
    println!("{}", current.block_on(async { blocking_calls("block_on current-thread") }));
}
"#;

#[test]
fn a_program_outside_the_workspace_uses_the_blocking_api_in_every_context() {
    let fake = FakeMarketplace::new();
    let project = tempfile::tempdir().unwrap();
    let root = common::root();
    let dependencies = format!(
        "[dependencies]\nmarketplace-client = {{ path = {:?} }}\n\
         tokio = {{ version = \"1\", default-features = false, features = [\"rt\", \"rt-multi-thread\"] }}\n",
        root.join("crates/marketplace-client").display().to_string(),
    );
    common::write_outside_crate(
        project.path(),
        "blocking-in-runtime",
        &dependencies,
        PROGRAM,
    );
    // The target directory of the workspace and of the other projects outside it: the live
    // build's script compiles the HTTP stack with this program's features (149 of its 151
    // compilation units), the workspace's build 91 of them (other features for the rest).
    let _turn = common::outside_probes_turn();
    let target = common::outside_probes_target();
    let out = common::build_outside_crate(project.path(), &target, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = common::clean_command(target.join("debug/blocking-in-runtime"))
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    let tree = Marketplace::Gb.tree_id();
    let expected: String = [
        "plain thread",
        "task",
        "block_on multi-thread",
        "spawn_blocking",
        "block_on current-thread",
    ]
    .iter()
    .map(|context| format!("{context}: Application Access Token, token true, tree {tree}\n"))
    .collect();
    assert_eq!(stdout, expected, "{stderr}");
    // Two grants per context: the client's and the provider's (the taxonomy client's
    // provider asks once more).
    assert_eq!(fake.token_requests().len(), 5 * 3);
}
