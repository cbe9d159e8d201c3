//! Hostile-input cases: web.
//!
//! Pages chosen to hurt the page-to-markdown writer and the fetch deadline,
//! served from a loopback HTTP server in this process (the profile's `.env`
//! sets `HERMES_ALLOW_PRIVATE_URLS` so loopback may be fetched): the
//! issue's nested lists (180 KB and 1.8 MB), 40,000 nested links, five
//! 5 MB pages at once, a page trickled slower than its deadline, and the
//! cloud metadata address, which stays refused with the allowance.

#![allow(clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hermes_html::MAX_DEPTH;
use hermes_tools::tools::web::MAX_PAGE_BYTES;
use serde_json::{json, Value};

use crate::harness;

/// How one page is sent.
#[derive(Clone)]
enum Body {
    /// All at once.
    Whole(Arc<String>),
    /// Headers announcing `len` bytes, then one byte every 100 ms (at most
    /// 600, a minute).
    Trickle { len: usize },
}

/// Serves `body` on 127.0.0.1 for at most `accepts` connections (one
/// thread each); its base URL.
fn serve(body: Body, accepts: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(accepts).flatten() {
            let body = body.clone();
            std::thread::spawn(move || answer(&stream, &body));
        }
    });
    format!("http://127.0.0.1:{port}")
}

fn answer(stream: &TcpStream, body: &Body) {
    let mut reader = BufReader::new(stream);
    for _ in 0..100 {
        let mut line = String::new();
        if reader.read_line(&mut line).map_or(true, |n| n == 0) || line == "\r\n" {
            break;
        }
    }
    let mut out = stream;
    let head = |len: usize| {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
        )
    };
    match body {
        Body::Whole(text) => {
            let _ = out.write_all(head(text.len()).as_bytes());
            let _ = out.write_all(text.as_bytes());
        }
        Body::Trickle { len } => {
            if out.write_all(head(*len).as_bytes()).is_err() {
                return;
            }
            for _ in 0..(*len).min(600) {
                std::thread::sleep(Duration::from_millis(100));
                if out.write_all(b"x").is_err() {
                    return;
                }
            }
        }
    }
}

/// A profile allowing loopback, with `extra` lines in its `.env`.
fn profile(dir: &Path, extra: &str) {
    std::fs::write(
        dir.join(".env"),
        format!("HERMES_ALLOW_PRIVATE_URLS=true\n{extra}"),
    )
    .expect("write .env");
}

/// `web_extract` of `urls` with a profile allowing loopback.
fn extract(urls: &[String], env_extra: &str) -> harness::Outcome {
    let (cwd, home) = harness::dirs();
    profile(home.path(), env_extra);
    let out = harness::call(
        "web_extract",
        &json!({ "urls": urls }),
        cwd.path(),
        home.path(),
        &[],
        Duration::from_secs(60),
    );
    eprintln!(
        "web_extract of {} page(s): peak RSS {} KiB, {:?}",
        urls.len(),
        out.peak_rss_kb,
        out.elapsed
    );
    out
}

/// The one page's result, which must not be an error.
fn page(out: &harness::Outcome) -> &Value {
    let r = &out.json["results"][0];
    assert_eq!(r["error"], Value::Null, "{r}");
    r
}

fn content(r: &Value) -> &str {
    r["content"].as_str().expect("content")
}

/// The longest run of spaces starting a line.
fn indentation(text: &str) -> usize {
    text.lines()
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .max()
        .unwrap_or(0)
}

const CUT_NOTE: &str =
    "[Text cut: the page's text reached its limit of 5 MB; the rest of the page was not converted.]";

#[test]
fn deeply_nested_lists_are_flattened() {
    let html = format!("{}{}", "<ul>".repeat(20_000), "<li>x".repeat(20_000));
    let base = serve(Body::Whole(Arc::new(html)), 1);
    let out = extract(&[format!("{base}/lists")], "");
    let text = content(page(&out));
    assert!(text.chars().count() < 16_000, "{}", text.len());
    assert!(text.starts_with("- x\n"), "{text:.200}");
    assert_eq!(indentation(text), 2 * (MAX_DEPTH - 1));
}

#[test]
fn nested_lists_past_the_text_limit_are_cut_with_a_note() {
    let html = format!("{}{}", "<ul>".repeat(200_000), "<li>x".repeat(200_000));
    assert!(html.len() >= 1_800_000);
    let base = serve(Body::Whole(Arc::new(html)), 1);
    let out = extract(&[format!("{base}/lists")], "");
    let text = content(page(&out));
    assert!(text.chars().count() < 16_000, "{}", text.len());
    assert!(text.ends_with(CUT_NOTE), "{}", &text[text.len() - 200..]);
}

#[test]
fn deeply_nested_links_are_one_link() {
    let html = format!(
        "{}t{}",
        "<a href=\"x\">".repeat(40_000),
        "</a>".repeat(40_000)
    );
    let base = serve(Body::Whole(Arc::new(html)), 1);
    let out = extract(&[format!("{base}/links")], "");
    assert_eq!(content(page(&out)), format!("[t]({base}/x)"));
}

#[test]
fn five_hostile_pages_of_the_largest_size_at_once() {
    let size = usize::try_from(MAX_PAGE_BYTES).expect("size");
    let fill = |head: &str, unit: &str| {
        let mut s = head.to_string();
        while s.len() < size {
            s.push_str(unit);
        }
        s.truncate(size);
        s
    };
    let pages = [
        fill(&"<ol>".repeat(1_000), "<li>x"),
        fill("", "<a href=\"x\">t"),
        fill("", "&lt;&#233;&amp;&bogus x "),
        fill("<pre>", "<pre>  <b><i><code>x\n"),
        fill("", "<tr><td>x<h6>"),
    ];
    let urls: Vec<String> = pages
        .into_iter()
        .map(|p| format!("{}/page", serve(Body::Whole(Arc::new(p)), 1)))
        .collect();
    let out = extract(&urls, "");
    let results = out.json["results"].as_array().expect("results");
    assert_eq!(results.len(), 5, "{}", out.json);
    for r in results {
        assert_eq!(r["error"], Value::Null, "{r}");
        assert!(content(r).chars().count() < 16_000, "{}", content(r).len());
    }
    assert!(content(&results[0]).ends_with(CUT_NOTE));
}

#[test]
fn a_trickled_page_ends_at_its_deadline() {
    let base = serve(Body::Trickle { len: 600 }, 1);
    let out = extract(&[format!("{base}/slow")], "WEB_EXTRACT_TIMEOUT=2\n");
    let err = out.json["results"][0]["error"].as_str().expect("an error");
    assert!(
        err.starts_with("Timed out after 2 s reading the page ("),
        "{err}"
    );
    assert!(out.elapsed < Duration::from_secs(30), "{:?}", out.elapsed);
}

#[test]
fn the_metadata_address_stays_refused_with_the_allowance() {
    let out = extract(
        &[
            "http://169.254.169.254/latest/meta-data".to_string(),
            "http://[::ffff:169.254.1.1]/".to_string(),
            "http://[fe80::1]/".to_string(),
        ],
        "",
    );
    let results = out.json["results"].as_array().expect("results");
    for r in results {
        let err = r["error"].as_str().expect("an error");
        assert!(
            err.starts_with("Blocked:") && err.contains("never fetched"),
            "{err}"
        );
    }
}
