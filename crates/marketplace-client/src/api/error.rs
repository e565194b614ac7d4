//! The one error type of a request to the service's REST APIs ([`ApiError`], which the
//! taxonomy client returns as `ApiError`), and the service's error body.

use std::time::Duration;

use crate::model::{ErrorParameter, ServiceError};
use crate::oauth::OAuthError;
use crate::oauth::redact::Redactor;
use taxonomy_tree::decode::DecodeError;

/// The errors of the service's error body (`{"errors": [...]}`), every text passed through
/// the sanitizer of the request, which knows its secrets; `None` when `bytes` is not one.
pub(crate) fn parse_error_body_redacted(
    bytes: &[u8],
    redactor: &Redactor,
) -> Option<Vec<ServiceError>> {
    let mut errors = crate::model::decode::service_errors(bytes)?;
    for e in &mut errors {
        redact(e, redactor);
    }
    Some(errors)
}

/// Passes every text the service sent through `redactor`. The error is taken apart whole, so
/// a field added to `ServiceError` does not compile here until it is cleaned too.
fn redact(error: &mut ServiceError, redactor: &Redactor) {
    let ServiceError {
        error_id: _,
        domain,
        subdomain,
        category,
        message,
        long_message,
        input_ref_ids,
        output_ref_ids,
        parameters,
    } = error;
    let clean = |s: &mut String| *s = redactor.text(s);
    for s in [domain, subdomain, category, long_message]
        .into_iter()
        .flatten()
    {
        clean(s);
    }
    clean(message);
    input_ref_ids.iter_mut().for_each(clean);
    output_ref_ids.iter_mut().for_each(clean);
    for ErrorParameter { name, value } in parameters {
        clean(name);
        clean(value);
    }
}

fn joined(errors: &[ServiceError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether `url` is one of the Taxonomy API's: its errors get that API's advice.
fn is_taxonomy(url: &str) -> bool {
    url.contains("/commerce/taxonomy/")
}

/// Whether `url` is one of the Sell Metadata API's (getItemConditionPolicies,
/// getListingStructurePolicies): its errors
/// get that API's advice.
fn is_metadata(url: &str) -> bool {
    url.contains("/sell/metadata/")
}

/// The API named in a message about `url`: the Taxonomy and Metadata APIs' calls keep their
/// name, any other is "the API" (its URL follows in the message).
fn api_name(url: &str) -> &'static str {
    if is_taxonomy(url) {
        "the taxonomy API"
    } else if is_metadata(url) {
        "the metadata API"
    } else {
        "the API"
    }
}

/// What to check after an error `status` of a call to `url`: the Taxonomy API's advice for
/// its calls, a neutral one for any other API.
fn advice(status: u16, url: &str) -> &'static str {
    if is_taxonomy(url) {
        match status {
            400 => " (check the category id, the keyword and the marketplace header)",
            401 => " (the access token was rejected twice: check the credentials and scopes)",
            403 => " (the token lacks the scope of the taxonomy API)",
            404 => " (check the category tree id)",
            s if s >= 500 => " (a server-side failure: retry later)",
            _ => "",
        }
    } else {
        match status {
            400 => " (check the request's parameters, body and marketplace header)",
            401 => " (the access token was rejected twice: check the credentials and scopes)",
            403 => " (the token lacks a scope this API needs, or the user has not granted it)",
            404 => " (check the path and the resource's id)",
            s if s >= 500 => " (a server-side failure: retry later)",
            _ => "",
        }
    }
}

/// What to check after the service's error body: the advice of one of the Taxonomy API's
/// error ids when the body names one that says what is wrong (an unknown tree or marketplace,
/// which waiting does not fix), else the advice of the status.
fn service_advice(status: u16, url: &str, errors: &[ServiceError]) -> &'static str {
    if is_taxonomy(url) {
        // eBay's OpenAPI description of the Taxonomy API: 62004 "The specified category tree
        // ID was not found." (every call on a tree), 62003 "The specified marketplace ID was
        // not found." (getDefaultCategoryTreeId).
        let id = |wanted: u32| errors.iter().any(|e| e.error_id == wanted);
        if id(62004) {
            return " (this server has no category tree with that id: check the marketplace; a server given only some trees, such as a fake, has none for the others)";
        }
        if id(62003) {
            return " (this server does not know that marketplace id: check it)";
        }
    }
    if is_metadata(url) {
        // eBay's OpenAPI description of the Metadata API (getItemConditionPolicies): 46001
        // "The specified marketplace ID was not found.", 46002 "The filter value is
        // invalid.", 46003 "The specified categoryId was not found for the marketplace."
        let id = |wanted: u32| errors.iter().any(|e| e.error_id == wanted);
        if id(46001) {
            return " (this server does not know that marketplace id: check it)";
        }
        if id(46002) {
            return " (the filter must be categoryIds:{id|id|…}, at most 50 ids)";
        }
        if id(46003) {
            return " (a category id asked for is not a category of the marketplace's tree: check it against the tree, or the expired categories)";
        }
    }
    advice(status, url)
}

/// The `errorId`s of eBay's answers to a request whose signature is missing or refused
/// (eBay's digital signatures for APIs): 215001 (no `x-ebay-signature-key` header), 215113,
/// 215120 and 215122 ("Signature validation failed").
pub(crate) const SIGNATURE_ERROR_IDS: [u32; 4] = [215001, 215113, 215120, 215122];

/// The error of a service's error body: [`ApiError::Signature`] when it names a signature
/// error, else [`ApiError::Service`].
pub(crate) fn service_error(status: u16, url: String, errors: Vec<ServiceError>) -> ApiError {
    if errors
        .iter()
        .any(|e| SIGNATURE_ERROR_IDS.contains(&e.error_id))
    {
        ApiError::Signature {
            status,
            url,
            errors,
        }
    } else {
        ApiError::Service {
            status,
            url,
            errors,
        }
    }
}

/// What to check after a signature error: a missing signature needs a key; a refused one has
/// a few known causes.
fn signature_advice(errors: &[ServiceError]) -> &'static str {
    if errors.iter().any(|e| e.error_id == 215001) {
        "this call needs eBay's digital signature (sellers in the EU and the UK): create a \
         signing key once with createSigningKey and give it to the client \
         (ApiClient::with_signing_key, feature `signing`)"
    } else {
        "the signature was refused; likely causes: this machine's clock is off (the signature's \
         `created` is the time of signing: check NTP), the private key is not the one of the \
         JWE sent as x-ebay-signature-key (use the privateKey and jwe of the same \
         createSigningKey answer), the key has expired, or a proxy rewrote the body, the path or \
         the Host after signing"
    }
}

/// Extra advice after a time-out of a call to `url`.
fn timeout_advice(url: &str) -> &'static str {
    if is_taxonomy(url) {
        "a full tree takes 2 to 5 s, raise the time-out or check the network"
    } else {
        "raise the time-out or check the network"
    }
}

/// Everything a request to the service's REST APIs can fail with: a call of an
/// [`ApiClient`](super::ApiClient) and every call of the taxonomy client (its re-export
/// [`taxonomy::ApiError`](crate::taxonomy::ApiError)).
///
/// No variant holds the access token: bodies and the service's messages pass the sanitizer
/// of the request (which knows the token) and are cut to 512 bytes
/// bytes. The advice of a message depends on the API called (its URL): the Taxonomy API's
/// calls get that API's, any other a neutral one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// The service answered with its error body (any non-success status but 429).
    #[error("{} answered HTTP {status} to {url}: {}{}", api_name(url), joined(errors), service_advice(*status, url, errors))]
    Service {
        /// The HTTP status.
        status: u16,
        /// The URL requested.
        url: String,
        /// The errors of the body, at least one.
        errors: Vec<ServiceError>,
    },
    /// The service refused the request's digital signature, or needed one (errorId 215001:
    /// missing; 215113, 215120, 215122: refused): its error body, with the likely causes.
    #[error(
        "{} refused the request's signature (HTTP {status} to {url}): {}; {}",
        api_name(url),
        joined(errors),
        signature_advice(errors)
    )]
    Signature {
        /// The HTTP status.
        status: u16,
        /// The URL requested.
        url: String,
        /// The errors of the body, one of them a signature error.
        errors: Vec<ServiceError>,
    },
    /// A non-success status (but 429) without the service's error body.
    #[error(
        "{} answered HTTP {status} to {url}{}{}",
        api_name(url),
        advice(*status, url),
        if body.is_empty() { String::new() } else { format!("; body: {body}") }
    )]
    Http {
        /// The HTTP status.
        status: u16,
        /// The URL requested.
        url: String,
        /// The start of the body, sanitized.
        body: String,
    },
    /// HTTP 429 still after the retries (or with a `Retry-After` beyond the configured limit).
    #[error(
        "{} is rate limiting this application (HTTP 429 to {url}){}{}; wait, call less often \
         {}and check the call quota",
        api_name(url),
        match retry_after { Some(d) => format!(", retry after {} s", d.as_secs()), None => String::new() },
        if errors.is_empty() { String::new() } else { format!(": {}", joined(errors)) },
        if is_taxonomy(url) { "(trees change rarely: cache them) " } else { "" }
    )]
    RateLimited {
        /// The URL requested.
        url: String,
        /// The last `Retry-After` (seconds form), if sent.
        retry_after: Option<Duration>,
        /// The service's errors, if the body was its error body.
        errors: Vec<ServiceError>,
    },
    /// The call budget (`ApiClient::with_budget`) refused the call before it was sent: its
    /// API resource's calls are spent until the budget's reset (or eBay answered 429).
    #[error("{refused}; the call was to {url}")]
    Budget {
        /// The URL the call was for.
        url: String,
        /// The resource, the calls left and the reset.
        refused: marketplace_budget::BudgetExceeded,
    },
    /// Getting an access token failed.
    #[error("cannot get an access token for the request: {0}")]
    OAuth(#[from] OAuthError),
    /// The request or its body did not complete within the time-out.
    #[error(
        "{} did not answer {url} in time ({message}); {}",
        api_name(url),
        timeout_advice(url)
    )]
    Timeout {
        /// The URL requested.
        url: String,
        /// What timed out.
        message: String,
    },
    /// The request could not be sent (DNS, connection refused, TLS).
    #[error(
        "cannot reach {} at {url}: {message}; check the base URL and the network",
        api_name(url)
    )]
    Transport {
        /// The URL requested.
        url: String,
        /// The transport error and its causes.
        message: String,
    },
    /// The connection broke while the body was read (cut off, or a broken compressed stream).
    #[error("the answer of {url} was cut off after {received} bytes: {message}")]
    Truncated {
        /// The URL requested.
        url: String,
        /// Bytes received (after decompression) before the failure.
        received: u64,
        /// The I/O error.
        message: String,
    },
    /// The body is larger than the configured limit; reading stopped at the limit. (For
    /// fetchItemAspects: the file as received, or the JSON inside it.)
    #[error(
        "the answer of {url} is larger than the limit of {limit} bytes; if it really is that \
         large, raise the limit (max_body_bytes; for fetchItemAspects max_download_bytes, or \
         max_decompressed_bytes for the JSON inside)"
    )]
    BodyTooLarge {
        /// The URL requested.
        url: String,
        /// The limit.
        limit: u64,
    },
    /// getDefaultCategoryTreeId answered `204 No Content`: the service knows the marketplace
    /// (an unknown id gets `400` with errorId 62003) but holds no category tree for it.
    #[error(
        "no default category tree for {marketplace_id}: getDefaultCategoryTreeId answered \
         204 No Content to {url}, which means the service knows the marketplace but holds no \
         category tree for it (an unknown marketplace id gets 400, errorId 62003); a server \
         given only some trees, such as a fake, answers so for the others"
    )]
    NoDefaultTree {
        /// The marketplace asked about.
        marketplace_id: String,
        /// The URL requested.
        url: String,
    },
    /// A success status with a body that is not the expected JSON.
    #[error(
        "{} answered HTTP {status} to {url} with an unexpected body ({reason}); body: {body}",
        api_name(url)
    )]
    UnexpectedBody {
        /// The URL requested.
        url: String,
        /// The HTTP status.
        status: u16,
        /// Why it was not accepted.
        reason: String,
        /// The start of the body, sanitized.
        body: String,
    },
    /// An answer of the Key Management API (createSigningKey, getSigningKey, getSigningKeys)
    /// with a success status that cannot be used: a field the key needs is missing or of
    /// another type. Unlike [`UnexpectedBody`](Self::UnexpectedBody) it never quotes the answer
    /// (createSigningKey's holds the new private key), only the field's name and the JSON type
    /// found.
    #[error(
        "{operation} answered HTTP {status} to {url} with an answer that cannot be used: \
         {reason} (the answer is not quoted: it may hold a private key)"
    )]
    KeyManagementAnswer {
        /// The operation (`createSigningKey`).
        operation: &'static str,
        /// The URL requested.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The field at fault (`jwe`), when one is.
        field: Option<&'static str>,
        /// What was wrong with it (`"jwe" is null, expected a string`).
        reason: String,
    },
    /// The category tree could not be decoded or is inconsistent.
    #[error("the category tree from {url} cannot be used: {source}")]
    Decode {
        /// The URL requested.
        url: String,
        /// The decoding or validation error.
        #[source]
        source: DecodeError,
    },
    /// A downloaded file (fetchItemAspects) could not be written to disk.
    #[error("cannot write the download to {path}: {message}")]
    File {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error.
        message: String,
    },
    /// An argument or setting cannot be used (for example a language tag that is not a valid
    /// header value, a path segment that would change the path, or an `Authorization` header
    /// set by hand).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The JSON body of a request could not be serialized
    /// ([`ApiRequest::json`](super::ApiRequest::json)).
    #[error("cannot serialize the JSON body of the request: {reason}")]
    Serialize {
        /// serde_json's message (it names the value's type, never the value).
        reason: String,
    },
}

impl ApiError {
    /// The HTTP status, when the service answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Service { status, .. }
            | ApiError::Signature { status, .. }
            | ApiError::Http { status, .. }
            | ApiError::UnexpectedBody { status, .. }
            | ApiError::KeyManagementAnswer { status, .. } => Some(*status),
            ApiError::RateLimited { .. } => Some(429),
            ApiError::NoDefaultTree { .. } => Some(204),
            _ => None,
        }
    }

    /// The error that the service's answer `body` with `status` (of a call of `url`) is, as a
    /// call would report it: every text passed through the sanitizer (token-like values and
    /// control characters removed, cut to 512 bytes). `None` when `body` is not the service's
    /// error body (`{"errors": [...]}`) or lists no error. For an error body stored or
    /// received some other way.
    ///
    /// ```
    /// use marketplace_client::api::ApiError;
    /// let body = br#"{"errors":[{"errorId":62005,"domain":"API_TAXONOMY","category":"REQUEST",
    ///   "message":"The specified category ID does not belong to the specified category tree."}]}"#;
    /// let err = ApiError::from_error_body(400, "https://api.ebay.com/…", body).unwrap();
    /// assert_eq!(err.error_id(), Some(62005));
    /// assert!(!err.is_retryable());
    /// ```
    pub fn from_error_body(status: u16, url: impl Into<String>, body: &[u8]) -> Option<ApiError> {
        let errors = parse_error_body_redacted(body, &Redactor::new())?;
        let url = url.into();
        Some(if status == 429 {
            ApiError::RateLimited {
                url,
                retry_after: None,
                errors,
            }
        } else {
            service_error(status, url, errors)
        })
    }

    /// The service's errors, when its error body was received.
    pub fn service_errors(&self) -> &[ServiceError] {
        match self {
            ApiError::Service { errors, .. }
            | ApiError::Signature { errors, .. }
            | ApiError::RateLimited { errors, .. } => errors,
            _ => &[],
        }
    }

    /// The `errorId` of the first service error.
    pub fn error_id(&self) -> Option<u32> {
        self.service_errors().first().map(|e| e.error_id)
    }

    /// The `Retry-After` of a 429.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ApiError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// True for failures the client retries: 429, 5xx, connection failures and cut-off
    /// bodies. Time-outs are not retried (the time budget is spent), nor 4xx answers.
    pub fn is_retryable(&self) -> bool {
        match self {
            ApiError::RateLimited { .. }
            | ApiError::Transport { .. }
            | ApiError::Truncated { .. } => true,
            ApiError::Service { status, .. } | ApiError::Http { status, .. } => *status >= 500,
            _ => false,
        }
    }
}
