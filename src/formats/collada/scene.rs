//! The `<visual_scene>` node tree, flattened parents first, each node's rest transform from its
//! `<matrix>` or its `<translate>`/`<rotate>`/`<scale>` stack in document order.

use ahash::AHashMap as HashMap;

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
    /// The transform stack it is made of, in document order.
    pub elements: Vec<Element<'a>>,
    pub id: Option<&'a str>,
    pub sid: Option<&'a str>,
    pub name: String,
}

pub struct Scene<'a, 'input> {
    /// Parents before children.
    pub nodes: Vec<SceneNode<'a, 'input>>,
    /// Each node's rest transform in the scene.
    pub global: Vec<Mat4>,
    /// The first node of each id and name.
    by_id: HashMap<&'a str, usize>,
    by_name: HashMap<String, usize>,
    /// Every node of each sid (two characters may share a rig's sids).
    all_by_sid: HashMap<&'a str, Vec<usize>>,
    /// Each node's subtree is `index..subtree_end[index]` (the order is depth first).
    subtree_end: Vec<usize>,
}

impl Scene<'_, '_> {
    /// The node whose sid, id or name is `name`, in that order (skins name joints by sid or id).
    pub fn find(&self, name: &str) -> Option<usize> {
        let first_of_sid = self.all_by_sid.get(name).and_then(|nodes| nodes.first());
        first_of_sid.or_else(|| self.by_id.get(name)).or_else(|| self.by_name.get(name)).copied()
    }

    /// Whether some node has this sid, id or name.
    pub fn knows(&self, name: &str) -> bool {
        self.all_by_sid.contains_key(name) || self.by_id.contains_key(name) || self.by_name.contains_key(name)
    }

    /// The node a skin's joint name means under its `<skeleton>` roots: a node of that sid inside
    /// one of their subtrees, else (no roots, or none there) as `find`. `steps` bounds the
    /// candidates tried in one load (many nodes sharing a sid cannot make this quadratic).
    pub fn find_under(&self, name: &str, roots: &[usize], steps: &mut usize) -> Option<usize> {
        if !roots.is_empty() {
            for &candidate in self.all_by_sid.get(name).map_or(&[][..], Vec::as_slice) {
                *steps = steps.saturating_sub(roots.len());
                if *steps == 0 {
                    return None;
                }
                if roots.iter().any(|&root| root <= candidate && candidate < self.subtree_end.get(root).copied().unwrap_or(root))
                {
                    return Some(candidate);
                }
            }
        }
        self.find(name)
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
    // The `<instance_node>`s a node was reached through, as a linked list (element, the entry
    // before it): a node that instances itself, directly or not, is an error, not a hang.
    let mut instanced: Vec<(roxmltree::NodeId, Option<usize>)> = Vec::new();
    // Depth first without recursion: a deep tree cannot overflow the stack.
    let mut stack: Vec<(Node, Option<usize>, Option<usize>)> =
        visual_scene.children().filter(|child| child.has_tag_name("node")).rev().map(|node| (node, None, None)).collect();
    while let Some((element, parent, through)) = stack.pop() {
        if nodes.len() >= MAX_NODES {
            return Err(document.error(element, format!("expected at most {MAX_NODES} nodes in the scene")));
        }
        let elements = transform(document, element, warnings)?;
        let local = compose(&elements);
        let index = nodes.len();
        nodes.push(SceneNode {
            element,
            parent,
            local,
            elements,
            id: element.attribute("id"),
            sid: element.attribute("sid"),
            name: element.attribute("name").or(element.attribute("id")).unwrap_or("").to_string(),
        });
        // Children in document order: <node>s, and the nodes <instance_node>s name.
        let mut children = Vec::new();
        for child in element.children() {
            if child.has_tag_name("node") {
                children.push((child, Some(index), through));
            } else if child.has_tag_name("instance_node") {
                let target = document.lookup(child, document.attribute(child, "url")?)?;
                if !target.has_tag_name("node") {
                    return Err(document.error(child, "expected its url to name a <node>"));
                }
                let mut link = through;
                while let Some(entry) = link {
                    let (node, before) = instanced[entry];
                    if node == target.id() {
                        return Err(document.error(child, "expected a node that does not instance itself, found a loop"));
                    }
                    link = before;
                }
                instanced.push((target.id(), through));
                children.push((target, Some(index), Some(instanced.len() - 1)));
            }
        }
        stack.extend(children.into_iter().rev());
    }
    let mut global = Vec::with_capacity(nodes.len());
    let (mut by_id, mut by_name) = (HashMap::new(), HashMap::new());
    let mut all_by_sid: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut subtree_end: Vec<usize> = (1..=nodes.len()).collect();
    for index in (0..nodes.len()).rev() {
        if let Some(parent) = nodes[index].parent {
            subtree_end[parent] = subtree_end[parent].max(subtree_end[index]);
        }
    }
    for (index, node) in nodes.iter().enumerate() {
        let parent = node.parent.and_then(|parent| global.get(parent).copied()).unwrap_or(Mat4::IDENTITY);
        global.push(parent * node.local);
        if let Some(sid) = node.sid {
            all_by_sid.entry(sid).or_default().push(index);
        }
        if let Some(id) = node.id {
            by_id.entry(id).or_insert(index);
        }
        by_name.entry(node.name.clone()).or_insert(index);
    }
    Ok(Scene { nodes, global, by_id, by_name, all_by_sid, subtree_end })
}

/// One element of a node's transform stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// 16 values, row by row.
    Matrix,
    Translate,
    /// Axis x, y, z and the angle in degrees.
    Rotate,
    Scale,
}

impl Kind {
    pub fn width(self) -> usize {
        match self {
            Kind::Matrix => 16,
            Kind::Rotate => 4,
            Kind::Translate | Kind::Scale => 3,
        }
    }

    /// The value a member names: `X`, `Y`, `Z`, `ANGLE` or an index `(i)`, `(i)(j)` (row, column).
    pub fn member(self, member: &str) -> Option<usize> {
        let index = match member {
            ".X" => 0,
            ".Y" => 1,
            ".Z" => 2,
            ".ANGLE" if self == Kind::Rotate => 3,
            _ => {
                let numbers: Vec<usize> = member
                    .split(['(', ')'])
                    .filter(|part| !part.is_empty())
                    .map(|part| part.parse().ok())
                    .collect::<Option<_>>()?;
                match numbers[..] {
                    [index] => index,
                    [row, column] if self == Kind::Matrix && row < 4 && column < 4 => row * 4 + column,
                    _ => return None,
                }
            }
        };
        (index < self.width()).then_some(index)
    }
}

/// A transform element: its kind, sid and values as written.
#[derive(Clone, Debug)]
pub struct Element<'a> {
    pub kind: Kind,
    pub sid: Option<&'a str>,
    pub values: Vec<f32>,
}

/// The matrix of one element's values.
pub fn element_matrix(kind: Kind, values: &[f32]) -> Mat4 {
    let at = |index: usize| values.get(index).copied().unwrap_or(0.0);
    match kind {
        Kind::Matrix => {
            let mut array = [0.0f32; 16];
            for (index, value) in array.iter_mut().enumerate() {
                *value = at(index);
            }
            Mat4::from_cols_array(&array).transpose()
        }
        Kind::Translate => Mat4::from_translation(Vec3::new(at(0), at(1), at(2))),
        Kind::Scale => Mat4::from_scale(Vec3::new(at(0), at(1), at(2))),
        Kind::Rotate => {
            let axis = Vec3::new(at(0), at(1), at(2));
            if axis.length_squared() == 0.0 {
                Mat4::IDENTITY
            } else {
                Mat4::from_quat(Quat::from_axis_angle(axis.normalize(), at(3).to_radians()))
            }
        }
    }
}

/// The stack's matrix: its elements multiplied in document order.
pub fn compose(elements: &[Element<'_>]) -> Mat4 {
    elements.iter().fold(Mat4::IDENTITY, |local, element| local * element_matrix(element.kind, &element.values))
}

/// A node's transform elements in document order.
fn transform<'a>(
    document: &Document<'_, '_>,
    node: Node<'a, '_>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Element<'a>>, FormatError> {
    let mut elements = Vec::new();
    for child in node.children().filter(Node::is_element) {
        let kind = match child.tag_name().name() {
            "matrix" => Kind::Matrix,
            "translate" => Kind::Translate,
            "rotate" => Kind::Rotate,
            "scale" => Kind::Scale,
            "lookat" | "skew" => {
                warnings.push(format!("a <{}> transform is not read: left out", child.tag_name().name()));
                continue;
            }
            _ => continue,
        };
        let values = document.floats(child)?;
        if values.len() != kind.width() {
            return Err(document.error(child, format!("expected {} numbers, found {}", kind.width(), values.len())));
        }
        elements.push(Element { kind, sid: child.attribute("sid"), values });
    }
    Ok(elements)
}
