//! One authenticated request to any of the service's REST APIs, without I/O: the request
//! (method, URL, bearer token, marketplace and language headers, JSON body) and the reading
//! of its answer (a success body within its limit; an error status to a typed error with the
//! service's error body, sanitized).

use std::time::Duration;

use http::header::{
    ACCEPT, ACCEPT_ENCODING, ACCEPT_LANGUAGE, AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue,
};
use serde::de::DeserializeOwned;
use url::Url;

use super::exchange::{Answer, Failure, FailureKind, Limits};
use crate::oauth::AccessToken;
use crate::oauth::redact::Redactor;
use crate::taxonomy::TaxonomyError;
use crate::taxonomy::error::parse_error_body_redacted;

/// The header that names the marketplace of a call.
pub(crate) const MARKETPLACE_HEADER: HeaderName =
    HeaderName::from_static("x-ebay-c-marketplace-id");

/// At most this much is read of an error answer (only its start is kept anyway).
pub(crate) const MAX_ERROR_ANSWER: u64 = 1024 * 1024;

/// One request, as the core describes it to a front.
#[derive(Debug, Clone)]
pub(crate) struct ApiCall {
    /// The operation's name in the service's reference (`getCategoryTree`), for traces.
    pub(crate) operation: &'static str,
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
    /// The time-out of one attempt, body included.
    pub(crate) timeout: Duration,
    /// The limits of the answer's body.
    pub(crate) limits: Limits,
}

/// One successful exchange.
pub(crate) struct Fetched {
    /// The URL asked.
    pub(crate) url: Url,
    /// The status (2xx).
    pub(crate) status: u16,
    /// The body.
    pub(crate) bytes: Vec<u8>,
    /// The sanitizer of the request (it knows the token sent), for errors about the body.
    pub(crate) redactor: Redactor,
}

impl ApiCall {
    /// A `GET` of `url` with the default limits of `max_body` bytes.
    pub(crate) fn get(operation: &'static str, url: Url, timeout: Duration, max_body: u64) -> Self {
        Self {
            operation,
            method: http::Method::GET,
            url,
            marketplace: None,
            language: None,
            content_language: None,
            accept: "application/json",
            body: None,
            timeout,
            limits: Limits {
                success: max_body,
                error: max_body.min(MAX_ERROR_ANSWER),
            },
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
    ) -> Result<(http::Request<Vec<u8>>, Redactor), TaxonomyError> {
        let mut authorization = HeaderValue::from_str(&format!("Bearer {}", token.secret()))
            .map_err(|_| {
                TaxonomyError::Invalid(
                    "the access token contains characters that cannot be sent in a header".into(),
                )
            })?;
        authorization.set_sensitive(true);
        let mut request = http::Request::new(self.body.clone().unwrap_or_default());
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.url.as_str().parse().map_err(|_| {
            TaxonomyError::Invalid(format!("{} is not a URL that can be requested", self.url))
        })?;
        let headers = request.headers_mut();
        headers.insert(AUTHORIZATION, authorization);
        if let Some(marketplace) = &self.marketplace {
            headers.insert(
                MARKETPLACE_HEADER,
                header_value("marketplace id", marketplace)?,
            );
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
        Ok((request, Redactor::new().with(token.secret())))
    }

    /// The span of attempt number `attempt` (see [`super::trace`]).
    pub(crate) fn span(&self, attempt: u32) -> tracing::Span {
        super::trace::attempt(
            self.operation,
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
    ) -> Result<Fetched, TaxonomyError> {
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
    ) -> TaxonomyError {
        super::trace::failed(span, elapsed, &failure.message);
        self.failed(failure)
    }

    /// Records an answer of `status` (and its error, if any) in `span`.
    pub(crate) fn record(
        &self,
        span: &tracing::Span,
        status: u16,
        elapsed: Duration,
        error: Option<&TaxonomyError>,
    ) {
        let ids: Vec<u32> = error
            .map(|e| e.service_errors().iter().map(|s| s.error_id).collect())
            .unwrap_or_default();
        super::trace::answered(
            span,
            status,
            elapsed,
            error.and_then(TaxonomyError::retry_after),
            &ids,
        );
    }

    /// A failed exchange as the call's error.
    pub(crate) fn failed(&self, failure: Failure) -> TaxonomyError {
        let url = self.url.to_string();
        match failure.kind {
            FailureKind::TooLarge => TaxonomyError::BodyTooLarge {
                url,
                limit: self.limits.success,
            },
            FailureKind::TimedOut => TaxonomyError::Timeout {
                url,
                message: failure.message,
            },
            FailureKind::Cut { received } => TaxonomyError::Truncated {
                url,
                received,
                message: failure.message,
            },
            FailureKind::Connect | FailureKind::Other => TaxonomyError::Transport {
                url,
                message: failure.message,
            },
        }
    }

    /// Reads an answer: a success as [`Fetched`], any other status as its typed error.
    pub(crate) fn read(
        &self,
        answer: Answer,
        redactor: Redactor,
    ) -> Result<Fetched, TaxonomyError> {
        if !answer.is_success() {
            return Err(self.error_of(&answer, &redactor));
        }
        let Answer {
            status, mut body, ..
        } = answer;
        Ok(Fetched {
            url: self.url.clone(),
            status,
            bytes: std::mem::take(&mut *body),
            redactor,
        })
    }

    /// An error answer: 429 with its `Retry-After`, the service's error body typed, or the
    /// status with the start of the body.
    pub(crate) fn error_of(&self, answer: &Answer, redactor: &Redactor) -> TaxonomyError {
        let url = self.url.to_string();
        let errors = parse_error_body_redacted(&answer.body, redactor);
        if answer.status == 429 {
            return TaxonomyError::RateLimited {
                url,
                retry_after: super::token::retry_after(&answer.headers),
                errors: errors.unwrap_or_default(),
            };
        }
        match errors {
            Some(errors) => TaxonomyError::Service {
                status: answer.status,
                url,
                errors,
            },
            None => TaxonomyError::Http {
                status: answer.status,
                url,
                body: redactor.body(&answer.body),
            },
        }
    }
}

fn header_value(what: &str, value: &str) -> Result<HeaderValue, TaxonomyError> {
    HeaderValue::from_str(value.trim()).map_err(|_| {
        TaxonomyError::Invalid(format!("the {what} {value:?} cannot be sent in a header"))
    })
}

impl Fetched {
    /// `204 No Content`, or a success with an empty body.
    pub(crate) fn is_empty(&self) -> bool {
        self.status == 204 || self.bytes.iter().all(u8::is_ascii_whitespace)
    }

    /// The body as JSON of type `T`; an error that names where it failed (and, for a field of
    /// the wrong shape, which field), sanitized.
    pub(crate) fn json<T: DeserializeOwned>(&self) -> Result<T, TaxonomyError> {
        serde_json::from_slice(&self.bytes).map_err(|e| {
            let reason = match e.classify() {
                // "invalid type: string \"…\", expected u32": it names the field's expected
                // type and may quote the body, so it passes the request's sanitizer.
                serde_json::error::Category::Data => format!(
                    "not the documented shape: {}",
                    self.redactor.text(&e.to_string())
                ),
                // Syntax and EOF errors would quote nothing useful: where it failed is enough.
                category => format!(
                    "not the expected JSON ({category:?} error at line {} column {})",
                    e.line(),
                    e.column()
                ),
            };
            self.unexpected(reason)
        })
    }

    /// An answer that is not what the call documents. The reason may quote the answer, so it
    /// passes the request's sanitizer like the body; the sanitizer reads only the start of
    /// either, however large the answer.
    pub(crate) fn unexpected(&self, reason: String) -> TaxonomyError {
        TaxonomyError::UnexpectedBody {
            url: self.url.to_string(),
            status: self.status,
            reason: self.redactor.text(&reason),
            body: self.redactor.body(&self.bytes),
        }
    }
}
