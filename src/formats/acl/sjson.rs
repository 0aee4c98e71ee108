//! SJSON, the "simplified JSON" of Bitsquid/Stingray that ACL writes its clips in: the top level is
//! an object without braces, keys need no quotes, `=` stands for `:`, commas are optional, and
//! `//` and `/* */` are comments.
//!
//! Written by hand, not with the one crate that reads it (serde_sjson 1.2): that crate descends one
//! stack frame a nesting level with no limit, so a 1 MB file of `[` aborts the process with a stack
//! overflow (tried), and its errors print the parser's internals. Here nesting is bounded, every
//! error names a line, and values keep their line for the loader's errors.

use std::path::Path;

use super::super::{files, FormatError};

/// Nesting deeper than any ACL clip's (an object in a list in an object: 4).
pub const MAX_DEPTH: usize = 32;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Number(f64),
    Text(String),
    Bool(bool),
    Null,
    List(Vec<Node>),
    Object(Vec<(String, Node)>),
}

/// A value and the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub value: Value,
    pub line: usize,
}

impl Node {
    /// The value of `key` in an object (the last, where a key repeats).
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Object(entries) => entries.iter().rev().find(|(name, _)| name == key).map(|(_, node)| node),
            _ => None,
        }
    }

    pub fn number(&self) -> Option<f64> {
        match self.value {
            Value::Number(number) => Some(number),
            _ => None,
        }
    }

    pub fn text(&self) -> Option<&str> {
        match &self.value {
            Value::Text(text) => Some(text),
            _ => None,
        }
    }

    pub fn list(&self) -> Option<&[Node]> {
        match &self.value {
            Value::List(items) => Some(items),
            _ => None,
        }
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
    path: &'a Path,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> FormatError {
        FormatError::at_line(self.path, self.line, message)
    }

    /// What was opened at `line` and never closed.
    fn unclosed(&self, line: usize, message: &str) -> FormatError {
        FormatError::at_line(self.path, line, message)
    }

    /// Past whitespace, commas and comments.
    fn skip(&mut self) -> Result<(), FormatError> {
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b'\n' => {
                    self.line += 1;
                    self.at += 1;
                }
                b' ' | b'\t' | b'\r' | b',' => self.at += 1,
                b'/' if self.bytes.get(self.at + 1) == Some(&b'/') => {
                    while self.bytes.get(self.at).is_some_and(|&byte| byte != b'\n') {
                        self.at += 1;
                    }
                }
                b'/' if self.bytes.get(self.at + 1) == Some(&b'*') => {
                    let line = self.line;
                    self.at += 2;
                    loop {
                        match self.bytes.get(self.at) {
                            None => return Err(self.unclosed(line, "expected */ to end this comment, found the end of the file")),
                            Some(b'*') if self.bytes.get(self.at + 1) == Some(&b'/') => {
                                self.at += 2;
                                break;
                            }
                            Some(&byte) => {
                                self.line += usize::from(byte == b'\n');
                                self.at += 1;
                            }
                        }
                    }
                }
                _ => break,
            }
        }
        Ok(())
    }

    /// A key: a quoted string or a run of letters, digits and `_`.
    fn key(&mut self) -> Result<String, FormatError> {
        if self.bytes.get(self.at) == Some(&b'"') {
            return self.string();
        }
        let start = self.at;
        while self.bytes.get(self.at).is_some_and(|&byte| byte.is_ascii_alphanumeric() || byte == b'_') {
            self.at += 1;
        }
        if start == self.at {
            return Err(self.error(format!("expected a key, found {}", self.found())));
        }
        Ok(String::from_utf8_lossy(&self.bytes[start..self.at]).into_owned())
    }

    fn found(&self) -> String {
        match self.bytes.get(self.at) {
            None => "the end of the file".to_string(),
            Some(_) => {
                let rest = &self.bytes[self.at..(self.at + 12).min(self.bytes.len())];
                files::quoted(&String::from_utf8_lossy(rest))
            }
        }
    }

    fn string(&mut self) -> Result<String, FormatError> {
        let line = self.line;
        self.at += 1; // the opening quote
        let mut text = Vec::new();
        loop {
            match self.bytes.get(self.at) {
                None => return Err(self.unclosed(line, "expected \" to end this string, found the end of the file")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(String::from_utf8_lossy(&text).into_owned());
                }
                Some(b'\\') => {
                    let escaped = self.bytes.get(self.at + 1).copied().unwrap_or(b'\\');
                    text.push(match escaped {
                        b'n' => b'\n',
                        b't' => b'\t',
                        other => other,
                    });
                    self.at += 2;
                }
                Some(&byte) => {
                    self.line += usize::from(byte == b'\n');
                    text.push(byte);
                    self.at += 1;
                }
            }
        }
    }

    /// `key = value` pairs up to `end` (None: the end of the file).
    fn entries(&mut self, end: Option<u8>, depth: usize) -> Result<Vec<(String, Node)>, FormatError> {
        let mut entries = Vec::new();
        loop {
            self.skip()?;
            match (self.bytes.get(self.at), end) {
                (None, None) => return Ok(entries),
                (None, Some(_)) => return Err(self.error("expected } to end an object, found the end of the file")),
                (Some(&byte), Some(end)) if byte == end => {
                    self.at += 1;
                    return Ok(entries);
                }
                _ => {}
            }
            let key = self.key()?;
            self.skip()?;
            match self.bytes.get(self.at) {
                Some(b'=' | b':') => self.at += 1,
                _ => return Err(self.error(format!("expected = after {}, found {}", files::quoted(&key), self.found()))),
            }
            let value = self.value(depth)?;
            entries.push((key, value));
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, FormatError> {
        self.skip()?;
        let line = self.line;
        if depth >= MAX_DEPTH {
            return Err(self.error(format!("expected at most {MAX_DEPTH} levels of nesting, found more")));
        }
        let value = match self.bytes.get(self.at) {
            None => return Err(self.error("expected a value, found the end of the file")),
            Some(b'{') => {
                self.at += 1;
                Value::Object(self.entries(Some(b'}'), depth + 1)?)
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.skip()?;
                    match self.bytes.get(self.at) {
                        None => return Err(self.unclosed(line, "expected ] to end this list, found the end of the file")),
                        Some(b']') => {
                            self.at += 1;
                            break;
                        }
                        Some(_) => items.push(self.value(depth + 1)?),
                    }
                }
                Value::List(items)
            }
            Some(b'"') => Value::Text(self.string()?),
            Some(_) => {
                let start = self.at;
                while self
                    .bytes
                    .get(self.at)
                    .is_some_and(|&byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'+' | b'.' | b'_'))
                {
                    self.at += 1;
                }
                let word = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or_default();
                match word {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "null" => Value::Null,
                    "" => return Err(self.error(format!("expected a value, found {}", self.found()))),
                    word => match word.parse::<f64>() {
                        Ok(number) if number.is_finite() => Value::Number(number),
                        // An unquoted word is a string in SJSON.
                        _ if word.starts_with(|c: char| c.is_ascii_alphabetic())
                            && !matches!(word, "nan" | "inf" | "NaN" | "infinity") =>
                        {
                            Value::Text(word.to_string())
                        }
                        _ => return Err(self.error(format!("expected a finite number, found {}", files::quoted(word)))),
                    },
                }
            }
        };
        Ok(Node { value, line })
    }
}

/// Parses an SJSON text; `path` names it in errors. The top level is an object.
pub fn parse(text: &str, path: &Path) -> Result<Node, FormatError> {
    let mut parser = Parser { bytes: text.trim_start_matches('\u{feff}').as_bytes(), at: 0, line: 1, path };
    parser.skip()?;
    // A top level in braces, as JSON has it, is read too.
    let entries = if parser.bytes.get(parser.at) == Some(&b'{') {
        parser.at += 1;
        let entries = parser.entries(Some(b'}'), 1)?;
        parser.skip()?;
        if parser.at < parser.bytes.len() {
            return Err(parser.error(format!("expected the end of the file after the top level's }}, found {}", parser.found())));
        }
        entries
    } else {
        parser.entries(None, 0)?
    };
    Ok(Node { value: Value::Object(entries), line: 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acl_clip_text_reads() {
        let text = "version = 1\n// a comment\nclip =\n{\n\tname = \"walk\"\n\tsample_rate = 24, ok = true\n}\nlist = [ [ 1, -2.5e1 ] [ 3 4 ] ] /* block\ncomment */ word = hip\n";
        let root = parse(text, Path::new("a.sjson")).expect("parses");
        assert_eq!(root.get("version").and_then(Node::number), Some(1.0));
        let clip = root.get("clip").expect("clip");
        assert_eq!((clip.line, clip.get("name").and_then(Node::text)), (4, Some("walk")));
        assert_eq!(clip.get("ok").map(|node| &node.value), Some(&Value::Bool(true)));
        let list = root.get("list").and_then(Node::list).expect("list");
        assert_eq!(list[0].list().map(|items| items[1].number()), Some(Some(-25.0)));
        assert_eq!(root.get("word").and_then(Node::text), Some("hip"));
    }

    #[test]
    fn broken_and_hostile_text_gets_one_error_with_its_line() {
        let error = |text: &str| parse(text, Path::new("b.sjson")).expect_err("refused").to_string();
        assert_eq!(error("a = [ 1 2\n"), "b.sjson:1: expected ] to end this list, found the end of the file");
        assert_eq!(error("a = {\n b = 1\n"), "b.sjson:3: expected } to end an object, found the end of the file");
        assert_eq!(error("a =\n= 2"), "b.sjson:2: expected a value, found \"= 2\"");
        assert!(error("a = NaN").contains("expected a finite number"));
        assert!(error("a = 1e999").contains("expected a finite number"));
        // Nested without end, a megabyte deep: refused at the depth limit, without recursion past it.
        let deep = format!("a = {}", "[".repeat(1 << 20));
        assert!(error(&deep).contains("levels of nesting"));
        assert!(error("a = \"open").contains("expected \" to end this string"));
    }
}
