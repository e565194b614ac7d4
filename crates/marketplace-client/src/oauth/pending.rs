//! Pending consents in the file store: a JSON file beside the tokens file
//! (`refresh-tokens.json` → `refresh-tokens.consents.json`), with the tokens file's
//! guarantees: mode `0600`, refused on read when group or others may read it, replaced
//! atomically, every read-modify-write under the exclusive lock of its own `<file>.lock`.
//!
//! A record is the request's URL (which holds its state), account and expiry; the request is
//! rebuilt with [`ConsentRequest::restore`]. A take looks at every record (the states compared
//! in constant time) and writes the file without the one taken, under the lock: single use
//! across processes. A save drops the oldest records past the bounds
//! ([`ConsentRequest::MAX_PENDING_PER_ACCOUNT`], [`ConsentRequest::MAX_PENDING`]), so a
//! flood of consent requests neither grows the file nor makes each save slower.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use super::consent::{ConsentRequest, is_stale, make_room};
use super::error::OAuthError;
use super::secret::CsrfState;
use super::store::FileStore;

const FORMAT: &str = "marketplace-toolkit pending consents";

#[derive(Serialize, Deserialize, Default)]
struct PendingBody {
    format: String,
    version: u32,
    consents: Vec<PendingRecord>,
}

#[derive(Serialize, Deserialize)]
struct PendingRecord {
    /// The consent URL: it holds the state (a secret while the consent is pending).
    url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    account: Option<String>,
    /// Milliseconds since the Unix epoch.
    expires_at_ms: u64,
}

impl Drop for PendingRecord {
    fn drop(&mut self) {
        self.url.zeroize();
    }
}

impl PendingRecord {
    fn expires_at(&self) -> SystemTime {
        UNIX_EPOCH
            .checked_add(Duration::from_millis(self.expires_at_ms))
            .unwrap_or(UNIX_EPOCH)
    }

    fn request(&self) -> Result<ConsentRequest, OAuthError> {
        ConsentRequest::restore(&self.url, self.account.as_deref(), self.expires_at())
    }
}

impl FileStore {
    /// The file of the pending consents, beside the tokens file.
    pub(crate) fn consents_path(&self) -> PathBuf {
        self.path().with_extension("consents.json")
    }

    fn consents_file(&self) -> FileStore {
        FileStore::private_file(self.consents_path(), "the pending-consents file")
    }

    fn read_consents(file: &FileStore) -> Result<PendingBody, OAuthError> {
        file.read_json(FORMAT, |b: &PendingBody| (&b.format, b.version))
    }

    /// Adds `request` to the pending consents, dropping those long expired and the oldest past
    /// the bounds (`make_room`). The records are kept in the order they were saved.
    pub(crate) fn save_pending(&self, request: &ConsentRequest) -> Result<(), OAuthError> {
        let file = self.consents_file();
        let _lock = file.lock_exclusive()?;
        let mut body = Self::read_consents(&file)?;
        let now = SystemTime::now();
        body.consents.retain(|r| !is_stale(r.expires_at(), now));
        make_room(&mut body.consents, request.account(), |r| {
            r.account.as_deref()
        });
        body.format = FORMAT.into();
        body.version = 1;
        let expires_at_ms = request
            .expires_at()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        body.consents.push(PendingRecord {
            url: request.url().as_str().to_owned(),
            account: request.account().map(str::to_owned),
            expires_at_ms,
        });
        file.write_json(&body)
    }

    /// Removes and returns the pending consent whose state is `state`, if any.
    pub(crate) fn take_pending(
        &self,
        state: &CsrfState,
    ) -> Result<Option<ConsentRequest>, OAuthError> {
        let file = self.consents_file();
        let _lock = file.lock_exclusive()?;
        let mut body = Self::read_consents(&file)?;
        // Every record is compared, the match not ending the loop.
        let mut found = None;
        for (i, record) in body.consents.iter().enumerate() {
            if let Ok(request) = record.request()
                && request.state().ct_eq(state)
            {
                found = Some((i, request));
            }
        }
        let Some((i, request)) = found else {
            return Ok(None);
        };
        body.consents.remove(i);
        file.write_json(&body)?;
        Ok(Some(request))
    }
}
