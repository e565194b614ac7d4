//! Whether and how a client signs its requests: the one hook the fronts call on every attempt
//! (with feature `signing`; without it, a signer that does nothing).

#[cfg(feature = "signing")]
use std::sync::Arc;

use crate::api::ApiError;

/// A client's signing key and clock (none by default: requests go unsigned).
#[derive(Clone, Default)]
pub(crate) struct Signer {
    #[cfg(feature = "signing")]
    key: Option<Arc<crate::signing::SigningKey>>,
    #[cfg(feature = "signing")]
    clock: Option<Arc<dyn super::cache::Clock>>,
}

impl Signer {
    /// Signs with `key`.
    #[cfg(feature = "signing")]
    pub(crate) fn with_key(mut self, key: Arc<crate::signing::SigningKey>) -> Self {
        self.key = Some(key);
        self
    }

    /// Takes `created` from `clock` instead of the system clock.
    #[cfg(all(feature = "signing", feature = "test-util"))]
    pub(crate) fn with_clock(mut self, clock: Arc<dyn super::cache::Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Adds the signature headers to `request` (one attempt: its body, method and URL as they
    /// will be sent, `created` now), replacing any of the same name; nothing without a key.
    pub(crate) fn sign(&self, request: &mut http::Request<Vec<u8>>) -> Result<(), ApiError> {
        #[cfg(feature = "signing")]
        if let Some(key) = &self.key {
            use super::cache::{Clock as _, SystemClock};
            let now = match &self.clock {
                Some(clock) => clock.now(),
                None => SystemClock.now(),
            };
            let created = now
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            let (private_key, jwe) = key.parts();
            let url = request.uri().to_string();
            let headers = super::signing::headers(
                private_key,
                jwe,
                request.method().as_str(),
                &url,
                Some(request.body().as_slice()),
                created,
            )
            .map_err(|e| ApiError::Invalid(format!("cannot sign the request: {e}")))?;
            for (name, value) in headers {
                let value = http::HeaderValue::from_str(&value)
                    .map_err(|_| ApiError::Invalid(format!("the {name} header cannot be sent")))?;
                // `from_bytes` keeps the name in lower case, as HTTP/2 and `http` want it.
                let name = http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| ApiError::Invalid(format!("the header name {name}")))?;
                request.headers_mut().insert(name, value);
            }
        }
        #[cfg(not(feature = "signing"))]
        let _ = request;
        Ok(())
    }
}
