//! The model's GPU-side data, uploaded once: vertices, influences, joints, channels and keys,
//! culling cells, materials and textures.

use ahash::AHashMap as HashMap;
use std::path::Path;
use std::sync::Arc;

use ash::vk;

mod keys;
mod records;

use super::shader_types::{morph_slots, ModelRecord, SkinnedVertex, MAX_ANIMATIONS};
use crate::gpu::{self, Buffer, Device, Image};
use crate::model::{Model, Texture};
use records::Records;

/// A material ready for the forward pass: its textures (a white pixel, or a flat normal, when the
/// model has none).
pub struct GpuMaterial {
    pub texture: Image,
    pub normal_map: Image,
    pub base_color: [f32; 4],
}

/// The model's static data in GPU buffers. Field names are the buffers' RenderDoc names.
pub struct GpuModel {
    pub source_vertices: Buffer,
    pub influences: Buffer,
    /// Each influence's offset (three floats; `Model::influence_offsets`), or one zero offset
    /// for a model without them: read only for a vertex flagged `INFLUENCE_OFFSETS`.
    pub influence_offsets: Buffer,
    /// Each vertex's texture coordinates and colour (`Surface`), for the forward pass.
    pub surfaces: Buffer,
    pub indices: Buffer,
    /// One channel per (animation, joint, property), then one per (animation, morph target); see
    /// `Channel` in common.glsl.
    pub channels: Buffer,
    pub key_times: Buffer,
    pub key_values: Buffer,
    /// Each joint's rest pose, `pre` transform, parent and subtree span.
    pub joints: Buffer,
    /// Each animation's record (where its culling cells and channels start), and the cells (see
    /// `anim::bounds`).
    pub animations: Buffer,
    pub cells: Buffer,
    /// Each mesh's index range, for the cull pass's draw commands.
    pub mesh_ranges: Buffer,
    pub inverse_binds: Buffer,
    pub joint_parents: Buffer,
    /// Each morph target's deltas span and default weight, and the deltas, target by target.
    pub morph_targets: Buffer,
    pub morph_deltas: Buffer,
    /// The model's record (`ModelRecord`), which the cull, palette, skin and triangle passes read
    /// through each instance's record.
    pub models: Buffer,
    pub materials: Vec<GpuMaterial>,
    /// Each model's part, in the order given to [`GpuModel::upload`]: instance records name them
    /// by this index.
    pub parts: Vec<GpuPart>,
}

/// One model's part of the shared buffers: its record (the copy the passes read) and what the CPU
/// records draws and plans from.
pub struct GpuPart {
    pub record: ModelRecord,
    /// Every level of detail, the full mesh first: its indices follow the finer level's in
    /// `indices` (first indices are in the shared buffer), and its meshes' ranges follow in
    /// `mesh_ranges` from `record.first_range`.
    pub levels: Vec<GpuLevel>,
    /// What its part of `mesh_ranges` holds: (first index, index count) per (level, mesh), level-major.
    /// A "mesh" here is a draw group ([`draw_groups`]): the model's meshes of one material.
    pub ranges: Vec<(u32, u32)>,
    /// Each draw group's material, an index into `GpuModel::materials`.
    pub mesh_materials: Vec<usize>,
}

impl GpuPart {
    pub fn vertex_count(&self) -> u32 {
        self.record.vertex_count
    }

    pub fn mesh_count(&self) -> u32 {
        self.record.mesh_count
    }

    /// At least 1: a model without a skeleton is skinned by one identity joint.
    pub fn joint_count(&self) -> u32 {
        self.record.joint_count
    }

    pub fn target_count(&self) -> u32 {
        self.record.target_count
    }

    /// Palette slots an instance takes ([`palette_stride`]).
    pub fn palette_stride(&self) -> u32 {
        self.record.palette_stride
    }

    /// Bytes of one instance's skinned vertices (the skin pass's output, the `cpu` strategy's).
    pub fn skinned_bytes(&self) -> u64 {
        u64::from(self.vertex_count()) * std::mem::size_of::<SkinnedVertex>() as u64
    }
}

/// Where one level of detail lies in the model's buffers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuLevel {
    /// Its vertices are the model's first `vertex_count`.
    pub vertex_count: u32,
    pub first_index: u32,
    pub index_count: u32,
    /// Model units (`lod::Level::error`); 0 for the full mesh.
    pub error: f32,
}

impl GpuModel {
    /// The most morph targets a model has, at least 1: the weights set by hand apply to each
    /// model's targets by their index (the viewer's panel sets them for its one model).
    pub fn most_targets(&self) -> u32 {
        self.parts.iter().map(GpuPart::target_count).max().unwrap_or(0).max(1)
    }

    /// The only model's part: for what serves one model alone (the triangle pass, the `cpu`
    /// strategy's skinning, read-backs of one model's palettes).
    pub fn single(&self) -> &GpuPart {
        &self.parts[0]
    }

    /// Uploads `models`' data, one shared buffer a record kind, each model's part after the one
    /// before; refuses a model with more animations than fit, or with a joint whose inverse bind
    /// matrix is not invertible.
    pub fn upload(device: &Arc<Device>, models: &[&Model]) -> gpu::Result<GpuModel> {
        use vk::BufferUsageFlags as Usage;
        for model in models {
            if model.animations.len() > MAX_ANIMATIONS {
                return Err(gpu::Error::Other(format!(
                    "{} has {} animations; at most {MAX_ANIMATIONS} fit",
                    model.name,
                    model.animations.len()
                )));
            }
            if let Some(index) = model.skeleton.joints.iter().position(|joint| !joint.inverse_bind.inverse().is_finite()) {
                return Err(gpu::Error::Other(format!(
                    "{}: joint {index}'s inverse bind matrix is not invertible; the palette pass needs its inverse",
                    model.name
                )));
            }
        }
        let mut records = Records::default();
        let mut parts: Vec<GpuPart> = Vec::with_capacity(models.len());
        // Each model's draw groups and materials follow the models' before it.
        let (mut first_mesh, mut first_material) = (0, 0);
        for model in models {
            let mut part = records.append(Records::of(model));
            part.record.first_mesh = first_mesh;
            first_mesh += part.record.mesh_count;
            part.mesh_materials.iter_mut().for_each(|material| *material += first_material);
            first_material += model.materials.len();
            parts.push(part);
        }
        let storage = Usage::STORAGE_BUFFER;
        let buffer = |name: &str, bytes: &[u8]| Buffer::with_data(device, name, storage, bytes);
        let source_vertices = buffer("model.source_vertices", bytemuck::cast_slice(&records.sources))?;
        let influences = buffer("model.influences", bytemuck::cast_slice(&records.influences))?;
        let influence_offsets = buffer("model.influence_offsets", bytemuck::cast_slice(&records.offsets))?;
        let surfaces = buffer("model.surfaces", bytemuck::cast_slice(&records.surfaces))?;
        // STORAGE: the triangle pass reads them too; and acceleration-structure builds.
        let indices = Buffer::with_data(
            device,
            "model.indices",
            Usage::INDEX_BUFFER | Usage::STORAGE_BUFFER | device.build_input_usage(),
            bytemuck::cast_slice(&records.indices),
        )?;
        let channels = buffer("model.channels", bytemuck::cast_slice(&records.channels))?;
        let key_times = buffer("model.key_times", bytemuck::cast_slice(&records.times))?;
        let key_values = buffer("model.key_values", bytemuck::cast_slice(&records.values))?;
        let joints = buffer("model.joints", bytemuck::cast_slice(&records.joints))?;
        let animations = buffer("model.animations", bytemuck::cast_slice(&records.animations))?;
        let cells = buffer("model.cells", bytemuck::cast_slice(&records.cells))?;
        let mesh_ranges = buffer("model.mesh_ranges", bytemuck::cast_slice(&records.mesh_ranges))?;
        let inverse_binds = buffer("model.inverse_binds", bytemuck::cast_slice(&records.inverse_binds))?;
        let joint_parents = buffer("model.joint_parents", bytemuck::cast_slice(&records.parents))?;
        let morph_targets = buffer("model.morph_targets", bytemuck::cast_slice(&records.targets))?;
        let morph_deltas = buffer("model.morph_deltas", bytemuck::cast_slice(&records.deltas))?;
        let model_records: Vec<ModelRecord> = parts.iter().map(|part| part.record).collect();
        let models_buffer = buffer("model.models", bytemuck::cast_slice(&model_records))?;

        let materials = upload_materials(device, models)?;
        Ok(GpuModel {
            source_vertices,
            influences,
            influence_offsets,
            surfaces,
            indices,
            channels,
            key_times,
            key_values,
            joints,
            animations,
            cells,
            mesh_ranges,
            inverse_binds,
            joint_parents,
            morph_targets,
            morph_deltas,
            models: models_buffer,
            materials,
            parts,
        })
    }
}

/// The bytes `model`'s data takes on the GPU, which all its instances share: the buffers
/// [`GpuModel::upload`] fills and the materials' textures (RGBA8, a texture and a normal map each;
/// a 1×1 where there is none). A crowd counts each model's once.
pub fn model_bytes(model: &Model) -> u64 {
    let texture = |size: Option<(u32, u32)>| size.map_or(4, |(width, height)| 4 * u64::from(width) * u64::from(height));
    let textures: u64 = model
        .materials
        .iter()
        .map(|material| {
            texture(material.texture.as_ref().map(|texture| (texture.width, texture.height)))
                + texture(material.normal_map.as_ref().map(|map| (map.width, map.height)))
        })
        .sum();
    Records::of(model).bytes() + textures
}

/// Each model's materials, one after another: each one's colour texture and normal map as images (a
/// white or flat one where it has none), each texture file decoded once however many materials,
/// of whichever model, use it (the bundled figure's variants share its texture).
fn upload_materials(device: &Arc<Device>, models: &[&Model]) -> gpu::Result<Vec<GpuMaterial>> {
    let mut materials = Vec::new();
    let mut decoded: HashMap<&Path, Vec<u8>> = HashMap::new();
    for (index, material) in models.iter().flat_map(|model| &model.materials).enumerate() {
        let name = format!("material[{index}].{}", material.name);
        let (srgb, unorm) = (vk::Format::R8G8B8A8_SRGB, vk::Format::R8G8B8A8_UNORM);
        let texture = match &material.texture {
            Some(texture) => {
                Image::texture_rgba8(device, &name, (texture.width, texture.height), srgb, pixels(&mut decoded, texture)?)?
            }
            None => Image::texture_rgba8(device, &format!("{name}.white"), (1, 1), srgb, &[255; 4])?,
        };
        let normal_map = match &material.normal_map {
            Some(map) => Image::texture_rgba8(
                device,
                &format!("{name}.normal"),
                (map.width, map.height),
                unorm,
                pixels(&mut decoded, map)?,
            )?,
            None => Image::texture_rgba8(device, &format!("{name}.flat_normal"), (1, 1), unorm, &[128, 128, 255, 255])?,
        };
        materials.push(GpuMaterial { texture, normal_map, base_color: material.base_color.to_array() });
    }
    Ok(materials)
}

/// Palette slots an instance of `model` takes (common.glsl: the slots): its joints' matrices (at
/// least one joint), the same as dual quaternions, a header, then its morph block; then all that
/// again as the previous block, which the motion vectors skin from.
pub fn palette_stride(model: &Model) -> u32 {
    2 * (2 * model.skeleton.len().max(1) as u32 + 1 + morph_slots(model.morph_targets.len() as u32))
}

/// A texture's pixels, decoded now that they are uploaded (the loaders read only headers), once
/// per file.
fn pixels<'a, 'm>(decoded: &'a mut HashMap<&'m Path, Vec<u8>>, texture: &'m Texture) -> gpu::Result<&'a [u8]> {
    if !decoded.contains_key(texture.path.as_path()) {
        let pixels = texture
            .decode()
            .map_err(|error| gpu::Error::Other(format!("{}: cannot decode the texture: {error}", texture.path.display())))?;
        decoded.insert(&texture.path, pixels);
    }
    Ok(decoded.get(texture.path.as_path()).map(Vec::as_slice).unwrap_or_default())
}
