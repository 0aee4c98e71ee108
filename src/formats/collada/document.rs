//! The parsed XML and what every part of the loader asks of it: elements by `id`, errors that name
//! the line and column of an element, number and name arrays read through their `<accessor>`, and
//! warnings grouped by kind (one line a kind, however often a file earns it).

use ahash::{AHashMap as HashMap, AHashSet as HashSet};
use std::cell::RefCell;
use std::path::Path;

use glam::Mat4;
use roxmltree::Node;

use crate::formats::{files, FormatError};

/// Numbers in all arrays of one file, decoded: a small file cannot claim more than it holds
/// (every number is at least two bytes of text), so this only bounds what a huge file costs.
const MAX_NUMBERS: usize = 1 << 27;

/// An `<input>`'s offset: a corner or influence holds one index per offset, so real files stay in
/// single digits; the cap keeps `offset + 1` (the indices a corner) from overflowing.
const MAX_INPUT_OFFSET: usize = 1 << 16;

pub struct Document<'a, 'input> {
    pub xml: &'a roxmltree::Document<'input>,
    pub path: &'a Path,
    ids: HashMap<&'a str, Node<'a, 'input>>,
    /// Warnings grouped by kind (see [`Document::warn`]).
    quirks: RefCell<Vec<Quirk>>,
}

/// One kind of warning: the first one's line and message, and every element that earned it.
struct Quirk {
    kind: &'static str,
    line: u32,
    message: String,
    /// The elements it was met at (one read twice counts once).
    elements: HashSet<roxmltree::NodeId>,
}

/// Values from a `<source>`: `count` items of `stride` values each.
pub struct Source<T> {
    pub values: Vec<T>,
    pub stride: usize,
    pub count: usize,
}

impl<T: Copy> Source<T> {
    /// Item `index` (its `stride` values), or None past the end.
    pub fn item(&self, index: usize) -> Option<&[T]> {
        let start = index.checked_mul(self.stride)?;
        self.values.get(start..start.checked_add(self.stride)?)
    }
}

impl<'a, 'input> Document<'a, 'input> {
    pub fn new(xml: &'a roxmltree::Document<'input>, path: &'a Path) -> Result<Document<'a, 'input>, FormatError> {
        let mut ids = HashMap::new();
        for node in xml.descendants().filter(Node::is_element) {
            if let Some(id) = node.attribute("id") {
                ids.entry(id).or_insert(node);
            }
        }
        Ok(Document { xml, path, ids, quirks: RefCell::new(Vec::new()) })
    }

    /// A warning that a file may earn many times over (a quirk forgiven as assimp and the major
    /// engines forgive it, a repeated element left out): `kind` groups them, so a file gets one
    /// line a kind, naming the first one's line and counting the others.
    pub fn warn(&self, kind: &'static str, node: Node<'_, '_>, message: impl FnOnce() -> String) {
        let mut quirks = self.quirks.borrow_mut();
        match quirks.iter_mut().find(|quirk| quirk.kind == kind) {
            Some(quirk) => {
                quirk.elements.insert(node.id());
            }
            None => {
                let line = self.xml.text_pos_at(node.range().start).row;
                quirks.push(Quirk { kind, line, message: message(), elements: HashSet::from([node.id()]) });
            }
        }
    }

    /// The warnings, one line a kind, in the order first met.
    pub fn warnings(&self) -> Vec<String> {
        self.quirks
            .borrow()
            .iter()
            .map(|quirk| match quirk.elements.len() {
                1 => format!("line {}: {}", quirk.line, quirk.message),
                count => format!("line {}: {} ({} more like it)", quirk.line, quirk.message, count - 1),
            })
            .collect()
    }

    /// An error at `node`'s line (and column, in the message).
    pub fn error(&self, node: Node<'_, '_>, message: impl Into<String>) -> FormatError {
        let position = self.xml.text_pos_at(node.range().start);
        FormatError::at_line(
            self.path,
            position.row as usize,
            format!("<{}> (column {}): {}", node.tag_name().name(), position.col, message.into()),
        )
    }

    /// The element a `#id` URL (or a bare id) names.
    pub fn lookup(&self, from: Node<'_, '_>, url: &str) -> Result<Node<'a, 'input>, FormatError> {
        let id = url.strip_prefix('#').unwrap_or(url);
        self.ids
            .get(id)
            .copied()
            .ok_or_else(|| self.error(from, format!("expected an element with id {}, found none", files::quoted(id))))
    }

    /// A required attribute.
    pub fn attribute<'n>(&self, node: Node<'n, 'input>, name: &str) -> Result<&'n str, FormatError> {
        node.attribute(name).ok_or_else(|| self.error(node, format!("expected a {name} attribute")))
    }

    /// An optional unsigned attribute (`default` when absent).
    pub fn count_attribute(&self, node: Node<'_, '_>, name: &str, default: usize) -> Result<usize, FormatError> {
        match node.attribute(name) {
            None => Ok(default),
            Some(text) => text
                .trim()
                .parse()
                .map_err(|_| self.error(node, format!("expected {name} to be a count, found {}", files::quoted(text)))),
        }
    }

    /// An `<input>`'s `offset` (0 when absent), at most [`MAX_INPUT_OFFSET`].
    pub fn input_offset(&self, input: Node<'_, '_>) -> Result<usize, FormatError> {
        let offset = self.count_attribute(input, "offset", 0)?;
        if offset > MAX_INPUT_OFFSET {
            return Err(self.error(input, format!("expected an offset of at most {MAX_INPUT_OFFSET}, found {offset}")));
        }
        Ok(offset)
    }

    /// The words of an element's text, each parsed (`what` names one in errors) and accepted by
    /// `valid`, at most `MAX_NUMBERS` of them.
    fn numbers<T: std::str::FromStr>(
        &self,
        node: Node<'_, '_>,
        what: &str,
        valid: impl Fn(&T) -> bool,
    ) -> Result<Vec<T>, FormatError> {
        let text = node.text().unwrap_or("");
        let mut values = Vec::with_capacity((text.len() / 2).min(MAX_NUMBERS));
        for (index, word) in text.split_ascii_whitespace().enumerate() {
            if index >= MAX_NUMBERS {
                return Err(self.error(node, format!("expected at most {MAX_NUMBERS} numbers")));
            }
            match word.parse::<T>() {
                Ok(value) if valid(&value) => values.push(value),
                _ => return Err(self.error(node, format!("expected {what} at item {index}, found {}", files::quoted(word)))),
            }
        }
        Ok(values)
    }

    /// The floats in an element's text (finite ones).
    pub fn floats(&self, node: Node<'_, '_>) -> Result<Vec<f32>, FormatError> {
        self.numbers(node, "a finite number", |value: &f32| value.is_finite())
    }

    /// The unsigned integers in an element's text (`<p>`, `<v>`, `<vcount>`).
    pub fn indices(&self, node: Node<'_, '_>) -> Result<Vec<u32>, FormatError> {
        self.numbers(node, "an index", |_: &u32| true)
    }

    /// A 4×4 matrix written row by row (COLLADA's order).
    pub fn matrix(&self, node: Node<'_, '_>) -> Result<Mat4, FormatError> {
        let values = self.floats(node)?;
        let rows: [f32; 16] =
            values.as_slice().try_into().map_err(|_| self.error(node, format!("expected 16 numbers, found {}", values.len())))?;
        Ok(Mat4::from_cols_array(&rows).transpose())
    }

    /// The first child element named `name`.
    pub fn child<'n>(&self, node: Node<'n, 'input>, name: &str) -> Option<Node<'n, 'input>> {
        node.children().find(|child| child.has_tag_name(name))
    }

    pub fn required_child<'n>(&self, node: Node<'n, 'input>, name: &str) -> Result<Node<'n, 'input>, FormatError> {
        self.child(node, name).ok_or_else(|| self.error(node, format!("expected a <{name}> element")))
    }

    /// The `<accessor>` of a `<source>` and the array element it reads.
    fn accessor(&self, source: Node<'a, 'input>) -> Result<(Node<'a, 'input>, Node<'a, 'input>), FormatError> {
        let technique = self.required_child(source, "technique_common")?;
        let accessor = self.required_child(technique, "accessor")?;
        let array = self.lookup(accessor, self.attribute(accessor, "source")?)?;
        Ok((accessor, array))
    }

    /// Checks an array's `count` and the accessor's reach; returns (count, stride, offset).
    fn reach(&self, accessor: Node<'_, '_>, array: Node<'_, '_>, length: usize) -> Result<(usize, usize, usize), FormatError> {
        let declared = self.count_attribute(array, "count", length)?;
        if declared != length {
            return Err(self.error(array, format!("expected {declared} values (its count), found {length}")));
        }
        let count = self.count_attribute(accessor, "count", 0)?;
        let stride = self.accessor_stride(accessor)?;
        let offset = self.count_attribute(accessor, "offset", 0)?;
        let needed = count.checked_mul(stride).and_then(|values| values.checked_add(offset));
        if needed.is_none_or(|needed| needed > length) {
            return Err(self.error(
                accessor,
                format!("expected {count} items of {stride} values from {offset} to fit the array's {length} values"),
            ));
        }
        Ok((count, stride, offset))
    }

    /// A `<source>` of numbers, `width` values an item (the first `width` of each stride).
    pub fn float_source(&self, source: Node<'a, 'input>, width: usize) -> Result<Source<f32>, FormatError> {
        let (accessor, array) = self.accessor(source)?;
        let values = self.floats(array)?;
        let (count, stride, offset) = self.reach(accessor, array, values.len())?;
        if stride < width {
            return Err(self.error(accessor, format!("expected a stride of at least {width}, found {stride}")));
        }
        let mut items = Vec::with_capacity(count * width);
        for item in 0..count {
            let start = offset + item * stride;
            items.extend_from_slice(&values[start..start + width]);
        }
        Ok(Source { values: items, stride: width, count })
    }

    /// The values per item of a `<source>`'s accessor.
    pub fn stride(&self, source: Node<'a, 'input>) -> Result<usize, FormatError> {
        let (accessor, _) = self.accessor(source)?;
        self.accessor_stride(accessor)
    }

    /// An accessor's `stride`. Without one the spec means 1, but 3ds Max writes a `float4x4` param
    /// without a stride for 16 values a matrix: there (params adding up to more than one value)
    /// the params' total is the stride, as assimp reads it, with a warning.
    fn accessor_stride(&self, accessor: Node<'_, '_>) -> Result<usize, FormatError> {
        if accessor.has_attribute("stride") {
            return Ok(self.count_attribute(accessor, "stride", 1)?.max(1));
        }
        let params: Vec<&str> = accessor
            .children()
            .filter(|child| child.has_tag_name("param"))
            .map(|param| param.attribute("type").unwrap_or(""))
            .collect();
        let total: usize = params.iter().map(|kind| if *kind == "float4x4" { 16 } else { 1 }).sum();
        if params.contains(&"float4x4") {
            self.warn("float4x4 without stride", accessor, || {
                format!("a float4x4 <accessor> without a stride (as 3ds Max writes them): read as {total} values an item")
            });
        } else if total > 1 {
            self.warn("params without stride", accessor, || {
                format!("an <accessor> of {total} params without a stride: read as {total} values an item")
            });
        }
        Ok(total.max(1))
    }

    /// Every word of a `<source>` of names, however many its accessor counts; None without an array.
    pub fn name_words(&self, source: Node<'a, 'input>) -> Option<Vec<&'a str>> {
        let (_, array) = self.accessor(source).ok()?;
        Some(array.text().unwrap_or("").split_ascii_whitespace().collect())
    }

    /// A `<source>` of names (`Name_array` or `IDREF_array`), one an item. A `Name_array` with more words than its count holds names with spaces (3ds Max): its first
    /// words stand in until the skin puts the names back together ([`super::skin::regroup_names`]).
    pub fn name_source(&self, source: Node<'a, 'input>) -> Result<Vec<&'a str>, FormatError> {
        let (accessor, array) = self.accessor(source)?;
        let names: Vec<&str> = array.text().unwrap_or("").split_ascii_whitespace().collect();
        let declared = self.count_attribute(array, "count", names.len())?;
        let spaced = array.has_tag_name("Name_array") && names.len() > declared;
        let (count, stride, offset) = self.reach(accessor, array, if spaced { declared } else { names.len() })?;
        Ok((0..count).map(|item| names[offset + item * stride]).collect())
    }
}
