//! `cargo run -p taxonomy-example-server -- [--fake] [--port N]`: serves
//! `GET /suggest?q=…[&site=EBAY_US]` on 127.0.0.1 (port 3000, or `--port N`, or `PORT`; 0
//! picks a free one).
//!
//! With `--fake` the fake marketplace starts in-process and the clients point at it; without,
//! the configuration comes from the environment (`OAuthConfig::from_env`).
//!
//! eBay's Marketplace Account Deletion endpoint is served at `/ebay/notifications`: with
//! `--fake`, at `http://127.0.0.1:PORT/ebay/notifications` with the demo verification token;
//! otherwise when `EBAY_NOTIFICATION_ENDPOINT` (the URL registered with eBay, exactly) and
//! `EBAY_VERIFICATION_TOKEN` are set.

use std::process::ExitCode;
use std::sync::Arc;

use fake_marketplace::{FakeConfig, FakeMarketplace};
use marketplace_client::aio::taxonomy::TaxonomyClient;

const USAGE: &str = "usage: taxonomy-example-server [--fake] [--port N]   (or PORT=N)";

struct Args {
    fake: bool,
    port: u16,
}

fn parse_port(text: &str) -> Result<u16, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("not a port: {text:?}"))
}

fn parse_args() -> Result<Option<Args>, String> {
    let mut fake = false;
    let mut port = match std::env::var("PORT") {
        Ok(p) => parse_port(&p)?,
        Err(_) => 3000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--fake" => fake = true,
            "--port" => port = parse_port(&args.next().ok_or("--port needs a number")?)?,
            "-h" | "--help" => return Ok(None),
            other => match other.strip_prefix("--port=") {
                Some(p) => port = parse_port(p)?,
                None => return Err(format!("unknown argument {other:?}")),
            },
        }
    }
    Ok(Some(Args { fake, port }))
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
    let notifications = match (&_fake, listener.local_addr()) {
        (Some(fake), Ok(addr)) => {
            let url = format!(
                "http://{addr}{}",
                taxonomy_example_server::NOTIFICATIONS_PATH
            );
            taxonomy_example_server::notification_endpoint_for_fake(fake, &url).map(Some)
        }
        _ => match (
            std::env::var("EBAY_NOTIFICATION_ENDPOINT"),
            std::env::var("EBAY_VERIFICATION_TOKEN"),
        ) {
            (Ok(url), Ok(token)) => marketplace_client::aio::oauth::OAuthConfig::from_env()
                .map_err(Into::into)
                .and_then(|oauth| {
                    taxonomy_example_server::notification_endpoint(&oauth, &url, &token)
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
