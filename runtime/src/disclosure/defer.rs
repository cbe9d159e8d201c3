//! When progressive disclosure defers tools: [`DisclosureConfig`].

/// When to defer. New settings may be added: build one from
/// [`DisclosureConfig::default`] and its `with_*` methods.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct DisclosureConfig {
    /// The model's context window, in tokens.
    pub context_window_tokens: usize,
    /// Defer when deferrable schemas exceed this share of the window (0–1).
    pub max_share: f64,
}

impl Default for DisclosureConfig {
    fn default() -> Self {
        DisclosureConfig {
            context_window_tokens: 128_000,
            max_share: 0.1,
        }
    }
}

impl DisclosureConfig {
    /// Sets [`DisclosureConfig::context_window_tokens`].
    pub fn with_context_window_tokens(mut self, tokens: usize) -> Self {
        self.context_window_tokens = tokens;
        self
    }

    /// Sets [`DisclosureConfig::max_share`].
    pub fn with_max_share(mut self, share: f64) -> Self {
        self.max_share = share;
        self
    }
}
