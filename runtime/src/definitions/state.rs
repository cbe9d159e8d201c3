//! What definitions are built from and kept in: the [`Definitions`] of a
//! session, the schema overrides, and the state the registry holds for
//! them (overrides, cross-references, the disclosure setting, the memo).

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::disclosure::DisclosureConfig;
use crate::Profile;

/// A dynamic schema override: fields merged shallowly over the static schema
/// each time definitions are built. `None` (or a panic) keeps the static one.
pub type SchemaOverride = Arc<dyn Fn(&Profile) -> Option<Map<String, Value>> + Send + Sync>;

/// The result of [`Registry::get_tool_definitions`](crate::Registry::get_tool_definitions).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Definitions {
    /// `[{"type": "function", "function": {name, description, parameters}}]`,
    /// sorted. Shared, not copied: [`Definitions::to_vec`] gives a copy to change.
    pub tools: Arc<Vec<Arc<Value>>>,
    /// Names in `enabled` that are neither toolsets nor legacy names.
    pub unknown: Vec<String>,
    /// Tools replaced by the bridge tools (progressive disclosure), sorted.
    pub deferred: Vec<String>,
}

impl Definitions {
    /// A copy of the definitions the caller may change freely.
    pub fn to_vec(&self) -> Vec<Value> {
        self.tools.iter().map(|t| Value::clone(t)).collect()
    }

    /// The tool names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct CacheKey {
    pub(super) enabled: Option<Vec<String>>,
    pub(super) disabled: Vec<String>,
    pub(super) profile: PathBuf,
    pub(super) generation: u64,
}

/// One memoised answer: built at `built` under the profile configuration
/// load `config`, which was last confirmed current at `config_seen`.
pub(super) struct Memo {
    pub(super) key: CacheKey,
    pub(super) built: Instant,
    pub(super) config: u64,
    pub(super) config_seen: Instant,
    pub(super) defs: Definitions,
}

/// The mutable state definitions depend on: overrides, cross-references,
/// the memo.
#[derive(Default)]
pub(crate) struct DefinitionsState {
    pub(super) overrides: BTreeMap<String, SchemaOverride>,
    /// tool → [(mentioned tool, sentence appended when it survived)]
    pub(super) cross_refs: BTreeMap<String, Vec<(String, String)>>,
    pub(super) cache: VecDeque<Memo>,
    pub(super) disclosure: Option<DisclosureConfig>,
}

impl std::fmt::Debug for DefinitionsState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DefinitionsState")
            .field("overrides", &self.overrides.keys().collect::<Vec<_>>())
            .field("cross_refs", &self.cross_refs)
            .field("cached", &self.cache.len())
            .finish()
    }
}
