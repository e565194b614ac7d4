//! The async front's HTTP: one way to build reqwest's async client from [`HttpOptions`], one
//! way to send a request and read its answer within its limits and time-out.

use std::time::{Duration, Instant};

use url::Url;

use crate::core::exchange::{Answer, Collector, Failure, Flow, Limits, error_chain};
use crate::options::HttpOptions;

/// An async client for requests to `base_url` that carry a credential, built as `options`
/// say (never following a redirect: the credential would follow it). The error is on one
/// line.
pub(crate) fn client(base_url: &Url, options: &HttpOptions) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(options.connect_timeout)
        .timeout(options.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(options.user_agent.clone());
    // No proxy on loopback; otherwise the configured one, else the environment's.
    if crate::oauth::is_loopback(base_url) {
        builder = builder.no_proxy();
    } else if let Some(url) = &options.proxy {
        let proxy = reqwest::Proxy::all(url).map_err(|_| {
            format!(
                "the proxy {} is not a URL",
                crate::oauth::redact::url_for_message(url)
            )
        })?;
        builder = builder.proxy(proxy);
    }
    builder = builder.tls_backend_preconfigured(tls_config(&options.root_certificates)?);
    builder.build().map_err(|e| error_chain(&e))
}

/// The TLS configuration of every client: rustls over ring's provider (held by this
/// configuration, never installed process-wide: the library lives inside applications that
/// may choose another), TLS 1.2 and 1.3, ALPN `http/1.1`, and the platform's verifier with
/// `roots` (PEM texts, each one or more certificates) trusted besides the platform's own.
fn tls_config(roots: &[Vec<u8>]) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    use std::sync::Arc;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut extra = Vec::new();
    for (index, pem) in roots.iter().enumerate() {
        let before = extra.len();
        for certificate in CertificateDer::pem_slice_iter(pem) {
            extra.push(
                certificate
                    .map_err(|e| format!("root certificate {} is not PEM: {e}", index + 1))?,
            );
        }
        if extra.len() == before {
            return Err(format!(
                "root certificate {} is not PEM: no CERTIFICATE block",
                index + 1
            ));
        }
    }
    let verifier = if extra.is_empty() {
        rustls_platform_verifier::Verifier::new(provider.clone())
    } else {
        rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())
    }
    .map_err(|e| format!("the TLS certificate verifier cannot be set up: {e}"))?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| format!("the TLS versions cannot be set: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Sends `request`, bounded by `timeout` from connecting to the end of the answer.
pub(crate) async fn send(
    http: &reqwest::Client,
    request: http::Request<Vec<u8>>,
    timeout: Duration,
) -> Result<reqwest::Response, Failure> {
    let mut request = reqwest::Request::try_from(request)
        .map_err(|e| Failure::sending(false, false, error_chain(&e)))?;
    *request.timeout_mut() = Some(timeout);
    http.execute(request)
        .await
        .map_err(|e| Failure::sending(e.is_timeout(), e.is_connect(), error_chain(&e)))
}

/// Sends `request` and reads its answer within `limits`, all of it before `timeout` has
/// passed.
pub(crate) async fn exchange(
    http: &reqwest::Client,
    request: http::Request<Vec<u8>>,
    timeout: Duration,
    limits: Limits,
) -> Result<Answer, Failure> {
    let deadline = Instant::now().checked_add(timeout);
    let response = send(http, request, timeout).await?;
    collect(response, limits, timeout, deadline).await
}

/// Reads the answer `response` within `limits` and before `deadline` (`timeout` after the
/// call started): the one bounded read of the async front.
pub(crate) async fn collect(
    mut response: reqwest::Response,
    limits: Limits,
    timeout: Duration,
    deadline: Option<Instant>,
) -> Result<Answer, Failure> {
    let status = response.status().as_u16();
    let length = response.content_length();
    let headers = std::mem::take(response.headers_mut());
    let mut collector = Collector::start(status, headers, length, limits)?;
    loop {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left == Some(Duration::ZERO) {
            return collector.broken(true, timed_out(timeout));
        }
        let chunk = match left {
            Some(left) => match tokio::time::timeout(left, response.chunk()).await {
                Ok(chunk) => chunk,
                Err(_) => return collector.broken(true, timed_out(timeout)),
            },
            None => response.chunk().await,
        };
        match chunk {
            Ok(None) => return Ok(collector.finish()),
            Ok(Some(bytes)) => {
                if collector.push(&bytes)? == Flow::Enough {
                    return Ok(collector.finish());
                }
            }
            Err(e) => return collector.broken(e.is_timeout(), error_chain(&e)),
        }
    }
}

fn timed_out(timeout: Duration) -> String {
    format!(
        "the answer was not complete after {} ms",
        timeout.as_millis()
    )
}
