//! `cargo run --bin consent -- [OPTIONS] [COMMAND]`: set up a backend for user tokens.
//!
//! `authorize` (the default) prints the consent URL, takes the address the browser ends on
//! (pasted on standard input, or caught by a one-shot listener when the redirect URI is a
//! loopback URL such as `http://127.0.0.1:8976/callback`), checks its state, exchanges the code
//! and stores the refresh token in a file of mode 0600, then records which eBay user consented
//! (the Identity API's getUser: `userId` and `username`, beside the token) so that eBay's
//! account deletion notifications find the account. `status` checks the stored token by
//! refreshing, `token` prints a current access token, `forget` removes the stored token,
//! `list` shows every account with its eBay user.
//!
//! `-v` (debug) or `-vv` (trace) shows the HTTP attempts and token events on standard error, as
//! does `RUST_LOG`; no token is ever printed.
//!
//! Settings come from the `MARKETPLACE_*` environment variables of
//! `marketplace_client::oauth::OAuthConfig`; the flags override them.

// Before the modules that print: `errln!` (stderr: escaped, never a panic).
#[path = "shared/output.rs"]
#[macro_use]
#[allow(dead_code, unused_macros)] // `consent` writes no JSON and prints through `out()`
mod output;
#[path = "shared/verbosity.rs"]
mod verbosity;

fn main() -> std::process::ExitCode {
    live::main()
}

mod live {
    use std::io::{BufRead, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::path::PathBuf;
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::time::{Duration, Instant, SystemTime};

    use clap::{Parser, Subcommand, ValueEnum};
    use marketplace_client::api::{ApiClient, ApiRequest, ClientConfig};
    use marketplace_client::oauth::{
        AccessTokenSource, ApplicationTokenProvider, ConsentRequest, FileStore, OAuthClient,
        OAuthConfig, OAuthError, RefreshTokenStore, ScopeSet, SharedTokenCache, StoredRefreshToken,
        UserTokenProvider,
    };
    use marketplace_notifications::{AccountUsers, EbayUser, IDENTITY_SCOPE, identity_base_url};
    use marketplace_toolkit::token_store::{self, ENV_TOKEN_STORE};

    use crate::output::escaped;

    /// Writes `line` and a newline to standard output, escaped for a terminal; a closed pipe
    /// ends the command quietly (`crate::output::write`), where `println!` would panic.
    fn out(line: &str) -> std::io::Result<()> {
        crate::output::write(format_args!("{line}\n"));
        Ok(())
    }

    /// Where the refresh tokens are: a file, or the PostgreSQL store shared by a fleet.
    #[derive(Clone)]
    enum Store {
        File(Arc<FileStore>),
        Postgres {
            db: Arc<token_store::TokenStore>,
            tokens: Arc<token_store::BlockingRefreshTokenStore>,
            cache: Arc<dyn SharedTokenCache>,
        },
    }

    impl Store {
        /// The store as the providers take it.
        fn as_dyn(&self) -> Arc<dyn RefreshTokenStore> {
            match self {
                Store::File(file) => file.clone(),
                Store::Postgres { tokens, .. } => tokens.clone(),
            }
        }

        /// Where it is, for messages (never the database URL: it may hold a password).
        fn describe(&self) -> String {
            match self {
                Store::File(file) => file.path().display().to_string(),
                Store::Postgres { .. } => "the PostgreSQL token store".into(),
            }
        }

        /// A user-token provider for `account` over this store (sharing its access token
        /// through the database, for the PostgreSQL store).
        fn provider(
            &self,
            client: impl Into<Arc<OAuthClient>>,
            account: &str,
        ) -> UserTokenProvider {
            let provider = UserTokenProvider::new(client, self.as_dyn(), account);
            match self {
                Store::File(_) => provider,
                Store::Postgres { cache, .. } => provider.with_shared_cache(cache.clone()),
            }
        }
    }

    #[derive(Parser)]
    #[command(
        name = "consent",
        about = "Grant this backend a seller's consent and keep its refresh token",
        long_about = "Grant this backend a seller's consent (OAuth 2.0 authorization-code flow) and \
                  keep the refresh token: in a file only you can read, or, when MARKETPLACE_TOKEN_STORE \
                  is a postgres:// URL, in that database, encrypted with MARKETPLACE_TOKEN_KEY.\n\n\
                  Settings: MARKETPLACE_CLIENT_ID, MARKETPLACE_CLIENT_SECRET, \
                  MARKETPLACE_REDIRECT_URI, MARKETPLACE_ENV (production|sandbox), \
                  MARKETPLACE_BASE_URL + MARKETPLACE_AUTH_URL, MARKETPLACE_CONFIG (SDK file), \
                  MARKETPLACE_TOKEN_STORE; the flags below override them.\n\n\
                  Without a command, runs `authorize`, and takes its flags (--scope, --input, …)."
    )]
    struct Cli {
        #[command(subcommand)]
        command: Option<Command>,
        /// The flags of `authorize`, for the default command (`consent --scope …`).
        #[command(flatten)]
        authorize: AuthorizeArgs,
        /// `production` or `sandbox` (overrides MARKETPLACE_ENV).
        #[arg(long, global = true)]
        env: Option<String>,
        /// API host (with --auth-url; overrides MARKETPLACE_BASE_URL).
        #[arg(long, global = true)]
        base_url: Option<String>,
        /// Consent host (with --base-url; overrides MARKETPLACE_AUTH_URL).
        #[arg(long, global = true)]
        auth_url: Option<String>,
        /// The flags of the token's account and of the consent's redirect, for the default
        /// command and before a command's name (`consent --account A status`).
        #[command(flatten)]
        session: SessionArgs,
        /// The refresh-token store: a file, or a postgres:// URL (the store a fleet shares,
        /// encrypted under MARKETPLACE_TOKEN_KEY). Default: MARKETPLACE_TOKEN_STORE, else
        /// ~/.config/marketplace-toolkit/refresh-tokens.json.
        #[arg(long, visible_alias = "token-store", global = true)]
        store: Option<String>,
        /// Show the HTTP attempts and token events on standard error (-vv: more).
        #[arg(short, long, global = true, action = clap::ArgAction::Count, long_help = super::verbosity::VERBOSE_HELP)]
        verbose: u8,
    }

    /// `--account` and `--redirect-uri`: flags of the commands that use them only (so that
    /// `signing-key --help` does not list them), also taken before the command's name, where
    /// the top level takes them for the default command.
    #[derive(clap::Args, Default)]
    struct SessionArgs {
        /// The account name the token is stored under (default: `default`).
        #[arg(long)]
        account: Option<String>,
        /// Redirect URI: the RuName, or a loopback URL to catch the redirect here (overrides
        /// MARKETPLACE_REDIRECT_URI).
        #[arg(long)]
        redirect_uri: Option<String>,
    }

    /// `--account` alone, for the commands about a stored token that need no redirect.
    #[derive(clap::Args, Default)]
    struct AccountArg {
        /// The account name the token is stored under (default: `default`).
        #[arg(long)]
        account: Option<String>,
    }

    #[derive(Subcommand)]
    enum Command {
        /// Run the consent flow and store the refresh token (the default).
        Authorize {
            #[command(flatten)]
            args: AuthorizeArgs,
            #[command(flatten)]
            session: SessionArgs,
        },
        /// Show the stored token and check it by refreshing (prints no secret).
        Status(AccountArg),
        /// Print a current user access token on standard output (refreshing silently).
        Token(AccountArg),
        /// Remove the stored refresh token.
        Forget(AccountArg),
        /// List the accounts with a stored refresh token, those expiring soonest first (eBay's
        /// are valid for 18 months), marking those that expire within 30 days or need consent;
        /// with the PostgreSQL store, also how many tokens are still under the previous key.
        List,
        /// Copy the refresh tokens of a store file (such as the one a failed save rescued)
        /// into the configured store, one account at a time, keeping a newer token the store
        /// already holds; says what it did with each account, never the token.
        Import {
            /// The store file to read (it is left as it is).
            file: PathBuf,
        },
        /// PostgreSQL store: re-encrypt every token still under the previous key
        /// (MARKETPLACE_TOKEN_KEY_PREVIOUS) with the current one (MARKETPLACE_TOKEN_KEY), and
        /// say whether the previous key can be removed.
        Rekey,
        /// The application's request signing key (eBay's Key Management API), which some
        /// calls need for sellers in the EU and the UK: kept beside the refresh tokens (a 0600
        /// file named after the store: STORE.signing-keys.json) or in the PostgreSQL store
        /// (encrypted under MARKETPLACE_TOKEN_KEY). Never prints the private key.
        SigningKey {
            #[command(subcommand)]
            action: SigningKeyAction,
        },
    }

    #[derive(Subcommand)]
    enum SigningKeyAction {
        /// Create the key (createSigningKey) unless a stored one is not yet within 30 days of
        /// its expiry; print it as `show` does.
        Create {
            /// `ED25519` (what eBay recommends) or `RSA`.
            #[arg(long, default_value = "ED25519")]
            cipher: String,
        },
        /// Show the stored keys, newest (the one that signs) first: id, cipher, created,
        /// expires.
        Show,
        /// Create a new key now; the old one is kept until it expires.
        Rotate {
            /// `ED25519` (what eBay recommends) or `RSA`.
            #[arg(long, default_value = "ED25519")]
            cipher: String,
        },
    }

    #[derive(clap::Args)]
    struct AuthorizeArgs {
        /// A scope to ask for (repeat for several). Without --scope and --for: the scopes the
        /// commands need, {base_url}/oauth/api_scope and
        /// `https://api.ebay.com/oauth/api_scope/sell.inventory` and
        /// `https://api.ebay.com/oauth/api_scope/sell.account.readonly` (`listing publish`),
        /// `https://api.ebay.com/oauth/api_scope/sell.fulfillment` (`orders`). The
        /// Identity API's scope (…/commerce.identity.readonly) is always added: getUser tells
        /// which eBay user consented.
        #[arg(long = "scope")]
        scopes: Vec<String>,
        /// Also ask for the scopes a command needs (repeat for several): `listing` asks for
        /// `https://api.ebay.com/oauth/api_scope/sell.inventory`, which eBay's Inventory API
        /// reference gives createOrReplaceInventoryItem, createOffer and publishOffer (and
        /// which `listing publish` checks in the stored consent before sending anything), and
        /// `…/sell.account.readonly`, with which it reads the seller's business policies
        /// (getFulfillmentPolicies, getPaymentPolicies, getReturnPolicies) to check them;
        /// `orders` asks for `https://api.ebay.com/oauth/api_scope/sell.fulfillment`, which
        /// eBay's Fulfillment API reference gives getOrders and getOrder (`orders sync` and
        /// `orders show` check it in the stored consent before sending anything) and
        /// createShippingFulfillment (`orders ship`, which its read-only form is not enough
        /// for). issueRefund's `…/sell.finances` has no `--for`: ask for it with --scope.
        #[arg(long = "for", value_enum)]
        for_commands: Vec<ForCommand>,
        /// How to get the address the browser ends on.
        #[arg(long, value_enum, default_value_t = Input::Auto)]
        input: Input,
        /// `prompt` of the consent URL (e.g. `login`).
        #[arg(long)]
        prompt: Option<String>,
        /// `locale` of the consent page (e.g. `en-US`).
        #[arg(long)]
        locale: Option<String>,
        /// Seconds to wait for the browser when listening.
        #[arg(long, default_value_t = DEFAULT_WAIT)]
        wait: u64,
    }

    impl AuthorizeArgs {
        /// True when none of the flags was given.
        fn is_default(&self) -> bool {
            self.scopes.is_empty()
                && self.for_commands.is_empty()
                && self.input == Input::Auto
                && self.prompt.is_none()
                && self.locale.is_none()
                && self.wait == DEFAULT_WAIT
        }
    }

    /// A command whose scopes `--for` asks for.
    #[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
    enum ForCommand {
        /// `listing publish`: the Inventory API's calls that write.
        Listing,
        /// `orders sync`, `orders show` and `orders ship`: the Fulfillment API's getOrders,
        /// getOrder and createShippingFulfillment.
        Orders,
    }

    impl ForCommand {
        /// The scopes eBay's API reference gives the command's calls.
        fn scopes(self) -> &'static [&'static str] {
            match self {
                Self::Listing => &[
                    token_store::INVENTORY_SCOPE,
                    token_store::ACCOUNT_READ_SCOPE,
                ],
                Self::Orders => &[token_store::FULFILLMENT_SCOPE],
            }
        }
    }

    /// The scopes a consent asks for: `--scope`'s and each `--for` command's; with neither,
    /// the environment's default scope and every command's scopes (`listing publish`'s
    /// sell.inventory and sell.account.readonly, `orders`' sell.fulfillment); always the Identity API's, which getUser needs after the exchange.
    fn consent_scopes(
        default_scope: &str,
        scopes: Vec<String>,
        commands: &[ForCommand],
    ) -> ScopeSet {
        let mut asked: Vec<String> = if scopes.is_empty() && commands.is_empty() {
            default_scope
                .split_whitespace()
                .chain(ForCommand::Listing.scopes().iter().copied())
                .chain(ForCommand::Orders.scopes().iter().copied())
                .map(str::to_owned)
                .collect()
        } else {
            scopes
        };
        for scope in commands.iter().flat_map(|c| c.scopes()) {
            if !asked.iter().any(|s| s == scope) {
                asked.push((*scope).to_owned());
            }
        }
        if !asked.iter().any(|s| s == IDENTITY_SCOPE) {
            asked.push(IDENTITY_SCOPE.to_owned());
        }
        ScopeSet::new(asked)
    }

    /// `--wait`'s default, in seconds.
    const DEFAULT_WAIT: u64 = 300;

    #[derive(Clone, Copy, ValueEnum, Default, PartialEq, Eq)]
    enum Input {
        /// Listen when the redirect URI is a loopback URL, else read standard input.
        #[default]
        Auto,
        /// Read the address from standard input.
        Stdin,
        /// Catch the redirect with a one-shot listener on the redirect URI's loopback port.
        Listen,
    }

    /// The account of an error (or of its causes) that says the seller must consent (again).
    fn account_needing_consent<'a>(
        error: &'a (dyn std::error::Error + 'static),
    ) -> Option<&'a str> {
        let mut next = Some(error);
        while let Some(e) = next {
            let oauth =
                e.downcast_ref::<OAuthError>().or_else(|| match e
                    .downcast_ref::<marketplace_client::api::ApiError>()
                {
                    Some(marketplace_client::api::ApiError::OAuth(o)) => Some(o),
                    _ => None,
                });
            if let Some(account) = oauth.and_then(OAuthError::account_needing_consent) {
                return Some(account);
            }
            next = e.source();
        }
        None
    }

    /// `account` as a word of the command a message suggests: as it is when made of letters,
    /// digits and `-_.@+=:,/`, else quoted with its special characters escaped (`"a\u{1b}b"`),
    /// so that a name from a store can neither forge a line nor reach a terminal raw.
    fn shell_word(account: &str) -> std::borrow::Cow<'_, str> {
        if !account.is_empty()
            && account
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.@+=:,/".contains(c))
        {
            std::borrow::Cow::Borrowed(account)
        } else {
            std::borrow::Cow::Owned(format!("{account:?}"))
        }
    }

    pub fn main() -> ExitCode {
        let cli = Cli::parse();
        super::verbosity::init(cli.verbose);
        match run(cli) {
            Ok(()) => ExitCode::SUCCESS,
            // `consent status | head`: the reader left, so nobody wants the rest; end as a
            // process killed by SIGPIPE would (128 + 13), without a message.
            Err(e)
                if e.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
            {
                ExitCode::from(141)
            }
            Err(e) => {
                errln!("error: {e}");
                if let Some(account) = account_needing_consent(&*e) {
                    errln!(
                        "the seller must consent: run `consent --account {}`",
                        shell_word(account)
                    );
                }
                ExitCode::FAILURE
            }
        }
    }

    /// The command to run (`authorize` when none is named) and the session flags that apply
    /// to it, given before its name or after; a flag before the name of a command that does
    /// not use it is refused rather than ignored.
    fn command_and_session(
        cli_command: Option<Command>,
        authorize: AuthorizeArgs,
        before: SessionArgs,
    ) -> Result<(Command, SessionArgs), String> {
        let mut command = cli_command.unwrap_or(Command::Authorize {
            args: authorize,
            session: SessionArgs::default(),
        });
        // The command's name, its own flags (after its name; none: it takes no account), and
        // whether it takes a redirect URI.
        let account_only = |a: &mut AccountArg| SessionArgs {
            account: a.account.take(),
            redirect_uri: None,
        };
        let (name, after, takes_redirect) = match &mut command {
            Command::Authorize { session, .. } => {
                ("authorize", Some(std::mem::take(session)), true)
            }
            Command::Status(a) => ("status", Some(account_only(a)), false),
            Command::Token(a) => ("token", Some(account_only(a)), false),
            Command::Forget(a) => ("forget", Some(account_only(a)), false),
            Command::List => ("list", None, false),
            Command::Import { .. } => ("import", None, false),
            Command::Rekey => ("rekey", None, false),
            Command::SigningKey { .. } => ("signing-key", None, false),
        };
        if before.redirect_uri.is_some() && !takes_redirect {
            return Err(format!(
                "--redirect-uri does not apply to `consent {name}`: only `authorize` (the default command) takes it"
            ));
        }
        if before.account.is_some() && after.is_none() {
            return Err(format!(
                "--account does not apply to `consent {name}`: it names the account of `authorize`, `status`, `token` and `forget`"
            ));
        }
        let after = after.unwrap_or_default();
        let session = SessionArgs {
            account: after.account.or(before.account),
            redirect_uri: after.redirect_uri.or(before.redirect_uri),
        };
        Ok((command, session))
    }

    fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
        if cli.command.is_some() && !cli.authorize.is_default() {
            return Err(
                "--scope, --for, --input, --prompt, --locale and --wait are flags of `authorize`: \
                        give them after `authorize`, or with no command at all"
                    .into(),
            );
        }
        let (command, session) = command_and_session(cli.command, cli.authorize, cli.session)?;
        let account = session.account.as_deref().unwrap_or("default");
        let overrides = [
            (OAuthConfig::ENV_ENVIRONMENT, cli.env.clone()),
            (OAuthConfig::ENV_BASE_URL, cli.base_url.clone()),
            (OAuthConfig::ENV_AUTH_URL, cli.auth_url.clone()),
            (OAuthConfig::ENV_REDIRECT_URI, session.redirect_uri.clone()),
        ];
        let config = OAuthConfig::from_lookup(|name| {
            overrides
                .iter()
                .find(|(k, v)| *k == name && v.is_some())
                .and_then(|(_, v)| v.clone())
                .or_else(|| std::env::var(name).ok())
        })?;
        let store = match token_store::from_setting(cli.store.clone())? {
            Some(token_store::Store::File(path)) => Store::File(Arc::new(FileStore::new(path))),
            Some(token_store::Store::Postgres(db)) => {
                db.migrate().map_err(|e| {
                    format!("{e}\nThe refresh tokens live in this database ({ENV_TOKEN_STORE}): nothing was done.")
                })?;
                Store::Postgres {
                    tokens: Arc::new(token_store::refresh_tokens(&db, &config)?),
                    cache: db.token_cache(),
                    db: Arc::new(db),
                }
            }
            None => Store::File(Arc::new(FileStore::new(token_store::default_file()?))),
        };
        match command {
            Command::Authorize { args, .. } => authorize(&config, store, account, args),
            Command::Status(_) => status(&config, store, account),
            Command::Token(_) => {
                let provider = store.provider(OAuthClient::from_config(&config)?, account);
                let token = provider.access_token()?;
                out(token.secret())?;
                Ok(())
            }
            Command::Forget(_) => {
                // A typo must not read as done: say nothing was stored, and fail.
                if store.as_dyn().load(account)?.is_none() {
                    return Err(format!(
                        "no refresh token is stored for account {:?} in {}: nothing was \
                         removed (`consent list` shows the accounts)",
                        account,
                        store.describe()
                    )
                    .into());
                }
                store.as_dyn().remove(account)?;
                // The PostgreSQL row held the eBay user; the file store keeps it beside.
                if let Store::File(file) = &store {
                    AccountUsers::beside(file.path()).forget_blocking(account)?;
                }
                errln!(
                    "Removed the refresh token of account {:?} from {}",
                    account,
                    store.describe()
                );
                Ok(())
            }
            Command::List => list(&store),
            Command::Import { file } => import(&store, &file),
            Command::Rekey => rekey(&store),
            Command::SigningKey { action } => signing_key(&config, &store, action),
        }
    }

    /// `consent signing-key create|show|rotate`.
    fn signing_key(
        config: &OAuthConfig,
        store: &Store,
        action: SigningKeyAction,
    ) -> Result<(), Box<dyn std::error::Error>> {
        use marketplace_client::signing::SigningKeyFile;
        // The Key Management API is served by apiz.ebay.com (apiz.sandbox.ebay.com).
        let base_url = identity_base_url(config.endpoints.base_url().as_str());
        let (cipher, rotate) = match &action {
            SigningKeyAction::Create { cipher } => (cipher.clone(), false),
            SigningKeyAction::Rotate { cipher } => (cipher.clone(), true),
            SigningKeyAction::Show => (String::new(), false),
        };
        let listed: Vec<(String, String, Option<u64>, Option<u64>)> = match store {
            Store::File(file) => {
                let keys = SigningKeyFile::beside(file.path()).with_cipher(cipher);
                if !matches!(action, SigningKeyAction::Show) {
                    let api = ApiClient::new(
                        ClientConfig::for_base_url(&base_url)?,
                        ApplicationTokenProvider::source(config)?,
                    )?;
                    if rotate {
                        keys.rotate(&api)?;
                    } else {
                        keys.signing_key(&api)?;
                    }
                }
                errln!("signing keys: {}", keys.path().display());
                keys.list()?
                    .into_iter()
                    .map(|k| {
                        (
                            k.signing_key_id,
                            k.cipher,
                            k.creation_time,
                            k.expiration_time,
                        )
                    })
                    .collect()
            }
            Store::Postgres { db, .. } => {
                use marketplace_client::aio::api as aio_api;
                use marketplace_client::aio::oauth as aio_oauth;
                let keys = db.signing_keys(config)?.with_cipher(cipher);
                if !matches!(action, SigningKeyAction::Show) {
                    // The fleet's application token, shared through the database as
                    // `snapshot refresh` shares it: no grant of the day's quota of its own.
                    let tokens = aio_oauth::ApplicationTokenProvider::new(
                        aio_oauth::OAuthClient::from_config(config)?,
                    )
                    .with_shared_cache(Arc::new(db.async_token_cache()));
                    let api = aio_api::ApiClient::new(
                        aio_api::ClientConfig::for_base_url(&base_url)?,
                        Arc::new(tokens),
                    )?;
                    let keys = keys.clone();
                    db.block_on(async move {
                        if rotate {
                            keys.rotate(&api).await.map(drop)
                        } else {
                            keys.signing_key(&api).await.map(drop)
                        }
                    })?;
                }
                errln!("signing keys: {}", store.describe());
                let keys = keys.clone();
                db.block_on(async move { keys.list().await })?
                    .into_iter()
                    .map(|k| (k.signing_key_id, k.cipher, k.created, k.expires))
                    .collect()
            }
        };
        if listed.is_empty() {
            return Err(
                "no signing key is stored: create one with `consent signing-key create`".into(),
            );
        }
        for (n, (id, cipher, created, expires)) in listed.iter().enumerate() {
            let due = marketplace_client::signing::replacement_due(
                *expires,
                SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            );
            out(&format!(
                "{} {} cipher {} created {} expires {}{}",
                if n == 0 { "signing-key" } else { "older-key" },
                escaped(id),
                escaped(cipher),
                utc(*created),
                utc(*expires),
                if due { " (due for replacement)" } else { "" }
            ))?;
        }
        Ok(())
    }

    /// Unix seconds as an ISO 8601 UTC time (`2026-11-26T13:55:00Z`); `-` when unknown.
    fn utc(secs: Option<u64>) -> String {
        let Some(secs) = secs else {
            return "-".into();
        };
        let rest = secs % 86_400;
        format!(
            "{}T{:02}:{:02}:{:02}Z",
            taxonomy_tree::clock::civil_date((secs / 86_400) as i64),
            rest / 3600,
            rest % 3600 / 60,
            rest % 60
        )
    }

    fn authorize(
        config: &OAuthConfig,
        store: Store,
        account: &str,
        args: AuthorizeArgs,
    ) -> Result<(), Box<dyn std::error::Error>> {
        config.require_redirect_uri()?;
        // The one-time code is spent on the exchange, and the refresh token it brings lives
        // only in the store: make sure the store can take it before the seller consents.
        let checked = match &store {
            Store::File(file) => file.check(),
            // Reachable (it was migrated) and readable under this key.
            Store::Postgres { tokens, .. } => tokens.load(account).map(drop),
        };
        checked.map_err(|e| {
            format!("{e}\nNothing was sent yet: fix the store (or pass another --store) and run consent again.")
        })?;
        let client = Arc::new(OAuthClient::from_config(config)?);
        let scopes = consent_scopes(
            &config.endpoints.default_scope(),
            args.scopes,
            &args.for_commands,
        );
        let mut request = client.consent_request(&scopes)?;
        if let Some(prompt) = args.prompt {
            request = request.with_prompt(prompt);
        }
        if let Some(locale) = args.locale {
            request = request.with_locale(locale);
        }
        let listen_addr = loopback_target(&client)?;
        let listener = match (args.input, listen_addr) {
        (Input::Stdin, _) | (Input::Auto, None) => None,
        (Input::Auto | Input::Listen, Some((addr, path))) => Some((TcpListener::bind(&addr).map_err(|e| {
            format!("cannot listen on {addr} for the redirect: {e} (use --input stdin to paste it instead)")
        })?, path)),
        (Input::Listen, None) => {
            return Err("--input listen needs a redirect URI of the form http://127.0.0.1:PORT/PATH or http://localhost:PORT/PATH".into());
        }
    };

        errln!("Open this address in a browser and grant consent:");
        out(request.url().as_str())?;

        let code = match listener {
            Some((listener, path)) => {
                errln!(
                    "Waiting for the browser to come back to {} …",
                    client.redirect_uri().unwrap_or_default()
                );
                catch_redirect(listener, &path, &request, Duration::from_secs(args.wait))?
            }
            None => {
                errln!("Then paste the full address your browser ended on and press Enter:");
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                let line = zeroize::Zeroizing::new(line);
                request.complete(&line)?
            }
        };
        let provider = Arc::new(store.provider(client, account));
        let record = match provider.exchange_code(&code, request.scopes()) {
            Ok(record) => record,
            Err(e @ OAuthError::Store(_)) => match provider.unsaved_refresh_token() {
                // The store failed after the check (a full disk, a file changed meanwhile):
                // the code is spent, so the token goes to a file of its own.
                Some(record) => return Err(rescue(&store, account, &record, &e).into()),
                None => return Err(e.into()),
            },
            Err(e) => return Err(e.into()),
        };
        let place = match &store {
            Store::File(file) => format!("{} (mode 0600)", file.path().display()),
            Store::Postgres { .. } => "the PostgreSQL token store (encrypted)".into(),
        };
        errln!(
            "Stored the refresh token of account {account:?} in {place}{}.",
            describe_expiry(record.expires_at)
        );
        errln!("Scopes: {}", escaped(&record.scopes.to_string()));
        record_ebay_user(config, &store, account, provider)
    }

    /// After the exchange: getUser with the new user token (on eBay's Identity API host), and
    /// the eBay user recorded with the account (beside the file store, or in the PostgreSQL
    /// store's row), so that an account deletion notification for that user finds it.
    fn record_ebay_user(
        config: &OAuthConfig,
        store: &Store,
        account: &str,
        provider: Arc<UserTokenProvider>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let not_recorded = |why: String| -> Box<dyn std::error::Error> {
            format!(
                "the refresh token of account {account:?} is stored, but {why}: an account \
                 deletion notification for this seller will not find the account (its tokens \
                 would stay). Run consent again for this account."
            )
            .into()
        };
        let base_url = identity_base_url(config.endpoints.base_url().as_str());
        let api = ClientConfig::for_base_url(&base_url)
            .and_then(|c| ApiClient::new(c, provider))
            .map_err(|e| not_recorded(format!("getUser could not be sent ({e})")))?;
        let user: EbayUser = api
            .send(ApiRequest::get("/commerce/identity/v1/user/").operation("getUser"))
            .and_then(|answer| answer.json())
            .map_err(|e| not_recorded(format!("getUser (the Identity API) failed ({e})")))?;
        match store {
            Store::File(file) => AccountUsers::beside(file.path())
                .record_blocking(account, user.clone())
                .map_err(|e| not_recorded(e.to_string()))?,
            Store::Postgres { tokens, .. } => {
                if !tokens
                    .set_ebay_user(account, &user.user_id, &user.username)
                    .map_err(|e| not_recorded(e.to_string()))?
                {
                    return Err(not_recorded(
                        "its row was gone when the eBay user was recorded".into(),
                    ));
                }
            }
        }
        errln!(
            "Recorded the eBay user of account {account:?}: {} (user id {}).",
            escaped(&user.username),
            escaped(&user.user_id)
        );
        Ok(())
    }

    /// Saves `record`, which `store` failed to take (`error`), in a new store file of its own:
    /// beside the store, else in the default store's directory, else in the temporary
    /// directory. Returns the message to print: where the token is and how to use it, never
    /// the token.
    fn rescue(
        store: &Store,
        account: &str,
        record: &StoredRefreshToken,
        error: &OAuthError,
    ) -> String {
        let stamp = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let name = format!("refresh-token-rescued-{stamp}-{}.json", std::process::id());
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(dir) = match store {
            Store::File(file) => file.path().parent(),
            Store::Postgres { .. } => None,
        } {
            dirs.push(if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir.to_owned()
            });
        }
        if let Some(dir) = token_store::default_file()
            .ok()
            .as_deref()
            .and_then(|p| p.parent())
        {
            dirs.push(dir.to_owned());
        }
        dirs.push(std::env::temp_dir());
        // Never into a file that is there already (a save would merge into it).
        let saved_in = dirs
            .iter()
            .map(|d| d.join(&name))
            .find(|path| !path.exists() && FileStore::new(path).save(account, record).is_ok());
        let store = store.describe();
        match saved_in {
            Some(path) => format!(
                "the consent went through, but its refresh token could not be stored in \
                 {store} ({error}).\nThe refresh token was saved instead in {} (mode 0600), \
                 under account {account:?}: use that file as the store (--store or \
                 {ENV_TOKEN_STORE}), or, once {store} is fixed, import it there with \
                 `cargo run --bin consent -- import {}` (with the same --store or \
                 {ENV_TOKEN_STORE}). There is no need to consent again.",
                path.display(),
                path.display(),
            ),
            None => format!(
                "the consent went through, but its refresh token could not be stored in \
                 {store} ({error}), nor in a file of its own: it is lost. Revoke this \
                 application's access in the seller's account settings, fix the store and run \
                 consent again."
            ),
        }
    }

    /// `consent import FILE`: each account of the store file `file` into `store`. An account
    /// whose token the store already holds, or holds a newer one of (a later expiry), is left
    /// as the store has it; one marked as needing consent is not imported. Each account is
    /// one save (atomic in both stores), or a compare and swap over the token the store held,
    /// so a consent saved meanwhile is never overwritten.
    fn import(store: &Store, file: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
        let source = FileStore::new(file);
        if let Store::File(target) = store
            && std::fs::canonicalize(target.path()).ok() == std::fs::canonicalize(file).ok()
        {
            return Err(format!(
                "{} is the configured store itself: pass the store to import into with --store \
                 or {ENV_TOKEN_STORE}",
                file.display()
            )
            .into());
        }
        let accounts = source.accounts()?;
        if accounts.is_empty() {
            return Err(format!(
                "{} holds no refresh token: nothing was imported",
                file.display()
            )
            .into());
        }
        let target = store.as_dyn();
        let (mut imported, mut failed) = (0, 0);
        for account in accounts {
            let name = format!("{account:?}");
            let Some(record) = source.load(&account)? else {
                continue;
            };
            if source.needs_consent(&account)? {
                errln!(
                    "{name}: not imported: its refresh token was refused (revoked); consent again"
                );
                continue;
            }
            let done = match target.load(&account)? {
                None => target.save(&account, &record).map(|()| "imported"),
                Some(held) if held.refresh_token.ct_eq(&record.refresh_token) => {
                    Ok("already in the store")
                }
                // Unknown expiries count as older than any known one; when neither is
                // known, the store's is kept.
                Some(held)
                    if record.expires_at.is_none() || held.expires_at >= record.expires_at =>
                {
                    Ok("kept: the store holds a newer refresh token")
                }
                Some(held) => {
                    target
                        .replace(&account, &held.refresh_token, &record)
                        .map(|swapped| {
                            if swapped {
                                "imported, replacing an older refresh token"
                            } else {
                                "kept: the store's refresh token changed meanwhile"
                            }
                        })
                }
            };
            match done {
                Ok(what) => {
                    if what.starts_with("imported") {
                        imported += 1;
                    }
                    errln!("{name}: {what}");
                }
                Err(e) => {
                    failed += 1;
                    errln!("{name}: not imported: {e}");
                }
            }
        }
        errln!(
            "Imported {imported} refresh token(s) from {} into {}; {} is left as it was (delete \
             it once the import is checked: it holds refresh tokens).",
            file.display(),
            store.describe(),
            file.display()
        );
        if failed > 0 {
            return Err(format!("{failed} account(s) could not be imported").into());
        }
        Ok(())
    }

    /// The socket address and path to listen on, when the redirect URI is a loopback URL.
    fn loopback_target(client: &OAuthClient) -> Result<Option<(String, String)>, String> {
        let Some(uri) = client.redirect_uri() else {
            return Ok(None);
        };
        let Ok(url) = url::Url::parse(uri) else {
            return Ok(None); // a RuName
        };
        let host = match url.host() {
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => ip.to_string(),
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => format!("[{ip}]"),
            Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost") => "127.0.0.1".into(),
            _ => return Ok(None),
        };
        if url.scheme() != "http" {
            return Ok(None);
        }
        let port = url.port_or_known_default().unwrap_or(80);
        Ok(Some((format!("{host}:{port}"), url.path().to_owned())))
    }

    /// The longest request line the listener reads (a redirect with a code and a state is
    /// well under 2 KiB).
    const MAX_REQUEST_LINE: usize = 8 * 1024;
    /// The most it reads of one request, headers included.
    const MAX_REQUEST: usize = 32 * 1024;
    /// The longest one connection may take to send its request.
    const CONNECTION_BUDGET: Duration = Duration::from_secs(5);

    /// Waits until `wait` has passed for the redirect of `request` on `listener`. Requests for
    /// another path, and redirects whose state is not this request's (a stray tab, a forged
    /// `?error=access_denied`), are answered, logged and ignored; only this request's own
    /// redirect (granted or refused) ends the wait.
    fn catch_redirect(
        listener: TcpListener,
        path: &str,
        request: &ConsentRequest,
        wait: Duration,
    ) -> Result<marketplace_client::oauth::AuthorizationCode, Box<dyn std::error::Error>> {
        // --wait beyond what the clock can add is as good as forever.
        let deadline = Instant::now()
            .checked_add(wait)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(100 * 365 * 86_400));
        listener.set_nonblocking(true)?;
        loop {
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err(format!(
                            "no redirect arrived within {} s; run consent again",
                            wait.as_secs()
                        )
                        .into());
                    }
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let connection_deadline = deadline.min(Instant::now() + CONNECTION_BUDGET);
            let target = match read_request_target(&stream, connection_deadline) {
                Ok(target) => target,
                Err(reason) => {
                    errln!("Ignored a request to the listener: {reason}; still waiting …");
                    respond(&stream, "400 Bad Request", "Bad request.");
                    continue;
                }
            };
            let target_path = target.split('?').next().unwrap_or_default();
            if target_path != path {
                // Browsers also ask for /favicon.ico: not worth a line.
                respond(&stream, "404 Not Found", "Not found.");
                continue;
            }
            match request.complete(&target) {
                Ok(code) => {
                    respond(
                        &stream,
                        "200 OK",
                        "Consent received. You can close this window and go back to the terminal.",
                    );
                    return Ok(code);
                }
                Err(e @ OAuthError::ConsentDenied { .. }) => {
                    respond(
                        &stream,
                        "200 OK",
                        "Consent was not granted. You can close this window.",
                    );
                    return Err(e.into());
                }
                Err(e) => {
                    // The error's text is sanitized (no secrets, no control characters).
                    errln!(
                        "Ignored a request to {path} that is not this consent request's redirect \
                         ({e}); still waiting …"
                    );
                    respond(
                        &stream,
                        "400 Bad Request",
                        "This is not the redirect of the pending consent request. Go back to the terminal.",
                    );
                }
            }
        }
    }

    /// Reads the request line of one connection and drains its headers, within `deadline`
    /// and the size limits; returns the request target (path and query).
    fn read_request_target(stream: &TcpStream, deadline: Instant) -> Result<String, String> {
        stream
            .set_nonblocking(false)
            .map_err(|e| format!("cannot read it ({e})"))?;
        let mut received = zeroize::Zeroizing::new(Vec::new());
        let mut chunk = zeroize::Zeroizing::new([0u8; 1024]);
        let mut reader = stream;
        let end_of_head = loop {
            if let Some(end) = find_end_of_head(&received) {
                break end;
            }
            let line_end = received.iter().position(|&b| b == b'\n');
            if line_end.map_or(received.len(), |e| e) > MAX_REQUEST_LINE {
                return Err(format!(
                    "its request line is longer than {MAX_REQUEST_LINE} bytes"
                ));
            }
            if received.len() > MAX_REQUEST {
                return Err(format!("its request is longer than {MAX_REQUEST} bytes"));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err("it did not send its request in time".into());
            }
            stream
                .set_read_timeout(Some(left))
                .map_err(|e| format!("cannot read it ({e})"))?;
            match reader.read(chunk.as_mut()) {
                Ok(0) => break received.len(),
                Ok(n) => received.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err("it did not send its request in time".into());
                }
                Err(e) => return Err(format!("cannot read it ({e})")),
            }
        };
        let head = String::from_utf8_lossy(&received[..end_of_head]);
        let line = head.lines().next().unwrap_or_default();
        let mut parts = line.split(' ');
        match (parts.next(), parts.next()) {
            (Some("GET"), Some(target)) if target.starts_with('/') => Ok(target.to_owned()),
            _ => Err("it is not an HTTP GET request".into()),
        }
    }

    /// Where the head of a request ends (after the blank line), if it has arrived.
    fn find_end_of_head(bytes: &[u8]) -> Option<usize> {
        let crlf = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|i| i + 4);
        let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
        match (crlf, lf) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Answers a small HTML page and closes.
    fn respond(mut stream: &TcpStream, status: &str, message: &str) {
        let body = format!("<!doctype html><title>consent</title><p>{message}</p>\n");
        let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }

    fn describe_expiry(expires_at: Option<SystemTime>) -> String {
        match expires_at.map(|t| t.duration_since(SystemTime::now())) {
            None => String::new(),
            Some(Ok(left)) => format!(", valid for {}", human(left)),
            Some(Err(_)) => ", already expired".into(),
        }
    }

    /// `d` in words, rounded down: minutes under 90 minutes, hours and minutes under 2 days,
    /// days beyond (`1 minute`, `1 hour 59 minutes`, `547 days`).
    fn human(d: Duration) -> String {
        fn count(n: u64, unit: &str) -> String {
            if n == 1 {
                format!("1 {unit}")
            } else {
                format!("{n} {unit}s")
            }
        }
        let s = d.as_secs();
        match s {
            0..=5_399 => count(s / 60, "minute"),
            5_400..=172_799 => match (s % 3600) / 60 {
                0 => count(s / 3600, "hour"),
                minutes => format!("{} {}", count(s / 3600, "hour"), count(minutes, "minute")),
            },
            _ => count(s / 86_400, "day"),
        }
    }

    fn status(
        config: &OAuthConfig,
        store: Store,
        account: &str,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let Some(record) = store.as_dyn().load(account)? else {
            return Err(OAuthError::NoRefreshToken {
                account: account.into(),
            }
            .into());
        };
        out(&format!("account: {}", escaped(account)))?;
        out(&format!("store: {}", store.describe()))?;
        out(&format!("scopes: {}", escaped(&record.scopes.to_string())))?;
        if store.as_dyn().needs_consent(account)? {
            out("refresh token: refused by the server (revoked): needs consent")?;
            return Err(format!(
                "the refresh token of account {account:?} was revoked (by the seller or eBay): \
                 run `cargo run --bin consent -- --account {account}` to consent again"
            )
            .into());
        }
        out(&format!(
            "refresh token: stored{}",
            describe_expiry(record.expires_at)
        ))?;
        // Asks the token endpoint itself, never the fleet's shared access token: a token
        // still valid in the cache says nothing of the refresh token (a revoked one is
        // refused here, and marked).
        let provider =
            UserTokenProvider::new(OAuthClient::from_config(config)?, store.as_dyn(), account);
        provider.access_token()?;
        let left = provider
            .cached()
            .and_then(|t| t.expires_at.duration_since(SystemTime::now()).ok())
            .unwrap_or_default();
        out(&format!(
            "access token: refreshed, valid for {}",
            human(left)
        ))?;
        Ok(())
    }

    /// `consent rekey`: every token under the previous key re-encrypted under the current one.
    fn rekey(store: &Store) -> Result<(), Box<dyn std::error::Error>> {
        let Store::Postgres { db, .. } = store else {
            return Err(format!(
                "`consent rekey` re-encrypts the PostgreSQL token store ({ENV_TOKEN_STORE}=postgres://…); \
                 {} is a refresh-token file, which is not encrypted",
                store.describe()
            )
            .into());
        };
        let done = db.rekey()?;
        errln!(
            "Re-encrypted {} and {} under the current key ({}).",
            count(done.refresh_tokens, "refresh token"),
            count(done.cached_tokens, "cached access token"),
            marketplace_client_postgres::KEY_VAR
        );
        if done.signing_keys > 0 {
            errln!(
                "Re-encrypted {} under the current key.",
                count(done.signing_keys, "signing key")
            );
        }
        report_keys(&done.after);
        if done.after.under_previous() > 0 {
            return Err("some tokens are still under the previous key (see above)".into());
        }
        Ok(())
    }

    /// `n` `thing`s, in words (`1 refresh token`, `2 refresh tokens`).
    fn count(n: u64, thing: &str) -> String {
        if n == 1 {
            format!("1 {thing}")
        } else {
            format!("{n} {thing}s")
        }
    }

    /// What the keys of the PostgreSQL store encrypt, on standard error: how many tokens are
    /// still under the previous key (or that none is, during a rotation), and how many under
    /// a key this process does not hold.
    fn report_keys(census: &marketplace_client_postgres::KeyCensus) {
        use marketplace_client_postgres::{KEY_VAR, PREVIOUS_KEY_VAR};
        let (refresh, cached) = (census.refresh_tokens, census.cached_tokens);
        if refresh.previous + cached.previous > 0 {
            let verb = if refresh.previous == 1 { "is" } else { "are" };
            errln!(
                "{} {verb} still encrypted under the previous key ({PREVIOUS_KEY_VAR}), and {}: \
                 each is re-encrypted under {KEY_VAR} when next read, or all at once by \
                 `consent rekey`; keep {PREVIOUS_KEY_VAR} until none is left.",
                count(refresh.previous, "refresh token"),
                count(cached.previous, "cached access token"),
            );
        }
        let signing = census.signing_keys.previous;
        if signing > 0 {
            let verb = if signing == 1 { "is" } else { "are" };
            errln!(
                "{} {verb} still encrypted under the previous key ({PREVIOUS_KEY_VAR}):                  `consent rekey` re-encrypts them; keep {PREVIOUS_KEY_VAR} until none is left.",
                count(signing, "signing key"),
            );
        }
        if census.under_previous() == 0 && census.rotating {
            errln!("No token is left under the previous key: {PREVIOUS_KEY_VAR} can be removed.");
        }
        if refresh.unknown > 0 {
            let verb = if refresh.unknown == 1 { "is" } else { "are" };
            errln!(
                "warning: {} {verb} encrypted under a key that is neither {KEY_VAR} nor \
                 {PREVIOUS_KEY_VAR}: this process cannot read them.",
                count(refresh.unknown, "refresh token"),
            );
        }
    }

    /// `consent list`: the stored accounts, soonest expiry first.
    fn list(store: &Store) -> Result<(), Box<dyn std::error::Error>> {
        let now = SystemTime::now();
        type Row = (String, Option<SystemTime>, bool, Option<EbayUser>);
        let mut rows: Vec<Row> = match store {
            Store::Postgres { tokens, .. } => tokens
                .accounts()?
                .into_iter()
                .map(|a| {
                    let user = match (a.ebay_user_id, a.ebay_username) {
                        (Some(user_id), Some(username)) => Some(EbayUser { user_id, username }),
                        _ => None,
                    };
                    (a.account, a.expires_at, a.needs_consent, user)
                })
                .collect(),
            Store::File(file) => {
                let mut users = AccountUsers::beside(file.path()).list_blocking()?;
                let mut rows = Vec::new();
                for account in file.accounts()? {
                    let record = file.load(&account)?;
                    let marked = file.needs_consent(&account)?;
                    let user = users.remove(&account);
                    rows.push((account, record.and_then(|r| r.expires_at), marked, user));
                }
                rows
            }
        };
        // Soonest expiry first; unknown expiries last.
        rows.sort_by(|a, b| (a.1.is_none(), a.1, &a.0).cmp(&(b.1.is_none(), b.1, &b.0)));
        if rows.is_empty() {
            errln!("No refresh token is stored in {}.", store.describe());
        }
        const SOON: Duration = Duration::from_secs(30 * 86_400);
        for (account, expires_at, needs_consent, user) in rows {
            let expiry = match expires_at.map(|t| t.duration_since(now)) {
                None => "expiry unknown".to_owned(),
                Some(Ok(left)) if left < SOON => {
                    format!(
                        "expires in {} (within 30 days: consent again soon)",
                        human(left)
                    )
                }
                Some(Ok(left)) => format!("expires in {}", human(left)),
                Some(Err(_)) => "expired: needs consent".to_owned(),
            };
            let mark = if needs_consent {
                "; revoked: needs consent"
            } else {
                ""
            };
            let user = match user {
                Some(user) => format!(
                    "eBay user {} ({})",
                    escaped(&user.username),
                    escaped(&user.user_id)
                ),
                None => "eBay user not recorded (consent again to record it)".to_owned(),
            };
            out(&format!("{}\t{expiry}{mark}\t{user}", escaped(&account)))?;
        }
        if let Store::Postgres { db, .. } = store {
            report_keys(&db.key_census()?);
        }
        Ok(())
    }
}
