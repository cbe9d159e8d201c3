//! Results with images (`ToolContent`): through dispatch (the media
//! checked and capped, `dispatch` answering a note), and served by
//! `serve --mcp` as image blocks, read back with rmcp's client.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine;
use hermes_runtime::content::MAX_MEDIA_BYTES;
use hermes_runtime::{MediaKind, Profile, ToolContext};
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::ServiceExt;
use serde_json::{json, Value};

const PIXEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/pixel.png");

fn ctx(home: &std::path::Path) -> ToolContext {
    ToolContext::new(Profile::new(home), home)
}

fn decode(data: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap()
}

#[tokio::test]
async fn an_image_reaches_dispatch_content_whole_and_dispatch_as_a_note() {
    let home = tempfile::tempdir().unwrap();
    let reg = hermes_tests::registry();
    let args = json!({ "path": PIXEL }).to_string();
    let content = reg
        .dispatch_json_content("show_image", &args, &ctx(home.path()))
        .await;
    assert_eq!(content.text, "the image pixel.png");
    assert_eq!(content.media.len(), 1);
    let image = &content.media[0];
    assert_eq!(
        (image.kind, image.mime_type.as_str()),
        (MediaKind::Image, "image/png")
    );
    assert_eq!(decode(&image.data), std::fs::read(PIXEL).unwrap());

    // The text answer names the image and carries none of its bytes.
    let text = reg
        .dispatch_json("show_image", &args, &ctx(home.path()))
        .await;
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["result"], "the image pixel.png");
    let note = v["media_note"].as_str().unwrap();
    let size = std::fs::metadata(PIXEL).unwrap().len();
    assert!(
        note.contains(&format!("image (image/png, {size} bytes)")),
        "{note}"
    );
    assert!(!text.contains(&image.data), "{text}");
}

#[tokio::test]
async fn media_over_the_cap_or_of_the_wrong_type_is_dropped_with_a_note() {
    let home = tempfile::tempdir().unwrap();
    let big = home.path().join("big.png");
    std::fs::write(&big, vec![7u8; MAX_MEDIA_BYTES + 1]).unwrap();
    let reg = hermes_tests::registry();
    let c = reg
        .dispatch_content("show_image", json!({ "path": big }), &ctx(home.path()))
        .await;
    assert!(c.media.is_empty());
    assert!(c.text.contains("over the 5 MiB cap"), "{}", c.text);
    // With nothing left to show, the answer is a JSON document as ever.
    let text = reg
        .dispatch("show_image", json!({ "path": big }), &ctx(home.path()))
        .await;
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert!(v.as_str().is_some_and(|t| t.contains("dropped")), "{text}");
    // Exactly at the cap it is kept.
    std::fs::write(&big, vec![7u8; MAX_MEDIA_BYTES]).unwrap();
    let c = reg
        .dispatch_content("show_image", json!({ "path": big }), &ctx(home.path()))
        .await;
    assert_eq!(c.media.len(), 1);

    let c = reg
        .dispatch_content(
            "show_image",
            json!({ "path": PIXEL, "mime_type": "text/html" }),
            &ctx(home.path()),
        )
        .await;
    assert!(c.media.is_empty());
    assert!(c.text.contains("MIME type is not image/"), "{}", c.text);
}

#[tokio::test]
async fn a_string_result_never_becomes_media() {
    // A tool that returns text holding an envelope answers that text.
    let home = tempfile::tempdir().unwrap();
    let envelope = hermes_runtime::ToolContent::text("x")
        .with_image(b"\x89PNG\r\n\x1a\n", "image/png")
        .into_result();
    let reg = hermes_tests::registry();
    let c = reg
        .dispatch_content("raw_string", json!({ "text": envelope }), &ctx(home.path()))
        .await;
    assert!(c.media.is_empty(), "{c:?}");
}

/// `serve --mcp` over the test tools (`examples/serve_test_tools.rs`), read
/// with rmcp's client: the image arrives as an image block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_mcp_sends_an_image_block() {
    let home = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let server = exe
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .join("examples/serve_test_tools");
    assert!(
        server.exists(),
        "{} is built by a plain `cargo test`; alone: `cargo build -p hermes-tests --example serve_test_tools`",
        server.display()
    );
    let mut command = tokio::process::Command::new(server);
    command.arg(home.path()).arg("edges");
    let transport = rmcp::transport::TokioChildProcess::new(command).unwrap();
    let limit = std::time::Duration::from_secs(60);
    let client = tokio::time::timeout(limit, ().serve(transport))
        .await
        .unwrap()
        .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "show_image"));
    let args = json!({ "path": PIXEL });
    let result = tokio::time::timeout(
        limit,
        client.call_tool(
            CallToolRequestParams::new("show_image")
                .with_arguments(args.as_object().unwrap().clone()),
        ),
    )
    .await
    .unwrap()
    .unwrap();
    assert_ne!(result.is_error, Some(true));
    let mut text = None;
    let mut images = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => text = Some(t.text.clone()),
            ContentBlock::Image(i) => images.push((i.mime_type.clone(), decode(&i.data))),
            other => panic!("unexpected block {other:?}"),
        }
    }
    assert_eq!(text.as_deref(), Some("the image pixel.png"));
    assert_eq!(
        images,
        vec![("image/png".to_string(), std::fs::read(PIXEL).unwrap())]
    );
    client.cancel().await.unwrap();
}
