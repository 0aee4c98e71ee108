//! `<geometry><mesh>`: `<triangles>`, `<polylist>` and `<polygons>` (fanned into triangles), their
//! inputs by offset, read through `<vertices>` and each `<source>`'s accessor. Corners that share
//! every index share a vertex.

use ahash::AHashMap as HashMap;

use glam::{Vec2, Vec3};
use roxmltree::Node;

use super::document::{Document, Source};
use crate::formats::FormatError;

/// Triangles a mesh may produce in all.
const MAX_CORNERS: usize = 3 << 24;

/// One primitive's triangles, drawn with one material.
pub struct Part {
    /// The `<instance_material>` symbol that binds its material.
    pub material: Option<String>,
    pub indices: Vec<u32>,
}

/// A mesh's vertices (shared by its parts) and parts.
pub struct MeshData {
    pub positions: Vec<Vec3>,
    pub normals: Option<Vec<Vec3>>,
    pub uvs: Vec<Vec2>,
    /// Each vertex's index into the `POSITION` source: what skin weights are given for.
    pub position_index: Vec<u32>,
    pub parts: Vec<Part>,
}

/// An input of a primitive: which offset in each corner's indices, which source.
struct Input<'a, 'input> {
    semantic: &'a str,
    offset: usize,
    set: usize,
    source: Node<'a, 'input>,
}

pub fn read<'a, 'input>(document: &Document<'a, 'input>, geometry: Node<'a, 'input>) -> Result<MeshData, FormatError> {
    let Some(mesh) = document.child(geometry, "mesh") else {
        return Err(document.error(geometry, "expected a <mesh> (splines and convex meshes are not read)"));
    };
    let vertices = document.required_child(mesh, "vertices")?;
    let vertices_id = document.attribute(vertices, "id")?;
    let mut data =
        MeshData { positions: Vec::new(), normals: None, uvs: Vec::new(), position_index: Vec::new(), parts: Vec::new() };
    let mut corner_vertex: HashMap<[u32; 3], u32> = HashMap::new();
    let mut sources: HashMap<(usize, usize), Source<f32>> = HashMap::new();
    for primitive in mesh.children().filter(Node::is_element) {
        let kind = primitive.tag_name().name();
        if !matches!(kind, "triangles" | "polylist" | "polygons") {
            if matches!(kind, "lines" | "linestrips" | "trifans" | "tristrips") {
                continue;
            }
            continue;
        }
        // The primitive's inputs, with <vertices>' own inputs in place of VERTEX.
        let mut inputs = Vec::new();
        for input in primitive.children().filter(|child| child.has_tag_name("input")) {
            let semantic = document.attribute(input, "semantic")?;
            let offset = document.input_offset(input)?;
            let set = document.count_attribute(input, "set", 0)?;
            let url = document.attribute(input, "source")?;
            if semantic == "VERTEX" {
                if url.trim_start_matches('#') != vertices_id {
                    return Err(document.error(input, format!("expected the VERTEX input to be #{vertices_id}")));
                }
                for shared in vertices.children().filter(|child| child.has_tag_name("input")) {
                    let semantic = document.attribute(shared, "semantic")?;
                    let source = document.lookup(shared, document.attribute(shared, "source")?)?;
                    inputs.push(Input { semantic, offset, set: 0, source });
                }
            } else {
                inputs.push(Input { semantic, offset, set, source: document.lookup(input, url)? });
            }
        }
        let stride = inputs.iter().map(|input| input.offset + 1).max().unwrap_or(0);
        let position = find(&inputs, "POSITION")
            .ok_or_else(|| document.error(primitive, "expected a VERTEX input with a POSITION source"))?;
        let normal = find(&inputs, "NORMAL");
        let uv = inputs.iter().filter(|input| input.semantic == "TEXCOORD").min_by_key(|input| input.set);

        // Corner counts per polygon.
        let polygons: Vec<(Node, Vec<u32>)> = match kind {
            "polygons" => primitive
                .children()
                .filter(|child| child.has_tag_name("p"))
                .map(|p| Ok((p, document.indices(p)?)))
                .collect::<Result<_, FormatError>>()?,
            _ => {
                let p = document.required_child(primitive, "p")?;
                vec![(p, document.indices(p)?)]
            }
        };
        let vcount: Option<Vec<u32>> = match kind {
            "polylist" => Some(document.indices(document.required_child(primitive, "vcount")?)?),
            _ => None,
        };
        if primitive.children().any(|child| child.has_tag_name("ph")) {
            return Err(document.error(primitive, "expected polygons without holes (<ph>)"));
        }

        let mut part = Part { material: primitive.attribute("material").map(str::to_string), indices: Vec::new() };
        for (p, values) in &polygons {
            if stride == 0 || values.len() % stride != 0 {
                return Err(document.error(
                    *p,
                    format!("expected a multiple of {stride} indices (one per input offset), found {}", values.len()),
                ));
            }
            let corners = values.len() / stride;
            let sizes: Vec<usize> = match (&vcount, kind) {
                (Some(vcount), _) => {
                    let sizes: Vec<usize> = vcount.iter().map(|&size| size as usize).collect();
                    let total: usize = sizes.iter().sum();
                    if total != corners {
                        return Err(document.error(*p, format!("expected {total} corners (the vcount total), found {corners}")));
                    }
                    sizes
                }
                (None, "polygons") => vec![corners],
                _ => {
                    if corners % 3 != 0 {
                        return Err(document.error(*p, format!("expected whole triangles, found {corners} corners")));
                    }
                    vec![3; corners / 3]
                }
            };
            let mut first = 0usize;
            for size in sizes {
                let polygon: Vec<u32> = (first..first + size)
                    .map(|corner| {
                        let index = |input: &Input| values[corner * stride + input.offset];
                        let key = [index(position), normal.map_or(u32::MAX, index), uv.map_or(u32::MAX, index)];
                        vertex(document, &mut data, &mut corner_vertex, &mut sources, key, [Some(position), normal, uv], *p)
                    })
                    .collect::<Result<_, _>>()?;
                first += size;
                for corner in 1..polygon.len().saturating_sub(1) {
                    part.indices.extend([polygon[0], polygon[corner], polygon[corner + 1]]);
                }
                if part.indices.len() > MAX_CORNERS {
                    return Err(document.error(*p, format!("expected at most {} triangles", MAX_CORNERS / 3)));
                }
            }
        }
        data.parts.push(part);
    }
    Ok(data)
}

fn find<'i, 'a, 'input>(inputs: &'i [Input<'a, 'input>], semantic: &str) -> Option<&'i Input<'a, 'input>> {
    inputs.iter().find(|input| input.semantic == semantic)
}

/// The vertex of a corner (position, normal, uv indices), made on first sight.
fn vertex<'a, 'input>(
    document: &Document<'a, 'input>,
    data: &mut MeshData,
    corner_vertex: &mut HashMap<[u32; 3], u32>,
    sources: &mut HashMap<(usize, usize), Source<f32>>,
    key: [u32; 3],
    inputs: [Option<&Input<'a, 'input>>; 3],
    p: Node<'_, '_>,
) -> Result<u32, FormatError> {
    if let Some(&vertex) = corner_vertex.get(&key) {
        return Ok(vertex);
    }
    let mut values = [Vec3::ZERO; 3];
    for (slot, input) in inputs.iter().enumerate() {
        let Some(input) = input else { continue };
        let width = if slot == 2 { 2 } else { 3 };
        let id = (input.source.id().get() as usize, width);
        let source = match sources.entry(id) {
            std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::hash_map::Entry::Vacant(entry) => entry.insert(document.float_source(input.source, width)?),
        };
        let item = source.item(key[slot] as usize).ok_or_else(|| {
            document.error(
                p,
                format!("expected {} indices below {} (its source's count), found {}", input.semantic, source.count, key[slot]),
            )
        })?;
        values[slot] = Vec3::new(item[0], item[1], item.get(2).copied().unwrap_or(0.0));
    }
    let vertex = data.positions.len() as u32;
    data.positions.push(values[0]);
    if inputs[1].is_some() {
        data.normals.get_or_insert_with(Vec::new).push(values[1]);
    }
    // COLLADA's v runs up from the bottom of the image; vkskin's down from the top.
    data.uvs.push(Vec2::new(values[2].x, 1.0 - values[2].y));
    data.position_index.push(key[0]);
    corner_vertex.insert(key, vertex);
    Ok(vertex)
}
