//! One authenticated request to any of the service's REST APIs, without I/O: the request
//! (method, URL, bearer token, marketplace and language headers, JSON body) and the reading
//! of its answer (a success body within its limit; an error status to a typed error with the
//! service's error body, sanitized).

use std::borrow::Cow;
use std::time::Duration;

use http::header::{
    ACCEPT, ACCEPT_ENCODING, ACCEPT_LANGUAGE, AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue,
};
use serde::de::DeserializeOwned;
use url::Url;

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
}

/// One successful exchange.
pub(crate) struct Fetched {
    /// The URL asked.
    pub(crate) url: Url,
    /// The status (2xx).
    pub(crate) status: u16,
    /// The headers of the answer.
    pub(crate) headers: http::HeaderMap,
    /// The body.
    pub(crate) bytes: Vec<u8>,
    /// The sanitizer of the request (it knows the token sent), for errors about the body.
    pub(crate) redactor: Redactor,
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

/// One path segment percent-encoded: every byte but the unreserved characters of RFC 3986
/// (`A-Z a-z 0-9 - . _ ~`), so that a `/`, `?`, `#`, `%` or space in it stays in the segment.
/// An empty segment, `.` and `..` are refused: no URL keeps them as one segment.
pub(crate) fn encode_segment(segment: &str) -> Result<String, String> {
    if segment.is_empty() || segment == "." || segment == ".." {
        return Err(format!(
            "the path segment {segment:?} cannot be sent: an empty, '.' or '..' segment \
             would change the path"
        ));
    }
    if segment.chars().any(|c| c.is_control() || c == '\\')
        || segment
            .split('/')
            .any(|piece| piece == "." || piece == "..")
    {
        return Err(format!(
            "the path segment {segment:?} cannot be sent: a control character, a backslash \
             or a '.' or '..' between slashes would change the path wherever it is decoded"
        ));
    }
    let mut encoded = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    Ok(encoded)
}

fn header_value(what: &str, value: &str) -> Result<HeaderValue, ApiError> {
    HeaderValue::from_str(value.trim())
        .map_err(|_| ApiError::Invalid(format!("the {what} {value:?} cannot be sent in a header")))
}

/// The name of the object key whose value ends at `line`:`column` (1-based, as serde_json
/// reports a data error): the last `"name":` before that point. serde_json names a missing
/// field but not one of the wrong type; this names that one.
fn field_before(bytes: &[u8], line: usize, column: usize) -> Option<String> {
    let start = if line <= 1 {
        0
    } else {
        bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(line - 2)?
            .0
            + 1
    };
    let end = (start + column).min(bytes.len());
    let before = &bytes[..end];
    // The last ':' outside a string value is hard to tell without parsing; the last `":`
    // (a key's closing quote and its colon, blanks allowed between) is close enough.
    let mut i = before.len();
    while i > 0 {
        i -= 1;
        if before[i] != b':' {
            continue;
        }
        let mut j = i;
        while j > 0 && before[j - 1].is_ascii_whitespace() {
            j -= 1;
        }
        if j == 0 || before[j - 1] != b'"' {
            continue;
        }
        let close = j - 1;
        let open = before[..close].iter().rposition(|b| *b == b'"')?;
        return std::str::from_utf8(&before[open + 1..close])
            .ok()
            .map(str::to_owned);
    }
    None
}

impl Fetched {
    /// `204 No Content`, or a success with an empty body.
    pub(crate) fn is_empty(&self) -> bool {
        self.status == 204 || self.bytes.iter().all(u8::is_ascii_whitespace)
    }

    /// The body as JSON of type `T`; an error that names where it failed (and, for a field of
    /// the wrong shape, which field), sanitized.
    pub(crate) fn json<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        serde_json::from_slice(&self.bytes).map_err(|e| self.not_json(e))
    }

    /// An answer that `taxonomy-model`'s decoder refused: not the JSON of the call's answer,
    /// as [`json`](Self::json) says it, or a field it cannot do without (its message names
    /// the field).
    pub(crate) fn undecoded(&self, error: taxonomy_model::decode::DecodeError) -> ApiError {
        use taxonomy_model::decode::DecodeError;
        match error {
            DecodeError::Json(e) => self.not_json(e),
            DecodeError::Field(reason) => self.unexpected(reason),
            other => self.unexpected(other.to_string()),
        }
    }

    /// The answer's body did not parse as `json` expected: `taxonomy-model`'s wording of a
    /// JSON decode error (one for the client and the model), sanitized, and for a value of the
    /// wrong shape the field it stood in.
    fn not_json(&self, e: serde_json::Error) -> ApiError {
        // "invalid type: string \"…\", expected u32" names the field's expected type and may
        // quote the body, so it passes the request's sanitizer; syntax and EOF errors quote
        // nothing and say where they failed.
        let field = match e.classify() {
            serde_json::error::Category::Data => field_before(&self.bytes, e.line(), e.column()),
            _ => None,
        };
        let mut reason = self
            .redactor
            .text(&taxonomy_model::decode::DecodeError::Json(e).to_string());
        if let Some(field) = field {
            reason.push_str(&format!(" (in field \"{}\")", self.redactor.text(&field)));
        }
        self.unexpected(reason)
    }

    /// An answer that is not what the call documents. The reason may quote the answer, so it
    /// passes the request's sanitizer like the body; the sanitizer reads only the start of
    /// either, however large the answer.
    pub(crate) fn unexpected(&self, reason: String) -> ApiError {
        ApiError::UnexpectedBody {
            url: self.url.to_string(),
            status: self.status,
            reason: self.redactor.text(&reason),
            body: self.redactor.body(&self.bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_keep_slashes_spaces_and_percents_inside() {
        assert_eq!(encode_segment("A/B C%?#").unwrap(), "A%2FB%20C%25%3F%23");
        assert_eq!(encode_segment("SKU-1_a.b~").unwrap(), "SKU-1_a.b~");
        assert_eq!(encode_segment("é").unwrap(), "%C3%A9");
        for bad in [
            "", ".", "..", ".\t.", "../x", "x/..", "a\\b", "a\nb", "a\u{7f}",
        ] {
            assert!(encode_segment(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_field_of_a_wrong_type_is_named() {
        let body = br#"{"sku": "A", "product": {"title": "t", "price": "ten"}}"#;
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct P {
            title: String,
            price: u32,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Item {
            sku: String,
            product: P,
        }
        let e = serde_json::from_slice::<Item>(body).unwrap_err();
        assert_eq!(
            field_before(body, e.line(), e.column()).as_deref(),
            Some("price")
        );
        let multi = b"{\n \"a\": 1,\n \"b\": true\n}";
        assert_eq!(field_before(multi, 3, 10).as_deref(), Some("b"));
    }

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
