//! `<controller><skin>`: the mesh it deforms, its bind shape matrix, its joints (by sid or id) with
//! their inverse bind matrices, and every influence of every position (`<vertex_weights>`).

use glam::Mat4;
use roxmltree::Node;

use super::document::Document;
use crate::anim::Influence;
use crate::formats::{files, FormatError};

/// Influences in one skin: far beyond any character, bounded for a hostile `vcount`.
const MAX_INFLUENCES: usize = 1 << 26;

pub struct Skin<'a, 'input> {
    pub geometry: Node<'a, 'input>,
    /// The morph the skin deforms, where its source is one (skinned blend shapes).
    pub morph: Option<Morph<'a, 'input>>,
    pub bind_shape: Mat4,
    /// Joint names as the skin gives them (sids, or ids for IDREF_array).
    pub joints: Vec<String>,
    /// Every word of the joints' name array, where the words outnumber the joints: 3ds Max writes
    /// names with spaces in them ("Bip01 L Thigh") into a `Name_array` of words, which
    /// [`regroup_names`] puts back together against the scene's nodes.
    pub joint_words: Vec<&'a str>,
    pub inverse_binds: Vec<Mat4>,
    /// Per position of the mesh: its influences, `joint` indexing `joints`.
    pub weights: Vec<Vec<Influence>>,
    /// The array of joint names and the `<vertex_weights>`, for errors about them.
    pub names_element: Node<'a, 'input>,
    pub weights_element: Node<'a, 'input>,
}

/// A `<morph>` controller: the geometry it starts from, its targets and their weights.
#[derive(Clone)]
pub struct Morph<'a, 'input> {
    pub base: Node<'a, 'input>,
    /// `method="RELATIVE"`: the targets are offsets; NORMALIZED (the default): whole shapes.
    pub relative: bool,
    /// Each target's name and `<geometry>`.
    pub targets: Vec<(String, Node<'a, 'input>)>,
    /// Each target's weight (`MORPH_WEIGHT`; 0 where the file gives none).
    pub weights: Vec<f32>,
}

/// The `<morph>` of a controller, if it is one: base, targets and weights, the targets read into
/// the model as morph targets.
pub fn morph<'a, 'input>(
    document: &Document<'a, 'input>,
    controller: Node<'a, 'input>,
) -> Result<Option<Morph<'a, 'input>>, FormatError> {
    let Some(morph) = document.child(controller, "morph") else { return Ok(None) };
    let geometry = |from: Node<'a, 'input>, url: &str| -> Result<Node<'a, 'input>, FormatError> {
        let found = document.lookup(from, url)?;
        if !found.has_tag_name("geometry") {
            return Err(document.error(from, format!("expected {} to be a <geometry>", files::quoted(url))));
        }
        Ok(found)
    };
    let base = geometry(morph, document.attribute(morph, "source")?)?;
    let relative = morph.attribute("method").is_some_and(|method| method.eq_ignore_ascii_case("RELATIVE"));
    let (mut targets, mut weights) = (Vec::new(), Vec::new());
    if let Some(inputs) = document.child(morph, "targets") {
        for input in inputs.children().filter(|child| child.has_tag_name("input")) {
            let source = document.lookup(input, document.attribute(input, "source")?)?;
            match input.attribute("semantic") {
                Some("MORPH_TARGET") => {
                    for name in document.name_source(source)? {
                        let target = geometry(input, &format!("#{name}"))?;
                        let label = target.attribute("name").unwrap_or(name).to_string();
                        targets.push((label, target));
                    }
                }
                Some("MORPH_WEIGHT") => weights = document.float_source(source, 1)?.values,
                _ => {}
            }
        }
    }
    weights.resize(targets.len(), 0.0);
    Ok(Some(Morph { base, relative, targets, weights }))
}

pub fn read<'a, 'input>(document: &Document<'a, 'input>, controller: Node<'a, 'input>) -> Result<Skin<'a, 'input>, FormatError> {
    let Some(skin) = document.child(controller, "skin") else {
        return Err(document.error(controller, "expected a <skin> or a <morph>"));
    };
    let source = document.lookup(skin, document.attribute(skin, "source")?)?;
    // A skin of a morph deforms the morph's base shape.
    let morph = match source.has_tag_name("controller") {
        true => morph(document, source)?,
        false => None,
    };
    let geometry = morph.as_ref().map_or(source, |morph| morph.base);
    if !geometry.has_tag_name("geometry") {
        return Err(document.error(skin, "expected its source to be a <geometry> or a <morph> of one"));
    }
    let bind_shape = match document.child(skin, "bind_shape_matrix") {
        Some(matrix) => document.matrix(matrix)?,
        None => Mat4::IDENTITY,
    };
    let joints_element = document.required_child(skin, "joints")?;
    let input = |parent: Node<'a, 'input>, semantic: &str| {
        parent
            .children()
            .find(|child| child.has_tag_name("input") && child.attribute("semantic") == Some(semantic))
            .ok_or_else(|| document.error(parent, format!("expected an input with semantic {semantic}")))
    };
    let joint_input = input(joints_element, "JOINT")?;
    let names_source = document.lookup(joint_input, document.attribute(joint_input, "source")?)?;
    let joints = document.name_source(names_source)?;
    let joint_words = document.name_words(names_source).filter(|words| words.len() > joints.len()).unwrap_or_default();
    let joints: Vec<String> = joints.into_iter().map(str::to_string).collect();
    let matrices_input = input(joints_element, "INV_BIND_MATRIX")?;
    let matrices = document.float_source(document.lookup(matrices_input, document.attribute(matrices_input, "source")?)?, 16)?;
    if matrices.count != joints.len() {
        return Err(document.error(
            matrices_input,
            format!("expected {} inverse bind matrices, one per joint, found {}", joints.len(), matrices.count),
        ));
    }
    let inverse_binds: Vec<Mat4> = (0..matrices.count)
        .filter_map(|index| matrices.item(index))
        .map(|rows| {
            let mut array = [0.0f32; 16];
            array.copy_from_slice(rows);
            Mat4::from_cols_array(&array).transpose()
        })
        .collect();

    let vertex_weights = document.required_child(skin, "vertex_weights")?;
    let count = document.count_attribute(vertex_weights, "count", 0)?;
    let joint_offset = document.input_offset(input(vertex_weights, "JOINT")?)?;
    let weight_input = input(vertex_weights, "WEIGHT")?;
    let weight_offset = document.input_offset(weight_input)?;
    let weight_values = document.float_source(document.lookup(weight_input, document.attribute(weight_input, "source")?)?, 1)?;
    let stride = vertex_weights
        .children()
        .filter(|child| child.has_tag_name("input"))
        .map(|input| document.input_offset(input).map(|offset| offset + 1))
        .try_fold(0, |stride, offset| offset.map(|offset| stride.max(offset)))?;
    let vcount_element = document.required_child(vertex_weights, "vcount")?;
    let vcount = document.indices(vcount_element)?;
    if vcount.len() != count {
        return Err(
            document.error(vcount_element, format!("expected {count} counts (the vertex_weights count), found {}", vcount.len()))
        );
    }
    let v_element = document.required_child(vertex_weights, "v")?;
    let v = document.indices(v_element)?;
    let total: usize = vcount.iter().map(|&count| count as usize).sum();
    if total > MAX_INFLUENCES || total.checked_mul(stride) != Some(v.len()) {
        return Err(document.error(
            v_element,
            format!("expected {total} influences of {stride} indices (from vcount), found {} indices", v.len()),
        ));
    }
    let mut weights = Vec::with_capacity(count);
    let mut at = 0usize;
    for &influences in &vcount {
        let mut list = Vec::with_capacity(influences as usize);
        for _ in 0..influences {
            let (joint, weight) = (v[at + joint_offset], v[at + weight_offset]);
            at += stride;
            if joint as usize >= joints.len() {
                // -1 (as u32 parse fails) or past the joints: the bind shape itself is not supported.
                return Err(document.error(v_element, format!("expected joint indices below {}, found {joint}", joints.len())));
            }
            let weight = weight_values.item(weight as usize).map(|item| item[0]).ok_or_else(|| {
                document.error(v_element, format!("expected weight indices below {}, found {weight}", weight_values.count))
            })?;
            list.push(Influence { joint, weight });
        }
        weights.push(list);
    }
    if let Some(name) = joints.iter().find(|name| name.is_empty()) {
        return Err(document.error(joint_input, format!("expected joint names, found {}", files::quoted(name))));
    }
    Ok(Skin {
        geometry,
        morph,
        bind_shape,
        joints,
        joint_words,
        inverse_binds,
        weights,
        names_element: names_source,
        weights_element: vertex_weights,
    })
}

/// `count` names made of `words` in order, each word run joined by single spaces, each the name
/// (or sid, or id) of a node (`known`), longest first; None where the words do not make `count`
/// known names exactly.
pub fn regroup_names(words: &[&str], count: usize, known: impl Fn(&str) -> bool) -> Option<Vec<String>> {
    let mut names = Vec::with_capacity(count);
    let mut at = 0;
    while at < words.len() {
        let left = count.checked_sub(names.len() + 1)?;
        let longest = words.len() - at - left;
        let name = (1..=longest).rev().map(|length| words[at..at + length].join(" ")).find(|name| known(name))?;
        at += name.split(' ').count();
        names.push(name);
    }
    (names.len() == count).then_some(names)
}
