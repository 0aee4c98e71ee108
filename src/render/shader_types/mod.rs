//! `#[repr(C)]` mirrors of the GLSL structures in shaders/common.glsl and shaders/frame.glsl.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3, Vec4};

use crate::anim::Influence;
use crate::model::{Model, Vertex};

mod instance;
mod raster;
pub use instance::*;
pub use raster::*;

/// `SourceVertex` in common.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct SourceVertex {
    pub position: [f32; 3],
    pub first_influence: u32,
    pub normal: [f32; 3],
    pub influence_count: u32,
    pub tangent: [f32; 4],
}

/// `INFLUENCE_OFFSETS` in common.glsl: a `SourceVertex::influence_count` bit, set where the
/// vertex's influences have offsets (`Model::influence_offsets`) the skinning must add.
pub const INFLUENCE_OFFSETS: u32 = 1 << 31;

impl SourceVertex {
    /// `vertex` of `model`, flagged [`INFLUENCE_OFFSETS`] where it has them.
    pub fn of(model: &Model, vertex: &Vertex) -> SourceVertex {
        let flag = if model.has_influence_offsets(vertex) { INFLUENCE_OFFSETS } else { 0 };
        SourceVertex {
            position: vertex.position.to_array(),
            first_influence: vertex.first_influence,
            normal: vertex.normal.to_array(),
            influence_count: vertex.influence_count | flag,
            tangent: vertex.tangent.to_array(),
        }
    }
}

/// `Surface` in forward_vertex_outputs.glsl: a vertex's texture coordinates and colour (RGBA8,
/// linear), what the forward pass reads beside the skinned position.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct Surface {
    pub uv: [f32; 2],
    pub color: u32,
    pub unused: u32,
}

impl From<&Vertex> for Surface {
    fn from(vertex: &Vertex) -> Surface {
        let channel = |value: f32| (value.clamp(0.0, 1.0) * 255.0).round() as u32;
        let [r, g, b, a] = vertex.color.to_array().map(channel);
        Surface { uv: vertex.uv.to_array(), color: r | g << 8 | b << 16 | a << 24, unused: 0 }
    }
}

/// `Influence` in common.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct GpuInfluence {
    pub joint: u32,
    pub weight: f32,
}

impl From<&Influence> for GpuInfluence {
    fn from(influence: &Influence) -> GpuInfluence {
        GpuInfluence { joint: influence.joint, weight: influence.weight }
    }
}

/// `Channel` in common.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuChannel {
    pub packed: u32,
    pub key_count: u32,
    pub first_time: u32,
    pub first_value: u32,
}

/// The `CHANNEL_*` bits of `Channel::packed` in common.glsl.
pub const CHANNEL_INTERPOLATION_SHIFT: u32 = 2;
pub const CHANNEL_COMPONENTS_SHIFT: u32 = 4;
pub const CHANNEL_IMPLIED_W: u32 = 1 << 8;
pub const CHANNEL_UNIFORM: u32 = 1 << 9;
pub const CHANNEL_WRAPS: u32 = 1 << 10;
pub const CHANNEL_HAS_BASE: u32 = 1 << 11;
/// A compressed track (`anim::compress`): `first_value` is its first word in `key_values`.
pub const CHANNEL_PACKED: u32 = 1 << 12;
/// `PROPERTY_WEIGHT` in common.glsl: a morph target's weight channel.
pub const PROPERTY_WEIGHT: u32 = 3;

/// `JointInfo` in common.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct GpuJoint {
    pub rest_rotation: [f32; 4],
    pub rest_translation: [f32; 4],
    pub rest_scale: [f32; 4],
    pub fixed_rows: [[f32; 4]; 3],
    /// Parent (`NO_PARENT` for a root), the subtree's depth-first span, and 1 when `pre` is not the
    /// identity.
    pub links: [u32; 4],
}

/// `MorphTarget` in common.glsl: where one target's deltas are and what it weighs by default.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMorphTarget {
    pub first_delta: u32,
    pub delta_count: u32,
    /// The lowest and highest vertex it moves (a vertex outside skips the search).
    pub first_vertex: u32,
    pub last_vertex: u32,
    pub default_weight: f32,
    pub unused: [u32; 3],
}

/// `MorphDelta` in common.glsl: one vertex's offsets in one target at weight 1.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuMorphDelta {
    pub position: [f32; 3],
    pub vertex: u32,
    pub normal: [f32; 3],
    pub unused: u32,
}

/// Floats a palette slot (`PaletteMatrix`) holds: the morph block after an instance's joints is
/// counted in them (common.glsl: the morph block).
pub const SLOT_FLOATS: u32 = 12;

/// Palette slots an instance's morph block takes for `target_count` targets: its active count and
/// a (target, weight) pair per target that can be active, or none without targets.
pub fn morph_slots(target_count: u32) -> u32 {
    match target_count {
        0 => 0,
        count => (1 + 2 * count).div_ceil(SLOT_FLOATS),
    }
}

/// `NO_PARENT` in common.glsl.
pub const NO_PARENT: u32 = u32::MAX;

/// `AnimationRecord` in common.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct AnimationRecord {
    pub first_cell: u32,
    pub cell_count: u32,
    pub cell_duration: f32,
    /// Its joints' channels in `model.channels`, only those it animates: joint j's property p at
    /// first_channel + the channel table's entry 3j + p.
    pub first_channel: u32,
    /// Its morph targets' weight channels: target t's at first_weight_channel + t.
    pub first_weight_channel: u32,
    /// Where its channel table is in `model.key_values`: per joint and property, a 16-bit index
    /// among its channels ([`NO_CHANNEL`]: the rest pose), two a word; with
    /// [`CHANNEL_TABLE_WIDE`] set, a 32-bit index a word (more than 65,534 channels).
    pub channel_table: u32,
    pub unused: [u32; 2],
}

/// A channel table's entry for a property the animation does not key (common.glsl too; u32::MAX in
/// a table of 32-bit entries).
pub const NO_CHANNEL: u32 = 0xFFFF;
/// A channel table of 32-bit entries (common.glsl too).
pub const CHANNEL_TABLE_WIDE: u32 = 1 << 31;

/// `NO_CLIP` in common.glsl: no animation in that slot (animation a: the bind pose).
pub const NO_CLIP: u32 = 0xFFFF;

/// Animations a model may have: indices travel as 16 bits, and NO_CLIP is taken.
pub const MAX_ANIMATIONS: usize = NO_CLIP as usize;

/// `ModelRecord` in common.glsl: what the cull, palette, skin and triangle passes know of an
/// instance's model, read through its instance record (or a work table's entry).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ModelRecord {
    /// The bind pose's bounds (xyz); w: the blend reach (`ModelBounds::blend_reach`).
    pub bind_min: [f32; 4],
    /// xyz; w: the morph reach (`ModelBounds::morph_reach`, while a weight is set by hand).
    pub bind_max: [f32; 4],
    pub vertex_count: u32,
    pub joint_count: u32,
    /// Palette slots an instance takes: its joints' matrices, their dual quaternions, a header,
    /// its morph block ([`morph_slots`]); then all that again, the previous block.
    pub palette_stride: u32,
    pub mesh_count: u32,
    /// Levels of detail, the full mesh included.
    pub level_count: u32,
    pub target_count: u32,
    /// Where the model's part of the shared buffers starts (several models share them): its
    /// vertices (sources, surfaces), joints (joints, inverse binds, parents), morph targets, mesh
    /// ranges, animations, and its mesh 0 among all models' meshes.
    pub first_vertex: u32,
    pub first_joint: u32,
    pub first_target: u32,
    pub first_range: u32,
    pub first_animation: u32,
    pub first_mesh: u32,
    /// Per level (0 past the last): its vertex count, its index count, its first index in
    /// `model.indices`, its error in model units.
    pub level_vertices: [u32; MAX_LEVELS],
    pub level_indices: [u32; MAX_LEVELS],
    pub level_first_index: [u32; MAX_LEVELS],
    pub level_errors: [f32; MAX_LEVELS],
}

/// `cull.motions`: the instance moves by itself this frame (common.glsl).
pub const MOTION_MOVING: u32 = 1 << 31;

/// `PaletteMatrix` in common.glsl: the top three rows of an affine matrix.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct PaletteMatrix {
    pub rows: [[f32; 4]; 3],
}

impl PaletteMatrix {
    pub fn to_mat4(self) -> Mat4 {
        let [r0, r1, r2] = self.rows.map(Vec4::from_array);
        Mat4::from_cols(r0, r1, r2, Vec4::W).transpose()
    }
}

/// One skinned vertex as the skin pass writes it and the vertex stage reads it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct SkinnedVertex {
    pub position: [f32; 3],
    /// snorm16 x, y, z and a zero.
    pub normal: [i16; 4],
    /// snorm16 x, y, z and the bitangent sign.
    pub tangent: [i16; 4],
}

fn unpack_snorm16(value: i16) -> f32 {
    (f32::from(value) / 32767.0).max(-1.0)
}

impl SkinnedVertex {
    pub fn normal(&self) -> Vec3 {
        Vec3::new(unpack_snorm16(self.normal[0]), unpack_snorm16(self.normal[1]), unpack_snorm16(self.normal[2]))
    }

    pub fn tangent(&self) -> Vec3 {
        Vec3::new(unpack_snorm16(self.tangent[0]), unpack_snorm16(self.tangent[1]), unpack_snorm16(self.tangent[2]))
    }
}

/// `FrameUniforms` in frame.glsl (std140).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct FrameUniforms {
    pub view_projection: [[f32; 4]; 4],
    pub light_view_projection: [[f32; 4]; 4],
    pub camera_position: [f32; 4],
    pub light_direction: [f32; 4],
    pub light_color_ambient: [f32; 4],
    pub ground: [f32; 4],
    pub shadow_params: [f32; 4],
    /// x: instances per chunk, for the vertex shaders that skin (an instance's chunk); y, z, w: 0.
    pub chunking: [u32; 4],
    /// The camera frustum's planes (normal pointing in, distance), for the cull pass.
    pub camera_planes: [[f32; 4]; 6],
    /// The shadow map's volume, likewise.
    pub light_planes: [[f32; 4]; 6],
    /// Last frame's view_projection (this frame's on the first), for the motion vectors.
    pub previous_view_projection: [[f32; 4]; 4],
    /// xy: the target's size in pixels.
    pub viewport: [f32; 4],
}

/// The six planes of a view-projection's clip volume (Vulkan: depth 0..1), normals pointing in
/// and normalized, as (nx, ny, nz, d) with a point inside when n·p + d ≥ 0 (Gribb and Hartmann).
pub fn frustum_planes(view_projection: Mat4) -> [[f32; 4]; 6] {
    let [r0, r1, r2, r3] = [0, 1, 2, 3].map(|row| view_projection.row(row));
    [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2].map(|plane| {
        let length = plane.truncate().length();
        (if length > 0.0 { plane / length } else { plane }).to_array()
    })
}

/// `Bounds` in common.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct GpuBounds {
    pub min_corner: [f32; 4],
    pub max_corner: [f32; 4],
}

/// `MAX_CHUNKS` in common.glsl: the most chunks (storage-buffer bindings) the skinned vertices and
/// the palettes may be split into (the skin pass binds 2 × 64 + 8 storage buffers a stage).
pub const MAX_CHUNKS: u32 = 64;

/// `DISTANCE_BANDS` in common.glsl: the cull pass's bands by distance, for the pools' budget.
pub const DISTANCE_BANDS: u32 = 64;

/// `NOT_PLACED` in common.glsl: `cull.placements`' level for an instance not skinned this frame.
pub const NOT_PLACED: u32 = u32::MAX;

/// Storage buffers the skin pass binds in one stage: two chunk arrays and eight buffers (the device
/// must allow as many: `device_needs`).
pub const STORAGE_BUFFERS_PER_STAGE: u32 = 2 * MAX_CHUNKS + 8;

/// `CullCounters` in common.glsl: the cull pass's counts, laid out as indirect arguments.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub struct CullCounters {
    pub palette_dispatch: [u32; 4],
    /// (0, instances kept, 1, 0): skinned at some level.
    pub kept: [u32; 4],
    /// The debug views' VkDrawIndirectCommands: (2 × joints | 24, instances kept, 0, 0).
    pub skeleton_draw: [u32; 4],
    pub box_draw: [u32; 4],
    /// Per chunk of instances.
    pub camera_draws: [u32; MAX_CHUNKS as usize],
    pub light_draws: [u32; MAX_CHUNKS as usize],
    /// Per level of detail: instances to skin at it; then, per level, instances the camera sees at it.
    pub level_counts: [u32; 2 * MAX_LEVELS],
    /// Per work table (`Table`), the one dispatch over it: (workgroups a row, rows, 1, 0).
    pub dispatches: [[u32; 4]; 3],
    /// Per work table: (its groups; set by the CPU: a full row's width, where it starts in
    /// `cull.work_groups`; 0).
    pub tables: [[u32; 4]; 3],
    /// (instances whose palettes are computed this frame: the palette list's length, 0, 0, 0).
    pub palettes: [u32; 4],
    /// (instances drawn coarser than their level: a pool too small for the frame; instances not
    /// drawn at all; skinned vertices placed in the pools; culled indices placed, both views).
    pub pool_use: [u32; 4],
    /// Per view (`RASTER_CAMERA`, `RASTER_LIGHT`), the raster pass's dispatch over its list:
    /// (workgroups, 1, 1, triangles appended; past the list's room they went to the hardware).
    pub raster: [[u32; 4]; 2],
    /// (camera samples the raster pass covered, shadow-map texels it covered, camera triangles
    /// the triangle pass left to the hardware, the light's).
    pub raster_counts: [u32; 4],
}

impl Default for CullCounters {
    /// Every count zero (arrays past 32 elements have no derived `Default`).
    fn default() -> CullCounters {
        CullCounters::zeroed()
    }
}

/// The cull pass's work tables (`TABLE_*` in common.glsl), sections of `cull.work_groups`: a
/// `WorkGroup` an entry, each one workgroup of the pass that reads the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// The skin pass's: each skinned instance's vertex groups at its level.
    Skin = 0,
    /// The triangle pass's camera run: each instance the camera sees, its level's triangle groups.
    Camera = 1,
    /// Its light run: each instance the light sees, the shadow map's level's triangle groups.
    Light = 2,
}

impl Table {
    /// Its dispatch's indirect arguments in `CullCounters`.
    pub fn arguments(self) -> u64 {
        (std::mem::offset_of!(CullCounters, dispatches) + 16 * self as usize) as u64
    }
}

/// `MAX_LEVELS` in common.glsl.
pub const MAX_LEVELS: usize = crate::model::MAX_LEVELS;

/// `DrawCommand` in common.glsl: a VkDrawIndexedIndirectCommand.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct DrawCommand {
    pub index_count: u32,
    pub instance_count: u32,
    pub first_index: u32,
    pub vertex_offset: i32,
    pub first_instance: u32,
}

/// `MeshRange` in common.glsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct MeshRange {
    pub index_count: u32,
    pub first_index: u32,
}

/// Push constants of cull.comp.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct CullPush {
    pub instance_count: u32,
    pub chunk_instances: u32,
    /// Pixels one model unit covers one unit in front of the camera, over the pixel error allowed.
    pub pixels_at_unit: f32,
    /// The shadow map's level for a model is its coarsest whose error (model units) is at most
    /// this (`LevelChoice::light_error`).
    pub light_error: f32,
    /// Which work tables the cull pass fills this frame: bit t for `Table` t (the skin table for
    /// the skin pass, the triangle pass's tables for its runs this frame).
    pub tables_written: u32,
    /// This frame's number, from 2: `cull.palette_frames` holds, per instance, the frame whose
    /// palette its slots hold (0: none).
    pub palette_frame: u32,
    /// Animation LOD: an instance is far (its palette computed every 2nd frame; under a sixth of this
    /// every 4th, under a 24th every 8th: `ANIMATION_LOD_STEPS`) when its box's diameter is below this × its
    /// distance; 0: off.
    pub far_ratio: f32,
    /// 1: some morph weight is set by hand this frame, so boxes grow by the model's morph reach.
    pub hand_set: u32,
    /// 1: the forward pass writes the velocity target this frame (instances may move, their
    /// previous palettes are kept); 0: none moves.
    pub motion_vectors: u32,
    /// `CullRun`: counting the pools' demand, their budget, or placing.
    pub run: u32,
    /// Skinned vertices a chunk's pool holds (`Pools::vertex_room`).
    pub vertex_room: u32,
    /// Culled indices a chunk's pool holds per view (`Pools::index_room`).
    pub index_room: u32,
    /// Bit 0: the triangle pass's camera run runs this frame; bit 1: its light run.
    pub culled_views: u32,
}

/// The cull pass's three runs (`RUN_*` in cull.comp), recorded in this order where the vertices
/// are pooled; `Place` alone where not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CullRun {
    /// Each kept instance's vertices, per chunk and distance band, at three levels.
    Count = 0,
    /// Per chunk, the bands that keep their levels (one workgroup).
    Budget = 1,
    /// Each instance placed at its band's level, and everything the other passes read written.
    Place = 2,
}

/// Push constants of palette.comp.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct PalettePush {
    pub chunk_instances: u32,
    /// 1: write `joint_positions` (the skeleton view is on).
    pub write_joint_positions: u32,
    /// `joint_positions`' entries an instance: the most joints a model has.
    pub joint_stride: u32,
}

/// Push constants of skin.comp.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct SkinPush {
    pub chunk_instances: u32,
}

/// `WorkGroup` in common.glsl: one workgroup of the skin or the triangle pass, as the cull pass
/// appends it to a work table.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct WorkGroup {
    /// The instance; in the skin table, with `LIST_DUAL_QUATERNION` when it blends dual quaternions.
    pub instance: u32,
    /// The group within its vertices or triangles (low 24 bits) and its level (high 8).
    pub group: u32,
    /// The instance's model.
    pub model: u32,
    /// Its skinned vertices' place this frame (`cull.placements`).
    pub vertex_base: u32,
    /// Skin table: its place in its chunk's palettes (`InstanceSlot`); triangle tables: its mesh 0
    /// command in the view's culled draws.
    pub second_base: u32,
}

/// `InstanceSlot` in common.glsl: where an instance lives, fixed when the renderer is built
/// (`chunks::InstanceSlots`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct InstanceSlot {
    /// Its first vertex in its chunk's skinned vertices.
    pub vertex_base: u32,
    /// Its first slot in its chunk's palettes.
    pub palette_base: u32,
    /// Its run: its chunk's instances of its model, drawn by one command list a mesh.
    pub run: u32,
    /// The run's mesh 0 list's first command; mesh m's is `run_instances` commands further each.
    pub first_command: u32,
    pub run_instances: u32,
    /// Its model: its `ModelRecord`'s index.
    pub model: u32,
    pub unused: [u32; 2],
}

/// Push constants of triangles.comp.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct TrianglesPush {
    pub view_projection: [f32; 16],
    pub viewport: [f32; 2],
    pub mesh_count: u32,
    pub vertex_count: u32,
    pub chunk_instances: u32,
    pub facing_sign: f32,
    /// Samples a pixel row holds on a regular lattice: 4 (4× MSAA at the standard positions), 1
    /// (one sample, at the centre); 0: no small-triangle test.
    pub sample_step: u32,
    pub snap: f32,
    /// The run's work table: `Table::Camera` or `Table::Light`.
    pub table: u32,
    /// The largest screen box (pixels across) the raster pass takes; 0: none (`Raster::pixels`).
    pub raster_pixels: f32,
    /// Entries the view's raster list holds.
    pub raster_room: u32,
}

#[cfg(test)]
mod tests;
