//! Prints `{tool name: parameters schema}` for every built-in tool, as JSON.
//! `cargo xtask gen` runs it to compile the static coercion plans.

fn main() {
    println!("{}", hermes_tools::registry().parameters_by_name());
}
