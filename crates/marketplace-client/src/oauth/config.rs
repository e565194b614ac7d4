//! Where the service lives and who the application is: endpoints, credentials, and reading
//! them from environment variables or from the configuration file of the official SDKs.
//!
//! The variable names and the file format are documented on [`OAuthConfig`].

use std::path::{Path, PathBuf};

use url::Url;

use super::error::ConfigError;
use super::redact::url_for_message;
use super::secret::{AccessToken, ClientId, ClientSecret};

/// API host of production.
pub(crate) const PRODUCTION_BASE_URL: &str = "https://api.ebay.com";
/// Consent host of production.
pub(crate) const PRODUCTION_AUTH_URL: &str = "https://auth.ebay.com";
/// API host of the sandbox.
pub(crate) const SANDBOX_BASE_URL: &str = "https://api.sandbox.ebay.com";
/// Consent host of the sandbox.
pub(crate) const SANDBOX_AUTH_URL: &str = "https://auth.sandbox.ebay.com";

/// `production` or `sandbox`.
pub(crate) const ENV_ENVIRONMENT: &str = "MARKETPLACE_ENV";
/// A custom API host (with [`ENV_AUTH_URL`]).
pub(crate) const ENV_BASE_URL: &str = "MARKETPLACE_BASE_URL";
/// A custom consent host (with [`ENV_BASE_URL`]).
pub(crate) const ENV_AUTH_URL: &str = "MARKETPLACE_AUTH_URL";
/// The application id.
pub(crate) const ENV_CLIENT_ID: &str = "MARKETPLACE_CLIENT_ID";
/// The certificate id.
pub(crate) const ENV_CLIENT_SECRET: &str = "MARKETPLACE_CLIENT_SECRET";
/// The redirect URI (RuName) of the consent flow.
pub(crate) const ENV_REDIRECT_URI: &str = "MARKETPLACE_REDIRECT_URI";
/// Path of an SDK configuration file.
pub(crate) const ENV_CONFIG_FILE: &str = "MARKETPLACE_CONFIG";
/// A ready application token.
pub(crate) const ENV_ACCESS_TOKEN: &str = "MARKETPLACE_ACCESS_TOKEN";
/// The scopes of application tokens (space-separated), instead of [`Endpoints::default_scope`].
pub(crate) const ENV_SCOPE: &str = "MARKETPLACE_SCOPE";

/// The public-data scope of application tokens on eBay's production *and* sandbox hosts: the
/// sandbox's own OAuth clients ask for it too, and refuse `https://api.sandbox.ebay.com/…`
/// scopes with `invalid_scope`.
pub(crate) const PRODUCTION_SCOPE: &str = "https://api.ebay.com/oauth/api_scope";

/// Which service the endpoints point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Environment {
    /// `api.ebay.com` / `auth.ebay.com`.
    Production,
    /// `api.sandbox.ebay.com` / `auth.sandbox.ebay.com`.
    Sandbox,
    /// Any other pair (a proxy, or the fake on loopback in tests).
    Custom,
}

/// The two hosts of the service: `base_url` for the API and the token endpoint, `auth_url` for
/// the consent page. Application tokens need only the API host: without a consent host
/// ([`OAuthConfig::from_lookup`] with `MARKETPLACE_BASE_URL` alone), the consent URL is refused
/// with [`ConfigError::Missing`].
///
/// ```
/// use marketplace_client::oauth::Endpoints;
/// let e = Endpoints::sandbox();
/// assert_eq!(e.token_url().as_str(), "https://api.sandbox.ebay.com/identity/v1/oauth2/token");
/// assert_eq!(e.authorize_url().unwrap().as_str(), "https://auth.sandbox.ebay.com/oauth2/authorize");
/// assert_eq!(e.default_scope(), "https://api.ebay.com/oauth/api_scope"); // as in production
/// let local = Endpoints::custom("http://127.0.0.1:8080", "http://127.0.0.1:8080").unwrap();
/// assert_eq!(local.base_url().as_str(), "http://127.0.0.1:8080/");
/// assert_eq!(local.default_scope(), "http://127.0.0.1:8080/oauth/api_scope");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    environment: Environment,
    base_url: Url,
    /// None: a custom API host without a consent host (enough for application tokens).
    auth_url: Option<Url>,
    /// Replaces the default scope ([`ENV_SCOPE`], or the SDK file's scope list).
    scope: Option<String>,
}

impl Endpoints {
    /// The public-data scope of application tokens on eBay's production *and* sandbox hosts
    /// (the sandbox refuses `https://api.sandbox.ebay.com/…` scopes with `invalid_scope`).
    pub const PRODUCTION_SCOPE: &'static str = PRODUCTION_SCOPE;

    /// Production.
    pub fn production() -> Self {
        Self::preset(
            Environment::Production,
            PRODUCTION_BASE_URL,
            PRODUCTION_AUTH_URL,
        )
    }

    /// The sandbox.
    pub fn sandbox() -> Self {
        Self::preset(Environment::Sandbox, SANDBOX_BASE_URL, SANDBOX_AUTH_URL)
    }

    fn preset(environment: Environment, base: &str, auth: &str) -> Self {
        // The presets are constants that parse; `custom` validates them the same way.
        match (parse_base("base_url", base), parse_base("auth_url", auth)) {
            (Ok(base_url), Ok(auth_url)) => Self {
                environment,
                base_url,
                auth_url: Some(auth_url),
                scope: None,
            },
            _ => unreachable!("preset URLs are valid"),
        }
    }

    /// Any pair of hosts. `https` is required except on loopback (`127.0.0.1`, `[::1]`,
    /// `localhost`), where `http` is allowed for tests.
    pub fn custom(base_url: &str, auth_url: &str) -> Result<Self, ConfigError> {
        Ok(Self {
            environment: Environment::Custom,
            base_url: parse_base("base_url", base_url)?,
            auth_url: Some(parse_base("auth_url", auth_url)?),
            scope: None,
        })
    }

    /// A custom API host without a consent host: enough for application tokens; the consent
    /// URL is refused.
    fn api_only(base_url: &str) -> Result<Self, ConfigError> {
        Ok(Self {
            environment: Environment::Custom,
            base_url: parse_base("base_url", base_url)?,
            auth_url: None,
            scope: None,
        })
    }

    /// Which environment this is.
    pub fn environment(&self) -> Environment {
        self.environment
    }

    /// The API host, ending with `/`.
    pub fn base_url(&self) -> &Url {
        &self.base_url
    }

    /// The consent host, ending with `/`; `None` when only an API host was configured.
    pub fn auth_url(&self) -> Option<&Url> {
        self.auth_url.as_ref()
    }

    /// `{base_url}/identity/v1/oauth2/token`.
    pub fn token_url(&self) -> Url {
        join(&self.base_url, "identity/v1/oauth2/token")
    }

    /// `{auth_url}/oauth2/authorize`; [`ConfigError::Missing`] (naming `MARKETPLACE_AUTH_URL`) when
    /// no consent host is configured.
    pub fn authorize_url(&self) -> Result<Url, ConfigError> {
        match &self.auth_url {
            Some(auth_url) => Ok(join(auth_url, "oauth2/authorize")),
            None => Err(ConfigError::Missing {
                name: ENV_AUTH_URL.into(),
                hint: format!(
                    "the consent flow needs the consent host beside {ENV_BASE_URL} (for example https://auth.ebay.com); application tokens do not"
                ),
            }),
        }
    }

    /// The scope of an application token when none is asked for: the one set with
    /// [`with_default_scope`](Self::with_default_scope), else [`Endpoints::PRODUCTION_SCOPE`] for
    /// production and the sandbox alike, else `{base_url}/oauth/api_scope`.
    pub fn default_scope(&self) -> String {
        match (&self.scope, self.environment) {
            (Some(scope), _) => scope.clone(),
            (None, Environment::Production | Environment::Sandbox) => PRODUCTION_SCOPE.into(),
            (None, Environment::Custom) => join(&self.base_url, "oauth/api_scope").into(),
        }
    }

    /// Replaces the default scope (several scopes space-separated); a blank value restores
    /// the environment's default.
    ///
    /// ```
    /// use marketplace_client::oauth::Endpoints;
    /// let e = Endpoints::sandbox().with_default_scope(" https://api.ebay.com/oauth/api_scope/metadata.insights ");
    /// assert_eq!(e.default_scope(), "https://api.ebay.com/oauth/api_scope/metadata.insights");
    /// ```
    pub fn with_default_scope(mut self, scope: impl Into<String>) -> Self {
        let scope = scope
            .into()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        self.scope = (!scope.is_empty()).then_some(scope);
        self
    }

    /// The host (with its port, if any) that keys this environment in an SDK configuration file.
    pub fn host_key(&self) -> String {
        let host = self.base_url.host_str().unwrap_or_default();
        match self.base_url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        }
    }
}

/// True for `127.0.0.0/8`, `::1` and `localhost`: the hosts where `http` is allowed and
/// proxies are bypassed.
pub(crate) fn is_loopback(url: &Url) -> bool {
    url.host().is_some_and(|h| is_loopback_host(&h))
}

fn is_loopback_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
    }
}

fn join(base: &Url, path: &str) -> Url {
    // `base` always ends with '/', and `path` is a constant relative path.
    base.join(path).unwrap_or_else(|_| base.clone())
}

fn parse_base(name: &str, value: &str) -> Result<Url, ConfigError> {
    // The URL is quoted in messages only without user information and query: either may
    // carry a secret.
    let shown = url_for_message(value);
    let invalid = |reason: String| ConfigError::Invalid {
        name: name.to_owned(),
        reason,
    };
    let mut url =
        Url::parse(value.trim()).map_err(|e| invalid(format!("{shown:?} is not a URL ({e})")))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(format!(
            "{shown:?} must not carry user information (a user name or password)"
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid(format!(
            "{shown:?} must not have a query or fragment"
        )));
    }
    let Some(host) = url.host() else {
        return Err(invalid(format!("{shown:?} has no host")));
    };
    match url.scheme() {
        "https" => {}
        "http" if is_loopback_host(&host) => {}
        "http" => {
            return Err(invalid(format!(
                "{shown:?} uses http; use https (credentials would travel in clear text)"
            )));
        }
        other => return Err(invalid(format!("unsupported scheme {other:?}"))),
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

/// The application's credentials, checked present: what a client of the token endpoint holds
/// ([`OAuthConfig::credentials`] builds them).
#[derive(Debug, Clone)]
pub(crate) struct Credentials {
    /// The application id.
    pub(crate) client_id: ClientId,
    /// The certificate id.
    pub(crate) client_secret: ClientSecret,
    /// The redirect URI of the consent flow (a RuName or a URL); needed for user tokens only.
    pub(crate) redirect_uri: Option<String>,
}

/// The hosts and the application's settings: read from the environment and the configuration
/// file of the official SDKs ([`from_env`](Self::from_env)), or set in code
/// ([`new`](Self::new), [`with_credentials`](Self::with_credentials),
/// [`with_redirect_uri`](Self::with_redirect_uri)). A client of the token endpoint is built
/// from it ([`OAuthClient::from_config`](crate::oauth::OAuthClient::from_config)).
///
/// # Environment variables
///
/// | Variable | Meaning |
/// |---|---|
/// | `MARKETPLACE_ENV` | `production` (default) or `sandbox` |
/// | `MARKETPLACE_BASE_URL`, `MARKETPLACE_AUTH_URL` | custom hosts, overriding `MARKETPLACE_ENV`: the API host, and the consent host (needed only by the consent flow; `MARKETPLACE_AUTH_URL` alone is an error) |
/// | `MARKETPLACE_CLIENT_ID` | the application id (`client_id`) |
/// | `MARKETPLACE_CLIENT_SECRET` | the certificate id (`client_secret`) |
/// | `MARKETPLACE_REDIRECT_URI` | the redirect URI of the consent flow: the RuName, or a URL |
/// | `MARKETPLACE_CONFIG` | path of an SDK configuration file (YAML or JSON) |
/// | `MARKETPLACE_ACCESS_TOKEN` | a ready application token, used as is instead of requesting one |
/// | `MARKETPLACE_SCOPE` | the scopes of application tokens, space-separated (default: `https://api.ebay.com/oauth/api_scope` for production and the sandbox, `{base_url}/oauth/api_scope` for other hosts) |
///
/// Variables win over the file; empty variables count as unset.
///
/// # The SDK configuration file
///
/// The file the official SDKs read is keyed by the API host of each environment:
///
/// ```yaml
/// name: ebay-config
/// api.sandbox.ebay.com:
///   appid: MyApp-Sandbox-SBX-0123456789
///   certid: SBX-0123456789abcdef
///   devid: 01234567-89ab-cdef-0123-456789abcdef
///   redirecturi: My_Company-MyApp-SBX-abcdefghi
/// api.ebay.com:
///   appid: MyApp-Prod-PRD-0123456789
///   certid: PRD-0123456789abcdef
///   redirecturi: My_Company-MyApp-PRD-abcdefghi
/// ```
///
/// The same structure in JSON is accepted, and so is the layout of the Node.js SDK
/// (`{"PRODUCTION": {"clientId", "clientSecret", "redirectUri", "baseUrl": "api.ebay.com"}}`).
///
/// # Example
///
/// ```
/// use marketplace_client::oauth::{Environment, OAuthConfig};
/// let vars = [
///     ("MARKETPLACE_ENV", "sandbox"),
///     ("MARKETPLACE_CLIENT_ID", "MyApp-SBX-123"),
///     ("MARKETPLACE_CLIENT_SECRET", "SBX-secret"),
/// ];
/// let config = OAuthConfig::from_lookup(|name| {
///     vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
/// })
/// .unwrap();
/// assert_eq!(config.endpoints.environment(), Environment::Sandbox);
/// assert_eq!(config.require_client_id().unwrap().as_str(), "MyApp-SBX-123");
/// ```
///
/// The same settings in code, for a program that keeps them elsewhere:
///
/// ```
/// use marketplace_client::oauth::{Endpoints, OAuthConfig};
/// let config = OAuthConfig::new(Endpoints::sandbox())
///     .with_credentials("MyApp-SBX-123", "SBX-secret")
///     .with_redirect_uri("My_Company-MyApp-SBX-abcdefg"); // the RuName; user tokens only
/// assert_eq!(config.require_client_id().unwrap().as_str(), "MyApp-SBX-123");
/// assert_eq!(config.require_redirect_uri().unwrap(), "My_Company-MyApp-SBX-abcdefg");
/// ```
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// The hosts.
    pub endpoints: Endpoints,
    /// The application id, if configured.
    pub client_id: Option<ClientId>,
    /// The certificate id, if configured.
    pub client_secret: Option<ClientSecret>,
    /// The redirect URI (RuName), if configured.
    pub redirect_uri: Option<String>,
    /// The developer id of the SDK file (not used by OAuth; kept for other APIs).
    pub dev_id: Option<String>,
    /// A ready application token (`MARKETPLACE_ACCESS_TOKEN`).
    pub access_token: Option<AccessToken>,
    /// The SDK configuration file that was read, if any.
    pub config_file: Option<PathBuf>,
}

impl OAuthConfig {
    /// `production` or `sandbox` (`MARKETPLACE_ENV`).
    pub const ENV_ENVIRONMENT: &'static str = ENV_ENVIRONMENT;
    /// A custom API host (`MARKETPLACE_BASE_URL`).
    pub const ENV_BASE_URL: &'static str = ENV_BASE_URL;
    /// A custom consent host (`MARKETPLACE_AUTH_URL`); only the consent flow needs it.
    pub const ENV_AUTH_URL: &'static str = ENV_AUTH_URL;
    /// The application id (`MARKETPLACE_CLIENT_ID`).
    pub const ENV_CLIENT_ID: &'static str = ENV_CLIENT_ID;
    /// The certificate id (`MARKETPLACE_CLIENT_SECRET`).
    pub const ENV_CLIENT_SECRET: &'static str = ENV_CLIENT_SECRET;
    /// The redirect URI (RuName) of the consent flow (`MARKETPLACE_REDIRECT_URI`).
    pub const ENV_REDIRECT_URI: &'static str = ENV_REDIRECT_URI;
    /// The path of an SDK configuration file (`MARKETPLACE_CONFIG`).
    pub const ENV_CONFIG_FILE: &'static str = ENV_CONFIG_FILE;
    /// A ready application token (`MARKETPLACE_ACCESS_TOKEN`).
    pub const ENV_ACCESS_TOKEN: &'static str = ENV_ACCESS_TOKEN;
    /// The scopes of application tokens, space-separated (`MARKETPLACE_SCOPE`).
    pub const ENV_SCOPE: &'static str = ENV_SCOPE;
}

impl OAuthConfig {
    /// A configuration with endpoints only (set the credentials with
    /// [`with_credentials`](Self::with_credentials)).
    pub fn new(endpoints: Endpoints) -> Self {
        Self {
            endpoints,
            client_id: None,
            client_secret: None,
            redirect_uri: None,
            dev_id: None,
            access_token: None,
            config_file: None,
        }
    }

    /// Sets the application id and the certificate id (what `MARKETPLACE_CLIENT_ID` and
    /// `MARKETPLACE_CLIENT_SECRET` set): enough for application tokens.
    pub fn with_credentials(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        self.client_id = Some(ClientId::new(client_id));
        self.client_secret = Some(ClientSecret::new(client_secret));
        self
    }

    /// Sets the redirect URI of the consent flow (what `MARKETPLACE_REDIRECT_URI` sets): the
    /// application's RuName, or a URL. Needed for user tokens only.
    pub fn with_redirect_uri(mut self, redirect_uri: impl Into<String>) -> Self {
        self.redirect_uri = Some(redirect_uri.into());
        self
    }

    /// Reads the process environment (see [`OAuthConfig`] for the variable names).
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the settings through `lookup`, which returns the value of a variable name; tests
    /// pass a closure over a map instead of touching the process environment.
    pub fn from_lookup<F>(lookup: F) -> Result<Self, ConfigError>
    where
        F: Fn(&str) -> Option<String>,
    {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let endpoints = match (get(ENV_BASE_URL), get(ENV_AUTH_URL)) {
            (Some(base), Some(auth)) => Endpoints::custom(&base, &auth).map_err(|e| {
                rename(e, &[("base_url", ENV_BASE_URL), ("auth_url", ENV_AUTH_URL)])
            })?,
            // Application tokens never use the consent host: the consent URL asks for it.
            (Some(base), None) => {
                Endpoints::api_only(&base).map_err(|e| rename(e, &[("base_url", ENV_BASE_URL)]))?
            }
            (None, Some(_)) => {
                return Err(ConfigError::Missing {
                    name: ENV_BASE_URL.into(),
                    hint: format!(
                        "set it together with {ENV_AUTH_URL} (the API host, for example https://api.ebay.com)"
                    ),
                });
            }
            (None, None) => match get(ENV_ENVIRONMENT).as_deref().map(str::trim) {
                None => Endpoints::production(),
                Some(v) if v.eq_ignore_ascii_case("production") => Endpoints::production(),
                Some(v) if v.eq_ignore_ascii_case("sandbox") => Endpoints::sandbox(),
                Some(v) => {
                    return Err(ConfigError::Invalid {
                        name: ENV_ENVIRONMENT.into(),
                        reason: format!(
                            "{v:?} is neither `production` nor `sandbox` (for other hosts set {ENV_BASE_URL} and {ENV_AUTH_URL})"
                        ),
                    });
                }
            },
        };
        let mut config = Self::new(endpoints);
        if let Some(path) = get(ENV_CONFIG_FILE) {
            config.merge_sdk_file(Path::new(&path))?;
        }
        if let Some(v) = get(ENV_CLIENT_ID) {
            config.client_id = Some(ClientId::new(v.trim()));
        }
        if let Some(v) = get(ENV_CLIENT_SECRET) {
            config.client_secret = Some(ClientSecret::new(v.trim()));
        }
        if let Some(v) = get(ENV_REDIRECT_URI) {
            config.redirect_uri = Some(v.trim().to_owned());
        }
        if let Some(v) = get(ENV_ACCESS_TOKEN) {
            config.access_token = Some(AccessToken::new(v.trim()));
        }
        if let Some(v) = get(ENV_SCOPE) {
            config.endpoints = config.endpoints.clone().with_default_scope(v);
        }
        Ok(config)
    }

    /// Reads the section of `endpoints` (keyed by its API host) from an SDK configuration file.
    pub fn from_sdk_file(path: &Path, endpoints: Endpoints) -> Result<Self, ConfigError> {
        let mut config = Self::new(endpoints);
        config.merge_sdk_file(path)?;
        Ok(config)
    }

    /// Reads the section of this configuration's environment from an SDK configuration file
    /// and sets the values it holds.
    pub fn merge_sdk_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let text = zeroize::Zeroizing::new(std::fs::read_to_string(path).map_err(|e| {
            ConfigError::File {
                path: path.to_owned(),
                reason: format!("{e} (set {ENV_CONFIG_FILE} to a readable YAML or JSON file)"),
            }
        })?);
        let section =
            parse_sdk_config(&text, &self.endpoints).map_err(|reason| ConfigError::File {
                path: path.to_owned(),
                reason,
            })?;
        let field = |key: &str| format!("`{key}` of `{}` in {}", section.name, path.display());
        // The first of `keys` that the section holds, which must be a string.
        let string = |keys: &[&'static str]| {
            section.get(keys).map_err(|k| ConfigError::Invalid {
                name: field(k),
                reason: "must be a string".into(),
            })
        };
        if let Some(v) = string(&["appid", "clientid", "client_id"])? {
            self.client_id = Some(ClientId::new(v));
        }
        if let Some(v) = string(&["certid", "clientsecret", "client_secret"])? {
            self.client_secret = Some(ClientSecret::new(v));
        }
        if let Some(v) = string(&["devid", "dev_id"])? {
            self.dev_id = Some(v);
        }
        if let Some(v) = string(&["redirecturi", "redirect_uri", "runame"])? {
            self.redirect_uri = Some(v);
        }
        if let Some(scopes) = section.scopes().map_err(|k| ConfigError::Invalid {
            name: field(k),
            reason: "must be a string or a list of strings".into(),
        })? {
            self.endpoints = self.endpoints.clone().with_default_scope(scopes);
        }
        self.config_file = Some(path.to_owned());
        Ok(())
    }

    /// The application id, or an error naming the missing setting.
    pub fn require_client_id(&self) -> Result<&ClientId, ConfigError> {
        self.client_id.as_ref().ok_or_else(|| ConfigError::Missing {
            name: ENV_CLIENT_ID.into(),
            hint: format!(
                "set it to the application id (or `appid` under `{}` in the file named by {ENV_CONFIG_FILE})",
                self.endpoints.host_key()
            ),
        })
    }

    /// The client credentials, or an error naming the missing setting (the application id
    /// first, then the certificate id).
    pub(crate) fn credentials(&self) -> Result<Credentials, ConfigError> {
        let client_id = self.require_client_id()?.clone();
        let client_secret = self.client_secret.clone().ok_or_else(|| ConfigError::Missing {
            name: ENV_CLIENT_SECRET.into(),
            hint: format!(
                "set it to the certificate id (or `certid` under `{}` in the file named by {ENV_CONFIG_FILE})",
                self.endpoints.host_key()
            ),
        })?;
        Ok(Credentials {
            client_id,
            client_secret,
            redirect_uri: self.redirect_uri.clone(),
        })
    }

    /// The redirect URI, or an error naming the missing setting.
    pub fn require_redirect_uri(&self) -> Result<&str, ConfigError> {
        require_redirect_uri(self.redirect_uri.as_deref())
    }
}

/// `redirect_uri`, or the error naming the missing setting (for the configuration and the
/// client alike).
pub(crate) fn require_redirect_uri(redirect_uri: Option<&str>) -> Result<&str, ConfigError> {
    redirect_uri.ok_or_else(|| ConfigError::Missing {
        name: ENV_REDIRECT_URI.into(),
        hint: "set it to the application's RuName, or a loopback URL such as \
               http://127.0.0.1:8976/callback (in code: OAuthConfig::with_redirect_uri)"
            .into(),
    })
}

fn rename(e: ConfigError, names: &[(&str, &str)]) -> ConfigError {
    match e {
        ConfigError::Invalid { name, reason } => ConfigError::Invalid {
            name: names
                .iter()
                .find(|(from, _)| *from == name)
                .map(|(_, to)| (*to).to_owned())
                .unwrap_or(name),
            reason,
        },
        other => other,
    }
}

struct Section {
    name: String,
    map: serde_json::Map<String, serde_json::Value>,
}

impl Section {
    /// The first of `keys` present (compared without case); `Err(key)` when it is not a string.
    fn get<'k>(&self, keys: &[&'k str]) -> Result<Option<String>, &'k str> {
        for key in keys {
            if let Some((_, v)) = self.map.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)) {
                return match v {
                    serde_json::Value::String(s) if s.trim().is_empty() => Ok(None),
                    serde_json::Value::String(s) => Ok(Some(s.trim().to_owned())),
                    serde_json::Value::Null => Ok(None),
                    _ => Err(key),
                };
            }
        }
        Ok(None)
    }

    /// `scope` or `scopes`: a space-separated string or a list of strings.
    fn scopes(&self) -> Result<Option<String>, &'static str> {
        for key in ["scopes", "scope"] {
            let Some((_, v)) = self.map.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)) else {
                continue;
            };
            return match v {
                serde_json::Value::String(s) => Ok(Some(s.clone())),
                serde_json::Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().ok_or(key))
                    .collect::<Result<Vec<_>, _>>()
                    .map(|list| Some(list.join(" "))),
                serde_json::Value::Null => Ok(None),
                _ => Err(key),
            };
        }
        Ok(None)
    }
}

fn parse_sdk_config(text: &str, endpoints: &Endpoints) -> Result<Section, String> {
    let trimmed = text.trim_start();
    let value: serde_json::Value = if trimmed.starts_with('{') {
        serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?
    } else {
        serde_norway::from_str(text).map_err(|e| format!("not valid YAML: {e}"))?
    };
    let serde_json::Value::Object(top) = value else {
        return Err(
            "the top level must be a mapping keyed by API host (e.g. `api.ebay.com:`)".into(),
        );
    };
    let host_port = endpoints.host_key();
    let host = endpoints
        .base_url()
        .host_str()
        .unwrap_or_default()
        .to_owned();
    let node_key = match endpoints.environment() {
        Environment::Production => Some("PRODUCTION"),
        Environment::Sandbox => Some("SANDBOX"),
        Environment::Custom => None,
    };
    let mut found = None;
    for candidate in [&host_port, &host] {
        if let Some((k, v)) = top.iter().find(|(k, _)| k.eq_ignore_ascii_case(candidate)) {
            found = Some((k.clone(), v.clone()));
            break;
        }
    }
    if found.is_none() {
        // The Node.js SDK: {"PRODUCTION": {"baseUrl": "api.ebay.com", ...}}
        found = top
            .iter()
            .find(|(k, v)| {
                let base = v.get("baseUrl").and_then(|b| b.as_str());
                base.is_some_and(|b| {
                    b.eq_ignore_ascii_case(&host) || b.eq_ignore_ascii_case(&host_port)
                }) || node_key.is_some_and(|n| k.eq_ignore_ascii_case(n))
            })
            .map(|(k, v)| (k.clone(), v.clone()));
    }
    let Some((name, value)) = found else {
        return Err(format!(
            "it has no section for `{host_port}` (the API host of the configured environment); \
             add one with appid, certid and redirecturi"
        ));
    };
    match value {
        serde_json::Value::Object(map) => Ok(Section { name, map }),
        _ => Err(format!("the section `{name}` must be a mapping")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    /// The configuration of the variables `vars`.
    fn config(vars: &[(&str, &str)]) -> OAuthConfig {
        OAuthConfig::from_lookup(lookup(vars)).unwrap()
    }

    /// The error the variables `vars` give, as displayed.
    fn config_error(vars: &[(&str, &str)]) -> String {
        OAuthConfig::from_lookup(lookup(vars))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn defaults_to_production() {
        let c = OAuthConfig::from_lookup(lookup(&[])).unwrap();
        assert_eq!(c.endpoints, Endpoints::production());
        let e = c.credentials().unwrap_err();
        assert!(e.to_string().contains("MARKETPLACE_CLIENT_ID"), "{e}");
    }

    #[test]
    fn bad_environment_is_named() {
        let e = config_error(&[("MARKETPLACE_ENV", "staging")]);
        assert!(e.contains("MARKETPLACE_ENV"), "{e}");
        let api_only = config(&[("MARKETPLACE_BASE_URL", "http://127.0.0.1:1")]);
        let e = api_only.endpoints.authorize_url().unwrap_err();
        assert!(
            e.to_string().contains("MARKETPLACE_AUTH_URL is not set"),
            "{e}"
        );
        let e = config_error(&[
            ("MARKETPLACE_BASE_URL", "http://example.com"),
            ("MARKETPLACE_AUTH_URL", "https://example.com"),
        ]);
        assert!(e.contains("MARKETPLACE_BASE_URL"), "{e}");
        assert!(e.contains("https"), "{e}");
    }

    #[test]
    fn url_errors_never_quote_user_info_or_query() {
        for (base, auth) in [
            (
                "https://user:pw-SECRET@host/?x=QUERY-SECRET",
                "https://auth",
            ),
            ("https://host/?access_token=QUERY-SECRET", "https://auth"),
            ("http://user:pw-SECRET@example.com/", "https://auth"),
            (
                "https://user:pw-SECRET@ho st/?x=QUERY-SECRET",
                "https://auth",
            ),
            ("https://host", "ftp://user:pw-SECRET@host/"),
        ] {
            let e = Endpoints::custom(base, auth).unwrap_err().to_string();
            assert!(!e.contains("SECRET"), "{e}");
            assert!(!e.contains("user:"), "{e}");
            let e = config_error(&[
                ("MARKETPLACE_BASE_URL", base),
                ("MARKETPLACE_AUTH_URL", auth),
            ]);
            assert!(!e.contains("SECRET"), "{e}");
            assert!(e.contains("MARKETPLACE_"), "{e}");
        }
    }

    #[test]
    fn custom_pair() {
        let c = config(&[
            ("MARKETPLACE_BASE_URL", "http://127.0.0.1:9/api"),
            ("MARKETPLACE_AUTH_URL", "http://localhost:9"),
        ]);
        assert_eq!(
            c.endpoints.token_url().as_str(),
            "http://127.0.0.1:9/api/identity/v1/oauth2/token"
        );
        assert_eq!(c.endpoints.host_key(), "127.0.0.1:9");
    }

    #[test]
    fn yaml_sdk_file_and_env_override() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ebay.yaml");
        std::fs::write(
            &path,
            "name: ebay-config\napi.sandbox.ebay.com:\n  appid: SBX-APP\n  certid: SBX-CERT\n  devid: DEV\n  redirecturi: RU-NAME\napi.ebay.com:\n  appid: PRD-APP\n  certid: PRD-CERT\n",
        )
        .unwrap();
        let p = path.to_str().unwrap();
        let c = config(&[("MARKETPLACE_ENV", "sandbox"), ("MARKETPLACE_CONFIG", p)]);
        let cred = c.credentials().unwrap();
        assert_eq!(cred.client_id.as_str(), "SBX-APP");
        assert_eq!(cred.client_secret.secret(), "SBX-CERT");
        assert_eq!(cred.redirect_uri.as_deref(), Some("RU-NAME"));
        assert_eq!(c.dev_id.as_deref(), Some("DEV"));
        let c = config(&[
            ("MARKETPLACE_CONFIG", p),
            ("MARKETPLACE_CLIENT_ID", "ENV-APP"),
        ]);
        assert_eq!(c.client_id.unwrap().as_str(), "ENV-APP");
        assert_eq!(c.client_secret.unwrap().secret(), "PRD-CERT");
    }

    #[test]
    fn application_scope_defaults_and_overrides() {
        // eBay's sandbox uses the production scope URL; the sandbox-host one is refused.
        for env in ["production", "sandbox"] {
            let c = config(&[("MARKETPLACE_ENV", env)]);
            assert_eq!(c.endpoints.default_scope(), PRODUCTION_SCOPE, "{env}");
        }
        let c = config(&[
            ("MARKETPLACE_BASE_URL", "http://127.0.0.1:9"),
            ("MARKETPLACE_AUTH_URL", "http://127.0.0.1:9"),
        ]);
        assert_eq!(
            c.endpoints.default_scope(),
            "http://127.0.0.1:9/oauth/api_scope"
        );

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ebay.yaml");
        std::fs::write(
            &path,
            "api.sandbox.ebay.com:\n  appid: A\n  certid: C\n  scopes:\n    - https://api.ebay.com/oauth/api_scope\n    - https://api.ebay.com/oauth/api_scope/metadata.insights\n",
        )
        .unwrap();
        let p = path.to_str().unwrap();
        let c = config(&[("MARKETPLACE_ENV", "sandbox"), ("MARKETPLACE_CONFIG", p)]);
        assert_eq!(
            c.endpoints.default_scope(),
            "https://api.ebay.com/oauth/api_scope https://api.ebay.com/oauth/api_scope/metadata.insights"
        );
        // The variable wins over the file.
        let c = config(&[
            ("MARKETPLACE_ENV", "sandbox"),
            ("MARKETPLACE_CONFIG", p),
            ("MARKETPLACE_SCOPE", "https://api.ebay.com/oauth/api_scope"),
        ]);
        assert_eq!(c.endpoints.default_scope(), PRODUCTION_SCOPE);
        std::fs::write(&path, "api.ebay.com:\n  scope: 5\n").unwrap();
        let e = config_error(&[("MARKETPLACE_CONFIG", p)]);
        assert!(e.contains("scope"), "{e}");
    }

    #[test]
    fn json_sdk_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ebay.json");
        std::fs::write(
            &path,
            r#"{"api.ebay.com": {"appid": "A", "certid": "C", "redirecturi": "R"}}"#,
        )
        .unwrap();
        let c = OAuthConfig::from_sdk_file(&path, Endpoints::production()).unwrap();
        assert_eq!(c.client_id.unwrap().as_str(), "A");
        std::fs::write(
            &path,
            r#"{"SANDBOX": {"clientId": "A2", "clientSecret": "C2", "redirectUri": "R2", "baseUrl": "api.sandbox.ebay.com"}}"#,
        )
        .unwrap();
        let c = OAuthConfig::from_sdk_file(&path, Endpoints::sandbox()).unwrap();
        assert_eq!(c.redirect_uri.as_deref(), Some("R2"));
        let e = OAuthConfig::from_sdk_file(&path, Endpoints::production()).unwrap_err();
        assert!(e.to_string().contains("api.ebay.com"), "{e}");
        std::fs::write(&path, r#"{"api.ebay.com": {"appid": 5}}"#).unwrap();
        let e = OAuthConfig::from_sdk_file(&path, Endpoints::production()).unwrap_err();
        assert!(e.to_string().contains("appid"), "{e}");
        std::fs::write(&path, "{not json").unwrap();
        let e = OAuthConfig::from_sdk_file(&path, Endpoints::production()).unwrap_err();
        assert!(e.to_string().contains("JSON"), "{e}");
    }
}
