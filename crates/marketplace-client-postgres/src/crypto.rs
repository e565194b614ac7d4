//! Encryption of the stored tokens: AES-256-GCM under a [`Keyring`].
//!
//! Every encryption draws a fresh random 96-bit nonce, stored in front of the ciphertext (and
//! its tag). The row's identity (table, environment, client id, kind and subject or account)
//! is the associated data, so a ciphertext copied into another row does not decrypt there.
//! Each row also records the fingerprint of the key that encrypted it, so that after a key
//! rotation the previous key still reads the rows it wrote; they are re-encrypted under the
//! current key when next written or read, or all at once by [`crate::rekey`].

use std::fmt;

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine as _;
use sha2::{Digest, Sha256};
use zeroize::{Zeroize, Zeroizing};

use crate::error::{DecryptFailure, Error, KeyProblem, RowId};

/// The environment variable [`TokenKey::from_env`] reads.
pub const KEY_VAR: &str = "MARKETPLACE_TOKEN_KEY";
/// The environment variable [`Keyring::from_env`] reads for the previous key (optional).
pub const PREVIOUS_KEY_VAR: &str = "MARKETPLACE_TOKEN_KEY_PREVIOUS";

const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;

/// A 256-bit key that encrypts the stored tokens. Prints as `TokenKey([redacted])` and is
/// zeroed when dropped.
#[derive(Clone)]
pub struct TokenKey([u8; 32]);

impl Drop for TokenKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl TokenKey {
    /// A key from its 32 raw bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A key from 32 bytes in standard base64 (as `head -c 32 /dev/urandom | base64` prints
    /// them); surrounding whitespace is ignored. The error never shows the value.
    pub fn from_base64(text: &str) -> Result<Self, Error> {
        Self::parse(text, None)
    }

    /// The key in the environment variable `MARKETPLACE_TOKEN_KEY`; an error saying how to
    /// make one when it is unset or empty.
    pub fn from_env() -> Result<Self, Error> {
        Self::from_var(KEY_VAR)?.ok_or(Error::MissingKey { var: KEY_VAR })
    }

    fn from_var(var: &'static str) -> Result<Option<Self>, Error> {
        match std::env::var_os(var) {
            None => Ok(None),
            Some(value) => {
                let value = Zeroizing::new(value.into_string().map_err(|_| Error::InvalidKey {
                    from: Some(var),
                    problem: KeyProblem::NotBase64,
                })?);
                if value.trim().is_empty() {
                    return Ok(None);
                }
                Self::parse(&value, Some(var)).map(Some)
            }
        }
    }

    fn parse(text: &str, from: Option<&'static str>) -> Result<Self, Error> {
        let bytes = Zeroizing::new(
            base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .map_err(|_| Error::InvalidKey {
                    from,
                    problem: KeyProblem::NotBase64,
                })?,
        );
        let array: [u8; 32] = bytes.as_slice().try_into().map_err(|_| Error::InvalidKey {
            from,
            problem: KeyProblem::WrongLength(bytes.len()),
        })?;
        Ok(Self(array))
    }

    /// The key's fingerprint, stored with each row it encrypts: the first 8 bytes of a
    /// domain-separated SHA-256 of the key, in hex. It identifies the key without revealing it.
    pub fn id(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(b"marketplace-client-postgres key id\0");
        hasher.update(self.0);
        let digest = hasher.finalize();
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    fn cipher(&self) -> Aes256Gcm {
        Aes256Gcm::new(&self.0.into())
    }
}

impl fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenKey([redacted])")
    }
}

/// The current key (which encrypts every write) and, during a rotation, the previous one
/// (still accepted for reading).
#[derive(Clone, Debug)]
pub struct Keyring {
    current: TokenKey,
    previous: Option<TokenKey>,
}

impl Keyring {
    /// A keyring of one key.
    pub fn new(current: TokenKey) -> Self {
        Self {
            current,
            previous: None,
        }
    }

    /// A keyring in rotation: writes use `current`, reads accept either key.
    pub fn with_previous(current: TokenKey, previous: TokenKey) -> Self {
        Self {
            current,
            previous: Some(previous),
        }
    }

    /// The current key from `MARKETPLACE_TOKEN_KEY` and, if set, the previous one from
    /// `MARKETPLACE_TOKEN_KEY_PREVIOUS`.
    pub fn from_env() -> Result<Self, Error> {
        let current = TokenKey::from_env()?;
        let previous = TokenKey::from_var(PREVIOUS_KEY_VAR)?;
        Ok(Self { current, previous })
    }

    /// The fingerprint of the current key ([`TokenKey::id`]).
    pub(crate) fn current_id(&self) -> String {
        self.current.id()
    }

    /// The fingerprint of the previous key, during a rotation.
    pub(crate) fn previous_id(&self) -> Option<String> {
        self.previous.as_ref().map(TokenKey::id)
    }

    /// Encrypts `plaintext` for `row`: the stored bytes (nonce, ciphertext, tag) and the
    /// fingerprint of the key used.
    pub(crate) fn encrypt(&self, row: &RowId, plaintext: &str) -> Result<(Vec<u8>, String), Error> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let aad = row.associated_data();
        let sealed = self
            .current
            .cipher()
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: &aad,
                },
            )
            .map_err(|_| Error::Encrypt {
                row: Box::new(row.clone()),
            })?;
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok((out, self.current.id()))
    }

    /// Decrypts the stored bytes of `row`, encrypted under the key with fingerprint `key_id`.
    pub(crate) fn decrypt(
        &self,
        row: &RowId,
        key_id: &str,
        stored: &[u8],
    ) -> Result<SecretText, Error> {
        let fail = |reason| Error::Decrypt {
            row: Box::new(row.clone()),
            reason,
        };
        let key = [Some(&self.current), self.previous.as_ref()]
            .into_iter()
            .flatten()
            .find(|k| k.id() == key_id)
            .ok_or_else(|| fail(DecryptFailure::UnknownKey(key_id.to_owned())))?;
        if stored.len() < NONCE_LEN + TAG_LEN {
            return Err(fail(DecryptFailure::Malformed));
        }
        let (nonce, sealed) = stored.split_at(NONCE_LEN);
        let aad = row.associated_data();
        let plain = key
            .cipher()
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: &aad,
                },
            )
            .map_err(|_| fail(DecryptFailure::Authentication))?;
        let text = String::from_utf8(plain).map_err(|e| {
            let mut bytes = e.into_bytes();
            bytes.zeroize();
            fail(DecryptFailure::NotUtf8)
        })?;
        Ok(SecretText(text))
    }
}

/// A decrypted token. Prints as `SecretText([redacted])`, is zeroed when dropped, and gives
/// up its value only through [`SecretText::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct SecretText(String);

impl SecretText {
    /// The token itself. Keep it out of logs and error messages.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretText([redacted])")
    }
}

impl Drop for SecretText {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(subject: &str) -> RowId {
        RowId {
            table: "marketplace_refresh_tokens",
            environment: "production".into(),
            client_id: "App-1".into(),
            kind: None,
            subject: subject.into(),
            scopes: String::new(),
        }
    }

    #[test]
    fn roundtrip_and_wrong_row() {
        let ring = Keyring::new(TokenKey::from_bytes([7; 32]));
        let (stored, id) = ring.encrypt(&row("alice"), "v^1.1#secret").unwrap();
        assert!(!stored.windows(6).any(|w| w == b"secret"));
        let plain = ring.decrypt(&row("alice"), &id, &stored).unwrap();
        assert_eq!(plain.expose(), "v^1.1#secret");
        let err = ring.decrypt(&row("bob"), &id, &stored).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("\"bob\""), "{text}");
        assert!(!text.contains("secret\""), "{text}");
        assert!(matches!(
            err,
            Error::Decrypt {
                reason: DecryptFailure::Authentication,
                ..
            }
        ));
    }

    #[test]
    fn nonces_differ() {
        let ring = Keyring::new(TokenKey::from_bytes([7; 32]));
        let (a, _) = ring.encrypt(&row("alice"), "same").unwrap();
        let (b, _) = ring.encrypt(&row("alice"), "same").unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn bad_keys_are_refused_without_echo() {
        let err = TokenKey::from_base64("not base64 !!!").unwrap_err();
        assert!(!err.to_string().contains("!!!"));
        assert!(err.to_string().contains("head -c 32 /dev/urandom | base64"));
        let short = base64::engine::general_purpose::STANDARD.encode([1u8; 16]);
        let err = TokenKey::from_base64(&short).unwrap_err();
        assert!(err.to_string().contains("16 bytes"), "{err}");
        assert!(!err.to_string().contains(&short));
        let good = base64::engine::general_purpose::STANDARD.encode([1u8; 32]);
        let key = TokenKey::from_base64(&format!("{good}\n")).unwrap();
        assert_eq!(format!("{key:?}"), "TokenKey([redacted])");
        let ring = Keyring::with_previous(key.clone(), key);
        assert!(!format!("{ring:?}").contains(&good));
        assert!(format!("{ring:?}").contains("[redacted]"));
    }

    #[test]
    fn unknown_key_names_its_fingerprint() {
        let a = Keyring::new(TokenKey::from_bytes([1; 32]));
        let b = Keyring::new(TokenKey::from_bytes([2; 32]));
        let (stored, id) = a.encrypt(&row("alice"), "t").unwrap();
        let err = b.decrypt(&row("alice"), &id, &stored).unwrap_err();
        assert!(err.to_string().contains(&id), "{err}");
    }
}
