//! The real counterparts of the backend tests and benches, started by
//! them in a scratch folder: Debian's sshd (key-only, 127.0.0.1, in a
//! private mount namespace so that its `/run/sshd` is a tmpfs of its own)
//! and podman (its storage in the scratch folder) with an image imported
//! from a static busybox.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Debian's sshd on 127.0.0.1, key-only, in a private mount namespace
/// (its privilege-separation folder `/run/sshd` is a tmpfs there).
pub struct Sshd {
    pub child: Child,
    pub port: u16,
    pub key: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn run_ok(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn start_sshd(scratch: &Path) -> Sshd {
    let dir = scratch.join("sshd");
    std::fs::create_dir_all(&dir).unwrap();
    let host_key = dir.join("host_ed25519");
    let key = dir.join("client_ed25519");
    for k in [&host_key, &key] {
        run_ok(
            Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(k),
        );
    }
    std::fs::copy(dir.join("client_ed25519.pub"), dir.join("authorized_keys")).unwrap();
    let port = free_port();
    let config = dir.join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nAuthorizedKeysFile {auth}\n\
             PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PermitRootLogin prohibit-password\nUsePAM no\nStrictModes no\nPidFile none\n\
             LogLevel ERROR\n",
            host = host_key.display(),
            auth = dir.join("authorized_keys").display(),
        ),
    )
    .unwrap();
    let child = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("mount -t tmpfs hermes-test /run && mkdir -m 755 /run/sshd && exec /usr/sbin/sshd -D -e -f \"$0\"")
        .arg(&config)
        .stdin(Stdio::null())
        // Its log (the readiness probe below is a connection that sends
        // nothing, which it reports) stays in the scratch folder.
        .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
        .spawn()
        .expect("unshare and sshd (openssh-server) are needed");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "sshd did not listen on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
    Sshd { child, port, key }
}

pub fn user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// podman with its storage in the scratch folder, as a `docker` command
/// line for `HERMES_DOCKER_BINARY`.
pub fn podman(scratch: &Path) -> PathBuf {
    let store = scratch.join("podman");
    std::fs::create_dir_all(&store).unwrap();
    let wrapper = scratch.join("podman.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec podman --root {root} --runroot {run} --storage-driver vfs \"$@\"\n",
            root = store.join("root").display(),
            run = store.join("run").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

/// An image of a static busybox, imported from a root file system.
pub fn import_image(podman: &Path, scratch: &Path) -> String {
    let root = scratch.join("rootfs");
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::create_dir_all(root.join("tmp")).unwrap();
    std::fs::copy("/bin/busybox", root.join("bin/busybox")).expect("busybox-static is needed");
    for tool in [
        "sh", "sleep", "cat", "env", "kill", "ls", "mkdir", "mv", "rm", "grep", "find", "head",
        "printf", "echo", "pwd", "readlink", "dirname", "basename", "tr", "chmod", "true",
        "setsid",
    ] {
        std::os::unix::fs::symlink("busybox", root.join("bin").join(tool)).unwrap();
    }
    let tar = scratch.join("rootfs.tar");
    run_ok(
        Command::new("tar")
            .arg("-C")
            .arg(&root)
            .arg("-cf")
            .arg(&tar)
            .arg("."),
    );
    let image = "localhost/hermes-backend-test:busybox".to_string();
    run_ok(Command::new(podman).arg("import").arg(&tar).arg(&image));
    image
}
