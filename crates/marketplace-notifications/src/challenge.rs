//! The endpoint's challenge: eBay calls `GET <endpoint>?challenge_code=…` and expects
//! `{"challengeResponse": "<hex of SHA-256 over the code, the verification token, the endpoint URL>"}`.

use std::fmt;

use sha2::{Digest as _, Sha256};

/// The shortest verification token eBay accepts.
pub const TOKEN_MIN_CHARS: usize = 32;
/// The longest verification token eBay accepts.
pub const TOKEN_MAX_CHARS: usize = 80;

/// The verification token registered with eBay for the endpoint: 32 to 80 characters of
/// `A-Z`, `a-z`, `0-9`, `_` and `-` (eBay refuses any other at registration).
///
/// Its `Debug` shows only its length: it is the endpoint's shared secret.
///
/// ```
/// use marketplace_notifications::VerificationToken;
/// assert!(VerificationToken::new("a-token-of-at-least-32-characters_0123").is_ok());
/// let refused = VerificationToken::new("too short").unwrap_err();
/// assert!(refused.to_string().contains("32 to 80 characters"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct VerificationToken(String);

/// Why a verification token was refused (the token itself is never repeated).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Fewer than 32 or more than 80 characters.
    #[error(
        "the verification token must be 32 to 80 characters of A-Z, a-z, 0-9, '_' and '-' (eBay's rule); this one has {chars} characters"
    )]
    Length {
        /// Its length in characters.
        chars: usize,
    },
    /// A character outside `[A-Za-z0-9_-]`.
    #[error(
        "the verification token must be 32 to 80 characters of A-Z, a-z, 0-9, '_' and '-' (eBay's rule); character {position} (counted from 1) is not one of them"
    )]
    Character {
        /// The position of the first refused character, counted from 1.
        position: usize,
    },
}

impl VerificationToken {
    /// Checks `token` against eBay's rule (32 to 80 characters of `[A-Za-z0-9_-]`).
    pub fn new(token: impl Into<String>) -> Result<Self, TokenError> {
        let token = token.into();
        if let Some(position) = token
            .chars()
            .position(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        {
            return Err(TokenError::Character {
                position: position + 1,
            });
        }
        let chars = token.len(); // ASCII only from here
        if !(TOKEN_MIN_CHARS..=TOKEN_MAX_CHARS).contains(&chars) {
            return Err(TokenError::Length { chars });
        }
        Ok(Self(token))
    }

    /// The token's text (to hash it; never log it).
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for VerificationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VerificationToken(<{} characters>)", self.0.len())
    }
}

impl std::str::FromStr for VerificationToken {
    type Err = TokenError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

/// The answer to eBay's challenge: SHA-256 over the challenge code, then the verification
/// token, then the endpoint URL. It displays as the lowercase hex string eBay expects in
/// `{"challengeResponse": "…"}`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChallengeResponse([u8; 32]);

impl ChallengeResponse {
    /// The 32 bytes of the hash.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The hex string (what `Display` writes).
    pub fn to_hex(&self) -> String {
        self.to_string()
    }

    /// The JSON body of the answer: `{"challengeResponse":"<hex>"}`.
    pub fn to_json(&self) -> String {
        format!("{{\"challengeResponse\":\"{self}\"}}")
    }
}

impl fmt::Display for ChallengeResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ChallengeResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChallengeResponse({self})")
    }
}

/// The answer to eBay's challenge for `challenge_code` (the `challenge_code` query parameter
/// eBay sends): SHA-256 over `challenge_code`, then `verification_token`, then `endpoint`.
///
/// `endpoint` must be exactly the URL registered with eBay for the notifications (scheme,
/// host, path, no trailing slash added or dropped): eBay hashes the URL it registered, not
/// the one the request reached through a proxy.
///
/// ```
/// use marketplace_notifications::{VerificationToken, challenge_response};
/// let token = VerificationToken::new("a-token-of-at-least-32-characters_0123")?;
/// let answer = challenge_response("a8628072-3d33-45ee-9004-bee86830a22d", &token,
///     "https://seller.example/ebay/notifications");
/// assert_eq!(answer.to_string().len(), 64);
/// # Ok::<(), marketplace_notifications::TokenError>(())
/// ```
pub fn challenge_response(
    challenge_code: &str,
    verification_token: &VerificationToken,
    endpoint: &str,
) -> ChallengeResponse {
    let mut hash = Sha256::new();
    hash.update(challenge_code.as_bytes());
    hash.update(verification_token.0.as_bytes());
    hash.update(endpoint.as_bytes());
    ChallengeResponse(hash.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expected value was computed outside this crate, in a shell:
    /// `printf '%s' 'a8628072-3d33-45ee-9004-bee86830a22d' 'Example_verification-token_0123456789abcdef' 'https://seller.example/ebay/notifications' | sha256sum`
    /// (the three strings concatenated, as eBay's documentation of the challenge and its
    /// SDKs hash them), and again with Python's `hashlib.sha256`.
    #[test]
    fn challenge_response_matches_an_independently_computed_sample() {
        let token = VerificationToken::new("Example_verification-token_0123456789abcdef").unwrap();
        let answer = challenge_response(
            "a8628072-3d33-45ee-9004-bee86830a22d",
            &token,
            "https://seller.example/ebay/notifications",
        );
        assert_eq!(answer.to_string(), EXPECTED);
        assert_eq!(
            answer.to_json(),
            format!("{{\"challengeResponse\":\"{EXPECTED}\"}}")
        );
    }

    const EXPECTED: &str = "cac412bc2c60ba6d30e84d02f8ad7731099579cf835f2eceb995419d257d2681";

    #[test]
    fn the_order_of_the_parts_matters() {
        let token = VerificationToken::new("Example_verification-token_0123456789abcdef").unwrap();
        let a = challenge_response("code", &token, "https://a.example/x");
        let b = challenge_response("code", &token, "https://a.example/x/");
        assert_ne!(a, b, "the endpoint is hashed exactly as given");
    }

    #[test]
    fn tokens_outside_the_rule_are_refused_naming_it() {
        for (token, expected) in [
            ("", TokenError::Length { chars: 0 }),
            ("a".repeat(31).as_str(), TokenError::Length { chars: 31 }),
            ("a".repeat(81).as_str(), TokenError::Length { chars: 81 }),
            (
                "abcdefghijabcdefghijabcdefghij a1",
                TokenError::Character { position: 31 },
            ),
            (
                "é_abcdefghijabcdefghijabcdefghija1",
                TokenError::Character { position: 1 },
            ),
            (
                "abcdefghijabcdefghijabcdefghij+a1",
                TokenError::Character { position: 31 },
            ),
        ] {
            let err = VerificationToken::new(token).unwrap_err();
            assert_eq!(err, expected, "{token:?}");
            let text = err.to_string();
            assert!(text.contains("32 to 80 characters of A-Z, a-z, 0-9, '_' and '-'"));
            if !token.is_empty() {
                assert!(!text.contains(token), "the token is not repeated: {text}");
            }
        }
        for ok in ["a".repeat(32), "Z9_-".repeat(20)] {
            assert!(VerificationToken::new(ok.as_str()).is_ok(), "{ok}");
        }
    }

    #[test]
    fn debug_hides_the_token() {
        let token = VerificationToken::new("Example_verification-token_0123456789abcdef").unwrap();
        assert_eq!(format!("{token:?}"), "VerificationToken(<43 characters>)");
    }
}
