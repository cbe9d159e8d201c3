//! Hostile-input cases: runtime.
