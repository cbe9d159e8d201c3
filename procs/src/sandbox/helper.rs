//! The helper mode of the binary: `hermes-tools __sandbox OPTIONS -- PROGRAM
//! ARGS...` applies a [`super::Policy`] to itself and then execs PROGRAM,
//! which inherits it (Landlock domains, seccomp filters, namespaces and
//! `no_new_privs` survive `exec`). No `unsafe`: every step is a safe API
//! of `nix`, `landlock` or `seccompiler`.
//!
//! In order:
//!
//! 1. `--cgroup FILE`: joins the command's cgroup (writes `0`), before the
//!    rules would forbid the write.
//! 2. A private mount namespace (`unshare(CLONE_NEWNS)`; in a user
//!    namespace of its own when not root), made private recursively so
//!    nothing below propagates back to the machine, when a protected path
//!    lies inside a writable root (`--protect`) or a folder is hidden
//!    (`--hide`). Each protected path that exists is bind-mounted
//!    read-only over itself, and every folder between the writable root
//!    and it is bind-mounted over itself, so it cannot be renamed away and
//!    replaced (a mount point is busy). A protected path that does not
//!    exist is kept from being created: its nearest existing folder inside
//!    the root is mounted read-only. When that is the root itself, a
//!    missing `.ssh` is made first (empty, mode 0700, as `ssh` makes it)
//!    and mounted read-only; any other protected path missing right under
//!    the root stays creatable (the root stays writable as a whole: a
//!    sandbox in `~` that could not make a file in `~` would be useless),
//!    which docs/limits.md says. `--hide DIR --keep NAME`: an empty
//!    file system over DIR (the agent's private folder), with only
//!    DIR/NAME (this command's or this shell's own folder) bound back
//!    (where no mount namespace can be made and nothing else needs one,
//!    the folder stays visible: Landlock still keeps it unwritable).
//! 3. `--net loopback`: a network namespace of its own, with `lo` brought
//!    up over rtnetlink.
//! 4. The machine's own capabilities (modules, reboot, raw I/O, the
//!    clock, the host's network, …: `MACHINE_CAPABILITIES`) leave the
//!    bounding set, so a root command never has them.
//! 5. Landlock: read and execute everywhere, write only beneath the
//!    writable roots and on the few devices every program writes; with
//!    `--net off` also no TCP bind or connect (ABI 4+); signals and
//!    abstract Unix sockets scoped to the sandbox (ABI 6+). `no_new_privs`.
//! 6. `--net off`: a seccomp filter refusing (`EPERM`) every socket family
//!    but `AF_UNIX`, and `io_uring_setup` (whose operations seccomp does
//!    not see).
//! 7. `exec` of PROGRAM with the environment as it came.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

/// What the helper was asked to apply (its command line).
#[derive(Debug, Default)]
struct Request {
    net: String,
    write: Vec<PathBuf>,
    protect: Vec<PathBuf>,
    cgroup: Option<PathBuf>,
    hide: Option<PathBuf>,
    keep: Option<OsString>,
    program: Vec<OsString>,
}

/// The devices every program may write (and a terminal's).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The exit status when the sandbox could not be applied (as a shell's
/// "cannot execute").
pub const FAILED: i32 = 126;

/// Runs the helper with `args` (what follows `__sandbox`); never returns.
pub fn run(args: Vec<OsString>) -> ! {
    let error = match parse(args).and_then(|r| apply(&r).map(|()| r)) {
        Ok(request) => exec(&request.program),
        Err(e) => e,
    };
    eprintln!("hermes sandbox: {error}; the command was not run");
    std::process::exit(FAILED)
}

fn parse(args: Vec<OsString>) -> Result<Request, String> {
    let mut request = Request::default();
    let mut it = args.into_iter();
    let value = |it: &mut std::vec::IntoIter<OsString>, name: &str| {
        it.next().ok_or_else(|| format!("{name} needs a value"))
    };
    while let Some(arg) = it.next() {
        match arg.to_str() {
            Some("--net") => {
                request.net = value(&mut it, "--net")?.to_string_lossy().into_owned();
            }
            Some("--write") => request.write.push(value(&mut it, "--write")?.into()),
            Some("--protect") => request.protect.push(value(&mut it, "--protect")?.into()),
            Some("--cgroup") => request.cgroup = Some(value(&mut it, "--cgroup")?.into()),
            Some("--hide") => request.hide = Some(value(&mut it, "--hide")?.into()),
            Some("--keep") => request.keep = Some(value(&mut it, "--keep")?),
            Some("--") => {
                request.program = it.collect();
                break;
            }
            _ => return Err(format!("unknown option {}", arg.to_string_lossy())),
        }
    }
    if request.program.is_empty() {
        return Err("no program to run".into());
    }
    if !matches!(request.net.as_str(), "off" | "loopback" | "on") {
        return Err(format!(
            "--net must be off, loopback or on, not {:?}",
            request.net
        ));
    }
    Ok(request)
}

fn apply(r: &Request) -> Result<(), String> {
    if let Some(file) = &r.cgroup {
        std::fs::write(file, b"0")
            .map_err(|e| format!("cannot join the command's cgroup {}: {e}", file.display()))?;
    }
    let inside: Vec<(&Path, &Path)> = r
        .protect
        .iter()
        .filter_map(|p| {
            r.write
                .iter()
                .find(|root| p.starts_with(root))
                .map(|root| (p.as_path(), root.as_path()))
        })
        .collect();
    let loopback = r.net == "loopback";
    let whole_roots: Vec<&Path> = r.write.iter().map(PathBuf::as_path).collect();
    // Required for the protected paths inside a writable root and for
    // `loopback`; for hiding the private folder only where the kernel
    // gives one (a user namespace may be disabled for unprivileged users):
    // without it the other sessions' folders stay visible, never writable.
    let needed = !inside.is_empty() || loopback;
    let mut private = false;
    if needed || r.hide.is_some() {
        match enter_namespaces(loopback) {
            Ok(()) => private = true,
            Err(e) if needed => return Err(e),
            Err(_) => {}
        }
    }
    if let (Some(dir), true) = (&r.hide, private) {
        hide(dir, r.keep.as_deref())?;
    }
    for (path, root) in &inside {
        protect(path, root)?;
    }
    if loopback {
        loopback_up()?;
    }
    drop_machine_capabilities();
    landlock(&whole_roots, r.net == "off")?;
    if r.net == "off" {
        seccomp_unix_only()?;
    }
    Ok(())
}

/// Capabilities over the machine itself, which no sandboxed command needs
/// and a root one would keep: loading kernel modules, rebooting, raw I/O
/// and `/dev/mem`-style access, the clock, the host's network setup, BPF,
/// the kernel log, mounting (Landlock refuses it already), ptrace. Dropped
/// from the bounding set, so the shell exec'd next and everything it
/// starts never has them. What root commands use day to day (owning and
/// reading any file, `setuid` for `su`/`sudo`, binding low ports) stays.
const MACHINE_CAPABILITIES: &[caps::Capability] = &[
    caps::Capability::CAP_SYS_MODULE,
    caps::Capability::CAP_SYS_BOOT,
    caps::Capability::CAP_SYS_RAWIO,
    caps::Capability::CAP_SYS_TIME,
    caps::Capability::CAP_SYS_ADMIN,
    caps::Capability::CAP_SYS_PTRACE,
    caps::Capability::CAP_NET_ADMIN,
    caps::Capability::CAP_BPF,
    caps::Capability::CAP_PERFMON,
    caps::Capability::CAP_SYSLOG,
    caps::Capability::CAP_MAC_ADMIN,
    caps::Capability::CAP_MAC_OVERRIDE,
    caps::Capability::CAP_AUDIT_CONTROL,
    caps::Capability::CAP_MKNOD,
];

/// Drops [`MACHINE_CAPABILITIES`] from the bounding set. A process that
/// may not (no `CAP_SETPCAP`: an agent that is no root, outside a user
/// namespace) cannot gain them on `exec` either, so a refusal is no error.
fn drop_machine_capabilities() {
    use caps::CapSet;
    for cap in MACHINE_CAPABILITIES {
        if caps::has_cap(None, CapSet::Bounding, *cap).unwrap_or(false) {
            let _ = caps::drop(None, CapSet::Bounding, *cap);
        }
    }
}

/// A private mount namespace (and a network one): as root directly, else
/// in a user namespace of its own that maps the caller to itself.
fn enter_namespaces(network: bool) -> Result<(), String> {
    use nix::sched::{unshare, CloneFlags};
    let mut flags = CloneFlags::CLONE_NEWNS;
    if network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
    if unshare(flags).is_err() {
        unshare(flags | CloneFlags::CLONE_NEWUSER).map_err(|e| {
            format!("cannot make a private mount or network namespace (unshare: {e})")
        })?;
        let write = |file: &str, text: String| {
            std::fs::write(file, text).map_err(|e| format!("cannot write {file}: {e}"))
        };
        write("/proc/self/setgroups", "deny".into())?;
        write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    use nix::mount::{mount, MsFlags};
    // Nothing mounted below reaches the machine's namespace.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| format!("cannot make the mount namespace private: {e}"))
}

/// The mount flags a read-only remount must keep (a user namespace may
/// not clear them).
fn kept_flags(path: &Path) -> nix::mount::MsFlags {
    use nix::mount::MsFlags;
    use nix::sys::statvfs::{statvfs, FsFlags};
    let Ok(stat) = statvfs(path) else {
        return MsFlags::empty();
    };
    let f = stat.flags();
    let mut out = MsFlags::empty();
    for (st, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if f.contains(st) {
            out |= ms;
        }
    }
    out
}

fn bind(path: &Path, read_only: bool) -> Result<(), String> {
    use nix::mount::{mount, MsFlags};
    let failed = |e| format!("cannot protect {}: {e}", path.display());
    mount(
        Some(path),
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(failed)?;
    if read_only {
        let flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | kept_flags(path);
        mount(None::<&str>, path, None::<&str>, flags, None::<&str>).map_err(failed)?;
    }
    Ok(())
}

/// The protected folder a sandbox makes when it is missing right under a
/// writable root (module docs): what grants a login to the machine.
const MADE_WHEN_MISSING: &str = ".ssh";

/// Keeps `path` (inside the writable `root`) from being written.
fn protect(path: &Path, root: &Path) -> Result<(), String> {
    // The nearest existing path: the protected one, or a folder above it.
    let nearest = |path: &Path| {
        path.ancestors()
            .find(|p| std::fs::symlink_metadata(p).is_ok())
            .map(Path::to_path_buf)
    };
    let Some(mut existing) = nearest(path) else {
        return Ok(());
    };
    if existing == root {
        let first = path
            .strip_prefix(root)
            .ok()
            .and_then(|rest| rest.components().next());
        if first.is_none_or(|c| c.as_os_str() != MADE_WHEN_MISSING) {
            // Not protectable while missing (module docs).
            return Ok(());
        }
        let dir = root.join(MADE_WHEN_MISSING);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot make {}: {e}", dir.display())),
        }
        existing = nearest(path).unwrap_or(dir);
    }
    let existing = existing.as_path();
    // Folders between the root and it stay where they are.
    let mut pins: Vec<&Path> = existing
        .ancestors()
        .skip(1)
        .take_while(|a| *a != root && a.starts_with(root))
        .collect();
    pins.reverse();
    for dir in pins {
        bind(dir, false)?;
    }
    bind(existing, true)?;
    Ok(())
}

/// An empty file system over `dir`, with `dir/keep` bound back.
fn hide(dir: &Path, keep: Option<&OsStr>) -> Result<(), String> {
    use nix::mount::{mount, MsFlags};
    let failed = |e: &dyn std::fmt::Display| format!("cannot hide {}: {e}", dir.display());
    let kept = match keep {
        Some(name) => Some(std::fs::File::open(dir.join(name)).map_err(|e| failed(&e))?),
        None => None,
    };
    mount(
        Some("tmpfs"),
        dir,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        Some("mode=0700,size=64k"),
    )
    .map_err(|e| failed(&e))?;
    if let (Some(name), Some(file)) = (keep, kept) {
        let target = dir.join(name);
        std::fs::create_dir(&target).map_err(|e| failed(&e))?;
        let source = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
        mount(
            Some(source.as_str()),
            &target,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
        .map_err(|e| failed(&e))?;
    }
    Ok(())
}

/// Brings `lo` (index 1 in a new network namespace) up: one RTM_NEWLINK
/// request over rtnetlink, and its acknowledgement.
fn loopback_up() -> Result<(), String> {
    use nix::sys::socket::{
        recv, sendto, socket, AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol,
        SockType,
    };
    let failed = |e: nix::Error| format!("cannot bring up the loopback interface: {e}");
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )
    .map_err(failed)?;
    const RTM_NEWLINK: u16 = 16;
    const NLM_F_REQUEST: u16 = 1;
    const NLM_F_ACK: u16 = 4;
    const IFF_UP: u32 = 1;
    let mut msg = Vec::with_capacity(32);
    msg.extend_from_slice(&32u32.to_ne_bytes()); // nlmsg_len
    msg.extend_from_slice(&RTM_NEWLINK.to_ne_bytes());
    msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    msg.extend_from_slice(&1u32.to_ne_bytes()); // seq
    msg.extend_from_slice(&0u32.to_ne_bytes()); // pid
    msg.push(0); // ifi_family AF_UNSPEC
    msg.push(0); // padding
    msg.extend_from_slice(&0u16.to_ne_bytes()); // ifi_type
    msg.extend_from_slice(&1i32.to_ne_bytes()); // ifi_index: lo
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_flags
    msg.extend_from_slice(&IFF_UP.to_ne_bytes()); // ifi_change
    sendto(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &msg,
        &NetlinkAddr::new(0, 0),
        MsgFlags::empty(),
    )
    .map_err(failed)?;
    let mut answer = [0u8; 256];
    let n = recv(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &mut answer,
        MsgFlags::empty(),
    )
    .map_err(failed)?;
    // NLMSG_ERROR (2) carries the error code after the header: 0 is the ack.
    if n >= 20 && u16::from_ne_bytes([answer[4], answer[5]]) == 2 {
        let code = i32::from_ne_bytes([answer[16], answer[17], answer[18], answer[19]]);
        if code != 0 {
            return Err(format!(
                "cannot bring up the loopback interface: {}",
                nix::Error::from_raw(-code)
            ));
        }
    }
    Ok(())
}

/// The Landlock rules; an error when the kernel enforces none of them.
fn landlock(roots: &[&Path], net_off: bool) -> Result<(), String> {
    let abi = ABI::V6;
    let failed = |e: landlock::RulesetError| format!("cannot apply the Landlock rules: {e}");
    let read = AccessFs::from_read(abi) | AccessFs::IoctlDev;
    let all = AccessFs::from_all(abi);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .map_err(failed)?
        .scope(Scope::from_all(abi))
        .map_err(failed)?;
    if net_off {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(failed)?;
    }
    let mut created = ruleset.create().map_err(failed)?;
    // No writes beneath `/` but where the rules below grant them.
    created = created
        .add_rule(PathBeneath::new(
            PathFd::new("/").map_err(|e| format!("cannot open /: {e}"))?,
            read,
        ))
        .map_err(failed)?;
    let grant = |created: landlock::RulesetCreated, path: &Path| {
        let Ok(fd) = PathFd::new(path) else {
            // Gone since the agent looked: nothing to grant.
            return Ok(created);
        };
        let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
        let access = if is_dir {
            all
        } else {
            all & AccessFs::from_file(abi)
        };
        created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(failed)
    };
    for device in DEVICES {
        created = grant(created, Path::new(device))?;
    }
    for root in roots {
        created = grant(created, root)?;
    }
    let status = created.restrict_self().map_err(failed)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("the kernel enforces no Landlock rule (is Landlock enabled?)".into());
    }
    Ok(())
}

/// Refuses every socket family but `AF_UNIX`, and io_uring.
fn seccomp_unix_only() -> Result<(), String> {
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let failed = |e: &dyn std::fmt::Display| format!("cannot apply the seccomp filter: {e}");
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| failed(&e))?;
    let not_unix = SeccompRule::new(vec![SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        nix::libc::AF_UNIX as u64,
    )
    .map_err(|e| failed(&e))?])
    .map_err(|e| failed(&e))?;
    let rules = [
        (nix::libc::SYS_socket, vec![not_unix]),
        (nix::libc::SYS_io_uring_setup, vec![]),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(nix::libc::EPERM as u32),
        arch,
    )
    .map_err(|e| failed(&e))?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| failed(&e))?;
    seccompiler::apply_filter(&program).map_err(|e| failed(&e))
}

fn exec(program: &[OsString]) -> String {
    let args: Vec<std::ffi::CString> = program
        .iter()
        .filter_map(|a| std::ffi::CString::new(a.as_bytes()).ok())
        .collect();
    if args.len() != program.len() {
        return "an argument contains a NUL".into();
    }
    match nix::unistd::execvp(&args[0], &args) {
        Err(e) => format!("cannot run {}: {e}", program[0].to_string_lossy()),
    }
}

/// Whether this kernel enforces Landlock: a ruleset of the first ABI's
/// file rights can be created (nothing is restricted by creating one).
pub fn landlock_supported() -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|r| r.create())
        .is_ok()
}

/// The highest Landlock ABI this kernel supports that the crate tells
/// apart (ABI 7 added only logging flags: it reports as 6).
pub fn landlock_abi() -> Option<u8> {
    let hard = || Ruleset::default().set_compatibility(CompatLevel::HardRequirement);
    let fs = |abi| {
        hard()
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create())
            .is_ok()
    };
    if !fs(ABI::V1) {
        return None;
    }
    if hard()
        .scope(Scope::from_all(ABI::V6))
        .and_then(|r| r.create())
        .is_ok()
    {
        return Some(6);
    }
    for (n, abi) in [(5, ABI::V5), (3, ABI::V3), (2, ABI::V2)] {
        if fs(abi) {
            let net = hard()
                .handle_access(AccessNet::from_all(ABI::V4))
                .and_then(|r| r.create())
                .is_ok();
            return Some(if n == 3 && net { 4 } else { n });
        }
    }
    Some(1)
}
