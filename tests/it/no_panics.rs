//! The parsers and the animation code run on whatever bytes a user drops on vkskin, so outside their
//! tests they must not `unwrap`, `expect`, `panic!`, `unreachable!`, `todo!` or `unimplemented!`:
//! every failure is an error value naming the file and place. `src/formats` and `src/anim` carry
//! `deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)` for anyone running clippy; CI
//! runs only the test command, so this test enforces the same rule there by reading the sources.

use std::path::{Path, PathBuf};

const FORBIDDEN: [&str; 6] = [".unwrap()", ".expect(", "panic!", "unreachable!", "todo!", "unimplemented!"];

/// The source with comments, string and char literals blanked and `#[cfg(test)]` items removed,
/// keeping line numbers.
pub(crate) fn code_only(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut index = 0;
    while index < bytes.len() {
        let rest = &source[index..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            index += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |end| end + 2);
            out.extend(rest[..end].chars().filter(|&c| c == '\n'));
            index += end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|&c| c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            let end = rest[body..].find(&close).map_or(rest.len(), |end| body + end + close.len());
            out.extend(rest[..end].chars().filter(|&c| c == '\n'));
            index += end;
        } else if rest.starts_with('"') {
            let mut end = 1;
            let chars: Vec<char> = rest.chars().collect();
            let mut byte_end = 1;
            while end < chars.len() {
                let c = chars[end];
                byte_end += c.len_utf8();
                if c == '\\' {
                    end += 1;
                    if end < chars.len() {
                        byte_end += chars[end].len_utf8();
                        if chars[end] == '\n' {
                            out.push('\n');
                        }
                    }
                } else if c == '"' {
                    break;
                } else if c == '\n' {
                    out.push('\n');
                }
                end += 1;
            }
            out.push_str("\"\"");
            index += byte_end;
        } else if rest.starts_with("#[cfg(test)]") {
            // Skip the attribute and the item after it: up to its closing brace or semicolon.
            let mut depth = 0usize;
            let mut end = "#[cfg(test)]".len();
            for (offset, c) in rest.char_indices().skip(end) {
                end = offset + c.len_utf8();
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ';' if depth == 0 => break,
                    _ => {}
                }
            }
            out.extend(rest[..end].chars().filter(|&c| c == '\n'));
            index += end;
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            // A char literal such as '"' or '{' would fool the scanner: blank it.
            if c == '\'' {
                let literal: String = rest.chars().take(4).collect();
                if let Some(close) = literal[1..].find('\'').filter(|&close| close <= 2) {
                    out.push_str("' '");
                    index += close + 2;
                    continue;
                }
            }
            out.push(c);
            index += c.len_utf8();
        }
    }
    out
}

pub(crate) fn rust_files(folder: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).unwrap_or_else(|error| panic!("{}: {error}", folder.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn formats_and_anim_never_panic_on_input() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for folder in ["src/formats", "src/anim"] {
        rust_files(&root.join(folder), &mut files);
    }
    assert!(files.len() >= 4, "found the sources: {files:?}");
    let mut offences = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("readable source");
        let code = code_only(&source);
        assert_eq!(code.lines().count(), source.lines().count(), "{}: line numbers kept", file.display());
        for (number, line) in code.lines().enumerate() {
            for pattern in FORBIDDEN {
                if line.contains(pattern) {
                    offences.push(format!("{}:{}: {pattern} in {}", file.display(), number + 1, line.trim()));
                }
            }
        }
    }
    assert!(offences.is_empty(), "panicking calls outside tests:\n{}", offences.join("\n"));
}

#[test]
fn the_scanner_sees_what_it_must_and_skips_what_it_may() {
    let source = r#####"
fn parse(text: &str) -> u32 {
    let message = "call .unwrap() and panic! in a string";
    // a comment that says .expect( is fine
    let quote = '"';
    text.parse().unwrap()
}

#[cfg(test)]
mod tests {
    fn helper() { Some(1).unwrap(); }
}

fn after() { todo!() }
"#####;
    let code = code_only(source);
    let hits: Vec<(usize, &str)> = code
        .lines()
        .enumerate()
        .flat_map(|(number, line)| {
            FORBIDDEN.iter().filter(move |pattern| line.contains(*pattern)).map(move |pattern| (number + 1, *pattern))
        })
        .collect();
    assert_eq!(hits, vec![(6, ".unwrap()"), (14, "todo!")]);
}
