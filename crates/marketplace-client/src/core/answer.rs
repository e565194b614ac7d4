//! The answer of one successful call, without I/O: its body read as JSON or decoded by
//! `taxonomy-model`, and an error about it that names the field and quotes the body only
//! through the request's sanitizer. Below both `core::api`, which reads an answer into it, and
//! `api::ApiResponse`, which hands it to the caller.

use serde::de::DeserializeOwned;
use url::Url;

use crate::api::ApiError;
use crate::oauth::redact::Redactor;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
