//! eBay's signing keys in a private file beside the refresh tokens (`SigningKeyFile`), created
//! at the fake marketplace's Key Management API (createSigningKey): created once, by one of
//! several processes, saved with mode 0600 and atomic replacement, replaced within 30 days of
//! their expiry, the old key kept until it expires. Blocking and async fronts.

use crate::taxonomy_support as support;

use std::os::unix::fs::PermissionsExt as _;
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fake_marketplace::FakeMarketplace;
use fake_marketplace::signatures::{PAYOUTS_PATH, SIGNING_KEY_PATH};
use marketplace_client::api::{ApiClient, ApiRequest, ClientConfig};
use marketplace_client::signing::{SigningKeyFile, SigningKeyStoreError};
use serde_json::Value;
use support::{fake, seller_tokens};

fn client(fake: &FakeMarketplace) -> ApiClient {
    let config = ClientConfig::for_base_url(&fake.base_url())
        .expect("loopback base URL")
        .with_backoff(Duration::from_millis(1), Duration::from_millis(8));
    // A seller's user token: getPayouts needs the scope sell.finances.
    ApiClient::new(config, seller_tokens(fake)).expect("client")
}

fn creations(fake: &FakeMarketplace) -> usize {
    fake.requests_to(SIGNING_KEY_PATH)
        .iter()
        .filter(|r| r.method == "POST")
        .count()
}

/// The async front's application tokens from `fake`.
fn aio_tokens(
    fake: &FakeMarketplace,
) -> Arc<dyn marketplace_client::aio::oauth::AccessTokenSource> {
    use marketplace_client::aio::oauth::{
        ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
    };
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    Arc::new(ApplicationTokenProvider::new(oauth))
}

/// `consent [flags] signing-key ARGS` against `fake`, `store` the refresh-token file (trace
/// logging on, so that a log line holding a key would show): success, stdout, stderr.
fn consent_signing_key(
    fake: &FakeMarketplace,
    home: &std::path::Path,
    store: &std::path::Path,
    flags: &[&str],
    args: &[&str],
) -> (bool, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_consent"))
        .env_clear()
        .env("HOME", home)
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env("MARKETPLACE_TOKEN_STORE", store)
        .env("RUST_LOG", "trace")
        .args(flags)
        .args(["signing-key"])
        .args(args)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_key_is_created_once_saved_privately_and_signs() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let tokens_file = dir.path().join("store/refresh-tokens.json");
    let keys = SigningKeyFile::beside(&tokens_file);
    assert_eq!(
        keys.path(),
        dir.path().join("store/refresh-tokens.signing-keys.json")
    );
    assert!(keys.current().unwrap().is_none());
    let api = client(&fake);
    let key = keys.signing_key(&api).unwrap();
    assert_eq!(creations(&fake), 1);
    assert_eq!(mode(keys.path()), 0o600);
    assert_eq!(mode(&dir.path().join("store")), 0o700);
    // Found again, by another value on the same file: no new key.
    let again = SigningKeyFile::beside(&tokens_file)
        .signing_key(&api)
        .unwrap();
    assert_eq!(again.jwe(), key.jwe());
    assert_eq!(creations(&fake), 1);
    let listed = keys.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].cipher.as_str(), listed[0].jwe.as_str()),
        ("ED25519", key.jwe())
    );
    let answer = client(&fake)
        .with_signing_key(key)
        .send(ApiRequest::get(PAYOUTS_PATH))
        .expect("signed getPayouts");
    assert_eq!(answer.status(), 200);

    // A file that group or others may read is refused, and no key is created.
    std::fs::set_permissions(keys.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let error = keys.signing_key(&api).unwrap_err();
    assert!(
        matches!(&error, SigningKeyStoreError::Store(marketplace_client::oauth::OAuthError::Store(e)) if e.is_insecure()),
        "{error:?}"
    );
    assert_eq!(creations(&fake), 1);
}

#[test]
fn a_key_within_thirty_days_of_its_expiry_is_replaced_and_kept_until_it_expires() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let keys = SigningKeyFile::new(dir.path().join("signing-keys.json"));
    let api = client(&fake);
    let first = keys.signing_key(&api).unwrap().jwe().to_owned();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expire_at = |at: u64| {
        let mut body: Value = serde_json::from_slice(&std::fs::read(keys.path()).unwrap()).unwrap();
        for key in body["keys"].as_array_mut().unwrap() {
            if key["jwe"] == first.as_str() {
                key["expiration_time"] = at.into();
            }
        }
        // Written in place: the mode stays 0600.
        std::fs::write(keys.path(), serde_json::to_vec(&body).unwrap()).unwrap();
    };
    expire_at(now + 31 * 86400);
    assert_eq!(keys.signing_key(&api).unwrap().jwe(), first, "kept");
    assert_eq!(creations(&fake), 1);
    expire_at(now + 29 * 86400);
    let second = keys.signing_key(&api).unwrap().jwe().to_owned();
    assert_ne!(second, first, "replaced");
    assert_eq!(creations(&fake), 2);
    let listed: Vec<String> = keys.list().unwrap().into_iter().map(|k| k.jwe).collect();
    assert_eq!(
        listed,
        [second.clone(), first.clone()],
        "newest first, the old one kept"
    );
    assert_eq!(keys.current().unwrap().unwrap().jwe(), second);
    // Once the old key has expired, the next creation forgets it.
    expire_at(now - 1);
    let third = keys.rotate(&api).unwrap().jwe().to_owned();
    assert_eq!(creations(&fake), 3);
    let listed: Vec<String> = keys.list().unwrap().into_iter().map(|k| k.jwe).collect();
    assert_eq!(listed, [third, second]);
}

/// The signing-key file's refusals name it for what it is (not "the refresh-token store", whose
/// advice would be wrong), and docs/security.md lists it, and the account→eBay-user file, among
/// the files that hold a secret or personal data.
#[test]
fn the_signing_key_file_is_named_as_such_in_errors_and_in_the_security_notes() {
    let dir = tempfile::tempdir().unwrap();
    let keys = SigningKeyFile::beside(dir.path().join("refresh-tokens.json"));
    std::fs::write(keys.path(), b"{}").unwrap();
    std::fs::set_permissions(keys.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let insecure = keys.list().unwrap_err().to_string();
    assert!(
        insecure.contains("the signing-key file") && !insecure.contains("refresh-token store"),
        "{insecure}"
    );
    std::fs::set_permissions(keys.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
    let corrupt = keys.list().unwrap_err().to_string();
    assert!(
        corrupt.contains("the signing-key file") && !corrupt.contains("consent"),
        "{corrupt}"
    );
    let notes = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/security.md"),
    )
    .unwrap();
    for file in ["signing-keys.json", "users.json", "consents.json"] {
        assert!(
            notes.contains(file),
            "docs/security.md does not name {file}"
        );
    }
    assert!(!notes.contains("The only file that holds a secret"));
}

/// Two applications' refresh-token files in one directory get a signing-key file each: a key
/// is its application's (eBay refuses another application's requests signed with it, errorId
/// 215120), so the second application creates its own.
#[test]
fn two_stores_in_one_directory_never_share_a_signing_key() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let first = SigningKeyFile::beside(dir.path().join("refresh-tokens.json"));
    let second = SigningKeyFile::beside(dir.path().join("other-app.json"));
    assert_ne!(first.path(), second.path());
    assert_eq!(
        second.path(),
        dir.path().join("other-app.signing-keys.json")
    );
    let api = client(&fake);
    let a = first.signing_key(&api).unwrap().jwe().to_owned();
    let b = second.signing_key(&api).unwrap().jwe().to_owned();
    assert_ne!(a, b, "the second store created its own key");
    assert_eq!(creations(&fake), 2);
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Rewrites the expiry of every key in the file (in place: the mode stays 0600).
fn set_expiry(keys: &SigningKeyFile, at: u64) {
    let mut body: Value = serde_json::from_slice(&std::fs::read(keys.path()).unwrap()).unwrap();
    for key in body["keys"].as_array_mut().unwrap() {
        key["expiration_time"] = at.into();
    }
    std::fs::write(keys.path(), serde_json::to_vec(&body).unwrap()).unwrap();
}

/// A key due for renewal still signs when createSigningKey fails (blocking and async fronts):
/// a backend starting then can sign until the key expires, the creation is tried again later,
/// not at every call, and an expired key is no fallback.
#[test]
fn a_key_due_for_renewal_signs_while_its_replacement_cannot_be_created() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let keys = SigningKeyFile::new(dir.path().join("keys.json"));
    let api = client(&fake);
    let first = keys.signing_key(&api).unwrap().jwe().to_owned();
    set_expiry(&keys, unix_now() + 10 * 86400);
    let outage = fake_marketplace::Fault::Status {
        status: 500,
        body: String::new(),
        headers: Vec::new(),
    };
    fake.fail_times(SIGNING_KEY_PATH, outage, 1000);
    let key = keys.signing_key(&api).expect("the stored key, still valid");
    assert_eq!(key.jwe(), first);
    let tried = creations(&fake);
    assert!(tried > 1, "createSigningKey was tried: {tried}");
    assert_eq!(keys.signing_key(&api).unwrap().jwe(), first);
    assert_eq!(creations(&fake), tried, "not tried again at once");
    // The async front, through another value on the file (no failure of its own yet).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let aio = marketplace_client::aio::api::ApiClient::new(
        marketplace_client::aio::api::ClientConfig::for_base_url(&fake.base_url())
            .unwrap()
            .with_backoff(Duration::from_millis(1), Duration::from_millis(8)),
        aio_tokens(&fake),
    )
    .unwrap();
    let other = SigningKeyFile::new(keys.path());
    let key = runtime
        .block_on(other.signing_key_async(&aio))
        .expect("the stored key, still valid");
    assert_eq!(key.jwe(), first);
    // Expired: no fallback, the failure is the answer.
    set_expiry(&keys, unix_now() - 1);
    let error = SigningKeyFile::new(keys.path())
        .signing_key(&api)
        .unwrap_err();
    assert!(
        matches!(&error, SigningKeyStoreError::Api(e) if e.status() == Some(500)),
        "{error:?}"
    );
}

/// The RFC 9421 sample Ed25519 key (base64 PKCS#8) and a JWE, as createSigningKey answers them.
const SAMPLE_KEY: &str = "MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF";
const SAMPLE_JWE: &str = "eyJhbGciOiJBMjU2R0NNS1ciLCJlbmMiOiJBMjU2R0NNIiwiemlwIjoiREVGIiwiaXYiOiJvSzFwdXJNVHQtci14VUwzIiwidGFnIjoiTjB4WjI4ZklZckFmYkd5UWFrTnpjZyJ9.AYdKU7ObIc7Z764OrlKpwUViK8Rphxl0xMP9v2_o9mI.1DbZiSQNRK6pLeIw.Yzp3IDV8RM_h_lMAnwGpMA4DXbaDdmqAh-65kO9xyDgzHD6s0kY3p-yO6oPR9kEcAbjGXIULeQKWVYzbfHKwXTY09Npj_mNuO5yxgZtWnL55uIgP2HL1So2dKkZRK0eyPa6DEXJT71lPtwZtpIGyq9R5h6s3kGMbqA.m4t_MX4VnlXJGx1X_zZ-KQ";

/// createSigningKey's answer `200` with `fields` changed from eBay's documented shape.
fn drifted_answer(fake: &FakeMarketplace, changes: Value) {
    let mut body = serde_json::json!({
        "signingKeyId": "e7f5d9c2-0000-4000-8000-000000000001",
        "signingKeyCipher": "ED25519",
        "creationTime": 1_700_000_000u64,
        "expirationTime": 1_794_608_000u64,
        "jwe": SAMPLE_JWE,
        "privateKey": SAMPLE_KEY,
        "publicKey": "MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs="
    });
    for (name, value) in changes.as_object().unwrap() {
        body[name] = value.clone();
    }
    fake.fail_next(
        SIGNING_KEY_PATH,
        fake_marketplace::Fault::Status {
            status: 200,
            body: body.to_string(),
            headers: vec![("Content-Type".into(), "application/json".into())],
        },
    );
}

/// createSigningKey's answer is never quoted in an error (it holds the private key): a field
/// the key needs, of another type, is an error naming the field; a descriptive field of
/// another type is set aside and the key kept.
#[test]
fn a_drifted_create_signing_key_answer_never_shows_the_private_key() {
    let fake = fake();
    let api = client(&fake);
    drifted_answer(&fake, serde_json::json!({ "jwe": null }));
    let error = api.create_signing_key("ED25519").unwrap_err();
    for text in [error.to_string(), format!("{error:?}")] {
        assert!(!text.contains(&SAMPLE_KEY[..20]), "{text}");
        assert!(text.contains("jwe"), "{text}");
    }
    assert!(
        matches!(
            &error,
            marketplace_client::api::ApiError::KeyManagementAnswer {
                field: Some("jwe"),
                status: 200,
                ..
            }
        ),
        "{error:?}"
    );
    drifted_answer(
        &fake,
        serde_json::json!({ "signingKeyCipher": null, "expirationTime": "2029-01-01" }),
    );
    let created = api
        .create_signing_key("ED25519")
        .expect("the key is usable");
    assert_eq!(created.private_key(), SAMPLE_KEY);
    assert_eq!(created.info.cipher, "ED25519", "the key's own cipher");
    assert_eq!(created.info.expiration_time, None);
    assert_eq!(created.unexpected_fields(), ["expirationTime"]);
    assert!(!format!("{created:?}").contains(&SAMPLE_KEY[..20]));
}

/// `consent signing-key create` against an answer with a mistyped field prints no key
/// material, and keeps the key (the file holds it; eBay shows it once).
#[test]
fn consent_signing_key_create_prints_no_key_of_a_drifted_answer() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("refresh-tokens.json");
    let run = |args: &[&str]| {
        let (ok, stdout, stderr) = consent_signing_key(&fake, dir.path(), &store, &["-v"], args);
        (ok, format!("{stdout}{stderr}"))
    };
    drifted_answer(&fake, serde_json::json!({ "signingKeyCipher": null }));
    let (ok, text) = run(&["create"]);
    assert!(ok, "{text}");
    assert!(!text.contains(&SAMPLE_KEY[..20]), "{text}");
    let keys = SigningKeyFile::beside(&store);
    assert_eq!(keys.current().unwrap().unwrap().jwe(), SAMPLE_JWE, "kept");
    // A field the key needs, mistyped: an error that names it, and no key material.
    drifted_answer(&fake, serde_json::json!({ "signingKeyId": 42 }));
    let (ok, text) = run(&["rotate"]);
    assert!(!ok, "{text}");
    assert!(text.contains("signingKeyId"), "{text}");
    assert!(!text.contains(&SAMPLE_KEY[..20]), "{text}");
}

#[test]
fn eight_processes_sharing_the_file_create_one_key() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signing-keys.json");
    let start = Arc::new(Barrier::new(8));
    let jwes: Vec<String> = std::thread::scope(|scope| {
        let finders: Vec<_> = (0..8)
            .map(|_| {
                // A store value and a client of its own for each, as processes have.
                let keys = SigningKeyFile::new(&path);
                let api = client(&fake);
                let start = start.clone();
                scope.spawn(move || {
                    start.wait();
                    keys.signing_key(&api).unwrap().jwe().to_owned()
                })
            })
            .collect();
        finders.into_iter().map(|f| f.join().unwrap()).collect()
    });
    assert_eq!(creations(&fake), 1, "createSigningKey calls");
    assert!(jwes.iter().all(|j| *j == jwes[0]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_front_creates_one_key_for_eight_tasks_and_signs_with_it() {
    use marketplace_client::aio::api::{ApiClient, ApiRequest, ClientConfig};
    let fake = FakeMarketplace::new();
    // A seller's user token: getPayouts needs the scope sell.finances.
    let seller = support::aio_seller_tokens(&fake).await;
    let tokens = |_: &FakeMarketplace| seller.clone();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signing-keys.json");
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_backoff(Duration::from_millis(1), Duration::from_millis(8));
    let start = Arc::new(tokio::sync::Barrier::new(8));
    let mut finders = Vec::new();
    for _ in 0..8 {
        let keys = SigningKeyFile::new(&path);
        let api = ApiClient::new(config.clone(), tokens(&fake)).unwrap();
        let start = start.clone();
        finders.push(tokio::spawn(async move {
            start.wait().await;
            let key = keys.signing_key_async(&api).await.unwrap();
            api.with_signing_key(key)
                .send(ApiRequest::get(PAYOUTS_PATH))
                .await
                .expect("signed getPayouts")
                .status()
        }));
    }
    for finder in finders {
        assert_eq!(finder.await.unwrap(), 200);
    }
    assert_eq!(creations(&fake), 1);
    let api = ApiClient::new(config, tokens(&fake)).unwrap();
    let keys = SigningKeyFile::new(&path);
    let before = keys.current().unwrap().unwrap().jwe().to_owned();
    let rotated = keys.rotate_async(&api).await.unwrap();
    assert_ne!(rotated.jwe(), before);
    assert_eq!(keys.list().unwrap().len(), 2);
}

/// `consent signing-key create|show|rotate` against the fake, with MARKETPLACE_TOKEN_STORE a
/// refresh-token file: the key is kept beside it, and no output holds the private key.
#[test]
fn the_consent_command_creates_shows_and_rotates_the_key() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("refresh-tokens.json");
    let run = |args: &[&str]| consent_signing_key(&fake, dir.path(), &store, &[], args);
    let (ok, _, stderr) = run(&["show"]);
    assert!(!ok && stderr.contains("no signing key"), "{stderr}");
    let (ok, created, stderr) = run(&["create"]);
    assert!(ok, "{stderr}");
    assert_eq!(creations(&fake), 1);
    let keys = SigningKeyFile::beside(&store);
    let listed = keys.list().unwrap();
    assert_eq!(listed.len(), 1);
    assert!(
        created.starts_with(&format!(
            "signing-key {} cipher ED25519 created 20",
            listed[0].signing_key_id
        )),
        "{created}"
    );
    assert!(created.contains(" expires 20"), "{created}");
    let (ok, again, _) = run(&["create"]);
    assert!(ok);
    assert_eq!(again, created, "an existing key is kept");
    assert_eq!(creations(&fake), 1);
    let (ok, rotated, stderr) = run(&["rotate"]);
    assert!(ok, "{stderr}");
    assert_eq!(creations(&fake), 2);
    assert_eq!(rotated.lines().count(), 2, "{rotated}");
    assert!(rotated.lines().nth(1).unwrap().starts_with("older-key "));
    let (ok, shown, stderr) = run(&["show"]);
    assert!(ok);
    assert_eq!(shown, rotated);
    // No output holds a private key (base64 PKCS#8 DER, as the file keeps it).
    let file: Value = serde_json::from_slice(&std::fs::read(keys.path()).unwrap()).unwrap();
    for key in file["keys"].as_array().unwrap() {
        let private = key["private_key"].as_str().unwrap();
        for text in [&created, &rotated, &shown, &stderr] {
            assert!(!text.contains(&private[..24]), "{text}");
        }
    }
}
