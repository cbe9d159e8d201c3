//! File names that look like the one asked for, for "File not found".

use std::fs;
use std::path::Path;

/// Directory entries looked at when suggesting similar file names.
const SIMILAR_SCAN_LIMIT: usize = 1000;
/// Similar file names suggested at most.
const SIMILAR_MAX: usize = 5;

/// Names in the folder of `path` that look like what was meant.
pub(super) fn similar_files(full: &Path, given: &str) -> Vec<String> {
    let Some(name) = full.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let Some(dir) = full.parent() else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let wanted = name.to_lowercase();
    let (wanted_stem, wanted_ext) = split_ext(&wanted);
    let mut scored: Vec<(u32, usize, String)> = Vec::new();
    for entry in entries.take(SIMILAR_SCAN_LIMIT).flatten() {
        let Ok(candidate) = entry.file_name().into_string() else {
            continue;
        };
        let lower = candidate.to_lowercase();
        if lower == wanted {
            continue;
        }
        let (stem, ext) = split_ext(&lower);
        let distance = edit_distance(&wanted, &lower);
        let score = if !wanted_stem.is_empty() && stem == wanted_stem {
            4
        } else if lower.starts_with(&wanted)
            || wanted.starts_with(&lower)
            || lower.contains(&wanted)
        {
            3
        } else if lower.chars().count() > 2 && wanted.contains(&lower) {
            2
        } else if distance <= (wanted.chars().count() / 4).max(1)
            || (ext == wanted_ext
                && edit_distance(stem, wanted_stem) <= (wanted_stem.chars().count() / 3).max(1))
        {
            // A typo: a near name, or a near stem with the same extension.
            1
        } else {
            0
        };
        if score > 0 {
            scored.push((score, distance, candidate));
        }
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let prefix = match given.rfind('/') {
        Some(idx) => &given[..=idx],
        None => "",
    };
    scored
        .into_iter()
        .take(SIMILAR_MAX)
        .map(|(_, _, name)| format!("{prefix}{name}"))
        .collect()
}

fn split_ext(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(idx) if idx > 0 => (&name[..idx], &name[idx + 1..]),
        _ => (name, ""),
    }
}

/// Levenshtein distance over characters, on names of any length cut to
/// their first 128 characters (a file name has at most 255 bytes).
fn edit_distance(a: &str, b: &str) -> usize {
    let cut = |s: &str| s.char_indices().nth(128).map_or(s.len(), |(i, _)| i);
    strsim::levenshtein(&a[..cut(a)], &b[..cut(b)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
