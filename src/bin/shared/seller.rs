//! The seller a command acts for (`listing publish`, `orders`): its flags, and its token
//! provider over the refresh token `consent` stored, written once for the commands that use it.

use std::sync::Arc;

use clap::Args;
use marketplace_client::oauth::{
    FileStore, OAuthClient, OAuthConfig, RefreshTokenStore, SharedTokenCache, UserTokenProvider,
};
use marketplace_toolkit::token_store;

/// The seller and where its consent is stored.
#[derive(Args)]
pub struct Seller {
    /// The account whose refresh token `consent` stored (the seller).
    #[arg(long)]
    pub account: String,
    /// The refresh-token store `consent` wrote: a file, or a postgres:// URL. Default:
    /// MARKETPLACE_TOKEN_STORE, else ~/.config/marketplace-toolkit/refresh-tokens.json.
    #[arg(long, visible_alias = "token-store")]
    pub store: Option<String>,
    /// `production` or `sandbox` (overrides MARKETPLACE_ENV).
    #[arg(long)]
    pub env: Option<String>,
    /// API host (with --auth-url; overrides MARKETPLACE_BASE_URL).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Consent host (with --base-url; overrides MARKETPLACE_AUTH_URL).
    #[arg(long)]
    pub auth_url: Option<String>,
}

/// What a scope check is given: the store, the account and the settings; it refuses, before
/// anything is sent, an account with no consent or one without the command's scope.
pub type ScopeCheck = fn(&dyn RefreshTokenStore, &str, &OAuthConfig) -> Result<(), String>;

impl Seller {
    /// The settings (these flags over the environment) and the seller's token provider, over
    /// the refresh token `consent` stored (a file, or the PostgreSQL store and its shared token
    /// cache), once `require` has passed the stored consent.
    pub fn provider(
        &self,
        require: ScopeCheck,
    ) -> Result<(OAuthConfig, Arc<UserTokenProvider>), Box<dyn std::error::Error>> {
        let overrides = [
            (OAuthConfig::ENV_ENVIRONMENT, &self.env),
            (OAuthConfig::ENV_BASE_URL, &self.base_url),
            (OAuthConfig::ENV_AUTH_URL, &self.auth_url),
        ];
        let config = OAuthConfig::from_lookup(|name| {
            overrides
                .iter()
                .find(|(k, v)| *k == name && v.is_some())
                .and_then(|(_, v)| (*v).clone())
                .or_else(|| std::env::var(name).ok())
        })?;
        let client = OAuthClient::from_config(&config)?;
        type Tokens = (
            Arc<dyn RefreshTokenStore>,
            Option<Arc<dyn SharedTokenCache>>,
        );
        let (tokens, cache): Tokens = match token_store::from_setting(self.store.clone())? {
            Some(token_store::Store::File(path)) => (Arc::new(FileStore::new(path)), None),
            #[cfg(feature = "postgres")]
            Some(token_store::Store::Postgres(db)) => {
                token_store::migrate_or_warn(&db);
                let tokens = token_store::refresh_tokens(&db, &config)?;
                (Arc::new(tokens), Some(db.token_cache()))
            }
            None => (Arc::new(FileStore::new(token_store::default_file()?)), None),
        };
        require(&*tokens, &self.account, &config)?;
        let mut provider = UserTokenProvider::new(client, tokens, self.account.as_str());
        if let Some(cache) = cache {
            provider = provider.with_shared_cache(cache);
        }
        Ok((config, Arc::new(provider)))
    }
}
