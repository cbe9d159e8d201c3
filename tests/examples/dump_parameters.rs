//! Prints `{tool name: parameters schema}` for every test tool, as JSON.
//! `cargo xtask gen` runs it to compile the static coercion plans.

fn main() {
    println!("{}", hermes_tests::registry().parameters_by_name());
}
