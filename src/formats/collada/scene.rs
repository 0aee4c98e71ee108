//! The `<visual_scene>` node tree, flattened parents first, each node's rest transform from its
//! `<matrix>` or its `<translate>`/`<rotate>`/`<scale>` stack in document order.

use std::collections::HashMap;

use glam::{Mat4, Quat, Vec3};
use roxmltree::Node;

use super::document::Document;
use crate::formats::FormatError;

/// Nodes in one scene; a deeper tree is refused (no real rig comes near it).
const MAX_NODES: usize = 1 << 16;

pub struct SceneNode<'a, 'input> {
    pub element: Node<'a, 'input>,
    pub parent: Option<usize>,
    /// The rest transform, relative to the parent.
    pub local: Mat4,
    pub id: Option<&'a str>,
    pub sid: Option<&'a str>,
    pub name: String,
    /// The sid of the node's `<matrix>` when its transform is one matrix (what whole-transform
    /// animation channels target).
    pub matrix_sid: Option<&'a str>,
}

pub struct Scene<'a, 'input> {
    /// Parents before children.
    pub nodes: Vec<SceneNode<'a, 'input>>,
    /// Each node's rest transform in the scene.
    pub global: Vec<Mat4>,
    /// The first node of each sid, id and name.
    by_sid: HashMap<&'a str, usize>,
    by_id: HashMap<&'a str, usize>,
    by_name: HashMap<String, usize>,
}

impl Scene<'_, '_> {
    /// The node whose sid, id or name is `name`, in that order (skins name joints by sid or id).
    pub fn find(&self, name: &str) -> Option<usize> {
        self.by_sid.get(name).or_else(|| self.by_id.get(name)).or_else(|| self.by_name.get(name)).copied()
    }

    /// The node whose id is `id` (animation targets).
    pub fn by_id(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }
}

/// The scene `<scene><instance_visual_scene>` names, or the first visual scene.
pub fn read<'a, 'input>(document: &Document<'a, 'input>, warnings: &mut Vec<String>) -> Result<Scene<'a, 'input>, FormatError> {
    let root = document.xml.root_element();
    let instance = document.child(root, "scene").and_then(|scene| document.child(scene, "instance_visual_scene"));
    let visual_scene = match instance {
        Some(instance) => document.lookup(instance, document.attribute(instance, "url")?)?,
        None => match root.descendants().find(|node| node.has_tag_name("visual_scene")) {
            Some(scene) => scene,
            None => return Err(document.error(root, "expected a <visual_scene>, found none")),
        },
    };
    let mut nodes: Vec<SceneNode> = Vec::new();
    // Depth first without recursion: a deep tree cannot overflow the stack.
    let mut stack: Vec<(Node, Option<usize>)> =
        visual_scene.children().filter(|child| child.has_tag_name("node")).rev().map(|node| (node, None)).collect();
    while let Some((element, parent)) = stack.pop() {
        if nodes.len() >= MAX_NODES {
            return Err(document.error(element, format!("expected at most {MAX_NODES} nodes in the scene")));
        }
        let (local, matrix_sid) = transform(document, element, warnings)?;
        let index = nodes.len();
        nodes.push(SceneNode {
            element,
            parent,
            local,
            id: element.attribute("id"),
            sid: element.attribute("sid"),
            name: element.attribute("name").or(element.attribute("id")).unwrap_or("").to_string(),
            matrix_sid,
        });
        if element.children().any(|child| child.has_tag_name("instance_node")) {
            warnings.push(format!("node {}: <instance_node> is not read; its instance is left out", nodes[index].name));
        }
        stack.extend(
            element
                .children()
                .filter(|child| child.has_tag_name("node"))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .map(|child| (child, Some(index))),
        );
    }
    let mut global = Vec::with_capacity(nodes.len());
    let (mut by_sid, mut by_id, mut by_name) = (HashMap::new(), HashMap::new(), HashMap::new());
    for (index, node) in nodes.iter().enumerate() {
        let parent = node.parent.and_then(|parent| global.get(parent).copied()).unwrap_or(Mat4::IDENTITY);
        global.push(parent * node.local);
        if let Some(sid) = node.sid {
            by_sid.entry(sid).or_insert(index);
        }
        if let Some(id) = node.id {
            by_id.entry(id).or_insert(index);
        }
        by_name.entry(node.name.clone()).or_insert(index);
    }
    Ok(Scene { nodes, global, by_sid, by_id, by_name })
}

/// A node's transform elements multiplied in document order, and the sid of its matrix when it
/// is a single `<matrix>`.
fn transform<'a>(
    document: &Document<'_, '_>,
    node: Node<'a, '_>,
    warnings: &mut Vec<String>,
) -> Result<(Mat4, Option<&'a str>), FormatError> {
    let mut local = Mat4::IDENTITY;
    let mut elements = 0;
    let mut matrix_sid = None;
    for child in node.children().filter(Node::is_element) {
        let values = || document.floats(child);
        let part = match child.tag_name().name() {
            "matrix" => {
                matrix_sid = child.attribute("sid");
                document.matrix(child)?
            }
            "translate" => Mat4::from_translation(vec3(document, child, &values()?)?),
            "scale" => Mat4::from_scale(vec3(document, child, &values()?)?),
            "rotate" => {
                let values = values()?;
                let [x, y, z, angle] = values[..] else {
                    return Err(
                        document.error(child, format!("expected an axis and an angle (4 numbers), found {}", values.len()))
                    );
                };
                let axis = Vec3::new(x, y, z);
                if axis.length_squared() == 0.0 {
                    Mat4::IDENTITY
                } else {
                    Mat4::from_quat(Quat::from_axis_angle(axis.normalize(), angle.to_radians()))
                }
            }
            "lookat" | "skew" => {
                warnings.push(format!("a <{}> transform is not read: left out", child.tag_name().name()));
                Mat4::IDENTITY
            }
            _ => continue,
        };
        elements += 1;
        local *= part;
    }
    Ok((local, if elements == 1 { matrix_sid } else { None }))
}

fn vec3(document: &Document<'_, '_>, node: Node<'_, '_>, values: &[f32]) -> Result<Vec3, FormatError> {
    match values {
        [x, y, z] => Ok(Vec3::new(*x, *y, *z)),
        _ => Err(document.error(node, format!("expected 3 numbers, found {}", values.len()))),
    }
}
