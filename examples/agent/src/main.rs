//! `agent`: a statically linked agent on hermes-tools.
//!
//! - `agent tools`: every tool it has, a line each, name first;
//! - `agent call NAME JSON`: one call of one tool, no model; prints the
//!   JSON string it answers (an error is an answer too: exit 0);
//! - `agent run --base-url URL --model NAME "prompt"`: the agent loop; the
//!   key is `OPENAI_API_KEY` of the profile's `.env`.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};
use hermes_example_agent::{conversation, ChatConfig, ConversationError, Outcome};
use hermes_runtime::Profile;

#[derive(Parser)]
#[command(name = "agent", about = "An agent on hermes-tools")]
struct Cli {
    /// The profile directory (its `.env` holds the API key); default:
    /// $HERMES_HOME, else ~/.hermes.
    #[arg(long, global = true, value_name = "DIR")]
    profile: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every tool this agent has, a line each: name, toolset, description.
    Tools,
    /// Call one tool with JSON arguments, without a model; print its answer.
    Call {
        /// The tool's name (`agent tools` lists them).
        name: String,
        /// Its arguments, a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
    },
    /// Talk to a model until it answers.
    Run {
        /// The chat-completions endpoint's base, e.g. https://api.openai.com/v1.
        #[arg(long)]
        base_url: String,
        #[arg(long)]
        model: String,
        /// The profile's `.env` variable holding the key.
        #[arg(long, default_value = "OPENAI_API_KEY")]
        key_var: String,
        /// Model turns at most.
        #[arg(long, default_value_t = 10)]
        max_turns: usize,
        /// Toolsets offered to the model.
        #[arg(long, value_delimiter = ',', default_value = "hermes-cli")]
        toolsets: Vec<String>,
        /// What to ask.
        prompt: String,
    },
}

fn profile_dir(arg: Option<PathBuf>) -> PathBuf {
    arg.or_else(|| std::env::var_os("HERMES_HOME").map(PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".hermes")))
        .unwrap_or_else(|| PathBuf::from(".hermes"))
}

fn main() -> ExitCode {
    // First of all: this binary is its commands' sandbox helper (started as
    // `agent __sandbox ...` it applies the rules and execs the command).
    hermes_procs::sandbox::sandbox_helper();
    let cli = Cli::parse();
    // One registry for the life of the process, named to `execute_code`:
    // a script's tool calls come back through it (this crate's own tools
    // included), not through `hermes_tools::registry()`, which lacks them.
    let registry: &'static hermes_runtime::Registry = match hermes_example_agent::registry() {
        Ok(r) => {
            let r = Box::leak(Box::new(r));
            hermes_tools::tools::execute_code::set_registry(r);
            r
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let profile = Profile::new(profile_dir(cli.profile));
    match cli.command {
        Command::Tools => {
            let mut out = std::io::stdout().lock();
            for tool in registry.tools() {
                let description = tool.schema()["description"].as_str().unwrap_or("");
                let first = description.lines().next().unwrap_or("");
                let _ = writeln!(out, "{}\t{}\t{first}", tool.name(), tool.toolset());
            }
            ExitCode::SUCCESS
        }
        Command::Call { name, arguments } => {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("error: cannot start the runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            hermes_tools::install_agent_loop_executors(registry);
            let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            let session = hermes_tools::Session::new(profile, cwd);
            let answer =
                runtime.block_on(registry.dispatch_json(&name, &arguments, &session.context()));
            println!("{answer}");
            session.end();
            ExitCode::SUCCESS
        }
        Command::Run {
            base_url,
            model,
            key_var,
            max_turns,
            toolsets,
            prompt,
        } => {
            let runtime = match tokio::runtime::Runtime::new() {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("error: cannot start the runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let config = ChatConfig {
                base_url,
                model,
                api_key: profile.secret(&key_var),
                max_turns,
            };
            let code = runtime.block_on(run(registry, profile, config, &toolsets, &prompt));
            hermes_tools::shutdown_background_processes(Duration::from_secs(2));
            runtime.shutdown_background();
            code
        }
    }
}

async fn run(
    registry: &hermes_runtime::Registry,
    profile: Profile,
    config: ChatConfig,
    toolsets: &[String],
    prompt: &str,
) -> ExitCode {
    hermes_tools::install_agent_loop_executors(registry);
    // `clarify` asks on the terminal: the question on stderr, the answer
    // one line of stdin.
    hermes_tools::tools::clarify::set_clarify_callback(
        registry,
        Arc::new(|request: hermes_tools::tools::clarify::ClarifyRequest| {
            Box::pin(async move {
                tokio::task::spawn_blocking(move || {
                    let mut err = std::io::stderr().lock();
                    let _ = writeln!(err, "? {}", request.question);
                    for (i, choice) in request.choices.iter().flatten().enumerate() {
                        let _ = writeln!(err, "  {}. {choice}", i + 1);
                    }
                    let mut line = String::new();
                    match std::io::stdin().lock().read_line(&mut line) {
                        Ok(0) => Err("the user closed the terminal".to_string()),
                        Ok(_) => Ok(line.trim_end().to_string()),
                        Err(e) => Err(format!("cannot read the answer: {e}")),
                    }
                })
                .await
                .unwrap_or_else(|e| Err(format!("asking failed: {e}")))
            }) as hermes_tools::tools::clarify::ClarifyFuture
        }),
    );
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    // One session for the conversation, of one profile: the conversation
    // ends the session (background commands, its terminal session, read
    // state, todo list); the profile's handle ends the rest with it.
    let profiles = hermes_tools::ProfileSessions::new(profile);
    let session = profiles.session(cwd);
    let on_tool = |name: &str, result: &str| {
        let shown: String = result.chars().take(160).collect();
        eprintln!("[{name}] {shown}");
    };
    let outcome = conversation(registry, session, &config, toolsets, prompt, on_tool).await;
    let _ = tokio::task::spawn_blocking(move || drop(profiles)).await;
    match outcome {
        Ok(Outcome::Answer(text)) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Ok(Outcome::TurnLimit) => {
            eprintln!("error: no answer after {} turns", config.max_turns);
            ExitCode::FAILURE
        }
        Ok(Outcome::Interrupted) => {
            eprintln!("error: interrupted");
            ExitCode::FAILURE
        }
        Err(e @ ConversationError::UnknownToolsets(_)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
