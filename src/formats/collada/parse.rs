//! The text into an XML tree with a `<COLLADA>` root, with the nesting checked first so that a
//! hostile file cannot overflow the stack of the recursive XML reader.

use std::path::Path;

use crate::formats::FormatError;

/// Elements in one file (roxmltree's own cap; a file holds at most this many nodes).
const MAX_XML_NODES: u32 = 1 << 26;

/// Elements nested deeper than this are refused before parsing: the XML reader recurses per level
/// (20,000 levels overflowed the main thread's stack); real COLLADA files nest a few dozen deep.
const MAX_NESTING: usize = 1024;

/// Parses `text` as XML without DTDs and checks that its root is `<COLLADA>`; errors name the line.
pub fn xml<'input>(text: &'input str, path: &Path) -> Result<roxmltree::Document<'input>, FormatError> {
    check_nesting(text, path)?;
    let options = roxmltree::ParsingOptions { allow_dtd: false, nodes_limit: MAX_XML_NODES };
    let xml = roxmltree::Document::parse_with_options(text, options).map_err(|error| {
        let position = error.pos();
        FormatError::at_line(path, position.row as usize, format!("expected well-formed XML (column {}): {error}", position.col))
    })?;
    let root = xml.root_element();
    if !root.has_tag_name("COLLADA") {
        return Err(FormatError::at_line(
            path,
            xml.text_pos_at(root.range().start).row as usize,
            format!("expected a <COLLADA> root element, found <{}>", root.tag_name().name()),
        ));
    }
    Ok(xml)
}

/// A linear scan for the nesting depth of the elements (comments, CDATA, processing instructions
/// and declarations skipped; an upper bound is all that is needed).
fn check_nesting(text: &str, path: &Path) -> Result<(), FormatError> {
    let bytes = text.as_bytes();
    let (mut depth, mut line, mut at) = (0usize, 1usize, 0usize);
    let skip_to = |from: usize, end: &str| text[from..].find(end).map_or(bytes.len(), |found| from + found + end.len());
    while at < bytes.len() {
        match bytes[at] {
            b'\n' => {
                line += 1;
                at += 1;
            }
            b'<' => {
                let rest = &text[at..];
                let next = if rest.starts_with("<!--") {
                    skip_to(at, "-->")
                } else if rest.starts_with("<![CDATA[") {
                    skip_to(at, "]]>")
                } else if rest.starts_with("<?") {
                    skip_to(at, "?>")
                } else if rest.starts_with("<!") {
                    skip_to(at, ">")
                } else {
                    let end = skip_to(at, ">");
                    let tag = &text[at..end];
                    if tag.starts_with("</") {
                        depth = depth.saturating_sub(1);
                    } else if !tag.ends_with("/>") {
                        depth += 1;
                        if depth > MAX_NESTING {
                            return Err(FormatError::at_line(
                                path,
                                line,
                                format!("expected elements nested at most {MAX_NESTING} deep, found deeper"),
                            ));
                        }
                    }
                    end
                };
                line += text[at..next].matches('\n').count();
                at = next;
            }
            _ => at += 1,
        }
    }
    Ok(())
}
