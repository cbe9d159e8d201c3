//! Special files and capped readers: what the file tools never open, and
//! how they read what they do.
//!
//! Special files are never read, written or searched: anything whose real
//! path (symlinks and `..` resolved) is under [`SPECIAL_ROOTS`] or on a
//! kernel file system mounted elsewhere, devices, FIFOs and sockets, and
//! files that report a size of 0 but are not empty. A FIFO is refused
//! before it is opened (opening one for reading blocks until a writer
//! comes), and files are opened non-blocking so one swapped in meanwhile
//! cannot block either.
//!
//! Memory is bounded by limits, not by the input: a line is read with a cap
//! checked while reading ([`read_line_capped`]) and a NUL byte makes a file
//! binary as soon as the chunk holding it is read.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::error::{FileError, SPECIAL_ROOTS};
use super::similar::similar_files;

/// Bytes looked at to decide whether a file is binary.
pub(super) const BINARY_SAMPLE_BYTES: usize = 8192;

/// File extensions refused by `read_file` without looking at the content.
pub(super) const BINARY_EXTENSIONS: &[&str] = &[
    "7z", "a", "avi", "bin", "bmp", "bz2", "class", "dat", "db", "dll", "dmg", "doc", "docx",
    "dylib", "eot", "exe", "flac", "gif", "gz", "ico", "iso", "jar", "jpeg", "jpg", "lib", "mkv",
    "mov", "mp3", "mp4", "o", "obj", "ogg", "otf", "pdf", "png", "ppt", "pptx", "pyc", "pyo",
    "rar", "so", "sqlite", "sqlite3", "tar", "tgz", "tif", "tiff", "ttf", "wasm", "wav", "webm",
    "webp", "woff", "woff2", "xls", "xlsx", "xz", "zip", "zst",
];

/// Reads as many bytes as fit into `buf`, stopping early only at end of file.
pub(super) fn read_sample(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Says why `sample` (the start of a file) looks binary, if it does.
pub(super) fn binary_reason(sample: &[u8]) -> Option<String> {
    if sample.is_empty() {
        return None;
    }
    if sample.contains(&0) {
        return Some("it contains NUL bytes".to_owned());
    }
    // Bytes in invalid UTF-8 sequences, ignoring a sequence cut off by the
    // end of the sample.
    let mut invalid = 0usize;
    let mut rest = sample;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(_) => break,
            Err(e) => match e.error_len() {
                Some(len) => {
                    invalid += len;
                    rest = &rest[e.valid_up_to() + len..];
                }
                None => break,
            },
        }
    }
    let control = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b))
        .count();
    // More than 30% of the sample unreadable as text.
    if (invalid + control) * 10 > sample.len() * 3 {
        return Some("most of it is not valid UTF-8 text".to_owned());
    }
    None
}

pub(super) fn binary_extension(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    BINARY_EXTENSIONS
        .contains(&ext.as_str())
        .then(|| format!("a .{ext} file"))
}

/// What [`read_line_capped`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Line {
    /// A line in the buffer; `cut` when bytes past the cap were read past.
    Text { cut: bool },
    /// A NUL byte: the file is binary. Reading stopped in that chunk.
    Nul,
}

/// Reads one line (up to and including `\n`) into `buf`, keeping at most
/// `cap` bytes of it and reading past the rest, so a line of any length
/// costs at most `cap` bytes of memory. Each chunk is checked for NUL as it
/// is read: a NUL ends the read with [`Line::Nul`] at once. Returns `None`
/// at end of file.
pub(super) fn read_line_capped<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<Line>> {
    buf.clear();
    let mut any = false;
    let mut cut = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(any.then_some(Line::Text { cut }));
        }
        any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(pos) => (pos + 1, true),
            None => (chunk.len(), false),
        };
        if chunk[..take].contains(&0) {
            return Ok(Some(Line::Nul));
        }
        let room = cap.saturating_sub(buf.len());
        let keep = take.min(room);
        buf.extend_from_slice(&chunk[..keep]);
        if keep < take {
            cut = true;
        }
        reader.consume(take);
        if done {
            return Ok(Some(Line::Text { cut }));
        }
    }
}

/// Strips one trailing `\n` (and a `\r` before it, if `crlf`).
pub(super) fn strip_newline(mut line: &[u8], crlf: bool) -> &[u8] {
    if let Some(rest) = line.strip_suffix(b"\n") {
        line = rest;
        if crlf {
            if let Some(rest) = line.strip_suffix(b"\r") {
                line = rest;
            }
        }
    }
    line
}

/// Kernel files under `/proc` the file tools read (as the reference
/// does): facts about the machine, no process's secrets.
pub const PROC_READABLE: &[&str] = &[
    "cpuinfo",
    "meminfo",
    "version",
    "loadavg",
    "uptime",
    "stat",
    "mounts",
    "filesystems",
    "partitions",
    "swaps",
    "cgroups",
    "diskstats",
    "vmstat",
    "devices",
    "interrupts",
    "crypto",
    "sys/kernel/hostname",
    "sys/kernel/osrelease",
    "sys/kernel/ostype",
    "sys/kernel/pid_max",
    "sys/fs/file-max",
];
/// Files of one process (`/proc/<pid>/…`, `/proc/self/…`, a task's) that
/// the file tools read: its state and limits, not its memory, environment,
/// command line or open files.
pub const PROC_PROCESS_READABLE: &[&str] = &[
    "status",
    "stat",
    "statm",
    "limits",
    "cgroup",
    "comm",
    "mountinfo",
    "mounts",
];
/// Devices the file tools read: `/dev/null` (empty).
pub const DEV_READABLE: &[&str] = &["/dev/null"];

/// The most bytes read of a kernel file (which reports a size of 0).
pub const MAX_KERNEL_FILE_BYTES: u64 = 1 << 20;

/// What the rules say of reading a path under `/proc` or `/dev`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum KernelRead {
    /// Not under `/proc` or `/dev`.
    NotKernel,
    /// One of the harmless files: read, bounded.
    Readable,
    /// Refused, for this reason (a clause: "it is ...").
    Refused(String),
}

/// The rule for reading `path` (absolute, `..` applied), by its name
/// alone: a `/proc` entry of a process that is gone is refused for what it
/// is, never "not found".
pub(super) fn kernel_read_rule(path: &Path) -> KernelRead {
    if let Ok(rest) = path.strip_prefix("/proc") {
        return proc_rule(rest);
    }
    if let Ok(rest) = path.strip_prefix("/dev") {
        return dev_rule(path, rest);
    }
    KernelRead::NotKernel
}

fn proc_rule(rest: &Path) -> KernelRead {
    let parts: Vec<&str> = rest.iter().filter_map(|p| p.to_str()).collect();
    let refused = |why: &str| KernelRead::Refused(why.to_string());
    let Some(first) = parts.first() else {
        return refused("it is the folder of the kernel's process files, not a file");
    };
    let process =
        *first == "self" || *first == "thread-self" || first.bytes().all(|b| b.is_ascii_digit());
    if !process {
        let name = parts.join("/");
        if PROC_READABLE.contains(&name.as_str()) {
            return KernelRead::Readable;
        }
        return match name.as_str() {
            "kcore" | "kmem" | "kallsyms" | "kpagecount" | "kpageflags" => {
                refused("it is the kernel's memory or its addresses")
            }
            "cmdline" | "bootconfig" => {
                refused("it is the kernel's boot command line, which can hold credentials")
            }
            _ => refused(
                "it is a kernel interface under /proc that is not one of the machine's facts                  the file tools read (cpuinfo, meminfo, version, loadavg, uptime, mounts, ...)",
            ),
        };
    }
    // `/proc/<pid>/task/<tid>/...` is the same as `/proc/<pid>/...`.
    let mut file = &parts[1..];
    if file.first() == Some(&"task") && file.len() >= 2 {
        file = &file[2..];
    }
    match file.first().copied() {
        None => refused("it is a process's folder, not a file"),
        Some("environ") => refused(
            "it is a process's environment, which holds its secrets (API keys, tokens)",
        ),
        Some("cmdline") => refused("it is a process's command line, which can hold credentials"),
        Some("mem") => refused("it is a process's memory"),
        Some("maps" | "smaps" | "smaps_rollup" | "numa_maps" | "auxv" | "pagemap" | "stack") => {
            refused("it is a process's memory layout, which helps an attack on it")
        }
        Some("fd" | "fdinfo") => refused(
            "it is one of a process's open files or streams (its output, pipes, sockets);              /dev/stdout and /dev/fd/N lead here",
        ),
        Some("cwd" | "root" | "exe" | "map_files") => {
            refused("it is a process's link into the file system; read the file itself")
        }
        Some(name) if file.len() == 1 && PROC_PROCESS_READABLE.contains(&name) => {
            KernelRead::Readable
        }
        Some(_) => refused(
            "it is a process's kernel interface that is not one the file tools read              (status, stat, statm, limits, cgroup, comm, mountinfo, mounts)",
        ),
    }
}

fn dev_rule(path: &Path, rest: &Path) -> KernelRead {
    if DEV_READABLE.iter().any(|d| Path::new(d) == path) {
        return KernelRead::Readable;
    }
    let name = rest.to_str().unwrap_or_default();
    let why = match name {
        "zero" | "random" | "urandom" | "full" => {
            "it is a device whose output never ends".to_string()
        }
        "stdin" | "tty" | "console" | "ptmx" => "it is a device that waits for input".to_string(),
        "stdout" | "stderr" => "it is the agent's own output stream, not a file".to_string(),
        _ if name.starts_with("fd/") || name == "fd" => {
            "it is one of the agent's open files or streams, not a file".to_string()
        }
        _ if name.starts_with("pts/") => "it is a terminal that waits for input".to_string(),
        "" => "it is the folder of the devices, not a file".to_string(),
        _ => "it is a device, not a regular file".to_string(),
    };
    KernelRead::Refused(why)
}

/// Reads the harmless kernel file `real` (its rule said
/// [`KernelRead::Readable`]) without ever blocking: opened non-blocking,
/// at most [`MAX_KERNEL_FILE_BYTES`] of it, refused when binary.
pub(super) fn read_kernel_file(real: &Path, given: &str) -> Result<Vec<u8>, FileError> {
    let (file, _) = open_regular(real).map_err(|e| FileError::from_io(&e, given, "read"))?;
    let mut bytes = Vec::new();
    file.take(MAX_KERNEL_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::from_io(&e, given, "read"))?;
    let sample = &bytes[..bytes.len().min(BINARY_SAMPLE_BYTES)];
    if let Some(reason) = binary_reason(sample) {
        return Err(FileError::Binary {
            path: given.to_owned(),
            reason,
        });
    }
    Ok(bytes)
}

/// Why the real path `real` (symlinks and `..` resolved) is off limits, if
/// it is: under one of [`SPECIAL_ROOTS`], or on a kernel file system
/// mounted elsewhere (a bind mount of `/proc`, say). A path that does not
/// exist yet is judged by its nearest existing folder.
pub(super) fn special_location(real: &Path) -> Option<String> {
    if let Some(root) = SPECIAL_ROOTS.iter().find(|root| real.starts_with(root)) {
        let place = if real == Path::new(root) {
            (*root).to_owned()
        } else {
            format!("{} is under {root}, which", real.display())
        };
        return Some(format!(
            "{place} holds kernel interfaces and devices, not regular files"
        ));
    }
    kernel_fs(real).map(|kind| {
        format!(
            "{} is on a {kind} file system (kernel interfaces, not regular files)",
            real.display()
        )
    })
}

/// The kernel file system `path` (or its nearest existing folder) is on,
/// if it is one.
#[cfg(target_os = "linux")]
pub(super) fn kernel_fs(path: &Path) -> Option<&'static str> {
    use nix::sys::statfs::{self, FsType};
    const KINDS: [(FsType, &str); 11] = [
        (statfs::PROC_SUPER_MAGIC, "proc"),
        (statfs::SYSFS_MAGIC, "sysfs"),
        (statfs::DEBUGFS_MAGIC, "debugfs"),
        (statfs::TRACEFS_MAGIC, "tracefs"),
        (statfs::SECURITYFS_MAGIC, "securityfs"),
        (statfs::CGROUP_SUPER_MAGIC, "cgroup"),
        (statfs::CGROUP2_SUPER_MAGIC, "cgroup2"),
        (statfs::BPF_FS_MAGIC, "bpf"),
        (statfs::DEVPTS_SUPER_MAGIC, "devpts"),
        (statfs::SELINUX_MAGIC, "selinuxfs"),
        (statfs::SMACK_MAGIC, "smackfs"),
    ];
    let kind = path
        .ancestors()
        .find_map(|p| statfs::statfs(p).ok())?
        .filesystem_type();
    KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|&(_, name)| name)
}

#[cfg(not(target_os = "linux"))]
pub(super) fn kernel_fs(_path: &Path) -> Option<&'static str> {
    None
}

/// What `meta` describes when it is neither a regular file, a folder nor a
/// symlink: a device, a FIFO or a socket.
pub(super) fn special_kind(meta: &fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else if kind.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// Opens the regular file `real` for reading without ever blocking in
/// `open`: non-blocking, so a FIFO swapped in after the checks cannot hang
/// the call, and checked again on the open handle.
pub(super) fn open_regular(real: &Path) -> io::Result<(File, fs::Metadata)> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(real)?;
    let meta = file.metadata()?;
    Ok((file, meta))
}

pub(super) use hermes_runtime::paths::real_write_path;

/// Opens `full` for reading text, refusing folders, special files and
/// binary files. Returns the open file (rewound), its size and its real
/// path (where a rewrite must land).
pub(super) fn open_text_file(full: &Path, given: &str) -> Result<(File, u64, PathBuf), FileError> {
    let special = |reason: String| FileError::Special {
        path: given.to_owned(),
        action: "read",
        reason,
    };
    let real = match fs::canonicalize(full) {
        Ok(real) => real,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(FileError::FileNotFound {
                path: given.to_owned(),
                similar: similar_files(full, given),
            })
        }
        Err(e) => return Err(FileError::from_io(&e, given, "read")),
    };
    if let Some(reason) = special_location(&real) {
        return Err(special(reason));
    }
    // Looked at before opening: opening a FIFO for reading blocks.
    let meta = fs::metadata(&real).map_err(|e| FileError::from_io(&e, given, "read"))?;
    if meta.is_dir() {
        return Err(FileError::IsDirectory {
            path: given.to_owned(),
        });
    }
    if !meta.is_file() {
        let kind = special_kind(&meta).unwrap_or("a special file");
        return Err(special(format!("it is {kind}, not a regular file")));
    }
    if let Some(reason) = binary_extension(full) {
        return Err(FileError::Binary {
            path: given.to_owned(),
            reason,
        });
    }
    let (mut file, meta) =
        open_regular(&real).map_err(|e| FileError::from_io(&e, given, "read"))?;
    if !meta.is_file() {
        let kind = special_kind(&meta).unwrap_or("a special file");
        return Err(special(format!("it is {kind}, not a regular file")));
    }
    sniff(&mut file, meta.len(), given)?;
    Ok((file, meta.len(), real))
}

/// Reads the start of an open file of reported size `size` and rewinds it:
/// refuses it when it reports a size of 0 but is not empty (the kernel's
/// files do, wherever they are mounted) or when it looks binary.
pub(super) fn sniff(file: &mut File, size: u64, given: &str) -> Result<(), FileError> {
    let mut sample = vec![0u8; BINARY_SAMPLE_BYTES];
    let n = read_sample(file, &mut sample).map_err(|e| FileError::from_io(&e, given, "read"))?;
    if size == 0 && n > 0 {
        return Err(FileError::Special {
            path: given.to_owned(),
            action: "read",
            reason: "it reports a size of 0 bytes but is not empty, as kernel files do, \
                     so it is not a regular file"
                .to_owned(),
        });
    }
    if let Some(reason) = binary_reason(&sample[..n]) {
        return Err(FileError::Binary {
            path: given.to_owned(),
            reason,
        });
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|e| FileError::from_io(&e, given, "read"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn line_reads_are_capped_and_stop_at_nul() {
        let mut buf = Vec::new();
        let mut reader = io::BufReader::with_capacity(4, &b"abcdefgh\nxy\nz"[..]);
        let mut next = || read_line_capped(&mut reader, &mut buf, 3).unwrap();
        assert_eq!(next(), Some(Line::Text { cut: true }));
        assert_eq!(next(), Some(Line::Text { cut: false }));
        assert_eq!(next(), Some(Line::Text { cut: false }));
        assert_eq!(next(), None);
        // The NUL is seen in the chunk holding it, long before the line's end.
        let mut text = b"ok\n".to_vec();
        text.extend_from_slice(b"aa\0");
        text.extend(std::iter::repeat_n(b'b', 100_000));
        let mut reader = io::BufReader::with_capacity(8, &text[..]);
        assert_eq!(
            read_line_capped(&mut reader, &mut buf, 1 << 20).unwrap(),
            Some(Line::Text { cut: false })
        );
        assert_eq!(
            read_line_capped(&mut reader, &mut buf, 1 << 20).unwrap(),
            Some(Line::Nul)
        );
        assert!(buf.len() <= 8, "held {} bytes", buf.len());
    }

    #[test]
    fn files_reporting_size_0_with_content_are_refused() {
        // The /proc pattern, met through an open handle as it would be on
        // a kernel file system mounted anywhere.
        let mut file = File::open("/proc/self/status").unwrap();
        let size = file.metadata().unwrap().len();
        assert_eq!(size, 0);
        let err = sniff(&mut file, size, "status").unwrap_err();
        assert!(matches!(err, FileError::Special { .. }), "{err:?}");
        assert!(err.to_string().contains("size of 0 bytes"), "{err}");
        // A really empty file and a text file pass, rewound.
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("e"), "").unwrap();
        let mut empty = File::open(dir.path().join("e")).unwrap();
        sniff(&mut empty, 0, "e").unwrap();
        fs::write(dir.path().join("t"), "text\n").unwrap();
        let mut text = File::open(dir.path().join("t")).unwrap();
        sniff(&mut text, 5, "t").unwrap();
        let mut back = String::new();
        text.read_to_string(&mut back).unwrap();
        assert_eq!(back, "text\n");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn kernel_file_systems_are_recognised_where_mounted() {
        assert_eq!(kernel_fs(Path::new("/proc/self")), Some("proc"));
        // Judged by the nearest existing folder when the path is missing.
        assert_eq!(kernel_fs(Path::new("/proc/no/such/file")), Some("proc"));
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(kernel_fs(dir.path()), None);
        assert_eq!(kernel_fs(&dir.path().join("missing/x")), None);
    }

    #[test]
    fn write_paths_resolve_like_the_kernel() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink("/proc", dir.path().join("p")).unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        // Through a symlink, then `..` from where it leads.
        assert_eq!(
            real_write_path(&dir.path().join("p/self/../x")).unwrap(),
            Path::new("/proc/x")
        );
        // `..` out of folders still to be created, then into a symlink.
        assert_eq!(
            real_write_path(&dir.path().join("new/../p/y")).unwrap(),
            Path::new("/proc/y")
        );
        assert_eq!(
            real_write_path(&dir.path().join("./d/new/../z.txt")).unwrap(),
            real_dir.join("d/z.txt")
        );
        assert!(special_location(Path::new("/proc/y")).is_some());
        assert!(special_location(Path::new("/sys")).is_some());
        assert!(special_location(Path::new("/device")).is_none());
        assert!(special_location(&real_dir.join("d/z.txt")).is_none());
    }

    #[test]
    fn binary_sniffing() {
        assert!(binary_reason(b"hello\nworld\n").is_none());
        assert!(binary_reason(b"").is_none());
        assert!(binary_reason(b"abc\0def").is_some());
        assert!(binary_reason(&[0xff; 64]).is_some());
        assert!(binary_reason("héllo wörld".as_bytes()).is_none());
        // A multibyte character cut off by the end of the sample is fine.
        assert!(binary_reason(&"ab€".as_bytes()[..4]).is_none());
    }
}
