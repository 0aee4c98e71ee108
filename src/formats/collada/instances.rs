//! Instances: skinned meshes (controllers) and rigid ones (geometries), with their materials; the
//! skins they use, each read once; and the scene node of each skin joint.

use ahash::{AHashMap as HashMap, AHashSet as HashSet};

use roxmltree::{Node, NodeId};

use super::document::Document;
use super::scene::Scene;
use super::skin::{self, Morph, Skin};
use crate::formats::{files, FormatError};

/// Candidate nodes tried for skin joint names in one load (see `Scene::find_under`).
const LOOKUP_STEPS: usize = 1 << 24;

/// One `<instance_controller>` or `<instance_geometry>`: what it draws, where and with what.
pub struct Instance<'a, 'input> {
    /// The `<instance_controller>` or `<instance_geometry>` element.
    pub element: Node<'a, 'input>,
    pub node: usize,
    pub skin: Option<usize>,
    pub geometry: Node<'a, 'input>,
    pub bindings: HashMap<&'a str, Node<'a, 'input>>,
    /// A skinned instance's `<skeleton>` roots: where its joint names are looked up first.
    pub roots: Vec<usize>,
    /// The node of each of its skin's joints.
    pub joint_nodes: Vec<usize>,
    /// An unskinned `<morph>` controller's targets (a skinned one's are its skin's).
    pub morph: Option<Morph<'a, 'input>>,
}

/// What the scene instances: its instances in the scene's order, and the skins they use.
pub struct Instanced<'a, 'input> {
    pub instances: Vec<Instance<'a, 'input>>,
    /// Indexed by [`Instance::skin`].
    pub skins: Vec<Skin<'a, 'input>>,
}

/// What makes two instances draw the same thing: the element's kind, what it instances, its
/// material bindings and skeleton roots, and for a rigid geometry the scene node that places it
/// (a skin places its mesh itself).
type Sameness = (bool, NodeId, Vec<(String, u32)>, Vec<usize>, Option<usize>);

/// Every instance under the scene's nodes (a repeat of one that draws the same thing is left out
/// with a warning), the skins they use, and each skinned instance's joint nodes.
pub fn read<'a, 'input>(
    document: &Document<'a, 'input>,
    scene: &Scene<'a, 'input>,
) -> Result<Instanced<'a, 'input>, FormatError> {
    let mut instanced = Instanced { instances: Vec::new(), skins: Vec::new() };
    let mut skin_of: HashMap<NodeId, usize> = HashMap::new();
    let mut seen: HashSet<Sameness> = HashSet::new();
    for (index, node) in scene.nodes.iter().enumerate() {
        for element in node
            .element
            .children()
            .filter(|child| child.has_tag_name("instance_controller") || child.has_tag_name("instance_geometry"))
        {
            let target = document.lookup(element, document.attribute(element, "url")?)?;
            let bindings = material_bindings(document, element)?;
            let controller = element.has_tag_name("instance_controller");
            let roots = skeleton_roots(document, scene, element, controller)?;
            let mut sorted: Vec<(String, u32)> =
                bindings.iter().map(|(symbol, target)| (symbol.to_string(), target.id().get())).collect();
            sorted.sort();
            let placed_by = if controller { None } else { Some(index) };
            if !seen.insert((controller, target.id(), sorted, roots.clone(), placed_by)) {
                // The same mesh drawn again in the same place: once is what the file shows.
                document.warn("repeated instance", element, || {
                    format!(
                        "<{}> of {} repeated where it draws the same thing again: drawn once",
                        element.tag_name().name(),
                        files::quoted(target.attribute("id").unwrap_or(""))
                    )
                });
                continue;
            }
            let (skin, geometry, roots, morph) = if !controller {
                (None, target, Vec::new(), None)
            } else if let Some(morph) = skin::morph(document, target)? {
                (None, morph.base, Vec::new(), Some(morph))
            } else {
                let skin = match skin_of.get(&target.id()) {
                    Some(&skin) => skin,
                    None => {
                        instanced.skins.push(skin::read(document, target)?);
                        skin_of.insert(target.id(), instanced.skins.len() - 1);
                        instanced.skins.len() - 1
                    }
                };
                (Some(skin), instanced.skins[skin].geometry, roots, None)
            };
            let joint_nodes = Vec::new();
            instanced.instances.push(Instance { element, node: index, skin, geometry, bindings, roots, joint_nodes, morph });
        }
    }
    regroup_joint_names(&mut instanced.skins, scene);
    find_joints(document, scene, &mut instanced)?;
    Ok(instanced)
}

/// An instance's `<instance_material>` bindings: the symbol a part names, to the material it draws with.
fn material_bindings<'a, 'input>(
    document: &Document<'a, 'input>,
    element: Node<'a, 'input>,
) -> Result<HashMap<&'a str, Node<'a, 'input>>, FormatError> {
    let mut bindings = HashMap::new();
    for binding in element.descendants().filter(|child| child.has_tag_name("instance_material")) {
        bindings
            .insert(document.attribute(binding, "symbol")?, document.lookup(binding, document.attribute(binding, "target")?)?);
    }
    Ok(bindings)
}

/// A controller instance's `<skeleton>` roots as scene nodes (none for a geometry instance).
fn skeleton_roots(
    document: &Document<'_, '_>,
    scene: &Scene<'_, '_>,
    element: Node<'_, '_>,
    controller: bool,
) -> Result<Vec<usize>, FormatError> {
    let mut roots = Vec::new();
    for root in element.children().filter(|child| controller && child.has_tag_name("skeleton")) {
        let id = root.text().unwrap_or("").trim().trim_start_matches('#');
        roots.push(scene.by_id(id).ok_or_else(|| {
            document.error(root, format!("expected a node with id {} in the scene, found none", files::quoted(id)))
        })?);
    }
    Ok(roots)
}

/// Names with spaces, written as words (3ds Max): put back together against the nodes.
fn regroup_joint_names(skins: &mut [Skin<'_, '_>], scene: &Scene<'_, '_>) {
    for skin in skins.iter_mut().filter(|skin| !skin.joint_words.is_empty()) {
        if let Some(names) = skin::regroup_names(&skin.joint_words, skin.joints.len(), |name| scene.knows(name)) {
            skin.joints = names;
        }
    }
}

/// The node of each skinned instance's joints, by sid, id or name, looked up under its
/// `<skeleton>` roots first; within [`LOOKUP_STEPS`] for the whole file.
fn find_joints(document: &Document<'_, '_>, scene: &Scene<'_, '_>, instanced: &mut Instanced<'_, '_>) -> Result<(), FormatError> {
    let mut steps = LOOKUP_STEPS;
    for instance in instanced.instances.iter_mut() {
        let Some(skin) = instance.skin else { continue };
        let skin = &instanced.skins[skin];
        for name in &skin.joints {
            let node = scene.find_under(name, &instance.roots, &mut steps).ok_or_else(|| {
                let reason =
                    if steps == 0 { "the joint lookups took too many steps" } else { "no node has that sid, id or name" };
                document.error(skin.names_element, format!("the skin's joint {}: {reason}", files::quoted(name)))
            })?;
            instance.joint_nodes.push(node);
        }
    }
    Ok(())
}
