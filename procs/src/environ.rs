//! The agent's environment, out of its commands' reach.
//!
//! A process's initial environment block (what `/proc/PID/environ` shows)
//! stays in its memory for its whole life: `unsetenv` only drops pointers
//! to it. A non-dumpable process ([`super::contain::harden_process`]) keeps
//! it from other users' and its own user's processes, but not from root
//! ones: on a root agent its commands are root, and the kernel lets root
//! read the `environ` of a non-dumpable root process even without
//! `CAP_SYS_PTRACE` (what it denies without that capability is
//! `/proc/PID/mem` and `ptrace`).
//!
//! [`private_environment`], called early in `main` (before any thread) by
//! a program about to start processes, moves the environment out of that
//! block: it hands the variables to a fresh image
//! of the same program through an anonymous memory file and re-executes
//! itself with an environment of one variable ([`FD_VAR`], naming that
//! file). The new image reads the variables back into its (heap)
//! environment and empties the file. Its `/proc/PID/environ` then shows
//! `HERMES_ENV_FD=N` only; the variables live in the heap, which commands
//! without `CAP_SYS_PTRACE` cannot read. The second image is a second
//! start-up (about as long as the first), so a run that starts no process,
//! which nothing could read the block from, is better off without it
//! (`hermes-tools schema`, `config`).

use std::ffi::{CString, OsString};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// The one variable of the re-executed image: the memory file's descriptor.
pub const FD_VAR: &str = "HERMES_ENV_FD";

/// What [`private_environment`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum PrivateEnvironment {
    /// This image was re-executed: the variables were read back (how many).
    Restored(usize),
    /// Nothing to move (the environment is empty).
    Empty,
}

/// Whether this image is the one [`private_environment`] re-executed: its
/// environment holds only [`FD_VAR`] until it calls that function again,
/// which it must do before anything reads a variable (its arguments'
/// defaults, the profile's home).
pub fn reexecuted() -> bool {
    std::env::var_os(FD_VAR).is_some()
}

/// Moves the environment out of the initial block (see the module docs):
/// in the first image this re-executes the program and does not return;
/// in the re-executed one it restores the variables. Call it before any
/// thread starts. `Err` says why the environment stays where it is (the
/// program goes on with it).
pub fn private_environment() -> Result<PrivateEnvironment, String> {
    if let Some(fd) = std::env::var_os(FD_VAR) {
        return restore(&fd).map(PrivateEnvironment::Restored);
    }
    let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    if vars.is_empty() {
        return Ok(PrivateEnvironment::Empty);
    }
    let memfd = nix::sys::memfd::memfd_create(c"hermes-env", nix::sys::memfd::MFdFlags::empty())
        .map_err(|e| format!("cannot create a memory file: {e}"))?;
    let mut file = std::fs::File::from(memfd);
    let mut data = Vec::new();
    for (k, v) in &vars {
        data.extend_from_slice(k.as_bytes());
        data.push(b'=');
        data.extend_from_slice(v.as_bytes());
        data.push(0);
    }
    file.write_all(&data)
        .and_then(|()| file.rewind())
        .map_err(|e| format!("cannot write the memory file: {e}"))?;
    let exe = c"/proc/self/exe";
    let args: Vec<CString> = std::env::args_os()
        .filter_map(|a| CString::new(a.into_vec()).ok())
        .collect();
    let env = [CString::new(format!("{FD_VAR}={}", file.as_raw_fd()))
        .map_err(|e| format!("bad descriptor text: {e}"))?];
    match nix::unistd::execve(exe, &args, &env) {
        Err(e) => Err(format!("cannot re-execute {}: {e}", exe.to_string_lossy())),
    }
}

/// Reads the variables back from the memory file named by `fd`, sets them,
/// and empties the file (it stays open: safe Rust cannot close a
/// descriptor it was only told the number of).
fn restore(fd: &std::ffi::OsStr) -> Result<usize, String> {
    let fd: i32 = fd
        .to_str()
        .and_then(|f| f.parse().ok())
        .ok_or_else(|| format!("{FD_VAR} is not a descriptor number"))?;
    std::env::remove_var(FD_VAR);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/self/fd/{fd}"))
        .map_err(|e| format!("cannot open the memory file: {e}"))?;
    let mut data = Vec::new();
    file.read_to_end(&mut data)
        .map_err(|e| format!("cannot read the memory file: {e}"))?;
    let _ = file.set_len(0);
    let mut n = 0;
    for entry in data.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let Some(eq) = entry.iter().position(|&b| b == b'=') else {
            continue;
        };
        let key = std::ffi::OsStr::from_bytes(&entry[..eq]);
        let value = std::ffi::OsStr::from_bytes(&entry[eq + 1..]);
        if !key.is_empty() {
            std::env::set_var(key, value);
            n += 1;
        }
    }
    Ok(n)
}
