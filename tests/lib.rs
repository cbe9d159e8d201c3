//! Cross-crate integration tests live in `tests/`; UI cases for the macro in `ui/`.
