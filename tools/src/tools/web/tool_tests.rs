//! `web_extract` through the registry, against pages served on 127.0.0.1.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

/// Serves `pages` (path, Content-Type, body) on 127.0.0.1 to at most
/// `accepts` connections; the base URL.
fn serve(pages: &'static [(&str, &str, &[u8])], accepts: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(accepts).flatten() {
            let mut reader = BufReader::new(&stream);
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
            for _ in 0..100 {
                let mut header = String::new();
                if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                    break;
                }
            }
            let (status, content_type, body) = pages
                .iter()
                .find(|(p, _, _)| *p == path)
                .map_or(("404 Not Found", "text/plain", &b""[..]), |(_, t, b)| {
                    ("200 OK", *t, *b)
                });
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let mut out = &stream;
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(body);
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// `web_extract` of `urls` by way of the registry, with a profile that may
/// fetch loopback addresses; the result per URL.
fn extract(urls: &[String]) -> Vec<Value> {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join(".env"),
        format!("{}=true\n", super::ALLOW_PRIVATE_SETTING),
    )
    .unwrap();
    let ctx = ToolContext::new(Profile::new(home.path()), home.path());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let result = runtime.block_on(crate::registry().dispatch_json(
        "web_extract",
        &json!({ "urls": urls }).to_string(),
        &ctx,
    ));
    let result: Value = serde_json::from_str(&result).unwrap();
    result["results"].as_array().unwrap().clone()
}

#[test]
fn pages_are_decoded_in_the_charset_they_name() {
    const PAGES: &[(&str, &str, &[u8])] = &[
        // 0x80 and 0x93/0x94 are the euro sign and curly quotes in
        // windows-1252, C1 controls in Latin-1.
        (
            "/1252",
            "text/plain; charset=windows-1252",
            b"\x93Caf\xe9\x94 costs \x80 3",
        ),
        // Browsers read a Latin-1 label as windows-1252 too.
        (
            "/latin1",
            "text/html; charset=\"ISO-8859-1\"",
            b"<html><body><p>\x93Caf\xe9\x94 costs \x80 3</p></body></html>",
        ),
        (
            "/koi8",
            "text/plain;charset=koi8-r",
            b"\xf0\xd2\xc9\xd7\xc5\xd4",
        ),
        ("/utf8", "text/plain", "“Café” costs € 3".as_bytes()),
        ("/bad-utf8", "text/plain", b"caf\xe9"),
    ];
    let base = serve(PAGES, PAGES.len());
    let urls: Vec<String> = PAGES.iter().map(|(p, _, _)| format!("{base}{p}")).collect();
    let results = extract(&urls);
    let contents: Vec<&str> = results
        .iter()
        .map(|r| {
            assert_eq!(r["error"], Value::Null, "{r}");
            r["content"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        contents,
        [
            "“Café” costs € 3",
            "“Café” costs € 3",
            "Привет",
            "“Café” costs € 3",
            "caf\u{fffd}",
        ]
    );
}

#[test]
fn credential_like_query_parameters_are_refused_however_they_are_encoded() {
    // Nothing listens on port 9 of loopback: a URL that is not refused
    // fails to connect instead.
    let urls: Vec<String> = [
        "http://127.0.0.1:9/a?x=1&api_key=secret",
        "http://127.0.0.1:9/a?API%5fKey=secret",
        "http://127.0.0.1:9/a?%61ccess_token=secret#frag",
        "http://127.0.0.1:9/a?api_key=&page=2",
        "http://127.0.0.1:9/a?q=api_key%3Dsecret",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    let results = extract(&urls);
    let errors: Vec<&str> = results
        .iter()
        .map(|r| r["error"].as_str().unwrap())
        .collect();
    let blocked = |name: &str| {
        format!("Blocked: the URL carries a credential-like query parameter ({name}); remove it")
    };
    assert_eq!(errors[0], blocked("api_key"));
    assert_eq!(errors[1], blocked("API_Key"));
    assert_eq!(errors[2], blocked("access_token"));
    for (url, error) in urls.iter().zip(&errors).skip(3) {
        assert!(!error.starts_with("Blocked"), "{url}: {error}");
    }
}
