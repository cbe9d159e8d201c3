//! Backends whose commands run on another machine through a local client
//! program: [`Remote`], the whole `Backend` over a [`Shell`], the same for
//! every [`Transport`](super::shell::Transport) (`ssh.rs`,
//! `container.rs`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hermes_procs::redact::redact_command_output;
use hermes_procs::{self as procs, shell_quote, Background, BackgroundOptions};
use hermes_runtime::ToolContext;

use super::base::{Backend, Files};
use super::shell::{lock, token, Shell, Transport};
use crate::tools::terminal::exit_codes;
use crate::tools::terminal::run::{join_notes, wait_or_cancel, TerminalCall, TerminalOutput};
use crate::tools::terminal::session as terminal_session;

/// A remote backend: a [`Shell`] and the background processes it started.
#[derive(Debug)]
pub struct Remote {
    shell: Shell,
    /// Background process id → its pid file's tag.
    background: Mutex<HashMap<String, String>>,
}

impl Remote {
    pub fn open(
        transport: Box<dyn Transport>,
        ctx: &ToolContext,
    ) -> Result<Arc<dyn Backend>, String> {
        let remote = Remote {
            shell: Shell::new(transport, ctx.profile()),
            background: Mutex::new(HashMap::new()),
        };
        Ok(Arc::new(remote))
    }

    /// The local folder the client runs in.
    fn local_cwd(ctx: &ToolContext) -> std::path::PathBuf {
        let cwd = ctx.cwd();
        if cwd.is_dir() {
            cwd.to_path_buf()
        } else {
            Path::new("/").to_path_buf()
        }
    }

    /// The local shell line of the client running `script`.
    fn client_line(&self, script: &str) -> String {
        self.shell
            .transport
            .client(script)
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn foreground(&self, ctx: &ToolContext, call: &TerminalCall) -> Result<TerminalOutput, String> {
        let secs = call.foreground_secs(ctx)?;
        let limit = Duration::from_secs(secs);
        let begun = Instant::now();
        self.shell.ready(limit)?;
        let tag = self.shell.tag();
        let marker = format!("__hermes_state_{}__", token());
        let script = self
            .shell
            .script(&call.command, call.workdir.as_deref(), &tag, Some(&marker));
        let config = ctx.profile().config();
        let kept = config.tool_output.max_bytes.value;
        let head = kept.saturating_mul(2) / 5;
        // Room for the trailer beyond what the model is shown.
        let options = procs::SpawnOptions {
            inline: true,
            session: Some(terminal_session::name(ctx)),
            ..procs::SpawnOptions::new(head, kept - head + terminal_session::MAX_STATE_BYTES)
        };
        let run = procs::spawn_foreground(
            &self.shell.env(),
            &self.client_line(&script),
            &Self::local_cwd(ctx),
            &options,
        )
        .map_err(|e| {
            format!(
                "{} backend: could not start its client: {e}",
                self.shell.name()
            )
        })?;
        let _tracked = procs::table().track_foreground(&run);
        let grace = procs::grace_for(ctx.profile());
        let left = limit.saturating_sub(begun.elapsed());
        let finished = wait_or_cancel(ctx, left, |slice| run.wait_exit(slice));
        let cancelled = finished.is_none() && ctx.cancellation().is_cancelled();
        if finished.is_none() {
            self.shell.kill_tag(&tag, grace.min(Duration::from_secs(1)));
        }
        run.teardown(grace.min(Duration::from_secs(1)));
        let rendered = procs::lock(&run.output).render();
        let cut = format!("\n{marker}\n");
        let (shown, reported) = match rendered.rfind(&cut) {
            Some(at) => (
                rendered[..at].to_string(),
                Some(rendered[at + cut.len()..].to_string()),
            ),
            None => (rendered, None),
        };
        let shown = match redact_command_output(ctx.profile(), &call.command, &shown) {
            std::borrow::Cow::Owned(clean) => clean,
            std::borrow::Cow::Borrowed(_) => shown,
        };
        if cancelled {
            let mut out = TerminalOutput::new(shown, 130);
            out.error = Some(
                "The call was cancelled; the command and every process it started were terminated"
                    .into(),
            );
            return Ok(out);
        }
        let Some(code) = finished else {
            let mut out = TerminalOutput::new(shown, 124);
            out.error = Some(format!(
                "Command timed out after {secs} seconds; it and every process it started \
                 were terminated"
            ));
            return Ok(out);
        };
        let Some(reported) = reported else {
            // No trailer: the shell ended early (`exit`), or the client failed.
            if let Some(why) = self.shell.transport.failure(code, &shown) {
                return Err(why);
            }
            let mut out = TerminalOutput::new(shown, code);
            out.exit_code_meaning = exit_codes::meaning(&call.command, code);
            return Ok(out);
        };
        let note = self.shell.keep_state(&reported);
        let mut out = TerminalOutput::new(shown, code);
        out.note = note;
        out.exit_code_meaning = exit_codes::meaning(&call.command, code);
        if call.pty {
            out.pty_note = Some(format!(
                "pty is not available on the {} backend: the command ran without a terminal",
                self.shell.name()
            ));
        }
        Ok(out)
    }

    fn background(&self, ctx: &ToolContext, call: &TerminalCall) -> Result<TerminalOutput, String> {
        self.shell.ready(Duration::from_secs(30))?;
        let tag = self.shell.tag();
        let script = self
            .shell
            .script(&call.command, call.workdir.as_deref(), &tag, None);
        let (patterns, ignored) = call.patterns();
        let options = BackgroundOptions {
            pty: false,
            notify_on_complete: call.notify_on_complete,
            watch_patterns: patterns.clone(),
            label: Some(call.command.clone()),
        };
        let bg = procs::table()
            .start(
                ctx,
                &self.shell.env(),
                &self.client_line(&script),
                &Self::local_cwd(ctx),
                options,
                None,
            )
            .map_err(|e| format!("could not start the command: {e}"))?;
        lock(&self.background).insert(bg.id.clone(), tag);
        let mut out = TerminalOutput::new("Background process started".into(), 0);
        out.note = join_notes([
            Some(format!(
                "It runs on the {} backend. Use process with this session_id to poll, read the \
                 log, wait for, write to or kill it.",
                self.shell.name()
            )),
            call.pty
                .then(|| format!("pty is not available on the {} backend", self.shell.name())),
        ]);
        out.session_id = Some(bg.id.clone());
        out.pid = Some(bg.spawned.pid);
        out.notify_on_complete = call.notify_on_complete.then_some(true);
        out.watch_patterns = (!patterns.is_empty()).then_some(patterns);
        out.watch_patterns_ignored = ignored;
        Ok(out)
    }
}

impl Backend for Remote {
    fn name(&self) -> &'static str {
        self.shell.name()
    }

    fn terminal(&self, ctx: &ToolContext, call: &TerminalCall) -> Result<TerminalOutput, String> {
        if call.background {
            self.background(ctx, call)
        } else {
            self.foreground(ctx, call)
        }
    }

    fn kill(&self, ctx: &ToolContext, bg: &Background) {
        let tag = lock(&self.background).get(&bg.id).cloned();
        if let Some(tag) = tag {
            self.shell.kill_tag(&tag, procs::grace_for(ctx.profile()));
        }
    }

    fn files(&self) -> Files<'_> {
        Files::Remote(&self.shell)
    }

    fn teardown(&self) {
        let grace = procs::grace_for(&self.shell.profile);
        self.shell.close(grace.min(Duration::from_secs(2)));
    }
}
