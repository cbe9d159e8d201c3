//! The `docker` backend: commands and files in one long-lived container
//! per session, through the docker command line (docker, or podman, which
//! speaks the same commands: `shell::docker_binary`).
//!
//! The container starts on the session's first call (`run -d … IMAGE
//! sleep infinity`, with `--init` so its processes are reaped), every
//! command and file operation is an `exec -i CONTAINER sh -c …`, and it is
//! removed (`rm -f`) when the session ends. Keys of `config.yaml`, as the
//! reference reads them: `terminal.docker_image`, `docker_volumes`
//! (`HOST:CONTAINER[:OPTIONS]`), `docker_mount_cwd_to_workspace` (the
//! session's working directory at `/workspace`, which then is where
//! commands start), `docker_network` (`false`: `--network none`),
//! `container_cpu` (`--cpus`) and `container_memory` (`--memory`, MB). A
//! container that is gone (removed, stopped) is reported, and started
//! again on the next call.

use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hermes_procs::child_env::ChildEnv;
use hermes_runtime::ToolContext;

use super::base::Backend;
use super::remote::Remote;
use super::shell::{docker_binary, Transport};

#[derive(Debug)]
pub struct Container {
    binary: String,
    image: String,
    name: String,
    /// Options of `run` beyond the name and the image.
    run_args: Vec<String>,
    workspace: bool,
    started: AtomicBool,
    /// Held while the container starts.
    starting: Mutex<()>,
}

/// Opens the `docker` backend for the session of `ctx` (the container
/// starts on first use).
pub fn open(ctx: &ToolContext) -> Result<Arc<dyn Backend>, String> {
    let config = ctx.profile().config();
    let t = &config.terminal;
    let binary = docker_binary(ctx.profile()).ok_or_else(|| {
        "docker backend: no docker command line: set HERMES_DOCKER_BINARY, or install docker \
         or podman on PATH"
            .to_string()
    })?;
    let image = t.docker_image.value.trim().to_string();
    if image.is_empty() || image.starts_with('-') {
        return Err(format!(
            "docker backend: terminal.docker_image '{image}' is not an image name; fix it in {}",
            config.path.display()
        ));
    }
    let mut run_args: Vec<String> = Vec::new();
    if !t.docker_network.value {
        run_args.extend(["--network".into(), "none".into()]);
    }
    if let Some(cpu) = t.container_cpu.value {
        run_args.extend(["--cpus".into(), cpu.to_string()]);
    }
    if let Some(mb) = t.container_memory.value {
        run_args.extend(["--memory".into(), format!("{mb}m")]);
    }
    for volume in &t.docker_volumes.value {
        let expanded = hermes_runtime::paths::expand_home(volume)
            .display()
            .to_string();
        run_args.extend(["-v".into(), expanded]);
    }
    let workspace = t.docker_mount_cwd_to_workspace.value;
    if workspace {
        let cwd = match &t.cwd.value {
            Some(dir) => ctx.resolve(dir),
            None => ctx.cwd().to_path_buf(),
        };
        if !cwd.is_dir() {
            return Err(format!(
                "docker backend: the working directory {} to mount at /workspace does not \
                 exist",
                cwd.display()
            ));
        }
        run_args.extend(["-v".into(), format!("{}:/workspace", cwd.display())]);
        run_args.extend(["-w".into(), "/workspace".into()]);
    }
    let container = Container {
        binary,
        image,
        name: format!("hermes-{}", super::shell::token()),
        run_args,
        workspace,
        started: AtomicBool::new(false),
        starting: Mutex::new(()),
    };
    Remote::open(Box::new(container), ctx)
}

/// Runs `cmd` within `timeout`: exit code and stderr, or `None` on timeout.
fn run_bounded(mut cmd: std::process::Command, timeout: Duration) -> Option<(i32, String)> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().ok()?;
    let mut pipe = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(p) = pipe.as_mut() {
            use std::io::Read;
            let _ = p.take(16 * 1024).read_to_string(&mut text);
        }
        text
    });
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let said = reader.join().unwrap_or_default();
                return Some((status.code().unwrap_or(-1), said.trim().to_string()));
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

impl Container {
    fn fix(&self) -> String {
        format!(
            "check terminal.docker_image ('{}') in config.yaml: the image must exist on this \
             machine or be pullable, and `{}` must work",
            self.image, self.binary
        )
    }
}

impl Transport for Container {
    fn name(&self) -> &'static str {
        "docker"
    }

    fn ensure(&self, env: &ChildEnv, timeout: Duration) -> Result<bool, String> {
        if self.started.load(Ordering::Acquire) {
            return Ok(false);
        }
        let _one = self.starting.lock().unwrap_or_else(|e| e.into_inner());
        if self.started.load(Ordering::Acquire) {
            return Ok(false);
        }
        // A container left of an earlier start (gone, stopped) goes first.
        let mut rm = env.command(&self.binary);
        rm.args(["rm", "-f", &self.name]);
        let _ = run_bounded(rm, Duration::from_secs(20));
        let mut cmd = env.command(&self.binary);
        cmd.args([
            "run",
            "-d",
            "--init",
            "--stop-timeout",
            "1",
            "--name",
            &self.name,
        ])
        .args(&self.run_args)
        .args([self.image.as_str(), "sleep", "infinity"]);
        let Some((code, said)) = run_bounded(cmd, timeout) else {
            let mut rm = env.command(&self.binary);
            rm.args(["rm", "-f", &self.name]);
            let _ = run_bounded(rm, Duration::from_secs(20));
            return Err(format!(
                "docker backend: the container did not start within {} s; {}",
                timeout.as_secs().max(1),
                self.fix()
            ));
        };
        if code != 0 {
            let mut rm = env.command(&self.binary);
            rm.args(["rm", "-f", &self.name]);
            let _ = run_bounded(rm, Duration::from_secs(20));
            return Err(format!(
                "docker backend: could not start a container of image '{}': {said}; {}",
                self.image,
                self.fix()
            ));
        }
        self.started.store(true, Ordering::Release);
        Ok(true)
    }

    fn client(&self, script: &str) -> Vec<String> {
        vec![
            self.binary.clone(),
            "exec".into(),
            "-i".into(),
            self.name.clone(),
            "/bin/sh".into(),
            "-c".into(),
            script.into(),
        ]
    }

    fn default_cwd(&self) -> Option<String> {
        self.workspace.then(|| "/workspace".to_string())
    }

    fn failure(&self, code: i32, stderr: &str) -> Option<String> {
        // 125: the docker command line's own failure; 126/127 with the
        // runtime's words: `sh` could not be started in the container.
        let runtime_said = stderr.contains("OCI runtime")
            || stderr.contains("no such container")
            || stderr.contains("No such container")
            || stderr.contains("is not running")
            || stderr.contains("container state improper");
        if code == 125 || (matches!(code, 126 | 127) && runtime_said) {
            self.started.store(false, Ordering::Release);
            return Some(format!(
                "docker backend: the session's container {} is gone or cannot run commands \
                 ({}); the next call starts a new one (the session's files in it are lost); \
                 {}",
                self.name,
                stderr.trim(),
                self.fix()
            ));
        }
        None
    }

    fn close(&self, env: &ChildEnv) {
        let mut rm = env.command(&self.binary);
        rm.args(["rm", "-f", &self.name]);
        let _ = run_bounded(rm, Duration::from_secs(30));
        self.started.store(false, Ordering::Release);
    }
}
