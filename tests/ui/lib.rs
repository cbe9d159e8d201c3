//! Nothing to link: the UI cases are in `pass/` and `fail/`, run by
//! `compiletest.rs`.
