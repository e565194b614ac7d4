//! A fleet of worker processes sharing an application token through PostgreSQL, for
//! `tests/fleet.rs` and `benches/shared_cache.rs`: the binary that includes this module starts
//! itself as the workers (with `FLEET_WORKER=1`), and [`worker::main`] is their side.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use fake_marketplace::FakeMarketplace;
use marketplace_client::aio::oauth::{
    AccessTokenSource, ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
};
use marketplace_client::oauth::SharedTokenRequest;
use marketplace_client_postgres::{
    CacheKey, Keyring, NewCachedToken, PgTokenCache, TokenCache, TokenKey, db_now,
};
use sha2::Digest as _;

use super::pg::TestDb;

/// Set in a worker's environment.
pub const WORKER: &str = "FLEET_WORKER";
const KEY_BYTES: [u8; 32] = [7; 32];

/// True in a worker process.
pub fn is_worker() -> bool {
    std::env::var_os(WORKER).is_some()
}

pub fn keyring() -> Keyring {
    Keyring::new(TokenKey::from_bytes(KEY_BYTES))
}

pub fn endpoints(fake: &FakeMarketplace) -> Endpoints {
    Endpoints::custom(&fake.base_url(), &fake.auth_url()).expect("loopback endpoints")
}

pub fn client(fake: &FakeMarketplace) -> OAuthClient {
    OAuthClient::from_config(
        &OAuthConfig::new(endpoints(fake))
            .with_credentials(fake.client_id(), fake.client_secret())
            .with_redirect_uri("Fake_Company-FakeApp-PRD-abcdefghi"),
    )
    .expect("client")
}

/// The cache row of the application token the fake's default scope names.
pub fn application_key(fake: &FakeMarketplace) -> CacheKey {
    let endpoints = endpoints(fake);
    CacheKey::application(
        SharedTokenRequest::environment_of(&endpoints),
        fake.client_id(),
        &endpoints.default_scope(),
    )
}

/// A short, stable name of a token, so that the workers never print one.
pub fn fingerprint(token: &str) -> String {
    let digest = sha2::Sha256::digest(token.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Publishes a token that expired a minute ago, so that the fleet starts at expiry.
pub async fn seed_expired(db: &TestDb, key: &CacheKey) {
    let cache = TokenCache::new(db.pool.clone(), keyring());
    let lease = cache
        .try_lease(key, "seeder", Duration::from_secs(5))
        .await
        .unwrap()
        .expect("the lease of the process that seeds the row");
    let past = db_now(&db.pool).await.unwrap() - Duration::from_secs(60);
    let token = NewCachedToken {
        token: "expired-token-of-the-fleet",
        token_type: "Application Access Token",
        expires_at: past,
        renew_at: past - Duration::from_secs(300),
        renewed_after_refusal: false,
    };
    assert!(cache.publish(key, &lease, token).await.unwrap());
}

/// A worker process: `tasks` tasks asking the same provider, once told to go.
pub struct Worker {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Worker {
    pub fn start(db: &TestDb, fake: &FakeMarketplace, tasks: usize, lease: Duration) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(WORKER, "1")
            .env("FLEET_DB", db.url())
            .env("FLEET_BASE", fake.base_url())
            .env("FLEET_CLIENT_ID", fake.client_id())
            .env("FLEET_CLIENT_SECRET", fake.client_secret())
            .env("FLEET_TASKS", tasks.to_string())
            .env("FLEET_LEASE_MS", lease.as_millis().to_string())
            .env(
                marketplace_client_postgres::KEY_VAR,
                base64::engine::general_purpose::STANDARD.encode(KEY_BYTES),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start a worker");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
        }
    }

    pub fn wait_ready(&mut self) {
        let line = self.lines.next().expect("a line").expect("read");
        assert_eq!(line, "ready", "the worker's first line");
    }

    pub fn go(&mut self) {
        let mut stdin = self.stdin.take().expect("not told yet");
        writeln!(stdin, "go").unwrap();
    }

    /// The worker's answers, one per task.
    pub fn finish(mut self) -> Vec<String> {
        let answers: Vec<String> = self.lines.by_ref().map(|l| l.unwrap()).collect();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "worker exited with {status}: {answers:?}");
        answers
    }
}

/// The worker processes' side.
pub mod worker {
    use super::*;

    pub fn main() -> ExitCode {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(run())
    }

    fn var(name: &str) -> String {
        std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
    }

    async fn run() -> ExitCode {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(4)
            .connect(&var("FLEET_DB"))
            .await
            .expect("connect");
        let keyring = Keyring::from_env().expect("MARKETPLACE_TOKEN_KEY");
        let lease = Duration::from_millis(var("FLEET_LEASE_MS").parse().unwrap());
        let cache = PgTokenCache::new(pool.clone(), keyring).with_lease(lease);
        let base = var("FLEET_BASE");
        let client = OAuthClient::from_config(
            &OAuthConfig::new(Endpoints::custom(&base, &base).unwrap())
                .with_credentials(var("FLEET_CLIENT_ID"), var("FLEET_CLIENT_SECRET")),
        )
        .unwrap();
        let provider =
            Arc::new(ApplicationTokenProvider::new(client).with_shared_cache(Arc::new(cache)));
        // Connected before the start signal, so that every process asks at the same moment.
        db_now(&pool).await.expect("the database answers");
        println!("ready");
        let mut go = String::new();
        std::io::stdin().read_line(&mut go).unwrap();

        let tasks: Vec<_> = (0..var("FLEET_TASKS").parse::<usize>().unwrap())
            .map(|_| {
                let provider = provider.clone();
                tokio::spawn(async move { provider.access_token().await })
            })
            .collect();
        for task in tasks {
            match task.await.unwrap() {
                Ok(token) => println!("token {}", fingerprint(token.secret())),
                Err(e) => println!("error {e}"),
            }
        }
        ExitCode::SUCCESS
    }
}
