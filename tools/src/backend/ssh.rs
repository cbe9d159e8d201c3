//! The `ssh` backend: commands and files on another host, over one SSH
//! connection per session.
//!
//! The connection is OpenSSH's own: a master (`ssh -M -N`, a child of the
//! agent) holds it and listens on a control socket in the agent's private
//! folder; every command is a client on that socket (`ssh -S SOCKET …`),
//! which costs no new handshake. A master that exited (the host closed
//! the connection, the network dropped it past `ServerAliveInterval`) is
//! started again on the next call. Keys of `config.yaml`:
//! `terminal.ssh_host`, `ssh_user`, `ssh_port`, `ssh_key`, as the
//! reference reads them. New host keys are accepted on first use
//! (`StrictHostKeyChecking=accept-new`, as the reference) and remembered in
//! the profile's `ssh_known_hosts`; the user's `~/.ssh/known_hosts` is read
//! too.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hermes_procs::child_env::ChildEnv;
use hermes_runtime::ToolContext;

use super::base::Backend;
use super::remote::Remote;
use super::shell::Transport;

/// Seconds `ConnectTimeout` allows at most for one connection.
const CONNECT_TIMEOUT_SECS: u64 = 10;

#[derive(Debug)]
struct Master {
    child: Child,
}

#[derive(Debug)]
pub struct Ssh {
    host: String,
    user: String,
    port: u16,
    key: Option<PathBuf>,
    known_hosts: PathBuf,
    socket: PathBuf,
    master: Mutex<Option<Master>>,
}

/// Opens the `ssh` backend for the session of `ctx` (connects on first use).
pub fn open(ctx: &ToolContext) -> Result<Arc<dyn Backend>, String> {
    let config = ctx.profile().config();
    let t = &config.terminal;
    let host = t.ssh_host.value.trim().to_string();
    if host.is_empty() {
        return Err(format!(
            "ssh backend: terminal.ssh_host is not set; set it (and ssh_user, ssh_port, \
             ssh_key as needed) in {}",
            config.path.display()
        ));
    }
    if host.starts_with('-') {
        return Err(format!(
            "ssh backend: terminal.ssh_host '{host}' is not a host name; fix it in {}",
            config.path.display()
        ));
    }
    let key = t.ssh_key.value.clone();
    if let Some(k) = key.as_ref().filter(|k| !k.is_file()) {
        return Err(format!(
            "ssh backend: terminal.ssh_key {} is not a file; fix it in {}",
            k.display(),
            config.path.display()
        ));
    }
    let dir = hermes_procs::private_dir()
        .ok_or("ssh backend: no private folder for the connection's control socket")?;
    let ssh = Ssh {
        host,
        user: t.ssh_user.value.trim().to_string(),
        port: t.ssh_port.value,
        key,
        known_hosts: ctx.profile().home().join("ssh_known_hosts"),
        socket: dir.join(format!("ssh-{}", super::shell::token())),
        master: Mutex::new(None),
    };
    Remote::open(Box::new(ssh), ctx)
}

impl Ssh {
    /// `user@host:port`, for messages.
    fn target(&self) -> String {
        let user = if self.user.is_empty() {
            String::new()
        } else {
            format!("{}@", self.user)
        };
        format!("{user}{}:{}", self.host, self.port)
    }

    /// The options every `ssh` of this backend takes, then the host.
    fn common(&self) -> Vec<String> {
        let mut args: Vec<String> = [
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=accept-new",
            "-o",
            &format!("ConnectTimeout={CONNECT_TIMEOUT_SECS}"),
            "-o",
            &format!(
                "UserKnownHostsFile=\"{}\" ~/.ssh/known_hosts",
                self.known_hosts.display()
            ),
            "-o",
            "LogLevel=ERROR",
            "-S",
            &self.socket.display().to_string(),
            "-p",
            &self.port.to_string(),
        ]
        .into_iter()
        .map(str::to_string)
        .collect();
        if let Some(key) = &self.key {
            args.extend(["-i".into(), key.display().to_string()]);
            args.extend(["-o".into(), "IdentitiesOnly=yes".into()]);
        }
        if !self.user.is_empty() {
            args.extend(["-l".into(), self.user.clone()]);
        }
        args
    }

    fn fix(&self) -> &'static str {
        "check terminal.ssh_host, ssh_port, ssh_user and ssh_key in config.yaml, that the \
         host is up and its sshd accepts that key"
    }

    /// Starts the master and waits for its socket.
    fn connect(&self, env: &ChildEnv, timeout: Duration) -> Result<Master, String> {
        let _ = std::fs::remove_file(&self.socket);
        let mut cmd = env.command("ssh");
        cmd.arg("-M")
            .arg("-N")
            .args(["-o", "ControlPersist=no", "-o", "ServerAliveInterval=15"])
            .args(["-o", "ServerAliveCountMax=3"])
            .args(self.common())
            .arg("--")
            .arg(&self.host)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(|e| {
            format!("ssh backend: could not start `ssh`: {e}; install the OpenSSH client")
        })?;
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut pipe) = child.stderr.take() {
            let sink = stderr.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
                    if s.len() < 16 * 1024 {
                        s.push_str(&String::from_utf8_lossy(&buf[..n]));
                    }
                }
            });
        }
        let deadline = Instant::now() + timeout.min(Duration::from_secs(CONNECT_TIMEOUT_SECS + 5));
        loop {
            if self.socket.exists() {
                return Ok(Master { child });
            }
            if let Ok(Some(_)) = child.try_wait() {
                // Let the reader take the last words.
                std::thread::sleep(Duration::from_millis(20));
                let said = stderr
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .trim()
                    .to_string();
                return Err(format!(
                    "ssh backend: could not connect to {}: {}; {}",
                    self.target(),
                    if said.is_empty() { "ssh exited" } else { &said },
                    self.fix()
                ));
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "ssh backend: no connection to {} within {} s; {}",
                    self.target(),
                    timeout.as_secs().clamp(1, CONNECT_TIMEOUT_SECS + 5),
                    self.fix()
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Transport for Ssh {
    fn name(&self) -> &'static str {
        "ssh"
    }

    fn ensure(&self, env: &ChildEnv, timeout: Duration) -> Result<bool, String> {
        let mut master = self.master.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = master.as_mut() {
            if matches!(m.child.try_wait(), Ok(None)) && self.socket.exists() {
                return Ok(false);
            }
            let _ = m.child.kill();
            let _ = m.child.wait();
            *master = None;
        }
        *master = Some(self.connect(env, timeout)?);
        Ok(true)
    }

    fn client(&self, script: &str) -> Vec<String> {
        let mut argv = vec!["ssh".to_string(), "-o".into(), "ControlMaster=no".into()];
        argv.extend(self.common());
        argv.push("--".into());
        argv.push(self.host.clone());
        argv.push(format!(
            "exec /bin/sh -c {}",
            hermes_procs::shell_quote(script)
        ));
        argv
    }

    fn failure(&self, code: i32, stderr: &str) -> Option<String> {
        (code == 255).then(|| {
            format!(
                "ssh backend: the connection to {} failed: {}; {}",
                self.target(),
                stderr.trim(),
                self.fix()
            )
        })
    }

    fn close(&self, env: &ChildEnv) {
        let mut master = self.master.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(mut m) = master.take() {
            let mut cmd = env.command("ssh");
            cmd.args(self.common())
                .args(["-O", "exit", "--", &self.host])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if let Ok(mut c) = cmd.spawn() {
                let deadline = Instant::now() + Duration::from_secs(3);
                while matches!(c.try_wait(), Ok(None)) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
                let _ = c.kill();
                let _ = c.wait();
            }
            let _ = m.child.kill();
            let _ = m.child.wait();
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}
