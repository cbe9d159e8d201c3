//! Tests of `write_file` on temporary directories.

use std::fs;
use std::path::Path;

use super::error::FileError;
use super::error::MAX_EDIT_FILE_BYTES;
use super::test_util::*;
use super::write::write_file;

#[test]
fn write_creates_parents_and_reports_bytes() {
    let dir = tmp();
    let out = write_file(dir.path(), "new/dir/x.txt", "héllo\nworld\n").unwrap();
    assert_eq!(out.bytes_written, 13);
    assert!(out.dirs_created);
    assert!(out.created);
    assert_eq!(
        out.resolved_path,
        dir.path().join("new/dir/x.txt").to_string_lossy()
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("new/dir/x.txt")).unwrap(),
        "héllo\nworld\n"
    );
    assert!(leftovers(&dir.path().join("new/dir")).is_empty());

    let json = serde_json::to_value(&out).unwrap();
    assert_eq!(json["bytes_written"], 13);
    assert_eq!(json["dirs_created"], true);
}

#[test]
fn write_overwrites_atomically_and_keeps_permissions() {
    let dir = tmp();
    put(dir.path(), "f.txt", "old content that is longer\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir.path().join("f.txt"), fs::Permissions::from_mode(0o640)).unwrap();
    }
    let out = write_file(dir.path(), "f.txt", "new\n").unwrap();
    assert!(!out.created);
    assert!(!out.dirs_created);
    assert_eq!(out.bytes_written, 4);
    assert_eq!(
        fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "new\n"
    );
    assert!(leftovers(dir.path()).is_empty());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir.path().join("f.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640);
    }
}

#[test]
fn a_new_file_gets_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tmp();
    let mode = |name: &str| {
        fs::metadata(dir.path().join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    // Not a temporary file's private 0600: 0666 less the umask, as any
    // program creating the file would give it.
    fs::write(dir.path().join("usual.txt"), "x").unwrap();
    write_file(dir.path(), "new.txt", "x").unwrap();
    assert_eq!(mode("new.txt"), mode("usual.txt"));
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn write_empty_content_and_refuse_directory() {
    let dir = tmp();
    let out = write_file(dir.path(), "empty.txt", "").unwrap();
    assert_eq!(out.bytes_written, 0);
    assert_eq!(fs::read(dir.path().join("empty.txt")).unwrap(), b"");

    fs::create_dir(dir.path().join("d")).unwrap();
    let err = write_file(dir.path(), "d", "x").unwrap_err();
    assert!(matches!(err, FileError::IsDirectory { .. }), "{err:?}");
    assert_eq!(
        write_file(dir.path(), "", "x").unwrap_err(),
        FileError::EmptyPath
    );
}

#[cfg(unix)]
#[test]
fn write_goes_through_symlinks() {
    let dir = tmp();
    put(dir.path(), "real.txt", "old\n");
    std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt")).unwrap();
    write_file(dir.path(), "link.txt", "new\n").unwrap();
    assert!(fs::symlink_metadata(dir.path().join("link.txt"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        fs::read_to_string(dir.path().join("real.txt")).unwrap(),
        "new\n"
    );
}

#[test]
fn write_under_a_file_fails_clearly() {
    let dir = tmp();
    put(dir.path(), "plain", "x");
    let err = write_file(dir.path(), "plain/child.txt", "x").unwrap_err();
    assert!(err.to_string().contains("plain/child.txt"), "{err}");
}

#[test]
fn write_never_replaces_special_files() {
    let dir = tmp();
    let d = dir.path();
    let pipe = fifo(d, "pipe");
    let _listener = std::os::unix::net::UnixListener::bind(d.join("sock")).unwrap();
    std::os::unix::fs::symlink("/proc", d.join("p")).unwrap();
    std::os::unix::fs::symlink("/proc/self/comm", d.join("comm")).unwrap();
    for path in ["pipe", "sock"] {
        let err = write_file(d, path, "x").unwrap_err();
        special_err(&err, "write");
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
    assert!(is_fifo(&pipe));
    for path in [
        "comm",
        "p/self/comm",
        "/dev/hermes-never-written",
        "/sys/hermes-never-written",
        // `..` out of folders still to be made, then through the symlink.
        "new/../p/x",
        "new/deeper/../../p/x",
    ] {
        let err = write_file(d, path, "x").unwrap_err();
        special_err(&err, "write");
    }
    assert!(!d.join("new").exists(), "no folder was made");
    assert!(!Path::new("/dev/hermes-never-written").exists());
    assert!(leftovers(d).is_empty());
}

#[test]
fn write_refuses_content_over_the_limit() {
    let dir = tmp();
    let limit = MAX_EDIT_FILE_BYTES as usize;
    let err = write_file(dir.path(), "big.txt", &"a".repeat(limit + 1)).unwrap_err();
    assert_eq!(
        err,
        FileError::ContentTooLarge {
            path: "big.txt".into(),
            size: limit as u64 + 1
        }
    );
    assert!(err.to_string().contains("10 MiB"), "{err}");
    assert!(!dir.path().join("big.txt").exists());
    let out = write_file(dir.path(), "big.txt", &"a".repeat(limit)).unwrap();
    assert_eq!(out.bytes_written, MAX_EDIT_FILE_BYTES);
}
