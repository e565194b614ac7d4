//! The user-token provider's decisions without I/O: what a consent stores, whether a refresh
//! token may be used, when the server's refusal means the seller must consent again, and what
//! a rotated refresh token is saved as. Both fronts' `UserTokenProvider`s call these between
//! their store and token-endpoint calls.

use std::time::SystemTime;

use super::token::TokenResponse;
use crate::oauth::{Grant, OAuthError, OAuthErrorCode, RefreshToken, ScopeSet, StoredRefreshToken};

/// A refresh token the store has not taken yet.
#[derive(Clone)]
pub(crate) struct Unsaved {
    /// What to save.
    pub(crate) record: StoredRefreshToken,
    /// The refresh token the store held when this one was obtained, which it may replace; a
    /// new consent's (`None`) replaces whatever is stored.
    pub(crate) replaces: Option<RefreshToken>,
}

/// The record a code exchange's answer (received at `wall`) stores for `granted_scopes`.
pub(crate) fn consent_record(
    response: &TokenResponse,
    granted_scopes: &ScopeSet,
    wall: SystemTime,
) -> Result<StoredRefreshToken, OAuthError> {
    StoredRefreshToken::from_response(response, granted_scopes.clone(), wall).ok_or_else(|| {
        OAuthError::UnexpectedBody {
            grant: Grant::AuthorizationCode,
            status: 200,
            reason: "the code exchange returned no refresh_token".into(),
            body: String::new(),
        }
    })
}

/// Refuses a refresh token that has expired (its expiry is stored, so wall-clock time).
pub(crate) fn check_usable(
    record: &StoredRefreshToken,
    wall: SystemTime,
    account: &str,
) -> Result<(), OAuthError> {
    if record.is_expired(wall) {
        return Err(OAuthError::RefreshTokenExpired {
            account: account.to_owned(),
        });
    }
    Ok(())
}

/// The scopes a refresh asks for: the provider's, else those granted at consent.
pub(crate) fn refresh_scopes<'a>(
    configured: Option<&'a ScopeSet>,
    record: &'a StoredRefreshToken,
) -> &'a ScopeSet {
    configured.unwrap_or(&record.scopes)
}

/// Whether a refresh's failure means the seller (or eBay) revoked the grant (`invalid_grant`):
/// then the account must consent again. Returns the server's description and status.
pub(crate) fn revoked(error: &OAuthError) -> Option<(Option<String>, u16)> {
    match error {
        OAuthError::Server {
            code: OAuthErrorCode::InvalidGrant,
            description,
            status,
            ..
        } => Some((description.clone(), *status)),
        _ => None,
    }
}

/// The error of a revoked grant of `account`.
pub(crate) fn consent_revoked(
    account: &str,
    description: Option<String>,
    status: u16,
) -> OAuthError {
    OAuthError::ConsentRevoked {
        account: account.to_owned(),
        description,
        status,
    }
}

/// The record to save when a refresh (started at `wall` from `record`) rotated the refresh
/// token; `None` when it did not.
pub(crate) fn rotated(
    record: &StoredRefreshToken,
    response: &TokenResponse,
    wall: SystemTime,
) -> Option<StoredRefreshToken> {
    let rotated = response.refresh_token.as_ref()?;
    if rotated.ct_eq(&record.refresh_token) {
        return None;
    }
    Some(StoredRefreshToken {
        refresh_token: rotated.clone(),
        scopes: record.scopes.clone(),
        expires_at: response
            .refresh_token_expires_in
            .and_then(|d| wall.checked_add(d))
            .or(record.expires_at),
    })
}

/// What to do with an unsaved token after saving it again.
pub(crate) enum Retried {
    /// Saved: use it, and the store holds it.
    Saved,
    /// The store holds a newer token (another process's consent): forget it, load the store's.
    Superseded,
    /// Still not saved: use it, keep it.
    Kept,
}

/// Classifies the result of saving an unsaved token again.
pub(crate) fn retried(result: &Result<bool, OAuthError>) -> Retried {
    match result {
        Ok(true) => Retried::Saved,
        Ok(false) => Retried::Superseded,
        Err(_) => Retried::Kept,
    }
}

/// The error when the store holds no refresh token for `account`.
pub(crate) fn no_refresh_token(account: &str) -> OAuthError {
    OAuthError::NoRefreshToken {
        account: account.to_owned(),
    }
}

/// The last refresh-token record a provider read from or wrote to its store: used when the
/// store cannot be reached (a database that is down), so that a refresh still succeeds.
#[derive(Default)]
pub(crate) struct Known {
    record: std::sync::Mutex<Option<StoredRefreshToken>>,
    /// The store's error, when the record of the current refresh came from memory.
    fell_back: std::sync::Mutex<Option<OAuthError>>,
}

impl Known {
    /// Remembers `record` as what the store holds.
    pub(crate) fn remember(&self, record: &StoredRefreshToken) {
        *crate::oauth::lock(&self.record) = Some(record.clone());
    }

    /// A refresh starts: its record comes from the store (or from a token kept unsaved) until
    /// [`loaded`](Self::loaded) falls back.
    pub(crate) fn start(&self) {
        *crate::oauth::lock(&self.fell_back) = None;
    }

    /// The record of a store's `load` answer: the stored one (remembered), or, when the
    /// store could not be reached, the last one known (with a warning); the store's error
    /// when none is known.
    pub(crate) fn loaded(
        &self,
        answer: Result<Option<StoredRefreshToken>, OAuthError>,
        account: &str,
    ) -> Result<StoredRefreshToken, OAuthError> {
        match answer {
            Ok(Some(record)) => {
                self.remember(&record);
                Ok(record)
            }
            Ok(None) => Err(no_refresh_token(account)),
            Err(OAuthError::Store(e)) if e.is_unavailable() => {
                match crate::oauth::lock(&self.record).clone() {
                    Some(record) => {
                        tracing::warn!(
                            account,
                            reason = %e,
                            "the refresh-token store cannot be reached; refreshing with the last refresh token read from it"
                        );
                        *crate::oauth::lock(&self.fell_back) = Some(OAuthError::Store(e));
                        Ok(record)
                    }
                    None => Err(OAuthError::Store(e)),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// The error to answer when the marketplace refused the refresh token of the current
    /// refresh (`invalid_grant`): when that token came from memory because the store was down,
    /// the store may hold a newer one, so the answer is the store's error, not a revoked
    /// consent (and nothing is marked).
    pub(crate) fn refused_from_memory(&self) -> Option<OAuthError> {
        crate::oauth::lock(&self.fell_back).clone()
    }
}
