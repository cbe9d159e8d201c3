//! temp
use std::path::Path;
#[derive(serde::Serialize)]
pub struct ReadFileOutput {
    pub content: String,
}
#[derive(Debug)]
pub struct FileError(String);
impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
pub fn read_file(
    base: &Path,
    path: &str,
    _o: Option<u64>,
    _l: Option<u64>,
) -> Result<ReadFileOutput, FileError> {
    std::fs::read_to_string(base.join(path))
        .map(|content| ReadFileOutput { content })
        .map_err(|e| FileError(e.to_string()))
}
