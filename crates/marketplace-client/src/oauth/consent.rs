//! The user-consent step of the authorization-code flow (the consent request, "Getting the user's consent"): building the consent URL
//! and reading the redirect the user's browser lands on.
//!
//! The URL is built by the `url` crate (never by string concatenation), so any `redirect_uri`
//! works, including a RuName that is not a URL. The `state` is 256 random bits, and the one in
//! the redirect is compared with it in constant time.
//!
//! A consent request is a *pending consent* until its redirect comes back: it can be saved
//! (its URL, account and expiry: [`ConsentRequest::restore`] rebuilds it) so that whichever
//! process of a fleet receives the redirect completes it, once, before it expires
//! ([`complete_taken`], the one completion both fronts run).

use std::fmt;
use std::time::{Duration, SystemTime};

use subtle::ConstantTimeEq;
use url::{Url, form_urlencoded};

use super::config::Endpoints;
use super::error::StoreError;
use super::error::{ConfigError, OAuthError, OAuthErrorCode};
use super::redact::Redactor;
use super::scope::ScopeSet;
use super::secret::{AuthorizationCode, ClientId, CsrfState, REDACTED};

/// A consent URL and the state it carries; keep it until the redirect comes back.
///
/// The URL's optional parameters are set with [`with_prompt`](Self::with_prompt) and
/// [`with_locale`](Self::with_locale).
///
/// # A pending consent, on a fleet
///
/// The redirect may land on another process than the one that sent the user to the consent
/// page. Save the request where every process finds it, and complete it from there: the
/// refresh-token stores keep pending consents ([`RefreshTokenStore::save_consent`](super::RefreshTokenStore::save_consent): the
/// [`FileStore`](super::FileStore) in a file beside its tokens, the PostgreSQL store of
/// `marketplace-client-postgres` in a table), and [`OAuthClient::complete_consent`](crate::oauth::OAuthClient::complete_consent) (or the
/// async client's) takes the request of the redirect's `state` out of the store (so a second
/// use of the redirect is refused: [`OAuthError::ConsentNotPending`]), refuses it once expired
/// ([`OAuthError::ConsentExpired`], [`DEFAULT_TTL`](Self::DEFAULT_TTL) after it was made
/// unless [`with_ttl`](Self::with_ttl) says otherwise) and checks the state in constant time.
///
/// A caller that keeps pending consents itself saves [`url`](Self::url),
/// [`account`](Self::account) and [`expires_at`](Self::expires_at) (the URL holds the state:
/// keep it as secret as a token) and rebuilds the request with [`restore`](Self::restore).
///
/// ```
/// use std::sync::Arc;
/// use marketplace_client::oauth::{
///     ConsentRequest, Endpoints, MemoryStore, OAuthClient, OAuthConfig, OAuthError,
///     RefreshTokenStore, ScopeSet,
/// };
/// # fn main() -> Result<(), OAuthError> {
/// let config = OAuthConfig::new(Endpoints::sandbox())
///     .with_credentials("MyApp-SBX-1", "SBX-secret")
///     .with_redirect_uri("My_Company-MyApp-SBX-abc");
/// let client = OAuthClient::from_config(&config)?;
/// let store = Arc::new(MemoryStore::new()); // a FileStore or PostgreSQL for a fleet
///
/// // Process A: the user asks to connect their eBay account.
/// let request = client.consent_request(&ScopeSet::default())?.with_account("seller-1");
/// store.save_consent(&request)?;
/// let consent_page = request.url().clone(); // redirect the browser there
///
/// // Process B: the browser comes back with the state and the code.
/// let state = request.state().secret().to_owned();
/// let redirect = format!("https://backend.example/callback?state={state}&code=v%5E1.1");
/// let (pending, code) = client.complete_consent(&store, &redirect)?;
/// assert_eq!(pending.account(), Some("seller-1"));
/// assert_eq!(code.secret(), "v^1.1");
/// // then: UserTokenProvider::new(…, store, "seller-1").exchange_code(&code, pending.scopes())
///
/// // The same redirect again is refused: a pending consent is used once.
/// assert!(matches!(
///     client.complete_consent(&store, &redirect),
///     Err(OAuthError::ConsentNotPending)
/// ));
///
/// // Kept by the caller: three fields, and the request rebuilt from them.
/// let again = ConsentRequest::restore(consent_page.as_str(), Some("seller-1"), request.expires_at())?;
/// assert_eq!(again.state(), request.state());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ConsentRequest {
    url: Url,
    state: CsrfState,
    scopes: ScopeSet,
    account: Option<String>,
    expires_at: SystemTime,
}

impl fmt::Debug for ConsentRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = self.url.clone();
        let pairs: Vec<(String, String)> = self
            .url
            .query_pairs()
            .map(|(k, v)| {
                let v = if k == "state" {
                    REDACTED.into()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        shown.query_pairs_mut().clear().extend_pairs(pairs);
        f.debug_struct("ConsentRequest")
            .field("url", &shown.as_str())
            .field("state", &self.state)
            .field("scopes", &self.scopes)
            .field("account", &self.account)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

impl ConsentRequest {
    /// How long a consent request waits for its redirect unless [`with_ttl`](Self::with_ttl)
    /// says otherwise: 10 minutes (eBay's authorization code itself is valid about 5).
    pub const DEFAULT_TTL: Duration = Duration::from_secs(600);

    /// The most pending consents a store keeps for one account (or for the requests naming
    /// none): saving another drops the account's oldest, so a flood of consent requests for
    /// one account cannot grow the store.
    pub const MAX_PENDING_PER_ACCOUNT: usize = 5;

    /// The most pending consents a store keeps in all (of one application, for the
    /// PostgreSQL store): saving another drops the oldest.
    pub const MAX_PENDING: usize = 1000;

    /// Names the account the consent is for (the key its refresh token will be stored under),
    /// so that the process completing it knows whose it is ([`account`](Self::account)).
    pub fn with_account(mut self, account: impl Into<String>) -> Self {
        self.account = Some(account.into());
        self
    }

    /// The account named by [`with_account`](Self::with_account), if any.
    pub fn account(&self) -> Option<&str> {
        self.account.as_deref()
    }

    /// Makes the request expire `ttl` from now instead of [`DEFAULT_TTL`](Self::DEFAULT_TTL)
    /// after it was made: completing it later is [`OAuthError::ConsentExpired`].
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        // At most a century: any longer is "never", and cannot overflow the clock.
        self.expires_at = SystemTime::now() + ttl.min(Duration::from_secs(100 * 365 * 86_400));
        self
    }

    /// When the request expires.
    pub fn expires_at(&self) -> SystemTime {
        self.expires_at
    }

    /// True when the request has expired at `now`.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        now >= self.expires_at
    }

    /// Rebuilds a saved request from its [`url`](Self::url) (which holds its state and scopes),
    /// [`account`](Self::account) and [`expires_at`](Self::expires_at). A URL without one
    /// non-empty `state` or without a `scope` is refused as [`OAuthError::Store`] (the saved
    /// record is not a consent request).
    pub fn restore(
        url: &str,
        account: Option<&str>,
        expires_at: SystemTime,
    ) -> Result<Self, OAuthError> {
        let corrupt = |reason: &str| {
            OAuthError::Store(StoreError::corrupt(
                "of pending consents",
                "restore a consent request from",
                format!("the saved consent URL {reason}"),
            ))
        };
        let url = Url::parse(url).map_err(|_| corrupt("is not a URL"))?;
        let mut state = None;
        let mut scopes = None;
        for (key, value) in url.query_pairs() {
            let taken = match key.as_ref() {
                "state" => state.replace(CsrfState::new(value.into_owned())).is_some(),
                "scope" => scopes
                    .replace(ScopeSet::from_space_separated(&value))
                    .is_some(),
                _ => false,
            };
            if taken {
                return Err(corrupt(&format!("has more than one `{key}`")));
            }
        }
        let state = state
            .filter(|s| !s.secret().is_empty())
            .ok_or_else(|| corrupt("has no state"))?;
        let scopes = scopes
            .filter(|s| !s.is_empty())
            .ok_or_else(|| corrupt("has no scope"))?;
        Ok(Self {
            url,
            state,
            scopes,
            account: account.map(str::to_owned),
            expires_at,
        })
    }

    /// Adds `prompt` to the consent URL, for example `login` to make the user sign in again
    /// (replacing a `prompt` set before).
    ///
    /// ```
    /// use marketplace_client::oauth::{Endpoints, OAuthClient, OAuthConfig, ScopeSet};
    /// # fn main() -> Result<(), marketplace_client::oauth::OAuthError> {
    /// let config = OAuthConfig::new(Endpoints::sandbox())
    ///     .with_credentials("MyApp-SBX-1", "SBX-secret")
    ///     .with_redirect_uri("My_Company-MyApp-SBX-abc");
    /// let client = OAuthClient::from_config(&config)?;
    /// let request = client
    ///     .consent_request(&ScopeSet::default())?
    ///     .with_prompt("login")
    ///     .with_locale("de-DE");
    /// assert!(request.url().as_str().ends_with("&prompt=login&locale=de-DE"));
    /// # Ok(()) }
    /// ```
    pub fn with_prompt(self, prompt: impl Into<String>) -> Self {
        self.with_parameter("prompt", &prompt.into())
    }

    /// Adds `locale` to the consent URL, for example `de-DE`, for the language of the consent
    /// page (replacing a `locale` set before).
    pub fn with_locale(self, locale: impl Into<String>) -> Self {
        self.with_parameter("locale", &locale.into())
    }

    /// The URL with `key=value` last in its query, instead of any `key` it had.
    fn with_parameter(mut self, key: &str, value: &str) -> Self {
        let kept: Vec<(String, String)> = self
            .url
            .query_pairs()
            .filter(|(k, _)| k != key)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        self.url
            .query_pairs_mut()
            .clear()
            .extend_pairs(kept)
            .append_pair(key, value);
        self
    }

    /// The URL to open in the user's browser. It holds the state: show it to the user only.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The state sent in the URL.
    pub fn state(&self) -> &CsrfState {
        &self.state
    }

    /// The scopes asked for.
    pub fn scopes(&self) -> &ScopeSet {
        &self.scopes
    }

    /// Reads the redirect (a full URL or its query string), checks its state against this
    /// request in constant time, and returns the authorization code.
    ///
    /// The state is checked first, for a refusal too: a redirect whose state is missing or not
    /// this request's is [`OAuthError::StateMismatch`] even when it carries
    /// `error=access_denied` (so a stray or forged refusal cannot end a consent flow that
    /// ignores mismatches and keeps waiting).
    pub fn complete(&self, redirect: &str) -> Result<AuthorizationCode, OAuthError> {
        let query = redirect_query(redirect)?;
        let state = form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == "state")
            .map(|(_, v)| CsrfState::new(v.into_owned()));
        if !state.is_some_and(|s| s.ct_eq(&self.state)) {
            return Err(OAuthError::StateMismatch);
        }
        match parse_redirect(redirect) {
            // The request knows what it asked for: an invalid_scope names it.
            Err(OAuthError::ConsentDenied {
                code, description, ..
            }) => Err(OAuthError::ConsentDenied {
                code,
                description,
                scopes: Some(self.scopes.clone()),
            }),
            other => other?.verify_state(&self.state),
        }
    }
}

/// Builds `GET {auth_url}/oauth2/authorize?client_id=…&redirect_uri=…&response_type=code&scope=…&state=…`
/// (`prompt` and `locale` are added by [`ConsentRequest::with_prompt`] and
/// [`ConsentRequest::with_locale`]). [`ConfigError::Missing`] when `endpoints` has no consent
/// host ([`Endpoints::authorize_url`]).
///
/// ```
/// # #[cfg(feature = "test-util")] {
/// use marketplace_client::oauth::{ClientId, CsrfState, Endpoints, ScopeSet};
/// use marketplace_client::test_util::consent_url;
/// let url = consent_url(
///     &Endpoints::sandbox(),
///     &ClientId::new("MyApp-SBX-1"),
///     "My_Company-MyApp-SBX-abc",
///     &ScopeSet::new(["https://api.ebay.com/oauth/api_scope", "https://api.ebay.com/oauth/api_scope/sell.inventory"]),
///     &CsrfState::new("s-1"),
/// )
/// .unwrap();
/// assert_eq!(
///     url.as_str(),
///     "https://auth.sandbox.ebay.com/oauth2/authorize?client_id=MyApp-SBX-1\
///      &redirect_uri=My_Company-MyApp-SBX-abc&response_type=code\
///      &scope=https%3A%2F%2Fapi.ebay.com%2Foauth%2Fapi_scope+https%3A%2F%2Fapi.ebay.com%2Foauth%2Fapi_scope%2Fsell.inventory\
///      &state=s-1"
/// );
/// # }
/// ```
pub fn consent_url(
    endpoints: &Endpoints,
    client_id: &ClientId,
    redirect_uri: &str,
    scopes: &ScopeSet,
    state: &CsrfState,
) -> Result<Url, ConfigError> {
    let mut url = endpoints.authorize_url()?;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("client_id", client_id.as_str());
        q.append_pair("redirect_uri", redirect_uri);
        q.append_pair("response_type", "code");
        let scope = if scopes.is_empty() {
            endpoints.default_scope()
        } else {
            scopes.to_space_separated()
        };
        q.append_pair("scope", &scope);
        q.append_pair("state", state.secret());
    }
    Ok(url)
}

/// A consent request of the application `client_id` for `scopes` (empty: the default scope)
/// with a fresh random state, sent to `redirect_uri` (`OAuthClient::consent_request`).
pub(crate) fn new_request(
    endpoints: &Endpoints,
    client_id: &ClientId,
    redirect_uri: Option<&str>,
    scopes: &ScopeSet,
) -> Result<ConsentRequest, OAuthError> {
    let redirect_uri = super::require_redirect_uri(redirect_uri)?;
    let state = CsrfState::new_random().map_err(|e| OAuthError::Random(e.to_string()))?;
    let scopes = if scopes.is_empty() {
        ScopeSet::new([endpoints.default_scope()])
    } else {
        scopes.clone()
    };
    let url = consent_url(endpoints, client_id, redirect_uri, &scopes, &state)?;
    Ok(ConsentRequest {
        url,
        state,
        scopes,
        account: None,
        expires_at: SystemTime::now() + ConsentRequest::DEFAULT_TTL,
    })
}

/// How long after its expiry a pending consent stays in a store (a late redirect is then
/// [`OAuthError::ConsentExpired`], not [`OAuthError::ConsentNotPending`]); a store drops older
/// ones when it saves a consent.
pub(crate) const KEPT_AFTER_EXPIRY: Duration = Duration::from_secs(24 * 3600);

/// Makes room for one more pending consent of `account` in `pending` (oldest first): drops
/// the oldest of `account` past [`ConsentRequest::MAX_PENDING_PER_ACCOUNT`] - 1, then the
/// oldest of all past [`ConsentRequest::MAX_PENDING`] - 1. `account_of` reads a record's
/// account.
pub(crate) fn make_room<T>(
    pending: &mut Vec<T>,
    account: Option<&str>,
    account_of: impl Fn(&T) -> Option<&str>,
) {
    let of_account = pending.iter().filter(|r| account_of(r) == account).count();
    let mut excess = (of_account + 1).saturating_sub(ConsentRequest::MAX_PENDING_PER_ACCOUNT);
    pending.retain(|r| {
        let drop = excess > 0 && account_of(r) == account;
        excess -= usize::from(drop);
        !drop
    });
    let excess = (pending.len() + 1).saturating_sub(ConsentRequest::MAX_PENDING);
    pending.drain(..excess);
}

/// True when a pending consent that expires at `expires_at` may be dropped at `now`.
pub(crate) fn is_stale(expires_at: SystemTime, now: SystemTime) -> bool {
    expires_at
        .checked_add(KEPT_AFTER_EXPIRY)
        .is_some_and(|t| t < now)
}

/// The `state` of a redirect (a full URL or its query string), by which its pending consent
/// is found; a redirect without one is [`OAuthError::StateMismatch`] (it belongs to no
/// consent), one that is not a redirect [`OAuthError::InvalidRedirect`].
pub(crate) fn redirect_state(redirect: &str) -> Result<CsrfState, OAuthError> {
    let query = redirect_query(redirect)?;
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "state")
        .map(|(_, v)| CsrfState::new(v.into_owned()))
        .filter(|s| !s.secret().is_empty())
        .ok_or(OAuthError::StateMismatch)
}

/// The completion of a pending consent, the same for both fronts: `taken` is what the store
/// handed out (and removed) for the redirect's state. None is
/// [`OAuthError::ConsentNotPending`]; one expired at `now`, [`OAuthError::ConsentExpired`];
/// otherwise [`ConsentRequest::complete`] (the state compared in constant time, a refusal
/// of the user read).
pub(crate) fn complete_taken(
    taken: Option<ConsentRequest>,
    redirect: &str,
    now: SystemTime,
) -> Result<(ConsentRequest, AuthorizationCode), OAuthError> {
    let request = taken.ok_or(OAuthError::ConsentNotPending)?;
    if request.is_expired(now) {
        let ago = now.duration_since(request.expires_at).unwrap_or_default();
        return Err(OAuthError::ConsentExpired {
            expired_ago: Duration::from_secs(ago.as_secs()),
        });
    }
    let code = request.complete(redirect)?;
    Ok((request, code))
}

/// What a store that keeps no pending consents answers to
/// [`RefreshTokenStore::save_consent`](super::RefreshTokenStore::save_consent) and [`RefreshTokenStore::take_consent`](super::RefreshTokenStore::take_consent).
pub(crate) fn not_kept() -> OAuthError {
    OAuthError::Store(
        StoreError::unavailable(
            "in use",
            "keep a pending consent in",
            "this refresh-token store keeps no pending consents",
        )
        .with_message(
            "this refresh-token store keeps no pending consents: use a FileStore, a \
             MemoryStore or the PostgreSQL store, or keep the consent request yourself \
             (ConsentRequest::restore)",
        ),
    )
}

/// The query string of a redirect: of a full URL, or the text after `?`, or the whole text.
fn redirect_query(input: &str) -> Result<String, OAuthError> {
    let input = input.trim();
    let invalid = |reason: &str| OAuthError::InvalidRedirect {
        reason: reason.to_owned(),
    };
    if input.is_empty() {
        return Err(invalid("it is empty"));
    }
    if input.contains("://") {
        let url = Url::parse(input).map_err(|e| invalid(&format!("it is not a URL ({e})")))?;
        Ok(url
            .query()
            .ok_or_else(|| invalid("it has no query string (`?code=…&state=…`)"))?
            .to_owned())
    } else {
        Ok(match input.split_once('?') {
            Some((_, q)) => q.to_owned(),
            None => input.to_owned(),
        })
    }
}

/// What the redirect after a granted consent carries.
#[derive(Debug)]
pub struct AuthorizationResponse {
    /// `code`: the authorization code (valid about 5 minutes, once).
    pub code: AuthorizationCode,
    /// `state`, as sent back.
    pub state: Option<CsrfState>,
    /// `expires_in` of the code, if sent.
    #[cfg_attr(not(feature = "test-util"), allow(dead_code))]
    pub expires_in: Option<Duration>,
}

impl AuthorizationResponse {
    /// Checks the returned state against the one sent, in constant time, and hands out the
    /// code. A missing state is a mismatch.
    pub fn verify_state(self, expected: &CsrfState) -> Result<AuthorizationCode, OAuthError> {
        let Some(state) = &self.state else {
            return Err(OAuthError::StateMismatch);
        };
        let same: bool = state
            .secret()
            .as_bytes()
            .ct_eq(expected.secret().as_bytes())
            .into();
        if same {
            Ok(self.code)
        } else {
            Err(OAuthError::StateMismatch)
        }
    }
}

/// Parses the address the browser landed on after consent: a full URL
/// (`https://example.com/accepted?state=…&code=…&expires_in=299`), or only its query string
/// (with or without the leading `?`). A refused consent (`error=access_denied`) is
/// [`OAuthError::ConsentDenied`].
///
/// ```
/// # #[cfg(feature = "test-util")] {
/// use marketplace_client::oauth::{CsrfState, OAuthError};
/// use marketplace_client::test_util::parse_redirect;
/// let r = parse_redirect("https://example.com/ok?state=s-1&code=v%5E1.1%23i%5E1%23p%5E3%25%2Bx&expires_in=299").unwrap();
/// assert_eq!(r.code.secret(), "v^1.1#i^1#p^3%+x");
/// assert_eq!(r.verify_state(&CsrfState::new("s-1")).unwrap().secret(), "v^1.1#i^1#p^3%+x");
///
/// let r = parse_redirect("?state=s-1&code=abc").unwrap();
/// assert!(matches!(r.verify_state(&CsrfState::new("s-2")), Err(OAuthError::StateMismatch)));
///
/// let denied = parse_redirect("state=s-1&error=access_denied&error_description=user+said+no");
/// assert!(matches!(denied, Err(OAuthError::ConsentDenied { .. })));
/// # }
/// ```
pub fn parse_redirect(input: &str) -> Result<AuthorizationResponse, OAuthError> {
    let invalid = |reason: &str| OAuthError::InvalidRedirect {
        reason: reason.to_owned(),
    };
    let query = redirect_query(input)?;
    let mut code = None;
    let mut state = None;
    let mut expires_in = None;
    let mut error = None;
    let mut error_description = None;
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        let slot_taken = match key.as_ref() {
            "code" => code
                .replace(AuthorizationCode::new(value.into_owned()))
                .is_some(),
            "state" => state.replace(CsrfState::new(value.into_owned())).is_some(),
            "expires_in" => {
                expires_in = value.trim().parse::<u64>().ok().map(Duration::from_secs);
                false
            }
            "error" => error.replace(value.into_owned()).is_some(),
            "error_description" => {
                error_description = Some(value.into_owned());
                false
            }
            _ => false,
        };
        if slot_taken {
            // `key` is one of ours (code, state, error), so it may be quoted.
            return Err(invalid(&format!(
                "the parameter `{key}` appears more than once"
            )));
        }
    }
    if let Some(error) = error {
        // Both texts came from the server through the browser: they pass the sanitizer,
        // which knows the state and code of this redirect.
        let mut redactor = Redactor::new();
        for secret in [
            state.as_ref().map(CsrfState::secret),
            code.as_ref().map(AuthorizationCode::secret),
        ]
        .into_iter()
        .flatten()
        {
            redactor.add(secret);
        }
        return Err(OAuthError::ConsentDenied {
            code: OAuthErrorCode::from_server(&error, &redactor),
            description: error_description.map(|d| redactor.text(&d)),
            scopes: None,
        });
    }
    let code = code
        .filter(|c| !c.secret().is_empty())
        .ok_or_else(|| invalid("it has no `code` parameter"))?;
    Ok(AuthorizationResponse {
        code,
        state,
        expires_in,
    })
}
