//! `cargo run -p taxonomy-example-server -- [--fake] [--port N]`: serves
//! `GET /suggest?q=…[&site=EBAY_US]` on 127.0.0.1 (port 3000, or `--port N`, or `PORT`; 0
//! picks a free one). `--hash-password` reads a password on standard input and prints its
//! Argon2 hash, for a line `account:HASH` of `EXAMPLE_USERS_FILE`.
//!
//! With `--fake` the fake marketplace starts in-process and the clients point at it; without,
//! the configuration comes from the environment (`OAuthConfig::from_env`).
//!
//! A seller's consent: `POST /login` (the session), then `GET /consent` and `GET /callback`
//! (the accept URL of the RuName), the pending consents, refresh tokens and eBay users in
//! `MARKETPLACE_TOKEN_STORE`: a `postgres://` URL (the store a fleet shares, encrypted under
//! `MARKETPLACE_TOKEN_KEY`) or a file. With `--fake`, the redirect URI is the server's own
//! `/callback`, the store a file in a temporary directory unless `MARKETPLACE_TOKEN_STORE` is
//! set, and the one user `seller-1` with the password `demo-password`; otherwise the endpoints
//! are served when `MARKETPLACE_REDIRECT_URI`, `MARKETPLACE_TOKEN_STORE`, `EXAMPLE_USERS_FILE`
//! and `EXAMPLE_SESSION_KEY` (base64, 64 bytes or more, the same on every instance) are set.
//!
//! eBay's Marketplace Account Deletion endpoint is served at `/ebay/notifications`: with
//! `--fake`, at `http://127.0.0.1:PORT/ebay/notifications` with the demo verification token;
//! otherwise when `EBAY_NOTIFICATION_ENDPOINT` (the URL registered with eBay, exactly) and
//! `EBAY_VERIFICATION_TOKEN` are set. A deletion removes the tokens of the accounts the deleted
//! eBay user consented for, in the store.

use std::process::ExitCode;
use std::sync::Arc;

use fake_marketplace::{FakeConfig, FakeMarketplace};
use marketplace_client::aio::oauth::{OAuthClient, OAuthConfig, ScopeSet};
use marketplace_client::aio::taxonomy::TaxonomyClient;
use taxonomy_example_server::{ConsentEndpoints, Sessions, TokenStore};

/// The refresh-token store: a `postgres://` URL or a file.
const TOKEN_STORE_VAR: &str = "MARKETPLACE_TOKEN_STORE";

/// The store named by [`TOKEN_STORE_VAR`] (`None` when unset), for the application of `oauth`.
async fn token_store(
    oauth: &OAuthConfig,
) -> Result<Option<TokenStore>, Box<dyn std::error::Error>> {
    let Ok(named) = std::env::var(TOKEN_STORE_VAR) else {
        return Ok(None);
    };
    if !(named.starts_with("postgres://") || named.starts_with("postgresql://")) {
        return Ok(Some(TokenStore::File(named.into())));
    }
    let keyring = marketplace_client_postgres::Keyring::from_env()?;
    let pool = sqlx::PgPool::connect(&named).await?;
    marketplace_client_postgres::migrate(&pool).await?;
    Ok(Some(TokenStore::Postgres(
        marketplace_client_postgres::PgRefreshTokenStore::from_config(pool, keyring, oauth)?,
    )))
}

/// The consent endpoints of a server not on the fake: from the environment, when it names a
/// redirect URI, a store and the users.
fn consent_from_env(
    store: Option<&TokenStore>,
) -> Result<Option<ConsentEndpoints>, Box<dyn std::error::Error>> {
    let oauth = OAuthConfig::from_env()?;
    let (Some(_), Some(store)) = (&oauth.redirect_uri, store) else {
        return Ok(None);
    };
    let Some(sessions) = Sessions::from_env()? else {
        return Ok(None);
    };
    let client = Arc::new(OAuthClient::from_config(&oauth)?);
    Ok(Some(ConsentEndpoints::new(
        client,
        store.clone(),
        ScopeSet::default(),
        Arc::new(sessions),
    )))
}

/// `--hash-password`: a line of standard input → its Argon2 hash on standard output.
fn hash_password() -> ExitCode {
    let mut line = String::new();
    if let Err(e) = std::io::stdin().read_line(&mut line) {
        eprintln!("cannot read the password: {e}");
        return ExitCode::FAILURE;
    }
    match taxonomy_example_server::session::hash_password(line.trim_end_matches(['\r', '\n'])) {
        Ok(hash) => {
            println!("{hash}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: taxonomy-example-server [--fake] [--port N]   (or PORT=N)\n       taxonomy-example-server --hash-password   (the password on standard input)";

struct Args {
    fake: bool,
    port: u16,
    hash_password: bool,
}

fn parse_port(text: &str) -> Result<u16, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("not a port: {text:?}"))
}

fn parse_args() -> Result<Option<Args>, String> {
    let mut fake = false;
    let mut hash_password = false;
    let mut port = match std::env::var("PORT") {
        Ok(p) => parse_port(&p)?,
        Err(_) => 3000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--fake" => fake = true,
            "--hash-password" => hash_password = true,
            "--port" => port = parse_port(&args.next().ok_or("--port needs a number")?)?,
            "-h" | "--help" => return Ok(None),
            other => match other.strip_prefix("--port=") {
                Some(p) => port = parse_port(p)?,
                None => return Err(format!("unknown argument {other:?}")),
            },
        }
    }
    Ok(Some(Args {
        fake,
        port,
        hash_password,
    }))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("{problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if args.hash_password {
        return hash_password();
    }
    // The fake lives as long as the server: dropping it stops it.
    let mut _fake = None;
    let client: Result<Arc<TaxonomyClient>, Box<dyn std::error::Error>> = if args.fake {
        match FakeMarketplace::start(FakeConfig::default()) {
            Ok(fake) => {
                println!("fake marketplace on {}", fake.base_url());
                let client = taxonomy_example_server::client_for_fake(&fake);
                _fake = Some(fake);
                client
            }
            Err(e) => Err(format!("cannot start the fake marketplace: {e}").into()),
        }
    } else {
        taxonomy_example_server::client_from_env()
    };
    let client = match client {
        Ok(client) => client,
        Err(e) => {
            eprintln!("configuration: {e}\n(run with --fake to use the fake marketplace)");
            return ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("cannot bind 127.0.0.1:{}: {e}", args.port);
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(addr) => println!(
            "listening on http://{addr}  (try: curl 'http://{addr}/suggest?q=iphone%2015')"
        ),
        Err(e) => eprintln!("listening (address unknown: {e})"),
    }
    let mut app = taxonomy_example_server::router(client);
    // The store of the consents (and of the deletions): the fake's application's, or the
    // environment's.
    let store = match &_fake {
        Some(fake) => {
            let named = match taxonomy_example_server::oauth_config_for_fake(fake) {
                Ok(oauth) => token_store(&oauth).await,
                Err(e) => Err(e),
            };
            named.map(|named| {
                Some(named.unwrap_or_else(|| {
                    let file = std::env::temp_dir()
                        .join(format!("taxonomy-example-server-{}", std::process::id()))
                        .join("refresh-tokens.json");
                    println!("refresh tokens and pending consents in {}", file.display());
                    TokenStore::File(file)
                }))
            })
        }
        None => match OAuthConfig::from_env() {
            Ok(oauth) => token_store(&oauth).await,
            Err(e) => Err(e.into()),
        },
    };
    let store = match store {
        Ok(store) => store,
        Err(e) => {
            eprintln!("token store: {e}");
            return ExitCode::FAILURE;
        }
    };
    let consent = match (&_fake, listener.local_addr(), &store) {
        (Some(fake), Ok(addr), Some(store)) => {
            let callback = format!(
                "http://{addr}{}",
                taxonomy_example_server::consent::CALLBACK_PATH
            );
            taxonomy_example_server::session::sessions_for_fake()
                .map_err(Into::into)
                .and_then(|sessions| {
                    taxonomy_example_server::consent_endpoints_for_fake(
                        fake,
                        &callback,
                        store.clone(),
                        Arc::new(sessions),
                    )
                })
                .map(Some)
        }
        _ => consent_from_env(store.as_ref()),
    };
    match consent {
        Ok(Some(endpoints)) => {
            println!("seller login at POST /login, consent at /consent, completed at /callback");
            app = taxonomy_example_server::with_consent(app, Arc::new(endpoints));
        }
        Ok(None) => println!(
            "no seller consent (set MARKETPLACE_REDIRECT_URI, {TOKEN_STORE_VAR}, EXAMPLE_USERS_FILE and EXAMPLE_SESSION_KEY)"
        ),
        Err(e) => {
            eprintln!("consent endpoints: {e}");
            return ExitCode::FAILURE;
        }
    }
    let notifications = match (&_fake, listener.local_addr()) {
        (Some(fake), Ok(addr)) => {
            let url = format!(
                "http://{addr}{}",
                taxonomy_example_server::NOTIFICATIONS_PATH
            );
            taxonomy_example_server::notification_endpoint_for_fake(fake, &url, store.as_ref())
                .map(Some)
        }
        _ => match (
            std::env::var("EBAY_NOTIFICATION_ENDPOINT"),
            std::env::var("EBAY_VERIFICATION_TOKEN"),
        ) {
            (Ok(url), Ok(token)) => OAuthConfig::from_env()
                .map_err(Into::into)
                .and_then(|oauth| {
                    taxonomy_example_server::notification_endpoint(
                        &oauth,
                        &url,
                        &token,
                        store.as_ref(),
                    )
                })
                .map(Some),
            _ => Ok(None),
        },
    };
    match notifications {
        Ok(Some(endpoint)) => {
            println!("eBay notifications at {}", endpoint.endpoint());
            app = taxonomy_example_server::with_notifications(app, endpoint);
        }
        Ok(None) => println!(
            "no eBay notification endpoint (set EBAY_NOTIFICATION_ENDPOINT and EBAY_VERIFICATION_TOKEN)"
        ),
        Err(e) => {
            eprintln!("notification endpoint: {e}");
            return ExitCode::FAILURE;
        }
    }
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("server: {e}");
            ExitCode::FAILURE
        }
    }
}
