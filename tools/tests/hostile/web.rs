//! Hostile-input cases: web.
