//! A request to any of the service's REST APIs ([`ApiRequest`]) and its answer
//! ([`ApiResponse`]).

use std::fmt;
use std::time::Duration;

use http::Method;
use marketplaces::Marketplace;
use serde::Serialize;
use serde::de::DeserializeOwned;
use url::Url;

use super::ApiError;
use crate::core::answer::Fetched;

/// Why a request cannot be sent, found while it was built and reported by the call.
#[derive(Debug, Clone)]
pub(crate) enum Problem {
    /// [`ApiError::Invalid`].
    Invalid(String),
    /// [`ApiError::Serialize`].
    Serialize(String),
}

impl Problem {
    /// The error the call returns.
    pub(crate) fn to_error(&self) -> ApiError {
        match self {
            Problem::Invalid(message) => ApiError::Invalid(message.clone()),
            Problem::Serialize(reason) => ApiError::Serialize {
                reason: reason.clone(),
            },
        }
    }
}

/// One authenticated request to any of the service's REST APIs (Inventory, Account,
/// Fulfillment, Taxonomy, …), built and then sent by a client
/// ([`ApiClient::send`](super::ApiClient::send)), which adds `Authorization: Bearer …` from
/// its token source, renews the token on a 401, retries and backs off. The methods are those
/// eBay's REST APIs use: `GET`, `POST`, `PUT` and `DELETE` (one constructor each).
///
/// The path is below the client's base URL (`/sell/inventory/v1/inventory_item/SKU-1`) and
/// taken as written (already percent-encoded; characters a path cannot hold, such as a space,
/// are encoded). A value of the caller's (a SKU, an order id) belongs in a segment of
/// [`get_segments`](Self::get_segments) and the other `*_segments` constructors, which
/// percent-encode each segment whole: a SKU with `/`, `?`, `%` or spaces stays one segment.
///
/// A path (or segment) that any reading could move elsewhere is refused: a `.` or `..`
/// segment, also percent-encoded (`%2e%2e`) or between encoded slashes (`..%2F`), a control
/// character (URL parsers drop tab, CR and LF) or a backslash (read as `/`), raw or encoded,
/// an empty segment (`//host`), and a query parameter name with a control character or a
/// backslash. The URL is checked once built: its path is the base URL's path followed by
/// exactly the segments given, on the base URL's host.
///
/// Building never fails: a problem (a JSON body that cannot be serialized, an
/// `Authorization` header, a path with `..`) is the error of the call that sends it.
///
/// ```
/// use marketplace_client::Marketplace;
/// use marketplace_client::api::ApiRequest;
/// let request = ApiRequest::get_segments(["sell", "inventory", "v1", "inventory_item", "A/B 1"])
///     .query("limit", "10")
///     .marketplace(Marketplace::De);
/// assert_eq!(request.path(), "/sell/inventory/v1/inventory_item/A%2FB%201");
/// ```
#[derive(Clone)]
pub struct ApiRequest {
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) body: Option<Vec<u8>>,
    pub(crate) marketplace: Option<Marketplace>,
    pub(crate) language: Option<String>,
    pub(crate) content_language: Option<String>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) operation: Option<String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) problem: Option<Problem>,
    /// The answer may hold a secret (createSigningKey's private key): an error never quotes
    /// its body.
    pub(crate) secret_answer: bool,
    /// Sent once: no retry after a broken connection, a 5xx or a 429 (a write that is not
    /// idempotent, whose caller reads the service's state before it sends it again).
    pub(crate) once: bool,
}

impl fmt::Debug for ApiRequest {
    /// The method, path, query and marketplace; of the body its length, of the caller's
    /// headers their names (a value may be a credential).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiRequest")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &self.query)
            .field("marketplace", &self.marketplace)
            .field("language", &self.language)
            .field("body_len", &self.body.as_ref().map(Vec::len))
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("operation", &self.operation)
            .finish_non_exhaustive()
    }
}

impl ApiRequest {
    /// A request with `method` of `path` (below the base URL, starting with `/`).
    fn new(method: Method, path: impl Into<String>) -> Self {
        Self {
            method,
            path: path.into(),
            query: Vec::new(),
            body: None,
            marketplace: None,
            language: None,
            content_language: None,
            headers: Vec::new(),
            operation: None,
            timeout: None,
            problem: None,
            secret_answer: false,
            once: false,
        }
    }

    /// A `GET` of `path`.
    pub fn get(path: impl Into<String>) -> Self {
        Self::new(Method::GET, path)
    }

    /// A `POST` to `path`.
    pub fn post(path: impl Into<String>) -> Self {
        Self::new(Method::POST, path)
    }

    /// A `PUT` to `path`.
    pub fn put(path: impl Into<String>) -> Self {
        Self::new(Method::PUT, path)
    }

    /// A `DELETE` of `path`.
    pub fn delete(path: impl Into<String>) -> Self {
        Self::new(Method::DELETE, path)
    }

    /// A request with `method` of the path made of `segments`, each percent-encoded whole
    /// (every byte but `A-Z a-z 0-9 - . _ ~`). An empty, `.` or `..` segment, or one with a
    /// control character, a backslash or a `.` or `..` between its slashes, cannot be sent
    /// (the call fails with [`ApiError::Invalid`]).
    fn with_segments<S: AsRef<str>>(method: Method, segments: impl IntoIterator<Item = S>) -> Self {
        let mut path = String::new();
        let mut problem = None;
        for segment in segments {
            path.push('/');
            match encode_segment(segment.as_ref()) {
                Ok(encoded) => path.push_str(&encoded),
                Err(message) => {
                    problem.get_or_insert(Problem::Invalid(message));
                }
            }
        }
        if path.is_empty() {
            path.push('/');
        }
        let mut request = Self::new(method, path);
        request.problem = problem;
        request
    }

    /// A `GET` of the path made of `segments`, each percent-encoded whole (every byte but
    /// `A-Z a-z 0-9 - . _ ~`). An empty, `.` or `..` segment cannot be sent (the call fails
    /// with [`ApiError::Invalid`]).
    pub fn get_segments<S: AsRef<str>>(segments: impl IntoIterator<Item = S>) -> Self {
        Self::with_segments(Method::GET, segments)
    }

    /// A `POST` to the path made of `segments` (encoded as [`get_segments`](Self::get_segments) encodes them).
    pub fn post_segments<S: AsRef<str>>(segments: impl IntoIterator<Item = S>) -> Self {
        Self::with_segments(Method::POST, segments)
    }

    /// A `PUT` to the path made of `segments` (encoded as [`get_segments`](Self::get_segments) encodes them).
    pub fn put_segments<S: AsRef<str>>(segments: impl IntoIterator<Item = S>) -> Self {
        Self::with_segments(Method::PUT, segments)
    }

    /// A `DELETE` of the path made of `segments` (encoded as [`get_segments`](Self::get_segments) encodes them).
    pub fn delete_segments<S: AsRef<str>>(segments: impl IntoIterator<Item = S>) -> Self {
        Self::with_segments(Method::DELETE, segments)
    }

    /// The method: `GET`, `POST`, `PUT` or `DELETE`.
    pub fn method(&self) -> &str {
        self.method.as_str()
    }

    /// The path, as it is sent (below the base URL).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Adds the query parameter `name=value` (form-encoded; repeat it for several values).
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((name.into(), value.into()));
        self
    }

    /// `value` as the JSON body (`Content-Type: application/json`). When it cannot be
    /// serialized, sending the request fails with [`ApiError::Serialize`].
    pub fn json<T: Serialize + ?Sized>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(bytes) => self.body = Some(bytes),
            Err(e) => {
                self.body = None;
                self.problem
                    .get_or_insert(Problem::Serialize(e.to_string()));
            }
        }
        self
    }

    /// `bytes` as the body, already JSON (`Content-Type: application/json`).
    pub fn json_bytes(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.body = Some(bytes.into());
        self
    }

    /// The marketplace of the call: `X-EBAY-C-MARKETPLACE-ID` with its id, and, unless
    /// [`language`](Self::language) is set, `Accept-Language` with its language.
    pub fn marketplace(mut self, marketplace: Marketplace) -> Self {
        self.marketplace = Some(marketplace);
        self
    }

    /// `Accept-Language` (it wins over the marketplace's language).
    pub fn language(mut self, language: impl Into<String>) -> Self {
        self.language = Some(language.into());
        self
    }

    /// `Content-Language`: the language of the body (`en-US`).
    pub fn content_language(mut self, language: impl Into<String>) -> Self {
        self.content_language = Some(language.into());
        self
    }

    /// Adds a header of the caller's (for example `X-EBAY-C-ENDUSERCTX`); it replaces one
    /// the request sets of the same name (`Accept`, `Content-Type`). `Authorization` and
    /// `Proxy-Authorization` are refused: the client sends the token of its source (the call
    /// fails with [`ApiError::Invalid`]).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The operation's name in the service's reference (`createOrReplaceInventoryItem`),
    /// for traces (default: `request`).
    pub fn operation(mut self, name: impl Into<String>) -> Self {
        self.operation = Some(name.into());
        self
    }

    /// Sends the request once: a broken connection, a cut-off answer, a 5xx or a 429 is the
    /// call's error at once, never sent again by the client (a 401 still renews the token
    /// and sends it once more: eBay did nothing with it). For a write that is not idempotent,
    /// such as createShippingFulfillment or issueRefund, whose caller reads what the service
    /// holds before it sends it again.
    pub fn sent_once(mut self) -> Self {
        self.once = true;
        self
    }

    /// The time-out of one attempt, body included, instead of the client's
    /// ([`ClientConfig::timeout`](super::ClientConfig::timeout)).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// The successful answer (a 2xx status) of an [`ApiRequest`]. Any other status is an
/// [`ApiError`] ([`ApiError::Service`] with the service's error body typed).
pub struct ApiResponse {
    fetched: Fetched,
}

impl fmt::Debug for ApiResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiResponse")
            .field("status", &self.fetched.status)
            .field("url", &self.fetched.url.as_str())
            .field("body_len", &self.fetched.bytes.len())
            .finish_non_exhaustive()
    }
}

impl ApiResponse {
    pub(crate) fn new(fetched: Fetched) -> Self {
        Self { fetched }
    }

    /// The status (2xx).
    pub fn status(&self) -> u16 {
        self.fetched.status
    }

    /// The URL requested.
    pub fn url(&self) -> &Url {
        &self.fetched.url
    }

    /// The first header called `name` (without regard to case), when its value is text.
    /// `Location` names what a `POST` created.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.fetched
            .headers
            .get_all(name)
            .iter()
            .find_map(|v| v.to_str().ok())
    }

    /// Every header as `(name, value)`, names in lower case, values that are not text left
    /// out.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.fetched
            .headers
            .iter()
            .filter_map(|(n, v)| Some((n.as_str(), v.to_str().ok()?)))
    }

    /// The body.
    pub fn bytes(&self) -> &[u8] {
        &self.fetched.bytes
    }

    /// The body, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.fetched.bytes
    }

    /// `204 No Content`, or a body of blanks only.
    pub fn is_empty(&self) -> bool {
        self.fetched.is_empty()
    }

    /// The body as UTF-8 text; [`ApiError::UnexpectedBody`] when it is not.
    pub fn text(&self) -> Result<&str, ApiError> {
        std::str::from_utf8(&self.fetched.bytes).map_err(|e| {
            self.fetched
                .unexpected(format!("not UTF-8 text (at byte {})", e.valid_up_to()))
        })
    }

    /// The body as JSON of type `T`. A body of another shape is
    /// [`ApiError::UnexpectedBody`] whose reason names the field and the type expected
    /// (`invalid type: string "x", expected u32 at line 1 column 9`), sanitized like every
    /// error.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, ApiError> {
        self.fetched.json()
    }
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
}
