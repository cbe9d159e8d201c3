//! What every lint names: the crate they check and the contract's limits.

use crate::discover::Discovery;
use crate::toolsets::Table;

/// The longest tool description function-calling providers accept.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Parameters instructional tools must not take: their content is read whole.
pub const PAGINATION_PARAMS: [&str; 2] = ["offset", "limit"];

/// A tools crate as the lints see it.
#[derive(Debug, Clone, Copy)]
pub struct Crate<'a> {
    pub discovery: &'a Discovery,
    pub table: &'a Table,
}
