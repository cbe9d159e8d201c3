//! What a `terminal` call costs on a remote backend next to the backend's
//! own client doing the same by hand, side by side in one run:
//!
//! - `ssh`: a `terminal` call of `true` through the registry's dispatch
//!   against `ssh -o ControlPath=SOCKET host true` on the same control
//!   socket (the session's connection), against a real sshd on 127.0.0.1;
//! - `docker` (podman): a `terminal` call of `true` against `podman exec
//!   CONTAINER true` in the session's container.
//!
//! The `terminal` side does more than the baseline by design: it starts
//! with the session's directory and exports and ends with its state
//! trailer, in the same one round trip. The goal is at most 1.5x for both.
//! After divan's table, each ratio is measured paired (`paired/mod.rs`).
//!
//! Run: `cargo bench -p hermes-tests --bench backends` (needs
//! openssh-server, podman and busybox-static, as the tests).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use divan::{black_box, Bencher};
use hermes_runtime::Profile;
use hermes_tools::Session;
use paired::{batch_ns, paired, paired_n};

#[path = "../tests/backend_hosts/mod.rs"]
mod backend_hosts;
mod paired;

fn main() {
    divan::main();
    paired_ratios();
}

/// One session of a backend, its runtime, and what its baseline needs.
struct Backend {
    runtime: tokio::runtime::Runtime,
    session: Session,
    _dir: tempfile::TempDir,
    _sshd: Option<backend_hosts::Sshd>,
    /// The baseline's command line.
    baseline: Vec<String>,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

fn session(dir: &Path, config: &str, env: &str) -> Session {
    let home = dir.join(".hermes");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.yaml"), config).unwrap();
    std::fs::write(home.join(".env"), env).unwrap();
    Session::new(Profile::new(home), dir)
}

impl Backend {
    fn call(&self) -> String {
        let out = self
            .runtime
            .block_on(hermes_tools::registry().dispatch_json(
                "terminal",
                black_box(r#"{"command": "true"}"#),
                &self.session.context(),
            ));
        assert!(out.contains("\"exit_code\":0"), "{out}");
        out
    }

    fn baseline(&self) -> std::process::Output {
        let out = Command::new(&self.baseline[0])
            .args(&self.baseline[1..])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", out);
        out
    }

    fn ssh() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let sshd = backend_hosts::start_sshd(dir.path());
        let config = format!(
            "terminal:\n  backend: ssh\n  ssh_host: 127.0.0.1\n  ssh_port: {}\n  ssh_user: {}\n  \
             ssh_key: {}\n  cwd: {}\n",
            sshd.port,
            backend_hosts::user(),
            sshd.key.display(),
            dir.path().display()
        );
        let mut b = Backend {
            runtime: runtime(),
            session: session(dir.path(), &config, ""),
            _dir: dir,
            _sshd: None,
            baseline: Vec::new(),
        };
        b.call();
        // The session's control socket: the one `ssh-*` of the private folder.
        let private = hermes_procs::private_dir().unwrap();
        let socket: PathBuf = std::fs::read_dir(private)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("ssh-"))
            .expect("the session's control socket");
        b.baseline = vec![
            "ssh".into(),
            "-o".into(),
            format!("ControlPath={}", socket.display()),
            "-o".into(),
            "ControlMaster=no".into(),
            "-p".into(),
            sshd.port.to_string(),
            "-l".into(),
            backend_hosts::user(),
            "127.0.0.1".into(),
            "true".into(),
        ];
        b._sshd = Some(sshd);
        b
    }

    fn docker() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let podman = backend_hosts::podman(dir.path());
        let image = backend_hosts::import_image(&podman, dir.path());
        let config = format!("terminal:\n  backend: docker\n  docker_image: {image}\n");
        let env = format!("HERMES_DOCKER_BINARY={}\n", podman.display());
        let mut b = Backend {
            runtime: runtime(),
            session: session(dir.path(), &config, &env),
            _dir: dir,
            _sshd: None,
            baseline: Vec::new(),
        };
        b.call();
        let names = Command::new(&podman)
            .args(["ps", "--format", "{{.Names}}"])
            .output()
            .unwrap();
        let name = String::from_utf8_lossy(&names.stdout).trim().to_string();
        assert!(name.starts_with("hermes-"), "{name}");
        b.baseline = vec![
            podman.display().to_string(),
            "exec".into(),
            name,
            "true".into(),
        ];
        b
    }
}

#[divan::bench(sample_count = 30)]
fn ssh_terminal_true(bencher: Bencher) {
    let b = Backend::ssh();
    bencher.bench_local(|| b.call());
}

#[divan::bench(sample_count = 30)]
fn ssh_control_socket_true(bencher: Bencher) {
    let b = Backend::ssh();
    bencher.bench_local(|| b.baseline());
}

#[divan::bench(sample_count = 8)]
fn docker_terminal_true(bencher: Bencher) {
    let b = Backend::docker();
    bencher.bench_local(|| b.call());
}

#[divan::bench(sample_count = 8)]
fn podman_exec_true(bencher: Bencher) {
    let b = Backend::docker();
    bencher.bench_local(|| b.baseline());
}

fn paired_ratios() {
    println!();
    let ssh = Backend::ssh();
    let mut terminal = |n| batch_ns(n, || (), |()| ssh.call());
    let mut direct = |n| batch_ns(n, || (), |()| ssh.baseline());
    paired(
        "ssh: terminal true / ssh -o ControlPath=… host true",
        4,
        &mut terminal,
        &mut direct,
    );
    let docker = Backend::docker();
    let mut terminal = |n| batch_ns(n, || (), |()| docker.call());
    let mut direct = |n| batch_ns(n, || (), |()| docker.baseline());
    paired_n(
        "docker: terminal true / podman exec CONTAINER true",
        1,
        30,
        &mut terminal,
        &mut direct,
    );
}
