//! HTTP(S) GET with limits, for `web_extract`, and the request to the search
//! endpoint, for `web_search`.
//!
//! Page fetches go through a resolver that checks **every** address a host
//! resolves to against the address policy (`policy.rs`) and hands the
//! connector only those checked addresses, so a host cannot pass the check
//! with one address and be connected to on another (DNS rebinding). Every
//! redirect hop is resolved, and so checked, the same way. Proxies from the
//! environment are not used (a proxy would resolve the host instead of us).
//!
//! Both answer a [`FetchError`] when they fail (a policy refusal is one of
//! its variants); `tool.rs` turns it into the model's text.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};
use ureq::Agent;

use super::policy::{self, PolicyError};

/// Sent as `User-Agent`.
const USER_AGENT: &str = concat!("hermes-tools/", env!("CARGO_PKG_VERSION"));

/// Limits of one fetch.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The whole fetch: resolution, connection, redirects and body (a body
    /// trickled slowly is cut off by it too).
    pub timeout: Duration,
    /// Body bytes read at most; the rest is dropped.
    pub max_bytes: u64,
    pub max_redirects: u32,
}

/// Why a page or the search endpoint could not be read. `Display` gives a
/// message meant for the model.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The URL is not `http://` or `https://`.
    #[error("Invalid URL '{url}': only http and https URLs are fetched")]
    NotHttp { url: String },
    /// The URL does not parse.
    #[error("Invalid URL '{url}': {error}")]
    InvalidUrl {
        url: String,
        error: ureq::http::uri::InvalidUri,
    },
    /// The URL names no host.
    #[error("Invalid URL '{url}': no host")]
    NoHost { url: String },
    /// The address policy refused the host (or a redirect's host).
    #[error(transparent)]
    Refused(#[from] PolicyError),
    /// The whole fetch took longer than its limit; `secs` is the limit,
    /// rounded to whole seconds.
    #[error("Timed out after {secs} s")]
    Timeout { secs: f64 },
    /// The host name does not resolve.
    #[error("Host not found")]
    HostNotFound,
    /// More redirects than allowed.
    #[error("More than {max} redirects")]
    TooManyRedirects { max: u32 },
    /// A redirect could not be followed.
    #[error("A redirect could not be followed")]
    RedirectFailed,
    /// Any other transport failure.
    #[error("{0}")]
    Transport(ureq::Error),
    /// The server answered an error status.
    #[error("HTTP {code}{}", reason.map_or_else(String::new, |r| format!(" {r}")))]
    Status {
        code: u16,
        reason: Option<&'static str>,
    },
    /// The body did not arrive within the limit; `received` bytes did.
    #[error("Timed out after {secs} s reading the page ({received} bytes received)")]
    ReadTimeout { secs: f64, received: usize },
    /// Reading the body failed otherwise.
    #[error("Reading the page failed: {0}")]
    Read(ureq::Error),
    /// The search endpoint could not be reached; the error says why.
    #[error("The search endpoint could not be reached: {0}")]
    SearchUnreachable(Box<FetchError>),
    /// The search endpoint answered an error status.
    #[error(
        "The search endpoint answered HTTP {code}{}",
        if matches!(code, 401 | 403) { " (check the profile's search API key)" } else { "" }
    )]
    SearchStatus { code: u16 },
    /// The search results could not be read.
    #[error("Reading the search results failed: {0}")]
    SearchRead(ureq::Error),
    /// The search endpoint's answer is not JSON.
    #[error("The search endpoint did not answer JSON: {0}")]
    SearchNotJson(serde_json::Error),
}

/// A fetched page.
#[derive(Debug)]
pub struct Page {
    /// The URL after redirects.
    pub final_url: String,
    pub content_type: String,
    pub body: Vec<u8>,
    /// The body was longer than `max_bytes`.
    pub cut: bool,
}

/// Checks every resolved address; refuses the host if any is refused.
#[derive(Debug)]
struct GuardedResolver {
    access: policy::Access,
    refusal: Arc<Mutex<Option<PolicyError>>>,
}

impl GuardedResolver {
    fn refuse(&self, why: PolicyError) -> ureq::Error {
        *self.refusal.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.clone());
        ureq::Error::Io(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            why,
        ))
    }
}

impl Resolver for GuardedResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let host = uri.host().unwrap_or_default();
        if let Err(why) = policy::check_host(host) {
            return Err(self.refuse(why));
        }
        if let Err(why) = self.access.check_blocklist(host) {
            return Err(self.refuse(why));
        }
        let addrs = DefaultResolver::default().resolve(uri, config, timeout)?;
        // The connector gets exactly these addresses: no second lookup.
        match policy::check_all(host, &addrs, self.access.allow_private) {
            Ok(()) => Ok(addrs),
            Err(why) => Err(self.refuse(why)),
        }
    }
}

/// Fetches `url` (http or https) within `limits`, refusing addresses the
/// policy refuses (`access`: the profile's, or just whether private
/// addresses are allowed). HTTP error statuses are errors.
pub fn get_page(
    url: &str,
    access: impl Into<policy::Access>,
    limits: Limits,
) -> Result<Page, FetchError> {
    let lower = url.to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        return Err(FetchError::NotHttp {
            url: url.to_owned(),
        });
    }
    let uri: Uri = url.parse().map_err(|error| FetchError::InvalidUrl {
        url: url.to_owned(),
        error,
    })?;
    if uri.host().is_none_or(str::is_empty) {
        return Err(FetchError::NoHost {
            url: url.to_owned(),
        });
    }
    let refusal = Arc::new(Mutex::new(None));
    let config = Config::builder()
        .timeout_global(Some(limits.timeout))
        .max_redirects(limits.max_redirects)
        .http_status_as_error(false)
        .proxy(None)
        .user_agent(USER_AGENT)
        .build();
    let agent = Agent::with_parts(
        config,
        DefaultConnector::default(),
        GuardedResolver {
            access: access.into(),
            refusal: refusal.clone(),
        },
    );
    let result = agent
        .get(url)
        .header(
            "Accept",
            "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
        )
        .call();
    let mut response = match result {
        Ok(r) => r,
        Err(e) => {
            let refused = refusal.lock().unwrap_or_else(|e| e.into_inner()).take();
            return Err(refused.map_or_else(|| describe(e, limits), FetchError::Refused));
        }
    };
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Status {
            code: status.as_u16(),
            reason: status.canonical_reason().filter(|r| !r.is_empty()),
        });
    }
    let final_url = ureq::ResponseExt::get_uri(&response).to_string();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut body = Vec::new();
    response
        .body_mut()
        .as_reader()
        .take(limits.max_bytes + 1)
        .read_to_end(&mut body)
        .map_err(|e| match ureq::Error::from(e) {
            ureq::Error::Timeout(_) => FetchError::ReadTimeout {
                secs: limits.timeout.as_secs_f64().round(),
                received: body.len(),
            },
            other => FetchError::Read(other),
        })?;
    let cut = body.len() as u64 > limits.max_bytes;
    body.truncate(usize::try_from(limits.max_bytes).unwrap_or(usize::MAX));
    Ok(Page {
        final_url,
        content_type,
        body,
        cut,
    })
}

/// A request to the configured search endpoint: GET with `q` and `count`,
/// the key in `Authorization: Bearer` and `X-Subscription-Token` headers,
/// no redirects followed. Returns the JSON body.
pub fn search(
    endpoint: &str,
    key: &str,
    query: &str,
    count: u64,
    timeout: Duration,
) -> Result<serde_json::Value, FetchError> {
    let config = Config::builder()
        .timeout_global(Some(timeout))
        .max_redirects(0)
        .http_status_as_error(false)
        .proxy(None)
        .user_agent(USER_AGENT)
        .build();
    let agent = Agent::new_with_config(config);
    let mut response = agent
        .get(endpoint)
        .query("q", query)
        .query("count", count.to_string())
        .header("Accept", "application/json")
        .header("Authorization", format!("Bearer {key}"))
        .header("X-Subscription-Token", key)
        .call()
        .map_err(|e| {
            FetchError::SearchUnreachable(Box::new(describe(
                e,
                Limits {
                    timeout,
                    max_bytes: 0,
                    max_redirects: 0,
                },
            )))
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::SearchStatus {
            code: status.as_u16(),
        });
    }
    let text = response
        .body_mut()
        .with_config()
        .limit(4 * 1024 * 1024)
        .read_to_string()
        .map_err(FetchError::SearchRead)?;
    serde_json::from_str(&text).map_err(FetchError::SearchNotJson)
}

/// A transport error as a [`FetchError`].
fn describe(e: ureq::Error, limits: Limits) -> FetchError {
    match e {
        ureq::Error::Timeout(_) => FetchError::Timeout {
            secs: limits.timeout.as_secs_f64().round(),
        },
        ureq::Error::HostNotFound => FetchError::HostNotFound,
        ureq::Error::TooManyRedirects => FetchError::TooManyRedirects {
            max: limits.max_redirects,
        },
        ureq::Error::RedirectFailed => FetchError::RedirectFailed,
        other => FetchError::Transport(other),
    }
}

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;
