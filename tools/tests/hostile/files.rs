//! Hostile-input cases: files.
