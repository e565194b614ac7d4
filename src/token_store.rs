//! `MARKETPLACE_TOKEN_STORE` and `--token-store` for the commands: a `postgres://` URL is the
//! token store shared by a fleet (marketplace-client-postgres: encrypted refresh tokens and a
//! shared access-token cache, under the key in `MARKETPLACE_TOKEN_KEY`); a URL of any other
//! scheme (anything with `://`, such as a pasted `jdbc:postgresql://…`) is refused, naming its
//! scheme only (the rest may hold a password); anything else is the path of a refresh-token
//! file.

use std::path::PathBuf;
use std::sync::Arc;

use marketplace_client::oauth::{AccessTokenSource, ApplicationTokenProvider, OAuthConfig};
#[cfg(feature = "postgres")]
pub use marketplace_client_postgres::blocking::{BlockingRefreshTokenStore, TokenStore};
#[cfg(feature = "postgres")]
use marketplace_client_postgres::{KEY_VAR, Keyring};

/// The scope eBay's Inventory API reference gives every call that writes
/// (createOrReplaceInventoryItem, createOffer, updateOffer, publishOffer and the bulk calls):
/// `listing publish` needs a consent that granted it, and `consent` asks for it by default
/// (and with `--for listing`). Without it eBay answers 403, errorId 1100.
pub const INVENTORY_SCOPE: &str = "https://api.ebay.com/oauth/api_scope/sell.inventory";

/// The scope eBay's Account API reference gives getFulfillmentPolicies, getPaymentPolicies and
/// getReturnPolicies (beside `sell.account`): `listing publish` reads the seller's policies
/// with it once a run, to refuse a listing naming a policy the seller has not got on its
/// marketplace before sending it; `consent` asks for it by default (and with `--for
/// listing`). Without it the policies go unchecked until publishOffer (a warning says so).
pub const ACCOUNT_READ_SCOPE: &str = "https://api.ebay.com/oauth/api_scope/sell.account.readonly";

/// The scope eBay's Fulfillment API reference gives getOrders and getOrder (beside its
/// read-only form, [`FULFILLMENT_READ_SCOPE`]): `orders sync` and `orders show` need a consent
/// that granted one of them, and `consent` asks for it by default (and with `--for orders`).
/// Without it eBay answers 403, errorId 1100.
pub const FULFILLMENT_SCOPE: &str = "https://api.ebay.com/oauth/api_scope/sell.fulfillment";

/// The read-only form of [`FULFILLMENT_SCOPE`], which getOrders and getOrder also take.
pub const FULFILLMENT_READ_SCOPE: &str =
    "https://api.ebay.com/oauth/api_scope/sell.fulfillment.readonly";

/// True when `granted` (the scopes a consent granted, as the store records them) holds
/// [`INVENTORY_SCOPE`], or, against a host of its own (`MARKETPLACE_BASE_URL`, such as the
/// fake), that host's `{base_url}/oauth/api_scope/sell.inventory`.
pub fn grants_inventory<'a>(
    granted: impl IntoIterator<Item = &'a str>,
    config: &OAuthConfig,
) -> bool {
    grants_any(granted, config, &["sell.inventory"])
}

/// True when `granted` holds [`FULFILLMENT_SCOPE`] or [`FULFILLMENT_READ_SCOPE`] (getOrders
/// and getOrder take either), or, against a host of its own (`MARKETPLACE_BASE_URL`, such as
/// the fake), that host's `{base_url}/oauth/api_scope/sell.fulfillment(.readonly)`.
pub fn grants_fulfillment<'a>(
    granted: impl IntoIterator<Item = &'a str>,
    config: &OAuthConfig,
) -> bool {
    grants_any(
        granted,
        config,
        &["sell.fulfillment", "sell.fulfillment.readonly"],
    )
}

/// True when `granted` holds [`FULFILLMENT_SCOPE`] itself (createShippingFulfillment takes
/// no read-only scope), or, against a host of its own, that host's
/// `{base_url}/oauth/api_scope/sell.fulfillment`.
pub fn grants_fulfillment_write<'a>(
    granted: impl IntoIterator<Item = &'a str>,
    config: &OAuthConfig,
) -> bool {
    grants_any(granted, config, &["sell.fulfillment"])
}

/// True when `granted` holds one of `names` under eBay's scope URL or under the configured
/// host's own (`{base_url}/oauth/api_scope/NAME`).
fn grants_any<'a>(
    granted: impl IntoIterator<Item = &'a str>,
    config: &OAuthConfig,
    names: &[&str],
) -> bool {
    let own = config
        .endpoints
        .base_url()
        .join("oauth/api_scope")
        .map(String::from)
        .unwrap_or_default();
    granted.into_iter().any(|s| {
        names.iter().any(|name| {
            s.strip_suffix(name)
                .and_then(|prefix| prefix.strip_suffix('/'))
                .is_some_and(|prefix| {
                    prefix == "https://api.ebay.com/oauth/api_scope" || prefix == own
                })
        })
    })
}

/// The environment variable naming the token store.
pub const ENV_TOKEN_STORE: &str = "MARKETPLACE_TOKEN_STORE";

/// The long help of `--token-store`.
pub const TOKEN_STORE_HELP: &str = "Where tokens are shared (overrides MARKETPLACE_TOKEN_STORE): a \
    postgres://user:password@host/database URL shares one application token with every process \
    that uses the same database (one token request per expiry for the whole fleet; the tokens are \
    encrypted under MARKETPLACE_TOKEN_KEY). When the database is down, the command asks for its \
    own token and warns. A file path (a refresh-token file) shares nothing here; a URL of any other \
    scheme is refused.";

/// Where tokens are kept.
pub enum Store {
    /// A refresh-token file.
    File(PathBuf),
    /// The PostgreSQL store.
    #[cfg(feature = "postgres")]
    Postgres(TokenStore),
}

/// The refresh-token file when neither the flag nor `MARKETPLACE_TOKEN_STORE` names a store:
/// `$XDG_CONFIG_HOME/marketplace-toolkit/refresh-tokens.json`, else
/// `~/.config/marketplace-toolkit/refresh-tokens.json` (`consent` writes it, `listing
/// publish` reads it).
pub fn default_file() -> Result<PathBuf, String> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or_else(|| {
            format!("cannot find a home directory: pass --store or set {ENV_TOKEN_STORE}")
        })?;
    Ok(base.join("marketplace-toolkit").join("refresh-tokens.json"))
}

/// True for a `postgres://` or `postgresql://` URL.
pub fn is_database_url(setting: &str) -> bool {
    let lower = setting.trim_start().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// What `setting` is when it looks like a URL (it holds `://`) that is not a database URL:
/// "a jdbc:postgresql:// URL" for a JDBC URL. A scheme that is not made of letters, digits,
/// `+-.:` (at most 40 of them) is named only as "a URL of another scheme", so that nothing
/// else of the value is ever printed.
pub(crate) fn other_scheme(setting: &str) -> Option<String> {
    let (scheme, _) = setting.trim_start().split_once("://")?;
    let plain = !scheme.is_empty()
        && scheme.len() <= 40
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.' | ':'));
    Some(if plain {
        format!("a {scheme}:// URL")
    } else {
        "a URL of another scheme".to_owned()
    })
}

/// The store `setting` names (the flag, else `MARKETPLACE_TOKEN_STORE`); `None` when neither
/// is set.
pub fn from_setting(setting: Option<String>) -> Result<Option<Store>, String> {
    let Some(setting) = setting.or_else(|| std::env::var(ENV_TOKEN_STORE).ok()) else {
        return Ok(None);
    };
    if !is_database_url(&setting) {
        if let Some(scheme) = other_scheme(&setting) {
            return Err(format!(
                "the token store (--store/--token-store or {ENV_TOKEN_STORE}) is {scheme}; \
                 only postgres:// and postgresql:// URLs name a token store (a path names a \
                 refresh-token file). The rest of the value is not shown: it may hold a password."
            ));
        }
        return Ok(Some(Store::File(PathBuf::from(setting))));
    }
    database(&setting)
}

/// The PostgreSQL store of the database URL `setting`.
#[cfg(feature = "postgres")]
fn database(setting: &str) -> Result<Option<Store>, String> {
    let keyring = Keyring::from_env().map_err(|e| {
        format!("{e}\nThe PostgreSQL token store ({ENV_TOKEN_STORE}) encrypts every token under {KEY_VAR}.")
    })?;
    let store = TokenStore::connect(setting, keyring).map_err(|e| e.to_string())?;
    Ok(Some(Store::Postgres(store)))
}

/// A database URL, in a build without the PostgreSQL store.
#[cfg(not(feature = "postgres"))]
fn database(_: &str) -> Result<Option<Store>, String> {
    Err(format!(
        "{ENV_TOKEN_STORE} (or --token-store) names a PostgreSQL database, but this build has no \
         PostgreSQL token store: install the commands with their default features (without \
         --no-default-features), or unset it"
    ))
}

/// Creates or updates the store's tables; when that fails (the database cannot be reached,
/// or it refused the migration), warns, saying which, and goes on (a token call then asks
/// the token endpoint itself).
#[cfg(feature = "postgres")]
pub fn migrate_or_warn(store: &TokenStore) {
    if let Err(e) = store.migrate() {
        let what = if e.is_unreachable() {
            "cannot be reached"
        } else {
            "refused to create or update its tables"
        };
        tracing::warn!(reason = %e, "the PostgreSQL token store {what}; going on without it");
        // Never a panic on a closed standard error; the database's text escaped as the
        // commands escape what they print.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr().lock(),
            "warning: the PostgreSQL token store {what} ({}); this process asks for its own token",
            taxonomy_tree::tree::escaped(&e.to_string())
        );
    }
}

/// The application-token source of `config`: the ready `MARKETPLACE_ACCESS_TOKEN` when set,
/// otherwise a provider that shares its token through `store` when that is a database.
pub fn application_token_source(
    config: &OAuthConfig,
    store: Option<&Store>,
) -> Result<Arc<dyn AccessTokenSource>, marketplace_client::oauth::OAuthError> {
    match store {
        // A ready token is used as is; without a database there is nothing to share.
        #[cfg(feature = "postgres")]
        Some(Store::Postgres(store)) if config.access_token.is_none() => {
            migrate_or_warn(store);
            let provider = ApplicationTokenProvider::new(
                marketplace_client::oauth::OAuthClient::from_config(config)?,
            )
            .with_shared_cache(store.token_cache());
            Ok(Arc::new(provider))
        }
        _ => ApplicationTokenProvider::source(config),
    }
}

/// The refresh-token table of `config`'s application in the database of `store`.
#[cfg(feature = "postgres")]
pub fn refresh_tokens(
    store: &TokenStore,
    config: &OAuthConfig,
) -> Result<BlockingRefreshTokenStore, marketplace_client::oauth::OAuthError> {
    Ok(store.refresh_tokens(config)?)
}
