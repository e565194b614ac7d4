//! `fake-marketplace -v`: one line per request served on standard error (method, path,
//! status, a token request's grant type), so that an operator sees how many token requests a
//! fleet makes; never the client secret, a code, a refresh token or an access token.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake_marketplace::taxonomy::DEFAULT_TREE_ID_PATH;
use fake_marketplace::{FakeConfig, TOKEN_PATH};

/// Standard base64 (the fake has a decoder only: the encoding is the client's job).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One HTTP/1.1 exchange with the fake at `base` (`http://127.0.0.1:PORT`): the status and
/// the body.
fn exchange(
    base: &str,
    method: &str,
    target: &str,
    headers: &[String],
    body: &str,
) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut request =
        format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

#[test]
fn verbose_logs_each_request_with_its_grant_type_and_no_secret() {
    let config = FakeConfig::default();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-marketplace"))
        .args(["0", "--no-delay", "-v"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut base = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut base)
        .unwrap();
    let base = base.trim().to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = log.clone();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            sink.lock().unwrap().push(line.unwrap());
        }
    });

    let basic = format!(
        "Authorization: Basic {}",
        base64(format!("{}:{}", config.client_id, config.client_secret).as_bytes())
    );
    let form = "Content-Type: application/x-www-form-urlencoded".to_owned();
    let scope = fake_marketplace::percent_encode(&format!("{base}/oauth/api_scope"));
    let (status, body) = exchange(
        &base,
        "POST",
        TOKEN_PATH,
        &[basic.clone(), form.clone()],
        &format!("grant_type=client_credentials&scope={scope}"),
    );
    assert_eq!(status, 200, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    let token = answer["access_token"].as_str().unwrap().to_owned();
    let (status, body) = exchange(
        &base,
        "GET",
        &format!("{DEFAULT_TREE_ID_PATH}?marketplace_id=EBAY_US"),
        &[format!("Authorization: Bearer {token}")],
        "",
    );
    assert_eq!(status, 200, "{body}");
    let refresh_token = "v^1.1#i^1#made-up-refresh-token-0123456789";
    let (status, body) = exchange(
        &base,
        "POST",
        TOKEN_PATH,
        &[basic.clone(), form],
        &format!(
            "grant_type=refresh_token&refresh_token={}",
            fake_marketplace::percent_encode(refresh_token)
        ),
    );
    assert_eq!(status, 400, "{body}");

    // The lines are written before each answer; wait for the third.
    let deadline = Instant::now() + Duration::from_secs(10);
    let served = || -> Vec<String> {
        log.lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with("GET ") || l.starts_with("POST "))
            .cloned()
            .collect()
    };
    while served().len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    let served = served();
    assert_eq!(
        served,
        [
            format!("POST {TOKEN_PATH} 200 grant_type=client_credentials"),
            format!("GET {DEFAULT_TREE_ID_PATH} 200"),
            format!("POST {TOKEN_PATH} 400 grant_type=refresh_token"),
        ],
        "{:#?}",
        log.lock().unwrap()
    );
    // The start-up lines print the client secret on purpose (the `export` line); the request
    // lines never hold a secret.
    let request_lines = served.join("\n");
    for secret in [
        config.client_secret.as_str(),
        token.as_str(),
        refresh_token,
        basic.trim_start_matches("Authorization: Basic "),
    ] {
        assert!(!request_lines.contains(secret), "{request_lines}");
    }
}

#[test]
fn without_verbose_no_request_is_logged() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-marketplace"))
        .args(["0", "--no-delay"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut base = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut base)
        .unwrap();
    let base = base.trim().to_owned();
    let (status, _) = exchange(
        &base,
        "GET",
        &format!("{DEFAULT_TREE_ID_PATH}?marketplace_id=EBAY_US"),
        &[],
        "",
    );
    assert_eq!(status, 401);
    child.kill().unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("fake marketplace on"), "{stderr}");
    assert!(!stderr.lines().any(|l| l.starts_with("GET ")), "{stderr}");
}
