//! The `consent` command end to end against the fake: the pasted redirect on standard input,
//! the one-shot loopback listener, the stored token and later silent refreshes.

use crate::common;
use crate::oauth_support as support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use fake_marketplace::FakeMarketplace;
use support::*;

fn consent(fake: &FakeMarketplace, home: &Path, redirect_uri: &str) -> Command {
    let mut cmd = common::clean_command(env!("CARGO_BIN_EXE_consent"));
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env("MARKETPLACE_REDIRECT_URI", redirect_uri)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `consent --store STORE authorize --input stdin`.
fn authorize_from_stdin(fake: &FakeMarketplace, home: &Path, store: &Path) -> Command {
    let mut cmd = consent(fake, home, RU_NAME);
    cmd.args([
        "--store",
        store.to_str().unwrap(),
        "authorize",
        "--input",
        "stdin",
    ]);
    cmd
}

/// Reads the consent URL the command prints first.
fn read_url(child: &mut Child) -> (String, BufReader<std::process::ChildStdout>) {
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    (line.trim().to_owned(), stdout)
}

fn finish(mut child: Child, mut stdout: BufReader<std::process::ChildStdout>) -> Output {
    drop(child.stdin.take());
    let mut out = Vec::new();
    stdout.read_to_end(&mut out).unwrap();
    let mut err = Vec::new();
    child.stderr.take().unwrap().read_to_end(&mut err).unwrap();
    let status = child.wait().unwrap();
    Output {
        status,
        stdout: out,
        stderr: err,
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn stored_refresh_token(path: &Path) -> String {
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    json["accounts"]["default"]["refresh_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn consent_with_pasted_redirect_then_status_and_token() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("tokens/refresh.json");

    let mut child = authorize_from_stdin(&fake, home.path(), &store)
        .args([
            "--scope",
            &fake.scope(""),
            "--scope",
            &fake.scope("/sell.inventory"),
        ])
        .spawn()
        .unwrap();
    let (url, stdout) = read_url(&mut child);
    assert!(
        url.starts_with(&format!("{}/oauth2/authorize?", fake.auth_url())),
        "{url}"
    );
    let landed = visit_consent(&url);
    writeln!(child.stdin.as_mut().unwrap(), "{landed}").unwrap();
    let output = finish(child, stdout);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    assert!(stderr.contains("Stored the refresh token"), "{stderr}");

    // The exchange reached the fake with the exact code; the token is stored 0600.
    let requests = fake.token_requests();
    assert_eq!(requests.len(), 1);
    let form = requests[0].form().unwrap();
    assert_eq!(form[0].1, "authorization_code");
    let code = marketplace_client::test_util::parse_redirect(&landed)
        .unwrap()
        .code;
    assert_eq!(form[1].1, code.secret());
    assert_eq!(form[2].1, RU_NAME);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&store).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let refresh = stored_refresh_token(&store);
    assert!(fake.live_refresh_tokens().contains(&refresh));
    assert!(!stderr.contains(&refresh) && !text(&output.stdout).contains(&refresh));

    // `status` refreshes silently and prints no secret.
    let output = consent(&fake, home.path(), RU_NAME)
        .args(["--store", store.to_str().unwrap(), "status"])
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(stdout.contains("access token: refreshed"), "{stdout}");
    assert!(stdout.contains(&fake.scope("/sell.inventory")), "{stdout}");
    assert!(!stdout.contains(&refresh));
    assert_eq!(fake.token_requests().len(), 2);
    let form = fake.token_requests()[1].form().unwrap();
    assert_eq!(form[0].1, "refresh_token");
    assert_eq!(form[1].1, refresh);

    // `token` prints a user token the fake issued.
    let output = consent(&fake, home.path(), RU_NAME)
        .args(["--store", store.to_str().unwrap(), "token"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let token = text(&output.stdout).trim().to_owned();
    let issued = fake.issued_token(&token).expect("a token of the fake");
    assert_eq!(issued.token_type, "User Access Token");

    // `forget` removes it; `token` then says to run consent.
    let output = consent(&fake, home.path(), RU_NAME)
        .args(["--store", store.to_str().unwrap(), "forget"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let output = consent(&fake, home.path(), RU_NAME)
        .args(["--store", store.to_str().unwrap(), "token"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("the seller must consent: run `consent --account"),
        "{}",
        text(&output.stderr)
    );
    // `forget` again (or with a typo): nothing is stored, so it says so and fails.
    let output = consent(&fake, home.path(), RU_NAME)
        .args(["--store", store.to_str().unwrap(), "forget"])
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("no refresh token is stored for account") && !stderr.contains("Removed"),
        "{stderr}"
    );
}

#[test]
fn consent_with_loopback_listener() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    // The default store under $XDG_CONFIG_HOME, the default input (auto: listen).
    let mut child = consent(&fake, home.path(), &redirect_uri).spawn().unwrap();
    let (url, stdout) = read_url(&mut child);

    // The browser: follows the fake's redirect to the command's listener.
    let browser = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let page = browser.get(&url).send().unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().unwrap().contains("Consent received"));

    let output = finish(child, stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let store = home
        .path()
        .join("config/marketplace-toolkit/refresh-tokens.json");
    let refresh = stored_refresh_token(&store);
    assert!(fake.live_refresh_tokens().contains(&refresh));
    let form = fake.token_requests()[0].form().unwrap();
    assert_eq!(form[2], ("redirect_uri".to_owned(), redirect_uri));
}

#[test]
fn consent_rejects_a_redirect_with_another_state() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    let mut child = authorize_from_stdin(&fake, home.path(), &store)
        .spawn()
        .unwrap();
    let (url, stdout) = read_url(&mut child);
    let landed = visit_consent(&url);
    let (before, after) = landed.split_once("state=").unwrap();
    let forged = format!("{before}state=forged{}", &after[after.find('&').unwrap()..]);
    writeln!(child.stdin.as_mut().unwrap(), "{forged}").unwrap();
    let output = finish(child, stdout);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("state in the redirect does not match"),
        "{}",
        text(&output.stderr)
    );
    assert!(!store.exists());
    assert!(fake.token_requests().is_empty(), "no code exchange");
}

#[test]
fn status_refuses_a_readable_store() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    std::fs::write(
        &store,
        r#"{"format":"marketplace-toolkit refresh tokens","version":1,"accounts":{}}"#,
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o644)).unwrap();
        let output = consent(&fake, home.path(), RU_NAME)
            .args(["--store", store.to_str().unwrap(), "status"])
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains("chmod 600") && stderr.contains("0644"),
            "{stderr}"
        );
    }
}

#[test]
fn missing_settings_are_named() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let output = consent(&fake, home.path(), RU_NAME)
        .env_remove("MARKETPLACE_CLIENT_SECRET")
        .args(["authorize", "--input", "stdin"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("MARKETPLACE_CLIENT_SECRET"),
        "{}",
        text(&output.stderr)
    );
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Sends one raw request to the listener and returns its status line.
fn raw_get(port: u16, target: &str) -> String {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().unwrap_or_default().to_owned()
}

/// Connects to the listener, retrying while the command starts up.
fn wait_for_listener(port: u16) {
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("the listener on port {port} did not come up");
}

#[test]
fn listener_ignores_stray_and_forged_redirects_and_completes() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let mut child = consent(&fake, home.path(), &redirect_uri)
        .args(["authorize", "--wait", "60"])
        .spawn()
        .unwrap();
    let (url, stdout) = read_url(&mut child);
    wait_for_listener(port);

    // A redirect of another consent request, a refusal without a state, a refusal with a
    // forged state, a request line of 100 KB, another path: each answered and ignored.
    assert!(raw_get(port, "/callback?state=other&code=abc").contains("400"));
    assert!(raw_get(port, "/callback?error=access_denied").contains("400"));
    assert!(
        raw_get(
            port,
            "/callback?state=forged&error=access_denied&error_description=%1B%5B2Jgone"
        )
        .contains("400")
    );
    assert!(raw_get(port, &format!("/callback?x={}", "a".repeat(100_000))).contains("400"));
    assert!(raw_get(port, "/favicon.ico").contains("404"));

    // Then the real redirect still completes the flow.
    let browser = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let page = browser.get(&url).send().unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().unwrap().contains("Consent received"));
    let output = finish(child, stdout);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("Ignored a request"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    assert_eq!(fake.token_requests().len(), 1, "one code exchange");
}

#[test]
fn a_slow_drip_connection_does_not_hold_the_listener_past_wait() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let started = std::time::Instant::now();
    let mut child = consent(&fake, home.path(), &redirect_uri)
        .args(["authorize", "--wait", "2"])
        .spawn()
        .unwrap();
    let (_url, stdout) = read_url(&mut child);
    wait_for_listener(port);
    // One byte every 100 ms, for up to 60 s: each read is quick, the request never ends.
    let dripper = std::thread::spawn(move || {
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
            return;
        };
        for b in b"GET /callback?state=".iter().cycle().take(600) {
            if stream.write_all(&[*b]).is_err() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
    let output = finish(child, stdout);
    let took = started.elapsed();
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("no redirect arrived within 2 s"),
        "{stderr}"
    );
    // Ended at about --wait (generous bound: a correctness check, not a benchmark).
    assert!(took < std::time::Duration::from_secs(15), "{took:?}");
    drop(dripper);
}

#[test]
fn a_refusal_description_is_printed_without_control_characters() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let mut child = consent(&fake, home.path(), &redirect_uri)
        .args(["authorize", "--wait", "60"])
        .spawn()
        .unwrap();
    let (url, stdout) = read_url(&mut child);
    wait_for_listener(port);
    // This request's own state, with a refusal whose description carries escape sequences.
    let state = url::Url::parse(&url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "state")
        .unwrap()
        .1
        .into_owned();
    let target = format!(
        "/callback?state={state}&error=access_denied&error_description=no%1B%5B2J%1B%5D0%3Btitle%07%0Dmore"
    );
    assert!(raw_get(port, &target).contains("200"));
    let output = finish(child, stdout);
    let stderr = text(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("consent was not granted (access_denied)"),
        "{stderr}"
    );
    assert!(
        !stderr.chars().any(|c| c.is_control() && c != '\n'),
        "{stderr:?}"
    );
    assert!(stderr.contains("no\\u{1b}[2J"), "{stderr:?}");
}

/// Runs `command` to its end, failing the test if it takes more than 20 s (a command that
/// opens a named pipe to read waits for a writer forever).
fn output_within_20_s(command: &mut Command) -> Output {
    let mut child = command.stdin(Stdio::null()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the command still runs after 20 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
#[test]
fn authorize_checks_the_store_before_the_seller_consents() {
    use std::os::unix::fs::PermissionsExt;
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let valid = r#"{"format":"marketplace-toolkit refresh tokens","version":1,"accounts":{}}"#;

    let readable = home.path().join("readable.json");
    std::fs::write(&readable, valid).unwrap();
    std::fs::set_permissions(&readable, std::fs::Permissions::from_mode(0o644)).unwrap();
    let garbage = home.path().join("garbage.json");
    std::fs::write(&garbage, "garbage").unwrap();
    std::fs::set_permissions(&garbage, std::fs::Permissions::from_mode(0o600)).unwrap();
    let directory = home.path().join("directory.json");
    std::fs::create_dir(&directory).unwrap();
    let slash = format!("{}/", home.path().join("slash.json").display());

    for (store, says) in [
        (readable.display().to_string(), "chmod 600"),
        (garbage.display().to_string(), "is not valid"),
        (directory.display().to_string(), "is a directory"),
        (slash, "ends in a slash"),
    ] {
        let output = output_within_20_s(&mut authorize_from_stdin(
            &fake,
            home.path(),
            Path::new(&store),
        ));
        let stderr = text(&output.stderr);
        assert!(!output.status.success(), "{store}: {stderr}");
        // Refused before the consent URL: the seller is never sent to consent, so no code
        // is spent on a store that cannot keep its refresh token.
        assert!(
            output.stdout.is_empty(),
            "{store}: the consent URL was printed: {}",
            text(&output.stdout)
        );
        assert!(stderr.contains(says), "{store}: {stderr}");
        assert!(stderr.contains("Nothing was sent"), "{store}: {stderr}");
    }
    assert!(fake.token_requests().is_empty());
    assert_eq!(std::fs::read_to_string(&readable).unwrap(), valid);
}

#[test]
fn a_store_that_fails_after_consent_keeps_the_token_recoverable() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("tokens/refresh.json");
    let mut child = authorize_from_stdin(&fake, home.path(), &store)
        .spawn()
        .unwrap();
    let (url, stdout) = read_url(&mut child);
    let landed = visit_consent(&url);
    // While the seller consents, the store goes bad (here: something writes garbage to it).
    std::fs::write(&store, "garbage").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    writeln!(child.stdin.as_mut().unwrap(), "{landed}").unwrap();
    let output = finish(child, stdout);
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert_eq!(fake.token_requests().len(), 1, "the code was exchanged");
    assert_eq!(std::fs::read_to_string(&store).unwrap(), "garbage");

    // The refresh token is in a store file of its own beside the store, and the message
    // says where, never what.
    let rescued: Vec<_> = std::fs::read_dir(store.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("refresh-token-rescued-") && name.ends_with(".json")
        })
        .collect();
    assert_eq!(rescued.len(), 1, "{stderr}");
    let rescued = &rescued[0];
    assert!(stderr.contains(&rescued.display().to_string()), "{stderr}");
    let refresh = stored_refresh_token(rescued);
    assert!(fake.live_refresh_tokens().contains(&refresh));
    assert!(!stderr.contains(&refresh) && !text(&output.stdout).contains(&refresh));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(rescued).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    // The rescued file works as a store as it is.
    let output = consent(&fake, home.path(), RU_NAME)
        .args(["--store", rescued.to_str().unwrap(), "status"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("access token: refreshed"));
}

#[cfg(unix)]
#[test]
fn status_names_a_directory_or_a_pipe_at_the_store_path_and_does_not_hang() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let directory = home.path().join("directory.json");
    std::fs::create_dir(&directory).unwrap();
    let pipe = home.path().join("pipe.json");
    let made = Command::new("mkfifo").arg(&pipe).status().unwrap();
    assert!(made.success());
    for (store, says) in [(&directory, "is a directory"), (&pipe, "is a named pipe")] {
        let output = output_within_20_s(consent(&fake, home.path(), RU_NAME).args([
            "--store",
            store.to_str().unwrap(),
            "status",
        ]));
        let stderr = text(&output.stderr);
        assert!(!output.status.success());
        assert!(stderr.contains(says), "{stderr}");
        assert!(!stderr.contains("chmod"), "{stderr}");
    }
}

/// Plays the browser for an `authorize` child reading standard input: visits the URL it
/// prints and pastes where the browser lands. A command that prints no URL fails the test
/// with its error.
fn consent_through_browser(mut child: Child) -> Output {
    let (url, stdout) = read_url(&mut child);
    if url.is_empty() {
        let output = finish(child, stdout);
        panic!("no consent URL printed: {}", text(&output.stderr));
    }
    let landed = visit_consent(&url);
    writeln!(child.stdin.as_mut().unwrap(), "{landed}").unwrap();
    finish(child, stdout)
}

/// The `consent` commands of the `sh` blocks of README.md and docs/oauth.md, as their
/// arguments (after `cargo run --bin consent --`), comments dropped.
fn documented_consent_commands() -> Vec<Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut commands = Vec::new();
    for doc in ["README.md", "crates/marketplace-client/docs/oauth.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let mut in_sh = false;
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with("```") {
                in_sh = line == "```sh";
                continue;
            }
            let Some(rest) = line
                .strip_prefix("cargo run --bin consent")
                .filter(|_| in_sh)
            else {
                continue;
            };
            let rest = rest.split('#').next().unwrap().trim();
            let rest = rest.strip_prefix("--").unwrap_or(rest);
            commands.push(rest.split_whitespace().map(str::to_owned).collect());
        }
    }
    commands
}

#[test]
fn documented_consent_commands_run_as_written() {
    let commands = documented_consent_commands();
    assert!(
        commands.len() >= 4,
        "the docs show authorize, status, token and forget: {commands:?}"
    );
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    for args in commands {
        let mut cmd = consent(&fake, home.path(), RU_NAME);
        cmd.env("MARKETPLACE_TOKEN_STORE", &store).args(&args);
        let authorizes = args
            .first()
            .is_none_or(|a| a.starts_with("--") || a == "authorize");
        let output = if authorizes {
            consent_through_browser(cmd.spawn().unwrap())
        } else {
            cmd.output().unwrap()
        };
        assert!(
            output.status.success(),
            "consent {args:?} failed: {}",
            text(&output.stderr)
        );
    }
}

#[test]
fn scope_is_accepted_before_and_after_authorize() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    for args in [
        vec![
            "--scope",
            "https://api.ebay.com/oauth/api_scope/sell.account",
        ],
        vec![
            "authorize",
            "--scope",
            "https://api.ebay.com/oauth/api_scope/sell.account",
        ],
    ] {
        let child = consent(&fake, home.path(), RU_NAME)
            .args(["--store", store.to_str().unwrap()])
            .args(&args)
            .spawn()
            .unwrap();
        let output = consent_through_browser(child);
        let stderr = text(&output.stderr);
        assert!(output.status.success(), "{args:?}: {stderr}");
        assert!(stderr.contains("sell.account"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_refused_scope_blames_the_configuration_not_the_seller() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    let child = authorize_from_stdin(&fake, home.path(), &store)
        .args([
            "--scope",
            "https://api.ebay.com/oauth/api_scope/no.such.scope",
        ])
        .spawn()
        .unwrap();
    let output = consent_through_browser(child);
    let stderr = text(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("invalid_scope"), "{stderr}");
    assert!(stderr.contains("--scope"), "{stderr}");
    assert!(
        // Beside the Identity API's scope, which consent adds (getUser).
        stderr.contains("https://api.ebay.com/oauth/api_scope/no.such.scope)"),
        "the refused scope is named: {stderr}"
    );
    assert!(stderr.contains("check the configured scopes"), "{stderr}");
    assert!(!stderr.contains("ask the user"), "{stderr}");
}

#[test]
fn status_shows_an_account_whose_refresh_token_was_revoked() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    let child = consent(&fake, home.path(), RU_NAME)
        .args(["--store", store.to_str().unwrap(), "--account", "shop-7"])
        .spawn()
        .unwrap();
    assert!(consent_through_browser(child).status.success());
    fake.revoke_refresh_tokens();
    let status = || {
        consent(&fake, home.path(), RU_NAME)
            .args([
                "--store",
                store.to_str().unwrap(),
                "--account",
                "shop-7",
                "status",
            ])
            .output()
            .unwrap()
    };
    let output = status();
    let stderr = text(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("\"shop-7\""), "{stderr}");
    assert!(stderr.contains("--account shop-7"), "{stderr}");
    // The store remembers it: the next status says so without asking the server.
    let requests = fake.token_requests().len();
    let output = status();
    let stdout = text(&output.stdout);
    assert!(!output.status.success());
    assert!(stdout.contains("needs consent"), "{stdout}");
    assert!(
        text(&output.stderr).contains("--account shop-7"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(fake.token_requests().len(), requests);
}

/// Consents for the default account into `store` through the command.
fn consent_default(fake: &FakeMarketplace, home: &Path, store: &Path) {
    let child = consent(fake, home, RU_NAME)
        .args(["--store", store.to_str().unwrap()])
        .spawn()
        .unwrap();
    let output = consent_through_browser(child);
    assert!(output.status.success(), "{}", text(&output.stderr));
}

#[test]
fn status_says_one_hour_not_one_hours() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consent_default(&fake, home.path(), &store);
    let output = consent(&fake, home.path(), RU_NAME)
        .args(["--store", store.to_str().unwrap(), "status"])
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    // The fake's access tokens live 2 hours: a moment later, 1 hour 59 minutes are left.
    assert!(
        stdout.contains("access token: refreshed, valid for 1 hour 59 minutes"),
        "{stdout}"
    );
}

#[test]
fn status_into_a_closed_pipe_ends_without_a_panic() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consent_default(&fake, home.path(), &store);
    for command in ["status", "token"] {
        // `consent status | head -0`: the reader is gone before the first line.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = consent(&fake, home.path(), RU_NAME)
            .args(["--store", store.to_str().unwrap(), command])
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert!(!stderr.contains("panicked"), "{command}: {stderr}");
        assert_ne!(output.status.code(), Some(101), "{command}: {stderr}");
    }
}

#[test]
fn a_missing_account_names_the_flag_to_pass() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consent_default(&fake, home.path(), &store);
    for command in ["status", "token"] {
        let output = consent(&fake, home.path(), RU_NAME)
            .args([
                "--store",
                store.to_str().unwrap(),
                "--account",
                "shop-9",
                command,
            ])
            .output()
            .unwrap();
        let stderr = text(&output.stderr);
        assert!(!output.status.success());
        assert!(
            stderr.contains("run `consent --account shop-9`"),
            "{command}: {stderr}"
        );
    }
}

/// A URL of another scheme in `MARKETPLACE_TOKEN_STORE` or `--store` (a JDBC URL pasted from
/// a Java service's settings) is refused, naming its scheme only: the password it holds is
/// never printed, and no file is created under its name, whatever the command.
#[test]
fn a_store_url_of_another_scheme_is_refused_without_echoing_it() {
    const PASSWORD: &str = "hunter2-S3cret";
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let urls = [
        format!("jdbc:postgresql://db.internal:5432/backend?user=backend&password={PASSWORD}"),
        format!("mysql://backend:{PASSWORD}@db.internal/backend"),
        format!("postgress://backend:{PASSWORD}@db.internal/backend"),
    ];
    for url in &urls {
        let scheme = url.split("://").next().unwrap();
        for (how, args) in [
            ("the variable, consent", vec![]),
            ("the variable", vec!["--input", "stdin"]),
            ("the variable", vec!["status"]),
            ("the variable", vec!["list"]),
            ("the variable", vec!["token"]),
            ("the variable", vec!["forget"]),
            ("the flag", vec!["--store", url.as_str(), "status"]),
        ] {
            let mut command = consent(&fake, home.path(), RU_NAME);
            command.current_dir(cwd.path()).args(&args);
            if how.starts_with("the variable") {
                command.env("MARKETPLACE_TOKEN_STORE", url);
            }
            let mut child = command.spawn().unwrap();
            // Unfixed, the command printed a consent URL: play the seller, so that what it
            // does with the refresh token shows.
            let (first, stdout) = read_url(&mut child);
            if first.starts_with("http") {
                let landed = visit_consent(&first);
                let _ = writeln!(child.stdin.as_mut().unwrap(), "{landed}");
            }
            let output = finish(child, stdout);
            let (out, err) = (text(&output.stdout), text(&output.stderr));
            let all = format!("{first}\n{out}\n{err}");
            assert!(!output.status.success(), "{how} {args:?} {url}: {all}");
            assert!(!all.contains(PASSWORD), "{how} {args:?}: {all}");
            assert!(!all.contains("db.internal"), "{how} {args:?}: {all}");
            assert!(
                err.contains(&format!("{scheme}://")),
                "{how} {args:?}: {err}"
            );
            assert!(err.contains("postgres://"), "{how} {args:?}: {err}");
            let created: Vec<_> = std::fs::read_dir(cwd.path())
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            assert!(created.is_empty(), "{how} {args:?}: created {created:?}");
        }
    }
    assert!(fake.token_requests().is_empty(), "no code was spent");
}

/// After a failed save, the message says how to bring the rescued token into the store:
/// `consent import FILE`, which does it, says what it did and prints no token; a second
/// import changes nothing, and an older file never replaces a newer consent.
#[test]
fn a_rescued_token_is_imported_into_the_fixed_store() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("tokens/refresh.json");
    let mut child = authorize_from_stdin(&fake, home.path(), &store)
        .spawn()
        .unwrap();
    let (url, stdout) = read_url(&mut child);
    let landed = visit_consent(&url);
    std::fs::write(&store, "garbage").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    writeln!(child.stdin.as_mut().unwrap(), "{landed}").unwrap();
    let output = finish(child, stdout);
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    let rescued = std::fs::read_dir(store.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("refresh-token-rescued-") && name.ends_with(".json")
        })
        .expect("a rescued file");
    let import = format!("consent -- import {}", rescued.display());
    assert!(
        stderr.contains(&import),
        "the message names the import: {stderr}"
    );
    assert!(!stderr.contains("move it"), "{stderr}");
    let refresh = stored_refresh_token(&rescued);

    // The store fixed (here: the garbage removed), the import brings the token in.
    std::fs::remove_file(&store).unwrap();
    let run = |args: &[&str]| {
        consent(&fake, home.path(), RU_NAME)
            .args(["--store", store.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap()
    };
    let imported = run(&["import", rescued.to_str().unwrap()]);
    let said = format!("{}{}", text(&imported.stdout), text(&imported.stderr));
    assert!(imported.status.success(), "{said}");
    assert!(said.contains("\"default\": imported"), "{said}");
    assert!(said.contains("Imported 1 refresh token"), "{said}");
    assert!(!said.contains(&refresh), "no token printed: {said}");
    assert_eq!(stored_refresh_token(&store), refresh);
    let status = run(&["status"]);
    assert!(status.status.success(), "{}", text(&status.stderr));

    // Again: nothing changes.
    let again = run(&["import", rescued.to_str().unwrap()]);
    assert!(again.status.success());
    assert!(
        text(&again.stderr).contains("already in the store"),
        "{}",
        text(&again.stderr)
    );

    // An older file (an earlier expiry) does not replace the store's newer token.
    let older = home.path().join("older.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&rescued).unwrap()).unwrap();
    json["accounts"]["default"]["refresh_token"] = "rt-older".into();
    let expiry = &mut json["accounts"]["default"]["expires_at"];
    if let Some(at) = expiry.as_u64() {
        *expiry = (at - 86_400).into();
    }
    std::fs::write(&older, serde_json::to_vec(&json).unwrap()).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&older, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let kept = run(&["import", older.to_str().unwrap()]);
    assert!(kept.status.success(), "{}", text(&kept.stderr));
    assert!(
        text(&kept.stderr).contains("kept"),
        "{}",
        text(&kept.stderr)
    );
    assert_eq!(stored_refresh_token(&store), refresh);
}

/// Each command's `--help` lists the flags that command uses: `--account` (the stored token's
/// account) for authorize, status, token and forget; `--redirect-uri` for authorize; neither
/// for the signing key, list, import or rekey. Both still go before the command's name or
/// after it.
#[test]
fn each_commands_help_lists_only_the_flags_it_uses() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let help = |args: &[&str]| {
        let output = consent(&fake, home.path(), RU_NAME)
            .args(args)
            .arg("--help")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            text(&output.stderr)
        );
        text(&output.stdout)
    };
    for command in [
        &["signing-key"][..],
        &["signing-key", "create"],
        &["signing-key", "show"],
        &["list"],
        &["rekey"],
        &["import"],
    ] {
        let shown = help(command);
        assert!(
            !shown.contains("--account") && !shown.contains("--redirect-uri"),
            "consent {command:?} --help lists flags it does not use: {shown}"
        );
    }
    for command in [&["status"][..], &["token"], &["forget"]] {
        let shown = help(command);
        assert!(shown.contains("--account"), "{command:?}: {shown}");
        assert!(!shown.contains("--redirect-uri"), "{command:?}: {shown}");
    }
    for command in [&[][..], &["authorize"]] {
        let shown = help(command);
        assert!(
            shown.contains("--account") && shown.contains("--redirect-uri"),
            "{command:?}: {shown}"
        );
    }

    // A flag given to a command it does not apply to is refused, naming it.
    let store = home.path().join("tokens.json");
    let output = consent(&fake, home.path(), RU_NAME)
        .args([
            "--store",
            store.to_str().unwrap(),
            "--account",
            "shop-1",
            "list",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("--account does not apply to `consent list`"),
        "{}",
        text(&output.stderr)
    );
    // Before the command's name or after it, as before.
    for args in [
        &["--account", "shop-1", "forget"][..],
        &["forget", "--account", "shop-1"],
    ] {
        let output = consent(&fake, home.path(), RU_NAME)
            .args(["--store", store.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        assert!(
            text(&output.stderr).contains("shop-1"),
            "{args:?}: {}",
            text(&output.stderr)
        );
    }
}

/// The scopes of the consent URL `url` asks for.
fn asked_scopes(url: &str) -> Vec<String> {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or_default();
    fake_marketplace::parse_query(query)
        .into_iter()
        .find(|(k, _)| k == "scope")
        .map(|(_, v)| v.split(' ').map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The scopes the store file at `path` recorded for the `default` account.
fn stored_scopes(path: &Path) -> Vec<String> {
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    json["accounts"]["default"]["scopes"]
        .as_array()
        .unwrap_or_else(|| panic!("no scopes recorded: {json}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

const INVENTORY_SCOPE: &str = "https://api.ebay.com/oauth/api_scope/sell.inventory";

#[test]
fn consent_asks_by_default_for_the_sell_inventory_scope_listing_publish_needs() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    let mut child = authorize_from_stdin(&fake, home.path(), &store)
        .spawn()
        .unwrap();
    let (url, stdout) = read_url(&mut child);
    let asked = asked_scopes(&url);
    for scope in [
        fake.scope(""),
        INVENTORY_SCOPE.to_owned(),
        "https://api.ebay.com/oauth/api_scope/commerce.identity.readonly".to_owned(),
    ] {
        assert!(asked.contains(&scope), "{scope} not asked for: {asked:?}");
    }
    let landed = visit_consent(&url);
    writeln!(child.stdin.as_mut().unwrap(), "{landed}").unwrap();
    let output = finish(child, stdout);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains(INVENTORY_SCOPE), "{stderr}");
    // The store records what was granted: `listing publish` checks it before sending.
    assert!(
        stored_scopes(&store).iter().any(|s| s == INVENTORY_SCOPE),
        "{:?}",
        stored_scopes(&store)
    );
}

#[test]
fn consent_for_listing_adds_sell_inventory_to_the_scopes_asked_for() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    let mut child = authorize_from_stdin(&fake, home.path(), &store)
        .args(["--scope", &fake.scope("/sell.account"), "--for", "listing"])
        .spawn()
        .unwrap();
    let (url, stdout) = read_url(&mut child);
    let asked = asked_scopes(&url);
    assert!(asked.contains(&fake.scope("/sell.account")), "{asked:?}");
    assert!(asked.contains(&INVENTORY_SCOPE.to_owned()), "{asked:?}");
    let landed = visit_consent(&url);
    writeln!(child.stdin.as_mut().unwrap(), "{landed}").unwrap();
    let output = finish(child, stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stored = stored_scopes(&store);
    assert!(stored.iter().any(|s| s == INVENTORY_SCOPE), "{stored:?}");
    assert!(stored.contains(&fake.scope("/sell.account")), "{stored:?}");
}

/// `consent` asks by default (and with `--for listing`) for the Account API's read scope,
/// with which `listing publish` reads the seller's business policies (getFulfillmentPolicies,
/// …) to refuse a listing naming one the seller has not got before sending it; the store
/// records it.
#[test]
fn consent_asks_by_default_for_the_account_read_scope_listing_publish_checks_policies_with() {
    const ACCOUNT_READ: &str = "https://api.ebay.com/oauth/api_scope/sell.account.readonly";
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    let mut child = authorize_from_stdin(&fake, home.path(), &store)
        .spawn()
        .unwrap();
    let (url, stdout) = read_url(&mut child);
    assert!(
        asked_scopes(&url).contains(&ACCOUNT_READ.to_owned()),
        "{url}"
    );
    let landed = visit_consent(&url);
    writeln!(child.stdin.as_mut().unwrap(), "{landed}").unwrap();
    let output = finish(child, stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stored = stored_scopes(&store);
    assert!(stored.iter().any(|s| s == ACCOUNT_READ), "{stored:?}");
}

/// `consent --for orders` (and `consent` by default) asks for the Fulfillment API's scope,
/// which eBay's reference gives getOrders and getOrder (`orders sync`, `orders show`); the
/// store records it.
#[test]
fn consent_for_orders_and_by_default_asks_for_the_sell_fulfillment_scope_orders_needs() {
    const FULFILLMENT: &str = "https://api.ebay.com/oauth/api_scope/sell.fulfillment";
    let fake = FakeMarketplace::new();
    for for_orders in [true, false] {
        let home = tempfile::tempdir().unwrap();
        let store = home.path().join("refresh.json");
        let mut cmd = authorize_from_stdin(&fake, home.path(), &store);
        if for_orders {
            cmd.args(["--scope", &fake.scope("/sell.account"), "--for", "orders"]);
        }
        let mut child = cmd.spawn().unwrap();
        let (url, stdout) = read_url(&mut child);
        let asked = asked_scopes(&url);
        assert!(
            asked.contains(&FULFILLMENT.to_owned()),
            "{for_orders}: {asked:?}"
        );
        // `--for orders` asks for what orders needs, not what listing needs.
        assert_eq!(
            asked.contains(&INVENTORY_SCOPE.to_owned()),
            !for_orders,
            "{asked:?}"
        );
        let landed = visit_consent(&url);
        writeln!(child.stdin.as_mut().unwrap(), "{landed}").unwrap();
        let output = finish(child, stdout);
        assert!(output.status.success(), "{}", text(&output.stderr));
        let stored = stored_scopes(&store);
        assert!(stored.iter().any(|s| s == FULFILLMENT), "{stored:?}");
    }
}
