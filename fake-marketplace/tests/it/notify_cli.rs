//! `fake-marketplace notify …` against an endpoint on loopback that checks each notification
//! as eBay's SDKs do: the signature (ECDSA P-256 over SHA-1 of the body) with the key the
//! running fake serves on getPublicKey, answering 204 when it verifies and 412 when not.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};

use fake_marketplace::{FakeMarketplace, base64_decode};
use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::pkcs8::DecodePublicKey as _;
use sha1::{Digest as _, Sha1};

/// One notification the endpoint received: its body, and whether its signature verified.
type Received = (serde_json::Value, bool);

/// An endpoint verifying with `pem` (getPublicKey's one-line PEM); returns its URL and what
/// it received.
fn endpoint(pem: &str) -> (String, Arc<Mutex<Vec<Received>>>) {
    let der = base64_decode(
        pem.trim_start_matches("-----BEGIN PUBLIC KEY-----")
            .trim_end_matches("-----END PUBLIC KEY-----"),
    )
    .unwrap();
    let key = VerifyingKey::from_public_key_der(&der).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/ebay/notifications",
        listener.local_addr().unwrap()
    );
    let received = Arc::new(Mutex::new(Vec::new()));
    let sink = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut length, mut signature) = (0, String::new());
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap() > 0 && line != "\r\n" {
                if let Some((name, value)) = line.trim_end().split_once(": ") {
                    match name.to_ascii_lowercase().as_str() {
                        "content-length" => length = value.parse().unwrap(),
                        "x-ebay-signature" => signature = value.to_owned(),
                        _ => {}
                    }
                }
                line.clear();
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let header: serde_json::Value =
                serde_json::from_slice(&base64_decode(&signature).unwrap()).unwrap();
            let der = base64_decode(header["signature"].as_str().unwrap()).unwrap();
            let verified = key
                .verify_prehash(&Sha1::digest(&body), &Signature::from_der(&der).unwrap())
                .is_ok();
            sink.lock()
                .unwrap()
                .push((serde_json::from_slice(&body).unwrap(), verified));
            let status = if verified {
                "204 No Content"
            } else {
                "412 Precondition Failed"
            };
            write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
        }
    });
    (url, received)
}

fn notify(fake: &FakeMarketplace, url: &str, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_fake-marketplace"))
        .args(["notify", url, "--fake", &fake.base_url()])
        .args(args)
        .env_remove("MARKETPLACE_BASE_URL")
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn notify_sends_signed_retries_of_one_notification_and_tampered_ones() {
    let fake = FakeMarketplace::new();
    let (url, received) = endpoint(&fake.notification_public_key_pem());

    let (ok, stdout, stderr) = notify(
        &fake,
        &url,
        &[
            "--user-id",
            "aliceUserId01",
            "--username",
            "alice_sells",
            "--repeat",
            "3",
        ],
    );
    assert!(ok, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    for (n, line) in lines.iter().enumerate() {
        assert!(
            line.starts_with(&format!("attempt {} of notification ", n + 1)),
            "{line}"
        );
        assert!(line.ends_with(": 204"), "{line}");
    }
    {
        let received = received.lock().unwrap();
        assert_eq!(received.len(), 3);
        let id = &received[0].0["notification"]["notificationId"];
        for (n, (body, verified)) in received.iter().enumerate() {
            assert!(verified, "attempt {n} is signed with the fake's key");
            assert_eq!(body["metadata"]["topic"], "MARKETPLACE_ACCOUNT_DELETION");
            assert_eq!(
                &body["notification"]["notificationId"], id,
                "the same notification"
            );
            assert_eq!(body["notification"]["publishAttemptCount"], n + 1);
            assert_eq!(body["notification"]["data"]["userId"], "aliceUserId01");
            assert_eq!(body["notification"]["data"]["username"], "alice_sells");
        }
    }

    for tampered in ["--tampered", "--tampered=signature"] {
        let (ok, stdout, stderr) = notify(&fake, &url, &[tampered]);
        assert!(ok, "{stderr}");
        assert!(stdout.trim_end().ends_with(": 412"), "{tampered}: {stdout}");
        let last = received.lock().unwrap().last().cloned().unwrap();
        assert!(!last.1, "{tampered}: the endpoint could not verify it");
    }
    assert_eq!(received.lock().unwrap().len(), 5);

    // Another fake's key does not verify here (the key is the fake's at --fake).
    let other = FakeMarketplace::new();
    let (ok, stdout, _) = notify(&other, &url, &[]);
    assert!(ok);
    assert!(stdout.trim_end().ends_with(": 412"), "{stdout}");
}

#[test]
fn notify_without_an_endpoint_or_a_fake_says_what_is_missing() {
    let output = Command::new(env!("CARGO_BIN_EXE_fake-marketplace"))
        .args(["notify", "http://127.0.0.1:9/ebay/notifications"])
        .env_remove("MARKETPLACE_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--fake URL"));
    let output = Command::new(env!("CARGO_BIN_EXE_fake-marketplace"))
        .args(["notify", "--repeat", "0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--repeat"));
}
