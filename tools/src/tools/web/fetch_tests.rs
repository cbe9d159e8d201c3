//! Limits of a page fetch (time, size, redirects) against a local server.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use super::{get_page, FetchError, Limits};

/// Serves every connection with `respond(path)` on 127.0.0.1; the port.
fn serve(respond: fn(&str, u16) -> (Duration, String)) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map_or(0, |a| a.port());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                        break;
                    }
                }
                let (delay, response) = respond(&path, port);
                std::thread::sleep(delay);
                let _ = (&stream).write_all(response.as_bytes());
            });
        }
    });
    port
}

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn limits(timeout_ms: u64, max_bytes: u64) -> Limits {
    Limits {
        timeout: Duration::from_millis(timeout_ms),
        max_bytes,
        max_redirects: 2,
    }
}

#[test]
fn time_size_and_redirect_limits() {
    let port = serve(|path, port| {
        match path {
        "/slow" => (Duration::from_secs(3), ok("late")),
        "/big" => (Duration::ZERO, ok(&"x".repeat(10_000))),
        "/loop" => (
            Duration::ZERO,
            format!("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{port}/loop\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
        ),
        _ => (Duration::ZERO, ok("hello")),
    }
    });
    let url = |p: &str| format!("http://127.0.0.1:{port}{p}");

    let page = get_page(&url("/"), true, limits(5000, 100)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page.body, b"hello");
    assert!(!page.cut);

    let page = get_page(&url("/big"), true, limits(5000, 100)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page.body.len(), 100);
    assert!(page.cut);

    let started = Instant::now();
    let err = get_page(&url("/slow"), true, limits(300, 100)).unwrap_err();
    assert!(matches!(err, FetchError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("Timed out"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));

    let err = get_page(&url("/loop"), true, limits(5000, 100)).unwrap_err();
    assert_eq!(err.to_string(), "More than 2 redirects");

    let err = get_page("ftp://127.0.0.1/x", true, limits(5000, 100)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Invalid URL 'ftp://127.0.0.1/x': only http and https URLs are fetched"
    );

    let err = get_page(&url("/"), false, limits(5000, 100)).unwrap_err();
    assert!(
        matches!(
            &err,
            FetchError::Refused(super::PolicyError::Restricted {
                kind: "loopback",
                ..
            })
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "Blocked: 127.0.0.1 resolves to 127.0.0.1, a loopback address. Private and \
         loopback addresses are refused unless the profile allows them \
         (HERMES_ALLOW_PRIVATE_URLS)."
    );
}

/// Accepts one connection on 127.0.0.1 and answers a page whose body comes
/// one byte every `every`, `count` bytes in all; the port.
fn trickle(every: Duration, count: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map_or(0, |a| a.port());
    std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        let mut reader = BufReader::new(&stream);
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                break;
            }
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {count}\r\nConnection: close\r\n\r\n"
        );
        if (&stream).write_all(head.as_bytes()).is_err() {
            return;
        }
        for _ in 0..count {
            std::thread::sleep(every);
            if (&stream).write_all(b"x").is_err() {
                return;
            }
        }
    });
    port
}

#[test]
fn a_body_trickled_past_the_timeout_is_cut_off() {
    let port = trickle(Duration::from_millis(50), 200);
    let started = Instant::now();
    let err = get_page(
        &format!("http://127.0.0.1:{port}/"),
        true,
        limits(600, 1000),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("Timed out after 1 s reading the page (")
            && err.ends_with(" bytes received)"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
