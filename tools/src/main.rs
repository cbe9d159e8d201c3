//! `hermes-tools`: list, describe and call the built-in tools.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hermes_runtime::ToolContext;

#[derive(Parser)]
#[command(name = "hermes-tools", version, about = "The hermes built-in tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every tool: name, toolset, emoji.
    List,
    /// Print the tool definitions the model is sent (OpenAI format JSON).
    Schema,
    /// Call a tool and print the JSON string it returns.
    Call {
        /// The tool's name.
        name: String,
        /// The arguments, as a JSON object.
        #[arg(default_value = "{}")]
        args: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let registry = hermes_tools::registry();
    match cli.command {
        Command::List => {
            let entries = registry.entries();
            let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(4);
            let set_width = entries.iter().map(|e| e.toolset.len()).max().unwrap_or(7);
            for e in entries {
                println!("{:<width$}  {:<set_width$}  {}", e.name, e.toolset, e.emoji);
            }
        }
        Command::Schema => match serde_json::to_string_pretty(
            &*registry
                .get_tool_definitions(None, &[], &hermes_runtime::Profile::default_home())
                .tools,
        ) {
            Ok(json) => println!("{json}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        Command::Call { name, args } => {
            let runtime = match tokio::runtime::Builder::new_current_thread().build() {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("error: cannot start the async runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let ctx = ToolContext::current_dir();
            let result = runtime.block_on(registry.dispatch_json(&name, &args, &ctx));
            println!("{result}");
        }
    }
    ExitCode::SUCCESS
}
