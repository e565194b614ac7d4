//! Newtypes for the values that must never be printed.
//!
//! Every secret a token flow touches (the client secret, access and refresh tokens, the
//! authorization code and the `state` value) lives in one of these types. They print as
//! `TypeName([redacted])` in `Debug`, zero their memory when dropped, and give up their value
//! only through an explicit `.secret()` call, so a secret can reach a log line, a header or an
//! error message only when the code says so in plain sight.
//!
//! They deliberately do not implement `Display` (as oauth2-rs's secret types do not): with a
//! redacting `Display`, `format!("Bearer {token}")` would compile and send `Bearer [redacted]`.
//! Without it, that line does not compile:
//!
//! ```compile_fail
//! let token = marketplace_client::oauth::AccessToken::new("v^1.1#abc");
//! let _header = format!("Bearer {token}");
//! ```
//!
//! ```compile_fail
//! let secret = marketplace_client::oauth::ClientSecret::new("PRD-1234");
//! let _text = secret.to_string();
//! ```
//!
//! ```
//! let token = marketplace_client::oauth::AccessToken::new("v^1.1#abc");
//! assert_eq!(format!("Bearer {}", token.secret()), "Bearer v^1.1#abc");
//! assert_eq!(format!("{token:?}"), "AccessToken([redacted])");
//! ```

use std::fmt;

use subtle::ConstantTimeEq;
use zeroize::Zeroize;

/// What every secret prints instead of its value.
pub const REDACTED: &str = "[redacted]";

macro_rules! secret_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone)]
        pub struct $name(String);

        impl $name {
            /// Wraps a secret value.
            pub fn new(value: impl Into<String>) -> Self {
                Self(value.into())
            }

            /// The secret value itself. Every call site is a place where the secret leaves its
            /// wrapper: keep it out of logs and error messages.
            pub fn secret(&self) -> &str {
                &self.0
            }

            /// Compares two secrets in constant time (for their common length).
            pub fn ct_eq(&self, other: &Self) -> bool {
                bool::from(self.0.as_bytes().ct_eq(other.0.as_bytes()))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), REDACTED)
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                self.0.zeroize();
            }
        }

        impl PartialEq for $name {
            /// Constant-time comparison.
            fn eq(&self, other: &Self) -> bool {
                self.ct_eq(other)
            }
        }

        impl Eq for $name {}

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }
    };
}

secret_type!(
    /// The application's certificate id (OAuth `client_secret`).
    ClientSecret
);
secret_type!(
    /// A bearer token presented on API calls (`Authorization: Bearer …`).
    AccessToken
);
secret_type!(
    /// A user's refresh token: long-lived, to be stored on the backend only.
    RefreshToken
);
secret_type!(
    /// The one-time authorization code delivered to the redirect URI after consent.
    AuthorizationCode
);
secret_type!(
    /// The `state` value of a consent request: an unguessable, URL-safe string that ties the
    /// redirect back to the request that started it (CSRF protection).
    CsrfState
);

impl CsrfState {
    /// A fresh state of 256 random bits from the operating system, base64url-encoded without
    /// padding (43 characters).
    pub fn new_random() -> Result<Self, getrandom::Error> {
        use base64::Engine as _;
        let mut bytes = zeroize::Zeroizing::new([0u8; 32]);
        getrandom::fill(bytes.as_mut())?;
        Ok(Self(
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes.as_ref()),
        ))
    }
}

/// The application id (OAuth `client_id`). Not a secret, but kept apart from other strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientId(String);

impl ClientId {
    /// Wraps an application id.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The application id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted() {
        let s = ClientSecret::new("PRD-very-secret");
        assert_eq!(format!("{s:?}"), "ClientSecret([redacted])");
        assert_eq!(s.secret(), "PRD-very-secret");
    }

    #[test]
    fn random_state_is_url_safe_and_long() {
        let a = CsrfState::new_random().unwrap();
        let b = CsrfState::new_random().unwrap();
        assert_eq!(a.secret().len(), 43);
        assert!(
            a.secret()
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_ne!(a, b);
    }
}
