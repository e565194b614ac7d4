//! One authenticated request to any of the service's REST APIs, without I/O: the request
//! (method, URL, bearer token, marketplace and language headers, JSON body) and the reading
//! of its answer (a success body within its limit; an error status to a typed error with the
//! service's error body, sanitized).

use std::borrow::Cow;
use std::time::Duration;

use http::header::{
    ACCEPT, ACCEPT_ENCODING, ACCEPT_LANGUAGE, AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue,
};
use url::Url;

use super::answer::Fetched;
use super::exchange::{Answer, Failure, FailureKind, Limits};
use crate::api::error::parse_error_body_redacted;
use crate::api::{ApiError, ApiRequest, ClientConfig};
use crate::oauth::AccessToken;
use crate::oauth::redact::Redactor;

/// At most this much is read of an error answer (only its start is kept anyway).
pub(crate) const MAX_ERROR_ANSWER: u64 = 1024 * 1024;

/// One request, as the core describes it to a front.
#[derive(Debug, Clone)]
pub(crate) struct ApiCall {
    /// The operation's name in the service's reference (`getCategoryTree`), for traces.
    pub(crate) operation: Cow<'static, str>,
    /// The method.
    pub(crate) method: http::Method,
    /// The URL (no secret in it: the token goes in a header).
    pub(crate) url: Url,
    /// `X-EBAY-C-MARKETPLACE-ID`, if any.
    pub(crate) marketplace: Option<String>,
    /// `Accept-Language`, if any.
    pub(crate) language: Option<String>,
    /// `Content-Language` (a body's language), if any.
    pub(crate) content_language: Option<String>,
    /// `Accept`.
    pub(crate) accept: &'static str,
    /// A JSON body, if any.
    pub(crate) body: Option<Vec<u8>>,
    /// Other headers of the caller's (never `Authorization`), set after the others (so they
    /// replace one of the same name).
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// The time-out of one attempt, body included.
    pub(crate) timeout: Duration,
    /// The limits of the answer's body.
    pub(crate) limits: Limits,
    /// Whether an error may quote the answer's body (sanitized): false for answers that may
    /// hold a secret the sanitizer does not know (createSigningKey's private key).
    pub(crate) quote_body: bool,
    /// Sent at most once (`ApiRequest::once`): no retry but the token's renewal on a 401.
    pub(crate) once: bool,
}

impl ApiCall {
    /// A `GET` of `url` with the default limits of `max_body` bytes.
    pub(crate) fn get(operation: &'static str, url: Url, timeout: Duration, max_body: u64) -> Self {
        Self {
            operation: Cow::Borrowed(operation),
            method: http::Method::GET,
            url,
            marketplace: None,
            language: None,
            content_language: None,
            accept: "application/json",
            body: None,
            headers: Vec::new(),
            timeout,
            limits: Limits {
                success: max_body,
                error: max_body.min(MAX_ERROR_ANSWER),
            },
            quote_body: true,
            once: false,
        }
    }

    /// The call in `marketplace` (its id) and `language`.
    pub(crate) fn in_marketplace(mut self, marketplace: &str, language: &str) -> Self {
        self.marketplace = Some(marketplace.to_owned());
        self.language = Some(language.to_owned());
        self
    }

    /// The request with `token`, and the sanitizer that knows it.
    pub(crate) fn request(
        &self,
        token: &AccessToken,
    ) -> Result<(http::Request<Vec<u8>>, Redactor), ApiError> {
        let mut authorization = HeaderValue::from_str(&format!("Bearer {}", token.secret()))
            .map_err(|_| {
                ApiError::Invalid(
                    "the access token contains characters that cannot be sent in a header".into(),
                )
            })?;
        authorization.set_sensitive(true);
        let mut request = http::Request::new(self.body.clone().unwrap_or_default());
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.url.as_str().parse().map_err(|_| {
            ApiError::Invalid(format!("{} is not a URL that can be requested", self.url))
        })?;
        let headers = request.headers_mut();
        headers.insert(AUTHORIZATION, authorization);
        if let Some(marketplace) = &self.marketplace {
            // The header's name is written once, in the taxonomy module's public constant.
            let name = HeaderName::from_bytes(crate::taxonomy::MARKETPLACE_HEADER.as_bytes())
                .map_err(|_| ApiError::Invalid("the marketplace header's name".into()))?;
            headers.insert(name, header_value("marketplace id", marketplace)?);
        }
        if let Some(language) = &self.language {
            headers.insert(ACCEPT_LANGUAGE, header_value("Accept-Language", language)?);
        }
        if let Some(language) = &self.content_language {
            headers.insert(
                http::header::CONTENT_LANGUAGE,
                header_value("Content-Language", language)?,
            );
        }
        headers.insert(ACCEPT, HeaderValue::from_static(self.accept));
        headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        if self.body.is_some() {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        for (name, value) in &self.headers {
            headers.insert(name.clone(), value.clone());
        }
        Ok((request, Redactor::new().with(token.secret())))
    }

    /// The span of attempt number `attempt` (see [`super::trace`]).
    pub(crate) fn span(&self, attempt: u32) -> tracing::Span {
        super::trace::attempt(
            &self.operation,
            &self.method,
            &self.url,
            self.marketplace.as_deref(),
            attempt,
        )
    }

    /// The outcome of one attempt (`elapsed` after it started) as the call's result,
    /// recorded in its `span`.
    pub(crate) fn finish(
        &self,
        outcome: Result<Answer, Failure>,
        redactor: Redactor,
        span: &tracing::Span,
        elapsed: Duration,
    ) -> Result<Fetched, ApiError> {
        match outcome {
            Ok(answer) => {
                let status = answer.status;
                let result = self.read(answer, redactor);
                self.record(span, status, elapsed, result.as_ref().err());
                result
            }
            Err(failure) => Err(self.no_answer(failure, span, elapsed)),
        }
    }

    /// A failure without an answer as the call's error, recorded in `span`.
    pub(crate) fn no_answer(
        &self,
        failure: Failure,
        span: &tracing::Span,
        elapsed: Duration,
    ) -> ApiError {
        super::trace::failed(span, elapsed, &failure.message);
        self.failed(failure)
    }

    /// Records an answer of `status` (and its error, if any) in `span`.
    pub(crate) fn record(
        &self,
        span: &tracing::Span,
        status: u16,
        elapsed: Duration,
        error: Option<&ApiError>,
    ) {
        let ids: Vec<u32> = error
            .map(|e| e.service_errors().iter().map(|s| s.error_id).collect())
            .unwrap_or_default();
        super::trace::answered(
            span,
            status,
            elapsed,
            error.and_then(ApiError::retry_after),
            &ids,
        );
    }

    /// A failed exchange as the call's error.
    pub(crate) fn failed(&self, failure: Failure) -> ApiError {
        let url = self.url.to_string();
        match failure.kind {
            FailureKind::TooLarge => ApiError::BodyTooLarge {
                url,
                limit: self.limits.success,
            },
            FailureKind::TimedOut => ApiError::Timeout {
                url,
                message: failure.message,
            },
            FailureKind::Cut { received } => ApiError::Truncated {
                url,
                received,
                message: failure.message,
            },
            FailureKind::Connect | FailureKind::Other => ApiError::Transport {
                url,
                message: failure.message,
            },
        }
    }

    /// Reads an answer: a success as [`Fetched`], any other status as its typed error.
    pub(crate) fn read(&self, answer: Answer, redactor: Redactor) -> Result<Fetched, ApiError> {
        if !answer.is_success() {
            return Err(self.error_of(&answer, &redactor));
        }
        let Answer {
            status,
            headers,
            mut body,
        } = answer;
        Ok(Fetched {
            url: self.url.clone(),
            status,
            headers,
            bytes: std::mem::take(&mut *body),
            redactor,
        })
    }

    /// An error answer: 429 with its `Retry-After`, the service's error body typed, or the
    /// status with the start of the body.
    pub(crate) fn error_of(&self, answer: &Answer, redactor: &Redactor) -> ApiError {
        let url = self.url.to_string();
        let errors = parse_error_body_redacted(&answer.body, redactor);
        if answer.status == 429 {
            return ApiError::RateLimited {
                url,
                retry_after: super::token::retry_after(&answer.headers),
                errors: errors.unwrap_or_default(),
            };
        }
        match errors {
            Some(errors) => crate::api::error::service_error(answer.status, url, errors),
            None => ApiError::Http {
                status: answer.status,
                url,
                body: if self.quote_body {
                    redactor.body(&answer.body)
                } else {
                    String::new()
                },
            },
        }
    }
}

/// Headers a caller may not set on a request: the client sets the credential itself.
const REFUSED_HEADERS: [HeaderName; 2] = [AUTHORIZATION, http::header::PROXY_AUTHORIZATION];

impl ApiCall {
    /// The call of a caller's `request` to the API host of `config`: the path below the
    /// base URL, the query, the JSON body, the marketplace and language headers (the
    /// marketplace's language unless one is set) and the caller's other headers.
    pub(crate) fn from_request(
        request: &ApiRequest,
        config: &ClientConfig,
    ) -> Result<Self, ApiError> {
        if let Some(problem) = &request.problem {
            return Err(problem.to_error());
        }
        let path = checked_path(&request.path)?;
        for (name, _) in &request.query {
            if name.chars().any(|c| c.is_control() || c == '\\') {
                return Err(ApiError::Invalid(format!(
                    "the query parameter name {name:?} holds a control character or a backslash"
                )));
            }
        }
        let mut url = config.base_url.clone();
        let base = with_slash(config.base_url.path());
        url.set_path(&format!("{base}{path}"));
        url.set_query(None);
        url.set_fragment(None);
        if !request.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&request.query);
        }
        stays_below(&url, &base, path, &config.base_url)?;
        let timeout = request.timeout.unwrap_or(config.timeout);
        let mut call = ApiCall::get("request", url, timeout, config.max_body_bytes);
        call.method = request.method.clone();
        if let Some(operation) = &request.operation {
            call.operation = Cow::Owned(operation.clone());
        }
        call.marketplace = request.marketplace.map(|m| m.marketplace_id().to_owned());
        call.language = request
            .language
            .clone()
            .or_else(|| request.marketplace.map(|m| m.default_language().to_owned()));
        call.content_language = request.content_language.clone();
        call.body = request.body.clone();
        call.quote_body = !request.secret_answer;
        call.once = request.once;
        for (name, value) in &request.headers {
            let name = HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|_| ApiError::Invalid(format!("{name:?} is not a header name")))?;
            if REFUSED_HEADERS.contains(&name) {
                return Err(ApiError::Invalid(format!(
                    "the {name} header is set by the client from its token source; it cannot \
                     be set on a request"
                )));
            }
            // The value is not quoted: a caller's header may hold a credential of its own.
            let value = HeaderValue::from_str(value.trim()).map_err(|_| {
                ApiError::Invalid(format!("the value of the {name} header cannot be sent"))
            })?;
            call.headers.push((name, value));
        }
        Ok(call)
    }
}

/// `path` (below the base URL, starting with `/`) without its leading slash, or why it
/// cannot be requested: a query or fragment in it (use [`ApiRequest::query`]), a control
/// character or a backslash (a URL parser drops tab, CR and LF and reads `\` as `/`), a
/// segment `.` or `..` (it would leave the path asked for), also once percent-decoded and
/// split at a decoded `/` (as a decoding proxy would read it), or an empty one.
fn checked_path(path: &str) -> Result<&str, ApiError> {
    let invalid = |why: &str| Err(ApiError::Invalid(format!("the path {path:?} {why}")));
    let Some(rest) = path.strip_prefix('/') else {
        return invalid("does not start with '/' (it is relative to the base URL)");
    };
    if rest.contains(['?', '#']) {
        return invalid("holds a query or fragment; add query parameters with .query(name, value)");
    }
    if path.chars().any(|c| c.is_control() || c == '\\') {
        return invalid("holds a control character or a backslash");
    }
    // A trailing slash is part of some documented paths (getUser's
    // `/commerce/identity/v1/user/`): an empty last segment is kept; any other is refused.
    let segments: Vec<&str> = rest.split('/').collect();
    for (i, segment) in segments.iter().enumerate() {
        if segment.is_empty() {
            if i + 1 == segments.len() && i > 0 {
                continue;
            }
            return invalid("has an empty segment");
        }
        let decoded = percent_decoded(segment);
        if decoded.chars().any(|c| c.is_control() || c == '\\') {
            return invalid("holds an encoded control character or backslash");
        }
        if decoded
            .split('/')
            .any(|piece| piece == "." || piece == "..")
        {
            return invalid("has a '.' or '..' segment (also once percent-decoded)");
        }
    }
    Ok(rest)
}

/// `segment` with its `%XX` escapes decoded (an escape that is not one stays as it is;
/// bytes that are not UTF-8 become U+FFFD).
fn percent_decoded(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `path` ending with `/`.
fn with_slash(path: &str) -> Cow<'_, str> {
    if path.ends_with('/') {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(format!("{path}/"))
    }
}

/// Checks the URL as it will be sent: same scheme, host and port as the base URL, and a path
/// that is the base path followed by exactly the segments of `rest` (byte for byte once
/// percent-decoded: the URL parser only encodes what must be), so that no parser's reading
/// can have moved the request elsewhere.
fn stays_below(url: &Url, base_path: &str, rest: &str, base: &Url) -> Result<(), ApiError> {
    let moved = || {
        Err(ApiError::Invalid(format!(
            "the path {:?} would not be sent below the base URL's path {base_path:?}",
            format!("/{rest}")
        )))
    };
    if url.scheme() != base.scheme()
        || url.host_str() != base.host_str()
        || url.port_or_known_default() != base.port_or_known_default()
    {
        return moved();
    }
    let Some(sent) = url.path().strip_prefix(base_path) else {
        return moved();
    };
    let sent: Vec<String> = sent.split('/').map(percent_decoded).collect();
    let given: Vec<String> = rest.split('/').map(percent_decoded).collect();
    if sent != given {
        return moved();
    }
    Ok(())
}

fn header_value(what: &str, value: &str) -> Result<HeaderValue, ApiError> {
    HeaderValue::from_str(value.trim())
        .map_err(|_| ApiError::Invalid(format!("the {what} {value:?} cannot be sent in a header")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_and_stay_below_the_base() {
        assert_eq!(checked_path("/sell/a").unwrap(), "sell/a");
        for bad in [
            "sell/a",
            "/a/../b",
            "/a/%2E%2e/b",
            "/a/./b",
            "/a?x=1",
            "/a#f",
            "/a//b",
            "/a/.\t./b",
            "/a/.\r./b",
            "/a/.\n./b",
            "/a/..\\b",
            "/a/%2e%2e%2fb",
            "/a/x%2F..",
            "/a/%5Cb",
            "/a/%0Ab",
            "//host/b",
            "http://host/b",
        ] {
            assert!(checked_path(bad).is_err(), "{bad}");
        }
        assert_eq!(checked_path("/a/b%2Fc/...").unwrap(), "a/b%2Fc/...");
        // A trailing slash, as in getUser's documented path, is kept.
        assert_eq!(
            checked_path("/commerce/identity/v1/user/").unwrap(),
            "commerce/identity/v1/user/"
        );
    }

    #[test]
    fn the_final_url_must_be_the_base_path_and_the_segments() {
        let base = Url::parse("http://h:1/gateway/ebay/").unwrap();
        let sent = |s: &str| Url::parse(s).unwrap();
        let ok = sent("http://h:1/gateway/ebay/sell/a%20b%2Fc");
        assert!(stays_below(&ok, "/gateway/ebay/", "sell/a b%2Fc", &base).is_ok());
        for (url, rest) in [
            (
                "http://h:1/other-service/secrets",
                "sell/.\t./other-service/secrets",
            ),
            ("http://h:1/gateway/ebay/sell/other", "sell/x/other"),
            ("http://h:1/gateway/ebay/sell", "sell/"),
            ("http://evil:1/gateway/ebay/sell", "sell"),
            ("https://h:1/gateway/ebay/sell", "sell"),
        ] {
            assert!(
                stays_below(&sent(url), "/gateway/ebay/", rest, &base).is_err(),
                "{url}"
            );
        }
    }
}
