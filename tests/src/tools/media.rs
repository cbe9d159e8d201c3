//! A tool whose result carries an image (`ToolContent`): through
//! dispatch, the provider forms and `serve --mcp`.

use hermes_macros::hermes_tool;
use hermes_runtime::ToolContent;

/// Shows an image file: its file name as text and its bytes as an image.
#[hermes_tool(toolset = "edges", read_only, open_world = false, concurrency = "safe")]
pub fn show_image(
    /// The image file's path.
    path: String,
    /// Its MIME type; `image/png` when absent.
    mime_type: Option<String>,
) -> Result<ToolContent, String> {
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let mime = mime_type.unwrap_or_else(|| "image/png".to_string());
    let name = std::path::Path::new(&path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(ToolContent::text(format!("the image {name}")).with_image(&bytes, mime))
}
