//! `cargo run --bin consent -- [OPTIONS] [COMMAND]`: set up a backend for user tokens.
//!
//! `authorize` (the default) prints the consent URL, takes the address the browser ends on
//! (pasted on standard input, or caught by a one-shot listener when the redirect URI is a
//! loopback URL such as `http://127.0.0.1:8976/callback`), checks its state, exchanges the code
//! and stores the refresh token in a file of mode 0600. `status` checks the stored token by
//! refreshing, `token` prints a current access token, `forget` removes the stored token.
//!
//! Settings come from the `MARKETPLACE_*` environment variables of
//! `marketplace_client::oauth::OAuthConfig`; the flags override them.

fn main() -> std::process::ExitCode {
    live::main()
}

mod live {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::path::PathBuf;
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use clap::{Parser, Subcommand, ValueEnum};
    use marketplace_client::oauth::{
        AccessTokenSource, ConsentOptions, ConsentRequest, ENV_AUTH_URL, ENV_BASE_URL,
        ENV_ENVIRONMENT, ENV_REDIRECT_URI, FileStore, OAuthClient, OAuthConfig, OAuthError,
        RefreshTokenStore, ScopeSet, UserTokenProvider,
    };

    /// The environment variable naming the refresh-token store file.
    const ENV_TOKEN_STORE: &str = "MARKETPLACE_TOKEN_STORE";

    #[derive(Parser)]
    #[command(
        name = "consent",
        about = "Grant this backend a seller's consent and keep its refresh token",
        long_about = "Grant this backend a seller's consent (OAuth 2.0 authorization-code flow) and \
                  keep the refresh token in a file only you can read.\n\n\
                  Settings: MARKETPLACE_CLIENT_ID, MARKETPLACE_CLIENT_SECRET, \
                  MARKETPLACE_REDIRECT_URI, MARKETPLACE_ENV (production|sandbox), \
                  MARKETPLACE_BASE_URL + MARKETPLACE_AUTH_URL, MARKETPLACE_CONFIG (SDK file), \
                  MARKETPLACE_TOKEN_STORE; the flags below override them."
    )]
    struct Cli {
        #[command(subcommand)]
        command: Option<Command>,
        /// `production` or `sandbox` (overrides MARKETPLACE_ENV).
        #[arg(long, global = true)]
        env: Option<String>,
        /// API host (with --auth-url; overrides MARKETPLACE_BASE_URL).
        #[arg(long, global = true)]
        base_url: Option<String>,
        /// Consent host (with --base-url; overrides MARKETPLACE_AUTH_URL).
        #[arg(long, global = true)]
        auth_url: Option<String>,
        /// Redirect URI: the RuName, or a loopback URL to catch the redirect here.
        #[arg(long, global = true)]
        redirect_uri: Option<String>,
        /// The refresh-token store (default: MARKETPLACE_TOKEN_STORE, else
        /// ~/.config/marketplace-toolkit/refresh-tokens.json).
        #[arg(long, global = true)]
        store: Option<PathBuf>,
        /// The account name the token is stored under.
        #[arg(long, global = true, default_value = "default")]
        account: String,
    }

    #[derive(Subcommand)]
    enum Command {
        /// Run the consent flow and store the refresh token (the default).
        Authorize(AuthorizeArgs),
        /// Show the stored token and check it by refreshing (prints no secret).
        Status,
        /// Print a current user access token on standard output (refreshing silently).
        Token,
        /// Remove the stored refresh token.
        Forget,
    }

    #[derive(clap::Args)]
    struct AuthorizeArgs {
        /// A scope to ask for (repeat for several; default: {base_url}/oauth/api_scope).
        #[arg(long = "scope")]
        scopes: Vec<String>,
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
        #[arg(long, default_value_t = 300)]
        wait: u64,
    }

    impl Default for AuthorizeArgs {
        /// The same defaults as the flags (used when no subcommand is given).
        fn default() -> Self {
            Self {
                scopes: Vec::new(),
                input: Input::Auto,
                prompt: None,
                locale: None,
                wait: 300,
            }
        }
    }

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

    pub fn main() -> ExitCode {
        let cli = Cli::parse();
        match run(cli) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    }

    fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
        let overrides = [
            (ENV_ENVIRONMENT, cli.env.clone()),
            (ENV_BASE_URL, cli.base_url.clone()),
            (ENV_AUTH_URL, cli.auth_url.clone()),
            (ENV_REDIRECT_URI, cli.redirect_uri.clone()),
        ];
        let config = OAuthConfig::from_lookup(|name| {
            overrides
                .iter()
                .find(|(k, v)| *k == name && v.is_some())
                .and_then(|(_, v)| v.clone())
                .or_else(|| std::env::var(name).ok())
        })?;
        let store_path = match cli
            .store
            .clone()
            .or_else(|| std::env::var_os(ENV_TOKEN_STORE).map(PathBuf::from))
        {
            Some(p) => p,
            None => default_store()?,
        };
        let store = Arc::new(FileStore::new(store_path));
        match cli
            .command
            .unwrap_or(Command::Authorize(AuthorizeArgs::default()))
        {
            Command::Authorize(args) => authorize(&config, store, &cli.account, args),
            Command::Status => status(&config, store, &cli.account),
            Command::Token => {
                let provider = UserTokenProvider::new(config.client()?, store, &cli.account);
                let token = provider.access_token()?;
                println!("{}", token.secret());
                Ok(())
            }
            Command::Forget => {
                store.remove(&cli.account)?;
                eprintln!(
                    "Removed the refresh token of account {:?} from {}",
                    cli.account,
                    store.path().display()
                );
                Ok(())
            }
        }
    }

    fn default_store() -> Result<PathBuf, String> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
            .ok_or_else(|| {
                format!("cannot find a home directory: pass --store or set {ENV_TOKEN_STORE}")
            })?;
        Ok(base.join("marketplace-toolkit").join("refresh-tokens.json"))
    }

    fn authorize(
        config: &OAuthConfig,
        store: Arc<FileStore>,
        account: &str,
        args: AuthorizeArgs,
    ) -> Result<(), Box<dyn std::error::Error>> {
        config.require_redirect_uri()?;
        let client = Arc::new(config.client()?);
        let scopes = ScopeSet::new(args.scopes);
        let options = ConsentOptions {
            prompt: args.prompt,
            locale: args.locale,
        };
        let request = client.consent_request(&scopes, &options)?;
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

        eprintln!("Open this address in a browser and grant consent:");
        println!("{}", request.url());
        let _ = std::io::stdout().flush();

        let code = match listener {
            Some((listener, path)) => {
                eprintln!(
                    "Waiting for the browser to come back to {} …",
                    client.redirect_uri().unwrap_or_default()
                );
                catch_redirect(listener, &path, &request, Duration::from_secs(args.wait))?
            }
            None => {
                eprintln!("Then paste the full address your browser ended on and press Enter:");
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                let line = zeroize::Zeroizing::new(line);
                request.complete(&line)?
            }
        };
        let provider = UserTokenProvider::new(client, store.clone(), account);
        let record = provider.exchange_code(&code, request.scopes())?;
        eprintln!(
            "Stored the refresh token of account {account:?} in {} (mode 0600){}.",
            store.path().display(),
            describe_expiry(record.expires_at)
        );
        eprintln!("Scopes: {}", record.scopes);
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

    fn catch_redirect(
        listener: TcpListener,
        path: &str,
        request: &ConsentRequest,
        wait: Duration,
    ) -> Result<marketplace_client::oauth::AuthorizationCode, Box<dyn std::error::Error>> {
        let deadline = std::time::Instant::now() + wait;
        listener.set_nonblocking(true)?;
        loop {
            let (stream, _) = match listener.accept() {
                Ok(s) => s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if std::time::Instant::now() >= deadline {
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
            stream.set_nonblocking(false)?;
            stream.set_read_timeout(Some(Duration::from_secs(10)))?;
            let mut reader = BufReader::new(&stream);
            let mut request_line = zeroize::Zeroizing::new(String::new());
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            // Drain the headers so the browser sees a clean answer.
            loop {
                let mut header = String::new();
                match reader.read_line(&mut header) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if header.trim().is_empty() => break,
                    Ok(_) => {}
                }
            }
            let target = request_line.split(' ').nth(1).unwrap_or_default();
            let target_path = target.split('?').next().unwrap_or_default();
            let mut out = &stream;
            if target_path != path {
                let _ = out.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
                continue;
            }
            let result = request.complete(target);
            let (status, message) = match &result {
                Ok(_) => (
                    "200 OK",
                    "Consent received. You can close this window and go back to the terminal.",
                ),
                Err(OAuthError::ConsentDenied { .. }) => (
                    "200 OK",
                    "Consent was not granted. You can close this window.",
                ),
                Err(_) => (
                    "400 Bad Request",
                    "This is not the redirect of the pending consent request. Go back to the terminal.",
                ),
            };
            let body = format!("<!doctype html><title>consent</title><p>{message}</p>\n");
            let _ = write!(
                out,
                "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            return Ok(result?);
        }
    }

    fn describe_expiry(expires_at: Option<SystemTime>) -> String {
        match expires_at.map(|t| t.duration_since(SystemTime::now())) {
            None => String::new(),
            Some(Ok(left)) => format!(", valid for {}", human(left)),
            Some(Err(_)) => ", already expired".into(),
        }
    }

    fn human(d: Duration) -> String {
        let s = d.as_secs();
        match s {
            0..=5_399 => format!("{} minutes", s / 60),
            5_400..=172_799 => format!("{} hours", s / 3600),
            _ => format!("{} days", s / 86_400),
        }
    }

    fn status(
        config: &OAuthConfig,
        store: Arc<FileStore>,
        account: &str,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let Some(record) = store.load(account)? else {
            return Err(OAuthError::NoRefreshToken {
                account: account.into(),
            }
            .into());
        };
        println!("account: {account}");
        println!("store: {}", store.path().display());
        println!("scopes: {}", record.scopes);
        println!(
            "refresh token: stored{}",
            describe_expiry(record.expires_at)
        );
        let provider = UserTokenProvider::new(config.client()?, store, account);
        provider.access_token()?;
        let left = provider
            .cached()
            .and_then(|t| t.expires_at.duration_since(SystemTime::now()).ok())
            .unwrap_or_default();
        println!("access token: refreshed, valid for {}", human(left));
        Ok(())
    }
}
