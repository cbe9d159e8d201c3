//! Where the model is: a profile's `model:` section and `.env`, resolved
//! through the table of known providers.

use std::time::Duration;

use hermes_runtime::dialect::Dialect;
use hermes_runtime::Profile;

/// A provider the `model.provider` key can name: its endpoint and the
/// `.env` key that holds its API key. A provider not in the table is a
/// custom endpoint: `model.base_url` is required and the key is
/// `model.api_key`, else `OPENAI_API_KEY` from `.env`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provider {
    pub name: &'static str,
    pub base_url: &'static str,
    pub key_env: &'static str,
}

/// The known providers; the first is the default when neither
/// `model.provider` nor `model.base_url` is set (as in the reference).
pub const PROVIDERS: &[Provider] = &[
    Provider {
        name: "openrouter",
        base_url: "https://openrouter.ai/api/v1",
        key_env: "OPENROUTER_API_KEY",
    },
    Provider {
        name: "openai",
        base_url: "https://api.openai.com/v1",
        key_env: "OPENAI_API_KEY",
    },
];

/// The `.env` key of a custom endpoint without `model.api_key`.
const CUSTOM_KEY_ENV: &str = "OPENAI_API_KEY";

/// A resolved endpoint: everything a request needs.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Up to `/v1`; `/chat/completions` is added.
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer ...` when set.
    pub api_key: Option<String>,
    /// How tool definitions are written for this endpoint.
    pub dialect: Dialect,
    /// One request, answer included.
    pub timeout: Duration,
    /// Retries after a 429, a 5xx or a refused connection.
    pub max_retries: u32,
    /// The first retry's wait (doubled for each next one, at most
    /// [`Endpoint::MAX_BACKOFF`]), unless the answer says `Retry-After`.
    pub backoff: Duration,
}

impl std::fmt::Debug for Endpoint {
    // The key never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "(set)"))
            .field("dialect", &self.dialect)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("backoff", &self.backoff)
            .finish()
    }
}

/// Why a profile names no usable endpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    #[error("no model is configured: set `model:` (a name, or `model.default`) in {config}")]
    NoModel { config: String },
    #[error(
        "`model.provider: {provider}` is not a known provider ({known}): set `model.base_url` \
         to its OpenAI-compatible endpoint in {config}"
    )]
    NoBaseUrl {
        provider: String,
        known: String,
        config: String,
    },
    #[error("`model.tool_dialect: {given}` is not a dialect: {error}")]
    Dialect { given: String, error: String },
}

impl Endpoint {
    /// The first retry's wait by default.
    pub const DEFAULT_BACKOFF: Duration = Duration::from_millis(500);
    /// The longest wait between two attempts (a longer `Retry-After` too).
    pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

    /// `base_url` and `model` with this project's defaults for the rest:
    /// no key, the OpenAI dialect, 120 s, 3 retries.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Endpoint {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            dialect: Dialect::OpenAi,
            timeout: Duration::from_secs(120),
            max_retries: 3,
            backoff: Self::DEFAULT_BACKOFF,
        }
    }

    /// The endpoint `profile` configures: `model:` of its `config.yaml`
    /// (read at call time), the key from the section or the provider's
    /// `.env` key.
    pub fn from_profile(profile: &Profile) -> Result<Self, EndpointError> {
        let config = profile.config();
        let m = &config.model;
        let shown = config.path.display().to_string();
        let model = [&m.default.value, &m.model.value]
            .into_iter()
            .map(|s| s.trim())
            .find(|s| !s.is_empty())
            .ok_or_else(|| EndpointError::NoModel {
                config: shown.clone(),
            })?;
        let provider_name = m.provider.value.trim().to_ascii_lowercase();
        let base_url = m.base_url.value.trim();
        let provider = if provider_name.is_empty() && base_url.is_empty() {
            PROVIDERS.first()
        } else {
            PROVIDERS.iter().find(|p| p.name == provider_name)
        };
        let base_url = match (base_url, provider) {
            (url, _) if !url.is_empty() => url.to_string(),
            (_, Some(p)) => p.base_url.to_string(),
            (_, None) => {
                return Err(EndpointError::NoBaseUrl {
                    provider: provider_name,
                    known: PROVIDERS
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                    config: shown,
                })
            }
        };
        let key_env = provider.map_or(CUSTOM_KEY_ENV, |p| p.key_env);
        let api_key = Some(m.api_key.value.trim().to_string())
            .filter(|k| !k.is_empty())
            .or_else(|| profile.secret(key_env));
        let dialect = match m.tool_dialect.value.trim() {
            "" => Dialect::OpenAi,
            given => given
                .parse::<Dialect>()
                .map_err(|e| EndpointError::Dialect {
                    given: given.to_string(),
                    error: e.to_string(),
                })?,
        };
        if !speaks_chat_completions(dialect) {
            return Err(EndpointError::Dialect {
                given: m.tool_dialect.value.clone(),
                error: "a chat-completions endpoint takes `openai`, `openai-strict` or `llamacpp`"
                    .into(),
            });
        }
        Ok(Endpoint {
            base_url,
            model: model.to_string(),
            api_key,
            dialect,
            timeout: Duration::from_secs(m.timeout.value),
            max_retries: m.max_retries.value,
            backoff: Self::DEFAULT_BACKOFF,
        })
    }
}

/// Whether `dialect` writes tools in the chat-completions envelope.
pub(crate) fn speaks_chat_completions(dialect: Dialect) -> bool {
    matches!(
        dialect,
        Dialect::OpenAi | Dialect::OpenAiStrict | Dialect::LlamaCpp
    )
}
