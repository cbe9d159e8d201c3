//! OAuth 2.1 for streamable HTTP servers (`auth: oauth`): the token file of
//! a server under the profile home, the authorized HTTP client a connection
//! uses, and the login (`hermes-tools mcp login NAME`).
//!
//! The protocol is rmcp's (`rmcp::transport::auth`): protected-resource
//! metadata (the `WWW-Authenticate` `resource_metadata` hint, then the
//! well-known paths), authorization-server metadata (RFC 8414, then OpenID
//! discovery) with its issuer checked, client ID metadata documents,
//! authorization code with PKCE (S256), the token endpoint's auth methods,
//! scope selection and refresh. What is ours: which client registration
//! is used (a pre-registered client, a metadata document, dynamic
//! registration, in that order, with a registered secret kept), where the
//! tokens live (`<profile home>/mcp-tokens/hermes-tools/<server>.json`, mode 0600,
//! replaced atomically), the loopback redirect listener, the browser, and
//! that a connection never waits on a login: without a usable token it
//! fails with [`McpError::NeedsLogin`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    CredentialRefreshGuard, CredentialStore, OAuthClientConfig, StoredCredentials,
    WWWAuthenticateParams,
};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::McpError;
use hermes_runtime::config::{McpOAuth, SslVerify};

/// The folder of the token files, under the profile home (the reference's).
pub const TOKEN_DIR: &str = "mcp-tokens";
/// Our files' folder inside [`TOKEN_DIR`]: the reference keeps its own
/// token files there, `<server>.json` of another format, which a shared
/// profile home must not have overwritten.
pub const OWN_TOKEN_DIR: &str = "hermes-tools";
/// Seconds `mcp login` waits for the browser step when `oauth.timeout` is unset.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// Requests the redirect listener answers at most before it gives up
/// (a browser asks for a favicon, a scanner knocks).
const MAX_LISTENER_REQUESTS: usize = 32;
/// Bytes of one request the redirect listener reads at most.
const MAX_REQUEST_BYTES: usize = 16 * 1024;
/// How long a refresh waits for another process's refresh of the same
/// tokens (the lock beside the token file) before it gives up.
const REFRESH_LOCK_WAIT: Duration = Duration::from_secs(20);
/// The client name given at dynamic registration when `client_name` is unset.
const DEFAULT_CLIENT_NAME: &str = "hermes-tools";

/// One `auth: oauth` server: where it is, how it is reached, its `oauth:`
/// settings (`${VAR}` filled) and its token file.
#[derive(Debug, Clone)]
pub struct OAuthServer {
    pub name: String,
    pub url: String,
    pub ssl_verify: SslVerify,
    pub settings: McpOAuth,
    pub token_file: PathBuf,
}

impl OAuthServer {
    /// `name`'s server at `url`, its tokens under the profile home `home`.
    pub fn new(
        name: &str,
        url: &str,
        ssl_verify: SslVerify,
        settings: McpOAuth,
        home: &Path,
    ) -> Self {
        OAuthServer {
            name: name.to_string(),
            url: url.to_string(),
            ssl_verify,
            settings,
            token_file: token_file(home, name),
        }
    }
}

/// The token file of server `name` under the profile home `home`
/// (`mcp-tokens/hermes-tools/NAME.json`): its name
/// kept to letters, digits, `-`, `_` and `.` (anything else `_`).
pub fn token_file(home: &Path, name: &str) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = if safe.trim_matches('.').is_empty() {
        "_".to_string()
    } else {
        safe
    };
    home.join(TOKEN_DIR)
        .join(OWN_TOKEN_DIR)
        .join(format!("{safe}.json"))
}

/// What the token file holds: rmcp's credentials (client ID, token
/// response, granted scopes, issuer) and a secret the server gave this
/// client at dynamic registration (rmcp's credentials have no place for it,
/// and a refresh needs it).
#[derive(Serialize, Deserialize)]
struct TokenFileData {
    #[serde(flatten)]
    credentials: StoredCredentials,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    registered_secret: Option<String>,
}

/// The token file as rmcp's credential store: read on every token request
/// (a login in another process is seen at once), written to a temporary
/// file of mode 0600 beside it and renamed over it.
#[derive(Clone)]
struct FileStore {
    path: PathBuf,
    /// The secret written with the next save (set by the login after a
    /// dynamic registration, or read from the file).
    registered_secret: Arc<Mutex<Option<String>>>,
}

impl FileStore {
    fn new(path: PathBuf) -> Self {
        FileStore {
            path,
            registered_secret: Arc::new(Mutex::new(None)),
        }
    }

    fn read(&self) -> Result<Option<TokenFileData>, AuthError> {
        let text = match std::fs::read(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(AuthError::CredentialStoreError(format!(
                    "cannot read {}: {e}",
                    self.path.display()
                )))
            }
        };
        let data: TokenFileData = serde_json::from_slice(&text).map_err(|e| {
            AuthError::CredentialStoreError(format!(
                "{} is no token file ({e}); remove it and log in again",
                self.path.display()
            ))
        })?;
        if let Some(secret) = &data.registered_secret {
            *lock(&self.registered_secret) = Some(secret.clone());
        }
        Ok(Some(data))
    }

    fn write(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let data = TokenFileData {
            credentials,
            registered_secret: lock(&self.registered_secret).clone(),
        };
        let text = serde_json::to_vec_pretty(&data)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        write_private(&self.path, &text).map_err(|e| {
            AuthError::CredentialStoreError(format!("cannot write {}: {e}", self.path.display()))
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Writes `bytes` to `path` readable by the owner only: the folder made
/// (mode 0700), a temporary file in it (created 0600) written, synced and
/// renamed over `path`, so a reader sees the old file or the new one.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("the token file has no folder"))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".token-")
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Locks `path` (made 0600 in a 0700 folder when missing) for this
/// process, waiting at most [`REFRESH_LOCK_WAIT`]; unlocked when the file
/// is dropped.
fn lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)?;
    let started = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < REFRESH_LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(std::io::Error::other(format!(
                    "another process held {} for {}",
                    path.display(),
                    crate::error::secs(REFRESH_LOCK_WAIT)
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// Forgets the tokens (and the client registration kept with them) of
/// server `name` under the profile home `home`: removes its token file
/// under the refresh lock, so a refresh in another process cannot write
/// it back, and the kept challenge. `Ok(None)`: nothing was stored;
/// `Ok(Some(path))`: the token file removed. The authorization server is
/// not told (the tokens stay valid there until they expire).
pub fn logout(home: &Path, name: &str) -> std::io::Result<Option<PathBuf>> {
    let path = token_file(home, name);
    let lock = path.with_extension("lock");
    let _ = std::fs::remove_file(challenge_file(&path));
    if !path.exists() {
        return Ok(None);
    }
    let _locked = lock_file(&lock)?;
    let removed = match std::fs::remove_file(&path) {
        Ok(()) => Some(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let _ = std::fs::remove_file(&lock);
    Ok(removed)
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    /// Two processes refreshing the same tokens at once would each spend
    /// the refresh token (servers rotate it: the second is refused): a
    /// refresh holds `NAME.lock` beside the token file, so the second
    /// reads the first's tokens and refreshes from them.
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let path = self.path.with_extension("lock");
        let locked = tokio::task::spawn_blocking(move || lock_file(&path))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(|e| AuthError::CredentialStoreError(format!("the token lock: {e}")))?;
        Ok(Some(CredentialRefreshGuard::new(locked)))
    }

    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.read()?.map(|d| d.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(AuthError::CredentialStoreError(format!(
                "cannot remove {}: {e}",
                self.path.display()
            ))),
        }
    }
}

/// The OAuth manager of `server`: rmcp's, over an HTTP client that checks
/// certificates as the entry's `ssl_verify` says (with the system's roots,
/// rmcp's own client, which also refuses metadata that points at
/// link-local addresses).
async fn manager(
    server: &OAuthServer,
    http: &reqwest::Client,
) -> Result<AuthorizationManager, McpError> {
    crate::tls::install_tls_provider();
    let mut manager = AuthorizationManager::new_allowing_private_addresses(server.url.as_str())
        .await
        .map_err(|e| oauth_error(server, &e))?;
    if !matches!(server.ssl_verify, SslVerify::SystemRoots) {
        manager
            .with_client(http.clone())
            .map_err(|e| oauth_error(server, &e))?;
    }
    Ok(manager)
}

/// An rmcp auth error of `server` as the user reads it (no token in it:
/// rmcp's errors carry none).
fn oauth_error(server: &OAuthServer, e: &AuthError) -> McpError {
    McpError::OAuth {
        server: server.name.clone(),
        // A response body quoted in the error may hold a token.
        error: crate::render::strip_credentials(&e.to_string()),
    }
}

/// The HTTP client of a connection to `server`: `http` with the stored
/// access token on every request, refreshed when it expires or the server
/// refuses it (once per request). No token, or one that cannot be
/// refreshed: [`McpError::NeedsLogin`], without waiting on anything.
pub async fn authorized_client(
    server: &OAuthServer,
    http: reqwest::Client,
) -> Result<AuthClient<reqwest::Client>, McpError> {
    let store = FileStore::new(server.token_file.clone());
    let stored = store.read().map_err(|e| oauth_error(server, &e))?;
    let Some(stored) = stored.filter(|d| d.credentials.token_response.is_some()) else {
        return Err(needs_login(server, "no token stored"));
    };
    let mut manager = manager(server, &http).await?;
    manager.set_credential_store(store);
    match manager.initialize_from_store().await {
        Ok(true) => {}
        Ok(false) => {
            return Err(needs_login(
                server,
                "the stored token is from another authorization server",
            ))
        }
        Err(e) => return Err(oauth_error(server, &e)),
    }
    // A refresh of a confidential client authenticates with its secret:
    // the configured one, or the one it was registered with.
    let secret = match &server.settings.client_id {
        Some(id) if *id == stored.credentials.client_id => server.settings.client_secret.clone(),
        _ => stored.registered_secret.clone(),
    };
    if let Some(secret) = secret {
        let config = OAuthClientConfig::new(
            stored.credentials.client_id.clone(),
            "http://127.0.0.1/callback",
        )
        .with_client_secret(secret);
        manager
            .configure_client(config)
            .map_err(|e| oauth_error(server, &e))?;
    }
    Ok(AuthClient::new(http, manager))
}

/// The `oauth:` settings with `${VAR}` filled by `fill`.
pub fn fill_settings(o: &McpOAuth, fill: &dyn Fn(&String) -> String) -> McpOAuth {
    let f = |v: &Option<String>| v.as_ref().map(fill);
    let mut filled = o.clone();
    filled.client_id = f(&o.client_id);
    filled.client_secret = f(&o.client_secret);
    filled.scope = f(&o.scope);
    filled.redirect_uri = f(&o.redirect_uri);
    filled.redirect_host = f(&o.redirect_host);
    filled.client_name = f(&o.client_name);
    filled.client_metadata_url = f(&o.client_metadata_url);
    filled
}

/// The error of a connection `server` refused with a 401 (its token
/// refused and not refreshed) or a 403 (`challenge` its
/// `WWW-Authenticate`): a login is needed. The challenge is kept beside
/// the token file, so that the login asks for the scope the server wants.
pub fn refused(server: &OAuthServer, challenge: Option<&str>) -> McpError {
    let params =
        challenge.and_then(|c| url_of(&server.url).map(|u| WWWAuthenticateParams::parse(c, &u)));
    if let Some(c) = challenge {
        let _ = write_private(&challenge_file(&server.token_file), c.as_bytes());
    }
    match params {
        Some(p) if p.is_insufficient_scope() => needs_login(
            server,
            &format!(
                "the server asks for more scope{}",
                p.scope.map_or_else(String::new, |s| format!(": {s}"))
            ),
        ),
        _ => needs_login(server, "the server refused the stored token"),
    }
}

/// A failed `tools/list` of `server`: [`refused`] when the server
/// answered 401 or 403 (an `initialize` without a token may pass where
/// the methods after it need one), else [`McpError::ListTools`].
pub fn list_failed(server: &OAuthServer, e: rmcp::ServiceError) -> McpError {
    if e.is_authorization_required() || e.auth_challenge().is_some() {
        return refused(server, e.auth_challenge());
    }
    McpError::ListTools(e)
}

/// The error text of a failed call: for an `auth: oauth` server the
/// server answered 401 or 403 (a step-up: the tool needs more scope),
/// [`refused`]'s (which says to log in, and keeps the challenge for it).
pub fn call_failed(server: Option<&OAuthServer>, e: rmcp::ServiceError) -> String {
    match server {
        Some(s) if e.is_authorization_required() || e.auth_challenge().is_some() => {
            refused(s, e.auth_challenge()).to_string()
        }
        _ => e.to_string(),
    }
}

/// Where the last challenge of a server is kept (no secret in it: scopes
/// and metadata URLs).
fn challenge_file(token_file: &Path) -> PathBuf {
    token_file.with_extension("challenge")
}

/// [`McpError::NeedsLogin`] for `server`, saying `why`.
pub fn needs_login(server: &OAuthServer, why: &str) -> McpError {
    McpError::NeedsLogin {
        server: server.name.clone(),
        why: why.to_string(),
    }
}

/// Whether `text` (a call's error, a status's error) is the
/// [`McpError::NeedsLogin`] of server `name`: a login, not a retry, is
/// what helps. `mcp conformance` exits with its "needs login" code on it.
pub fn says_needs_login(text: &str, name: &str) -> bool {
    // The error's own rendering, split around its (empty) reason.
    let rendered = McpError::NeedsLogin {
        server: name.to_string(),
        why: String::new(),
    }
    .to_string();
    let Some((head, tail)) = rendered.split_once("()") else {
        return false;
    };
    text.find(head)
        .is_some_and(|at| text[at + head.len()..].contains(tail))
}

/// How the login's authorization URL reaches a browser.
pub enum Browser {
    /// `$BROWSER` when set (a `:`-separated list of commands, `%s` the URL,
    /// else the URL appended: the convention of Python's `webbrowser`),
    /// else `xdg-open` when there is a display; the URL is printed either
    /// way, for when none opens.
    System,
    /// The URL is handed to this function (a test or a bench playing
    /// the browser).
    Custom(Box<dyn FnOnce(String) + Send>),
}

/// What a login did.
#[derive(Debug, Clone, Serialize)]
pub struct LoginOutcome {
    /// The scopes granted (as the token response says, else as asked).
    pub scopes: Vec<String>,
    /// How the client was identified: `pre-registered`,
    /// `client ID metadata document`, `dynamic registration`.
    pub client: &'static str,
    /// Where the tokens were written.
    pub token_file: PathBuf,
}

/// Logs in to `server`: discovery (seeded with `challenge`, the
/// `WWW-Authenticate` of a 401 or 403 when one is known, else the one the
/// last refusal kept, else one asked for without a token:
/// [`probe_challenge`]), the client registration, the
/// authorization URL opened by `browser`, the redirect awaited on a
/// loopback listener at most `oauth.timeout` (300 s), the code exchanged
/// and the tokens written to the token file.
pub async fn login(
    server: &OAuthServer,
    challenge: Option<String>,
    browser: Browser,
) -> Result<LoginOutcome, McpError> {
    let http = crate::tls::http_client(&server.ssl_verify)?;
    let kept = challenge_file(&server.token_file);
    // The challenge: the caller's; else the one a refusal kept (a step-up
    // names the scope there); else the answer to a request without a token.
    let challenge = match challenge.or_else(|| std::fs::read_to_string(&kept).ok()) {
        Some(c) => Some(c),
        None => probe_challenge(&http, &server.url).await,
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", server.settings.redirect_port))
        .await
        .map_err(|e| McpError::OAuth {
            server: server.name.clone(),
            error: format!(
                "cannot listen on 127.0.0.1:{} for the redirect: {e} (set a free `oauth.redirect_port`)",
                server.settings.redirect_port
            ),
        })?;
    let port = listener
        .local_addr()
        .map_err(|e| McpError::OAuth {
            server: server.name.clone(),
            error: e.to_string(),
        })?
        .port();
    let redirect_uri = server.settings.redirect_uri.clone().unwrap_or_else(|| {
        let host = server
            .settings
            .redirect_host
            .as_deref()
            .unwrap_or("127.0.0.1");
        format!("http://{host}:{port}/callback")
    });

    let store = FileStore::new(server.token_file.clone());
    let previous = store.read().ok().flatten();
    let mut manager = manager(server, &http).await?;
    manager.set_credential_store(store.clone());
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|e| oauth_error(server, &e))?;
    let cimd_supported = resolution
        .metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let can_register = resolution.metadata.registration_endpoint.is_some();
    manager.set_metadata(resolution.metadata);

    // The scopes: the configured ones; on a step-up (403
    // insufficient_scope) the ones held before and the challenged ones;
    // else rmcp's choice (the challenge's, then the resource's
    // `scopes_supported`, else none asked for).
    let params = challenge
        .as_deref()
        .and_then(|c| url_of(&server.url).map(|u| WWWAuthenticateParams::parse(c, &u)));
    let mut scopes: Vec<String> = Vec::new();
    if let Some(s) = &server.settings.scope {
        scopes.extend(s.split_whitespace().map(str::to_string));
    } else if let Some(p) = params.as_ref().filter(|p| p.is_insufficient_scope()) {
        if let Some(prev) = &previous {
            scopes.extend(prev.credentials.granted_scopes.iter().cloned());
        }
        if let Some(s) = &p.scope {
            for scope in s.split_whitespace() {
                if !scopes.iter().any(|x| x == scope) {
                    scopes.push(scope.to_string());
                }
            }
        }
    }

    let mut request = AuthorizationRequest::new(redirect_uri.clone())
        .with_initial_scope_selection()
        .with_client_name(
            server
                .settings
                .client_name
                .clone()
                .unwrap_or_else(|| DEFAULT_CLIENT_NAME.to_string()),
        );
    if !scopes.is_empty() {
        request = request.with_scopes(scopes.clone());
    }
    let client = if let Some(id) = &server.settings.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &server.settings.client_secret {
            request = request.with_client_secret(secret.clone());
        }
        *lock(&store.registered_secret) = None;
        "pre-registered"
    } else if let Some(url) = server
        .settings
        .client_metadata_url
        .as_ref()
        .filter(|_| cimd_supported)
    {
        request = request.with_client_metadata_url(url.clone());
        *lock(&store.registered_secret) = None;
        "client ID metadata document"
    } else if can_register {
        // Registered here rather than by rmcp, to keep the secret the
        // server may give (a refresh authenticates with it).
        let chosen = if scopes.is_empty() {
            manager.select_initial_scopes(&[]).await
        } else {
            scopes.clone()
        };
        let refs: Vec<&str> = chosen.iter().map(String::as_str).collect();
        let name = request.client_name.clone().unwrap_or_default();
        let registered = manager
            .register_client(&name, &redirect_uri, &refs)
            .await
            .map_err(|e| oauth_error(server, &e))?;
        request = request.with_preregistered_client(registered.client_id.clone());
        if let Some(secret) = &registered.client_secret {
            request = request.with_client_secret(secret.clone());
        }
        *lock(&store.registered_secret) = registered.client_secret.clone();
        "dynamic registration"
    } else {
        return Err(McpError::OAuth {
            server: server.name.clone(),
            error: "the authorization server offers no dynamic client registration: \
                    set `oauth.client_id` (and `client_secret`) of a client registered with it"
                .to_string(),
        });
    };

    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| oauth_error(server, &e))?;
    let url = session.get_authorization_url().to_string();
    match browser {
        Browser::System => open_system_browser(&url),
        Browser::Custom(open) => open(url),
    }
    let wait = server
        .settings
        .timeout
        .map_or(DEFAULT_LOGIN_TIMEOUT, Duration::from_secs_f64);
    let callback = tokio::time::timeout(wait, await_redirect(&listener, port))
        .await
        .map_err(|_| McpError::OAuth {
            server: server.name.clone(),
            error: format!(
                "no redirect from the browser within {} (`oauth.timeout`)",
                crate::error::secs(wait)
            ),
        })?
        .map_err(|error| McpError::OAuth {
            server: server.name.clone(),
            error,
        })?;
    let token = session
        .handle_callback_url(&callback)
        .await
        .map_err(|e| oauth_error(server, &e))?;
    let granted = store
        .read()
        .ok()
        .flatten()
        .map(|d| d.credentials.granted_scopes)
        .unwrap_or_default();
    drop(token);
    let _ = std::fs::remove_file(&kept);
    Ok(LoginOutcome {
        scopes: granted,
        client,
        token_file: server.token_file.clone(),
    })
}

fn url_of(url: &str) -> Option<reqwest::Url> {
    reqwest::Url::parse(url).ok()
}

/// The `WWW-Authenticate` of the server's refusal (a 401 or 403) of the
/// requests a connection sends, sent without a token, each within 10 s,
/// until one is refused: the sessionless revision's `server/discover`;
/// the `initialize` of the session revisions; when that is let through (a
/// server may guard only the methods after it), the `tools/list` every
/// connection sends next, in the session the `initialize` opened (ended
/// again with a `DELETE`). `None` when none is refused.
pub async fn probe_challenge(http: &reqwest::Client, url: &str) -> Option<String> {
    const SESSIONLESS: &str = "2026-07-28";
    const SESSION: &str = "2025-11-25";
    let post = |method: &str, version: &str, body: serde_json::Value| {
        http.post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", version)
            .header("mcp-method", method)
            .body(body.to_string())
            .timeout(Duration::from_secs(10))
    };
    let challenge = |response: &reqwest::Response| {
        let status = response.status().as_u16();
        if status != 401 && status != 403 {
            return None;
        }
        response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let client_info = serde_json::json!({
        "name": DEFAULT_CLIENT_NAME,
        "version": env!("CARGO_PKG_VERSION"),
    });
    let discover = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": SESSIONLESS,
            "io.modelcontextprotocol/clientInfo": client_info,
            "io.modelcontextprotocol/clientCapabilities": {},
        }}
    });
    if let Ok(response) = post("server/discover", SESSIONLESS, discover).send().await {
        if let Some(found) = challenge(&response) {
            return Some(found);
        }
    }
    let initialize = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": SESSION,
            "capabilities": {},
            "clientInfo": client_info,
        }
    });
    let response = post("initialize", SESSION, initialize).send().await.ok()?;
    if !response.status().is_success() {
        return challenge(&response);
    }
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    drop(response);
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let mut list = post("tools/list", SESSION, list);
    if let Some(id) = &session {
        list = list.header("mcp-session-id", id);
    }
    let found = list.send().await.ok().and_then(|r| challenge(&r));
    if let Some(id) = &session {
        let _ = http
            .delete(url)
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", SESSION)
            .timeout(Duration::from_secs(10))
            .send()
            .await;
    }
    found
}

/// Opens `url` with `$BROWSER` (else `xdg-open` where there is a display)
/// and prints it on stderr for when no browser opens.
fn open_system_browser(url: &str) {
    eprintln!("Open this URL in a browser to log in:\n\n  {url}\n");
    let commands: Vec<String> = match std::env::var("BROWSER") {
        Ok(b) if !b.trim().is_empty() => b.split(':').map(str::to_string).collect(),
        _ if std::env::var_os("DISPLAY").is_some()
            || std::env::var_os("WAYLAND_DISPLAY").is_some() =>
        {
            vec!["xdg-open".to_string()]
        }
        _ => Vec::new(),
    };
    for command in commands {
        let mut words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
        if words.is_empty() {
            continue;
        }
        if words.iter().any(|w| w.contains("%s")) {
            for w in &mut words {
                *w = w.replace("%s", url);
            }
        } else {
            words.push(url.to_string());
        }
        // A clean environment (no agent secrets), plus what a browser
        // needs to reach the user's display.
        let mut env = hermes_procs::child_env::ChildEnv::base();
        for name in [
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "XDG_RUNTIME_DIR",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            if let Ok(value) = std::env::var(name) {
                env.set(name, value);
            }
        }
        let spawned = env
            .command(&words[0])
            .args(&words[1..])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Ok(mut child) = spawned {
            // Reaped when it ends; a browser may outlive the login.
            std::thread::spawn(move || child.wait());
            return;
        }
    }
}

/// Waits for the browser's redirect to `/callback` on `listener`; the
/// whole redirect URL (with `code`, `state`, `iss`), or the authorization
/// server's `error` (and its description).
async fn await_redirect(listener: &tokio::net::TcpListener, port: u16) -> Result<String, String> {
    for _ in 0..MAX_LISTENER_REQUESTS {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let mut buf = Vec::with_capacity(1024);
        let mut chunk = [0u8; 1024];
        let read = tokio::time::timeout(Duration::from_secs(10), async {
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_REQUEST_BYTES {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
        })
        .await;
        if read.is_err() {
            continue;
        }
        let head = String::from_utf8_lossy(&buf);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or("");
        let Some(query) = target
            .strip_prefix("/callback")
            .filter(|rest| rest.is_empty() || rest.starts_with('?'))
        else {
            let _ = respond(&mut stream, "404 Not Found", "Not the login redirect.").await;
            continue;
        };
        let full = format!("http://127.0.0.1:{port}/callback{query}");
        let parsed = reqwest::Url::parse(&full).ok();
        let pair = |name: &str| {
            parsed.as_ref().and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.into_owned())
            })
        };
        if let Some(error) = pair("error") {
            let _ = respond(&mut stream, "200 OK", "The login failed; see the terminal.").await;
            let description =
                pair("error_description").map_or_else(String::new, |d| format!(": {d}"));
            return Err(format!(
                "the authorization server answered `{error}`{description}"
            ));
        }
        if pair("code").is_none() {
            let _ = respond(&mut stream, "400 Bad Request", "No authorization code.").await;
            continue;
        }
        let _ = respond(
            &mut stream,
            "200 OK",
            "Logged in. You can close this window.",
        )
        .await;
        return Ok(full);
    }
    Err(format!(
        "{MAX_LISTENER_REQUESTS} requests reached the redirect listener, none the login's"
    ))
}

async fn respond(
    stream: &mut tokio::net::TcpStream,
    status: &str,
    text: &str,
) -> std::io::Result<()> {
    let body = format!("<!doctype html><title>hermes-tools</title><p>{text}</p>\n");
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_file_names_stay_in_their_folder() {
        let home = Path::new("/h");
        assert_eq!(
            token_file(home, "linear"),
            Path::new("/h/mcp-tokens/hermes-tools/linear.json")
        );
        assert_eq!(
            token_file(home, "../x"),
            Path::new("/h/mcp-tokens/hermes-tools/.._x.json")
        );
        assert_eq!(
            token_file(home, ".."),
            Path::new("/h/mcp-tokens/hermes-tools/_.json")
        );
        assert_eq!(
            token_file(home, "a/b c"),
            Path::new("/h/mcp-tokens/hermes-tools/a_b_c.json")
        );
    }

    #[test]
    fn a_quoted_token_response_is_not_in_an_error() {
        let server = OAuthServer::new(
            "s",
            "http://127.0.0.1:1/mcp",
            SslVerify::SystemRoots,
            McpOAuth::default(),
            Path::new("/h"),
        );
        let e = AuthError::TokenExchangeFailed(
            r#"parse error in {"access_token": "at-123", "refresh_token":"rt-456", "client_secret":"cs-789"}"#.into(),
        );
        let text = oauth_error(&server, &e).to_string();
        for secret in ["at-123", "rt-456", "cs-789"] {
            assert!(!text.contains(secret), "{text}");
        }
        assert!(text.contains("token exchange failed"), "{text}");
    }

    #[test]
    fn a_refusal_says_needs_login_and_other_errors_do_not() {
        let server = OAuthServer::new(
            "conf.x",
            "http://127.0.0.1:1/mcp",
            SslVerify::SystemRoots,
            McpOAuth::default(),
            Path::new("/h"),
        );
        let step_up = needs_login(&server, "the server asks for more scope: a b").to_string();
        let wrapped = format!("{{\"error\": \"MCP call failed: tools/call: {step_up}\"}}");
        assert!(says_needs_login(&wrapped, "conf.x"), "{wrapped}");
        assert!(!says_needs_login(&wrapped, "other"), "{wrapped}");
        let failed = oauth_error(&server, &AuthError::AuthorizationRequired).to_string();
        assert!(!says_needs_login(&failed, "conf.x"), "{failed}");
        assert!(!says_needs_login("needs login", "conf.x"));
    }

    /// A server on 127.0.0.1 that answers `server/discover` 400 and
    /// `initialize` 200 (with a session), and refuses `tools/list`
    /// `refusal` (status, challenge); the requests it saw (method,
    /// session header), at most 8, each read within 10 s.
    async fn guarded_after_handshake(
        refusal: (u16, &'static str),
    ) -> (String, tokio::task::JoinHandle<Vec<(String, String)>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let seen = tokio::spawn(async move {
            let mut seen = Vec::new();
            for _ in 0..8 {
                let accepted =
                    tokio::time::timeout(Duration::from_secs(10), listener.accept()).await;
                let Ok(Ok((mut stream, _))) = accepted else {
                    break;
                };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let read = tokio::time::timeout(Duration::from_secs(10), async {
                    loop {
                        let text = String::from_utf8_lossy(&buf).to_string();
                        if let Some((head, body)) = text.split_once("\r\n\r\n") {
                            let length = head
                                .lines()
                                .find_map(|l| {
                                    l.to_ascii_lowercase()
                                        .strip_prefix("content-length:")
                                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                                })
                                .unwrap_or(0);
                            if body.len() >= length {
                                return (head.to_string(), body.to_string());
                            }
                        }
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return (text, String::new()),
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                })
                .await;
                let Ok((head, body)) = read else { break };
                let session = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("mcp-session-id:")
                            .map(|v| v.trim().to_string())
                    })
                    .unwrap_or_default();
                let method = if head.starts_with("DELETE ") {
                    "DELETE".to_string()
                } else {
                    serde_json::from_str::<serde_json::Value>(&body)
                        .ok()
                        .and_then(|v| v["method"].as_str().map(str::to_string))
                        .unwrap_or_default()
                };
                let answer = match method.as_str() {
                    "server/discover" => "400 Bad Request\r\ncontent-length: 0".to_string(),
                    "initialize" => {
                        let body = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
                        format!(
                            "200 OK\r\nmcp-session-id: s-1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        )
                    }
                    "tools/list" => format!(
                        "{} No\r\nwww-authenticate: {}\r\ncontent-length: 0",
                        refusal.0, refusal.1
                    ),
                    _ => "200 OK\r\ncontent-length: 0".to_string(),
                };
                // One request per connection: none is reused half-closed.
                let answer = if answer.contains("\r\n\r\n") {
                    format!(
                        "HTTP/1.1 {}",
                        answer.replacen("\r\n", "\r\nconnection: close\r\n", 1)
                    )
                } else {
                    format!("HTTP/1.1 {answer}\r\nconnection: close\r\n\r\n")
                };
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.shutdown().await;
                seen.push((method.clone(), session));
                if method == "DELETE" {
                    break;
                }
            }
            seen
        });
        (url, seen)
    }

    #[tokio::test]
    async fn the_probe_finds_the_challenge_of_the_methods_after_the_handshake() {
        let challenge = r#"Bearer scope="mcp:basic", resource_metadata="http://127.0.0.1:1/prm""#;
        let (url, seen) = guarded_after_handshake((401, challenge)).await;
        let http = crate::tls::http_client(&SslVerify::SystemRoots).unwrap();
        let found = probe_challenge(&http, &url).await;
        assert_eq!(found.as_deref(), Some(challenge));
        let seen = seen.await.unwrap();
        let methods: Vec<&str> = seen.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            methods,
            ["server/discover", "initialize", "tools/list", "DELETE"],
            "{seen:?}"
        );
        // The list and the DELETE are in the session the initialize opened.
        assert_eq!(seen[2].1, "s-1", "{seen:?}");
        assert_eq!(seen[3].1, "s-1", "{seen:?}");
    }

    #[tokio::test]
    async fn a_server_that_refuses_nothing_has_no_challenge() {
        let (url, seen) = guarded_after_handshake((200, "Bearer")).await;
        let http = crate::tls::http_client(&SslVerify::SystemRoots).unwrap();
        assert_eq!(probe_challenge(&http, &url).await, None);
        assert_eq!(seen.await.unwrap().len(), 4);
    }

    #[test]
    fn the_token_folder_is_one_the_file_tools_refuse() {
        assert!(hermes_procs::protected::CREDENTIAL_DIRS.contains(&TOKEN_DIR));
    }

    #[test]
    fn private_write_is_0600_and_replaces() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-tokens").join("s.json");
        write_private(&path, b"one").unwrap();
        write_private(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        // Nothing but the file is left in the folder.
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
    }
}
