//! `web_extract` and `web_search` through dispatch, against a local HTTP
//! server on 127.0.0.1 (std's `TcpListener`, no traffic elsewhere): readable
//! text, truncation, refusal of loopback without the profile's allowance,
//! refusal of forbidden (link-local, metadata) targets even with it, hostile
//! pages answered within bounds, the page deadline, and a search endpoint
//! configured in the profile.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hermes_html::{MAX_DEPTH, MAX_TEXT_BYTES};
use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: Vec<(String, String)>,
}

struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(respond: fn(&Seen, u16) -> String) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = log.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(&stream);
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let mut headers = Vec::new();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                        if let Some((k, v)) = h.trim_end().split_once(':') {
                            headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
                        }
                    }
                    let req = Seen { path, headers };
                    log.lock().unwrap().push(req.clone());
                    let _ = (&stream).write_all(respond(&req, port).as_bytes());
                });
            }
        });
        Server { port, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn hits(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

fn response(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn html(body: &str) -> String {
    response("200 OK", "text/html", body)
}

fn redirect(to: &str) -> String {
    format!(
        "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

fn site(req: &Seen, port: u16) -> String {
    match req.path.as_str() {
        "/page" => response(
            "200 OK",
            "text/html; charset=utf-8",
            "<html><head><title>Local page</title><script>alert(1)</script></head>\
             <body><nav>menu</nav><main><h1>Welcome</h1><p>Some <a href=\"/next\">linked</a> text.</p></main></body></html>",
        ),
        "/plain" => response("200 OK", "text/plain", "just text\n"),
        "/big" => {
            let body: String = (0..3000).map(|i| format!("line {i}\n")).collect();
            response("200 OK", "text/plain", &body)
        }
        "/image" => response("200 OK", "image/png", "\u{1}PNG"),
        "/hop" => redirect(&format!("http://127.0.0.1:{port}/plain")),
        "/to-metadata" => redirect("http://169.254.169.254/latest/meta-data/"),
        "/to-link-local" => redirect("http://169.254.1.1/"),
        "/to-mapped-link-local" => redirect("http://[::ffff:169.254.10.20]/"),
        "/nested-lists" => html(&format!("{}{}", "<ul>".repeat(20_000), "<li>x".repeat(20_000))),
        "/nested-lists-big" => html(&format!(
            "{}{}",
            "<ul>".repeat(200_000),
            "<li>x".repeat(200_000)
        )),
        "/nested-links" => html(&format!(
            "{}t{}",
            "<a href=\"x\">".repeat(40_000),
            "</a>".repeat(40_000)
        )),
        "/to-unspecified" => redirect(&format!("http://0.0.0.0:{port}/plain")),
        _ => response("404 Not Found", "text/plain", "nope"),
    }
}

fn profile_with(env: &str) -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".env"), env).unwrap();
    let ctx = ToolContext::new(Profile::new(dir.path()), dir.path());
    (dir, ctx)
}

async fn call(ctx: &ToolContext, name: &str, args: Value) -> Value {
    let out = hermes_tools::registry().dispatch(name, args, ctx).await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[tokio::test]
async fn extracts_readable_text_from_a_local_server_with_the_allowance() {
    let server = Server::start(site);
    let (_dir, ctx) = profile_with("HERMES_ALLOW_PRIVATE_URLS=true\n");
    let v = call(
        &ctx,
        "web_extract",
        json!({"urls": [server.url("/page"), server.url("/hop"), server.url("/missing"), server.url("/image")]}),
    )
    .await;
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "{v}");
    assert_eq!(results[0]["title"], "Local page");
    assert_eq!(
        results[0]["content"],
        format!("# Welcome\n\nSome [linked]({}) text.", server.url("/next"))
    );
    assert_eq!(results[0]["error"], Value::Null);
    assert_eq!(
        results[1]["url"],
        server.url("/plain"),
        "the URL after the redirect"
    );
    assert_eq!(results[1]["content"], "just text");
    assert_eq!(results[2]["error"], "HTTP 404 Not Found");
    assert!(
        results[3]["error"].as_str().unwrap().contains("image/png"),
        "{v}"
    );
    let ua = server.seen.lock().unwrap()[0]
        .headers
        .iter()
        .find(|(k, _)| k == "user-agent")
        .map(|(_, v)| v.clone())
        .unwrap();
    assert!(ua.starts_with("hermes-tools/"), "{ua}");
}

#[tokio::test]
async fn long_pages_keep_head_and_tail_and_save_the_full_text() {
    let server = Server::start(site);
    let (dir, ctx) = profile_with("HERMES_ALLOW_PRIVATE_URLS=1\n");
    let v = call(
        &ctx,
        "web_extract",
        json!({"urls": [server.url("/big")], "char_limit": "2000"}),
    )
    .await;
    let content = v["results"][0]["content"].as_str().unwrap();
    assert!(content.starts_with("line 0\n"), "{content}");
    assert!(content.ends_with("line 2999"), "{content}");
    assert!(content.contains("middle omitted"), "{content}");
    assert!(content.chars().count() < 2600, "{}", content.len());
    let saved = std::fs::read_dir(dir.path().join("cache/web"))
        .unwrap()
        .count();
    assert_eq!(saved, 1, "the full text is saved under the profile's home");
    assert!(content.contains(dir.path().join("cache/web").to_str().unwrap()));
}

#[tokio::test]
async fn loopback_is_refused_without_the_allowance_before_any_request() {
    let server = Server::start(site);
    let (_dir, ctx) = profile_with("");
    for url in [
        server.url("/page"),
        format!("http://localhost:{}/page", server.port),
        format!("http://[::1]:{}/page", server.port),
    ] {
        let v = call(&ctx, "web_extract", json!({"urls": [url]})).await;
        let err = v["results"][0]["error"].as_str().unwrap();
        assert!(
            err.starts_with("Blocked:") && err.contains("loopback"),
            "{err}"
        );
    }
    assert_eq!(server.hits(), 0, "nothing reached the server");
}

#[tokio::test]
async fn redirects_to_forbidden_addresses_are_refused_even_with_the_allowance() {
    let server = Server::start(site);
    let (_dir, ctx) = profile_with("HERMES_ALLOW_PRIVATE_URLS=true\n");
    let v = call(
        &ctx,
        "web_extract",
        json!({"urls": [server.url("/to-metadata"), server.url("/to-unspecified")]}),
    )
    .await;
    let first = v["results"][0]["error"].as_str().unwrap();
    assert!(
        first.contains("169.254.169.254") && first.contains("metadata"),
        "{first}"
    );
    let second = v["results"][1]["error"].as_str().unwrap();
    assert!(second.contains("unspecified"), "{second}");
    assert_eq!(
        server.hits(),
        2,
        "only the two redirecting requests were made"
    );
}

#[tokio::test]
async fn bad_urls_and_credentials_in_urls_are_refused() {
    let (_dir, ctx) = profile_with("HERMES_ALLOW_PRIVATE_URLS=true\n");
    let v = call(
        &ctx,
        "web_extract",
        json!({"urls": ["file:///etc/passwd", "http://127.0.0.1:9/x?api_key=abc", "http://bad host/"]}),
    )
    .await;
    let errors: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["error"].as_str().unwrap())
        .collect();
    assert!(errors[0].contains("only http and https"), "{errors:?}");
    assert!(errors[1].contains("api_key"), "{errors:?}");
    assert!(errors[2].contains("Invalid URL"), "{errors:?}");
    let v = call(&ctx, "web_extract", json!({"urls": []})).await;
    assert!(v["error"].as_str().unwrap().contains("empty"), "{v}");
}

fn search_site(req: &Seen, _port: u16) -> String {
    let auth = req
        .headers
        .iter()
        .find(|(k, _)| k == "x-subscription-token")
        .map(|(_, v)| v.as_str());
    if auth != Some("k-123") {
        return response("401 Unauthorized", "application/json", "{}");
    }
    assert!(req.path.starts_with("/search?"), "{}", req.path);
    assert!(
        req.path.contains("q=rust+tools") || req.path.contains("q=rust%20tools"),
        "{}",
        req.path
    );
    assert!(req.path.contains("count=2"), "{}", req.path);
    response(
        "200 OK",
        "application/json",
        &json!({"web": {"results": [
            {"title": "Rust", "url": "https://www.rust-lang.org/", "description": "A <strong>language</strong> &amp; tools"},
            {"title": "Crates", "url": "https://crates.io/", "description": "Packages"},
            {"title": "Extra", "url": "https://example.org/", "description": "beyond the limit"},
        ]}})
        .to_string(),
    )
}

#[tokio::test]
async fn web_search_uses_the_profiles_endpoint_and_key() {
    let server = Server::start(search_site);
    let (_dir, ctx) = profile_with(&format!(
        "WEB_SEARCH_API_KEY=k-123\nWEB_SEARCH_ENDPOINT={}\n",
        server.url("/search")
    ));
    let defs = hermes_tools::registry().get_tool_definitions(None, &[], ctx.profile());
    assert!(defs.names().contains(&"web_search"));
    let v = call(
        &ctx,
        "web_search",
        json!({"query": "rust tools", "limit": "2"}),
    )
    .await;
    assert_eq!(
        v,
        json!({"success": true, "data": {"web": [
            {"title": "Rust", "url": "https://www.rust-lang.org/", "description": "A language & tools", "position": 1},
            {"title": "Crates", "url": "https://crates.io/", "description": "Packages", "position": 2},
        ]}})
    );

    let (_dir, wrong) = profile_with(&format!(
        "WEB_SEARCH_API_KEY=wrong\nWEB_SEARCH_ENDPOINT={}\n",
        server.url("/search")
    ));
    let v = call(&wrong, "web_search", json!({"query": "rust tools"})).await;
    let err = v["error"].as_str().unwrap();
    assert!(err.contains("401") && err.contains("key"), "{err}");
    assert!(!err.contains("wrong"), "the key never appears in errors");
}

#[tokio::test]
async fn web_search_is_unavailable_without_a_key() {
    let (_dir, ctx) = profile_with("");
    let registry = hermes_tools::registry();
    let defs = registry.get_tool_definitions(None, &[], ctx.profile());
    assert!(!defs.names().contains(&"web_search"));
    assert!(defs.names().contains(&"web_extract"));
    let report = registry.check_tool_availability(ctx.profile());
    let search = report
        .unavailable
        .iter()
        .find(|u| u.name == "search")
        .unwrap();
    assert_eq!(search.env_vars, ["WEB_SEARCH_API_KEY"]);
    let v = call(&ctx, "web_search", json!({"query": "x"})).await;
    assert!(
        v["error"].as_str().unwrap().contains("WEB_SEARCH_API_KEY"),
        "{v}"
    );
}

/// The longest run of spaces starting a line.
fn indentation(text: &str) -> usize {
    text.lines()
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .max()
        .unwrap_or(0)
}

#[tokio::test]
async fn hostile_pages_come_back_within_bounds() {
    let server = Server::start(site);
    let (dir, ctx) = profile_with("HERMES_ALLOW_PRIVATE_URLS=true\n");
    let v = call(
        &ctx,
        "web_extract",
        json!({"urls": [server.url("/nested-lists"), server.url("/nested-lists-big"), server.url("/nested-links")]}),
    )
    .await;
    let results = v["results"].as_array().unwrap();
    for r in results {
        assert_eq!(r["error"], Value::Null, "{r}");
        let content = r["content"].as_str().unwrap();
        assert!(content.chars().count() < 16_000, "{}", content.len());
    }
    // 20,000 nested lists: items, indented at most MAX_DEPTH levels.
    let lists = results[0]["content"].as_str().unwrap();
    let (head, _) = lists.split_once("\n\n[... middle omitted").unwrap();
    assert!(head.lines().all(|l| l.trim() == "- x"), "{head:.300}");
    assert_eq!(indentation(lists), 2 * (MAX_DEPTH - 1));
    // Ten times more: the text stops at its limit and says so, at the end.
    let big = results[1]["content"].as_str().unwrap();
    assert!(big.contains("middle omitted"), "{big:.200}");
    assert!(
        big.ends_with("[Text cut: the page's text reached its limit of 5 MB; the rest of the page was not converted.]"),
        "{}",
        &big[big.len() - 300..]
    );
    // 40,000 nested links: one link.
    assert_eq!(results[2]["content"], format!("[t]({})", server.url("/x")));
    // The full texts saved are within the text limit.
    for entry in std::fs::read_dir(dir.path().join("cache/web")).unwrap() {
        let len = entry.unwrap().metadata().unwrap().len();
        assert!(len <= MAX_TEXT_BYTES as u64 + 200, "{len}");
    }
}

#[tokio::test]
async fn link_local_addresses_are_refused_even_with_the_allowance() {
    let server = Server::start(site);
    let (_dir, ctx) = profile_with("HERMES_ALLOW_PRIVATE_URLS=true\n");
    let v = call(
        &ctx,
        "web_extract",
        json!({"urls": [
            "http://169.254.1.1/",
            "http://[fe80::1]/",
            "http://[::ffff:169.254.1.1]/",
            server.url("/to-link-local"),
            server.url("/to-mapped-link-local"),
        ]}),
    )
    .await;
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 5, "{v}");
    for r in results {
        let err = r["error"].as_str().unwrap();
        assert!(
            err.starts_with("Blocked:")
                && err.contains("a link-local address, which is never fetched"),
            "{err}"
        );
    }
    assert_eq!(
        server.hits(),
        2,
        "only the two redirecting requests were made"
    );
}

/// Accepts one connection on 127.0.0.1 and answers an HTML page whose body
/// comes one byte every 100 ms, 600 bytes in all; its URL.
fn trickling_page() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        let mut reader = BufReader::new(&stream);
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
        }
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 600\r\nConnection: close\r\n\r\n<p>";
        if (&stream).write_all(head.as_bytes()).is_err() {
            return;
        }
        for _ in 0..597 {
            std::thread::sleep(Duration::from_millis(100));
            if (&stream).write_all(b"x").is_err() {
                return;
            }
        }
    });
    format!("http://127.0.0.1:{port}/slow")
}

#[tokio::test]
async fn a_page_trickled_slowly_ends_at_the_profiles_deadline() {
    let (_dir, ctx) = profile_with("HERMES_ALLOW_PRIVATE_URLS=true\nWEB_EXTRACT_TIMEOUT=1\n");
    let started = Instant::now();
    let v = call(&ctx, "web_extract", json!({"urls": [trickling_page()]})).await;
    let err = v["results"][0]["error"].as_str().unwrap();
    assert!(
        err.starts_with("Timed out after 1 s reading the page"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    for bad in ["0", "301", "soon"] {
        let (_dir, ctx) = profile_with(&format!("WEB_EXTRACT_TIMEOUT={bad}\n"));
        let v = call(
            &ctx,
            "web_extract",
            json!({"urls": ["http://example.com/"]}),
        )
        .await;
        let err = v["error"].as_str().unwrap();
        assert!(
            err.contains("WEB_EXTRACT_TIMEOUT") && err.contains(bad),
            "{err}"
        );
    }
}
