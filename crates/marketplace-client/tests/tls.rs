//! TLS as the clients speak it: rustls over ring (no aws-lc-sys in the build), the platform's
//! verifier with the roots of `HttpOptions::with_root_certificate` trusted besides the
//! platform's, TLS 1.3 and 1.2, ALPN `http/1.1`, and no process-wide crypto provider installed
//! by the library. The server is rustls on loopback with a committed test certificate
//! (tests/fixtures/tls-test-*.pem: a root and a server certificate for 127.0.0.1 and
//! localhost, test keys published with the repository); the client asks it for an
//! application token (the client-credentials grant), as it would eBay's token endpoint.
//!
//! A binary of its own, not a module of tests/it: it checks that no process-wide crypto
//! provider is installed, and the fake marketplace the other tests start installs one.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::mpsc;

use marketplace_client::HttpOptions;
use marketplace_client::oauth::{Endpoints, OAuthClient, OAuthConfig, ScopeSet};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

const ROOT: &str = include_str!("fixtures/tls-test-root.pem");
const SERVER_CERT: &str = include_str!("fixtures/tls-test-server.pem");
const SERVER_KEY: &str = include_str!("fixtures/tls-test-server-key.pem");

/// What the server saw of one connection: the TLS version and the ALPN protocol agreed, and
/// the request line; `None` when the handshake failed.
type Seen = Option<(rustls::ProtocolVersion, Option<Vec<u8>>, String)>;

/// A TLS server on loopback for `connections` connections, speaking only `versions`,
/// offering ALPN `h2` and `http/1.1`, answering each request with an application token.
/// Returns its port and what it saw of each connection.
fn server(
    versions: &[&'static rustls::SupportedProtocolVersion],
    connections: usize,
) -> (u16, mpsc::Receiver<Seen>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(SERVER_CERT.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_slice(SERVER_KEY.as_bytes()).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for _ in 0..connections {
            let (tcp, _) = listener.accept().unwrap();
            let connection = rustls::ServerConnection::new(config.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(connection, tcp);
            let _ = tx.send(serve_one(&mut tls));
        }
    });
    (port, rx)
}

/// Reads one request on `tls` and answers it with a token; what was agreed and asked.
fn serve_one(tls: &mut rustls::StreamOwned<rustls::ServerConnection, std::net::TcpStream>) -> Seen {
    let mut reader = BufReader::new(&mut *tls);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let token = r#"{"access_token":"v^1.1#i^1#tls-test","expires_in":7200,"token_type":"Application Access Token"}"#;
    let answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{token}",
        token.len()
    );
    tls.write_all(answer.as_bytes()).ok()?;
    tls.flush().ok()?;
    tls.conn.send_close_notify();
    let _ = tls.flush();
    Some((
        tls.conn.protocol_version()?,
        tls.conn.alpn_protocol().map(<[u8]>::to_vec),
        request_line.trim_end().to_owned(),
    ))
}

/// A blocking OAuth client for the server on `port`, over `https://127.0.0.1`.
fn client(port: u16, options: HttpOptions) -> OAuthClient {
    let base = format!("https://127.0.0.1:{port}");
    let endpoints = Endpoints::custom(&base, &base).unwrap();
    let config = OAuthConfig::new(endpoints).with_credentials("test-app-id", "test-cert-id");
    OAuthClient::with_options(&config, options).unwrap()
}

#[test]
fn a_server_signed_by_a_root_of_the_http_options_is_trusted_over_tls_1_3_and_1_2_with_alpn_http_1_1()
 {
    for (versions, expected) in [
        (
            &[&rustls::version::TLS13][..],
            rustls::ProtocolVersion::TLSv1_3,
        ),
        (
            &[&rustls::version::TLS12][..],
            rustls::ProtocolVersion::TLSv1_2,
        ),
    ] {
        let (port, seen) = server(versions, 1);
        let oauth = client(
            port,
            HttpOptions::default().with_root_certificate(ROOT.as_bytes()),
        );
        let token = oauth
            .client_credentials(&ScopeSet::new([] as [&str; 0]))
            .unwrap();
        assert_eq!(token.access_token.secret(), "v^1.1#i^1#tls-test");
        let (version, alpn, request_line) = seen.recv().unwrap().expect("a TLS connection");
        assert_eq!(version, expected);
        assert_eq!(alpn.as_deref(), Some(&b"http/1.1"[..]));
        assert_eq!(request_line, "POST /identity/v1/oauth2/token HTTP/1.1");
    }
    // The clients brought their own provider: nothing was installed for the whole process.
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
}

#[test]
fn a_server_signed_by_a_root_nobody_gave_is_refused() {
    let (port, seen) = server(&[&rustls::version::TLS13], 1);
    let oauth = client(port, HttpOptions::default());
    let error = oauth
        .client_credentials(&ScopeSet::new([] as [&str; 0]))
        .unwrap_err();
    let text = format!("{error}");
    assert!(
        text.contains("invalid peer certificate: UnknownIssuer"),
        "{text}"
    );
    assert_eq!(seen.recv().unwrap(), None, "the handshake must fail");
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
}

#[test]
fn a_root_certificate_that_is_not_pem_is_refused_by_name() {
    let base = "https://127.0.0.1:9";
    let endpoints = Endpoints::custom(base, base).unwrap();
    let config = OAuthConfig::new(endpoints).with_credentials("test-app-id", "test-cert-id");
    let options = HttpOptions::default()
        .with_root_certificate(ROOT.as_bytes())
        .with_root_certificate(&b"not a certificate"[..]);
    let error = OAuthClient::with_options(&config, options).unwrap_err();
    assert!(
        format!("{error}").contains("root certificate 2 is not PEM"),
        "{error}"
    );
}

/// aws-lc-sys's build script took 35-48 s of every cold build (issue 47): the workspace's
/// TLS and signatures are ring's, and nothing brings AWS-LC back.
#[test]
fn the_lock_file_holds_no_aws_lc() {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
        .expect("the workspace's Cargo.lock");
    let packages: Vec<&str> = lock
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .filter_map(|l| l.strip_suffix('"'))
        .collect();
    assert!(packages.contains(&"ring"), "ring is rustls's provider");
    let aws: Vec<&&str> = packages
        .iter()
        .filter(|p| p.starts_with("aws-lc"))
        .collect();
    assert!(aws.is_empty(), "Cargo.lock holds {aws:?}");
}
