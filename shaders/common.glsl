// Structures shared by the passes. Mirrored by #[repr(C)] types in src/render/shader_types/mod.rs, whose test
// reads these offsets back out of the compiled SPIR-V. std430: each vec3 shares its 16-byte slot
// with the uint after it.

// A bind-pose vertex as the skin pass reads it: 48 bytes.
struct SourceVertex {
    vec3 position;
    uint first_influence;  // index into influences[] (and influence_offsets[])
    vec3 normal;
    uint influence_count;  // every weight the file gave it, no cap; the top bit: INFLUENCE_OFFSETS
    vec4 tangent;          // xyz, w = bitangent sign
};

// influence_count's top bit: each influence of this vertex carries an offset from its position
// (MD5 weights that put it at different places; src/model/influence_offsets.rs), three floats in
// influence_offsets[] at 3 × the influence's index.
const uint INFLUENCE_OFFSETS = 0x80000000u;

// One joint's weight on a vertex: 8 bytes.
struct Influence {
    uint joint;
    float weight;
};

// One joint property's keys (src/anim/clip.rs: Channel): 16 bytes. The model stores one per
// (animation, joint, property), at (animation × joint_count + joint) × 3 + property; key_count 0
// means the animation leaves that property at rest.
struct Channel {
    uint packed;       // CHANNEL_* fields below
    uint key_count;
    uint first_time;   // into key_times[]: the times, or (start, step) when CHANNEL_UNIFORM
    uint first_value;  // into key_values[]: the base xyzw first when CHANNEL_HAS_BASE, then the keys;
                       // a packed track's words when CHANNEL_PACKED
};

const uint CHANNEL_PROPERTY_MASK = 3u;        // bits 0-1: 0 translation, 1 rotation, 2 scale
const uint CHANNEL_INTERPOLATION_SHIFT = 2u;  // bits 2-3: INTERPOLATION_*
const uint CHANNEL_COMPONENTS_SHIFT = 4u;     // bits 4-7: which of x, y, z, w the keys store
const uint CHANNEL_IMPLIED_W = 1u << 8;       // the rotation's w is implied, <= 0 (MD5)
const uint CHANNEL_UNIFORM = 1u << 9;         // evenly spaced keys: found by index
const uint CHANNEL_WRAPS = 1u << 10;          // after the last key, back to the first (MD5's loop)
const uint CHANNEL_HAS_BASE = 1u << 11;       // unstored components come from a stored base
const uint CHANNEL_PACKED = 1u << 12;         // a compressed track (src/anim/compress): first_value is its first word,
                                              // the times are its samples' start and step

const uint INTERPOLATION_STEP = 0u;
const uint INTERPOLATION_LINEAR = 1u;
const uint INTERPOLATION_CUBIC_SPLINE = 2u;   // glTF: tangents per second, scaled by the interval
const uint INTERPOLATION_HERMITE = 3u;        // Milkshape: tangents per interval

// A joint's rest pose and fixed frame (src/anim/mod.rs: Joint; src/render/model_buffers/mod.rs: joint_infos):
// 112 bytes.
struct JointInfo {
    vec4 rest_rotation;     // unit quaternion, xyzw
    vec4 rest_translation;  // xyz, w unused
    vec4 rest_scale;        // xyz, w unused
    vec4 fixed_rows[3];     // the parent's bind matrix × pre (a root: pre), top three rows: from
                            // the parent's palette entry into this joint's frame
    uvec4 links;            // x: parent (NO_PARENT for a root), y, z: its subtree's depth-first span,
                            // w: 1 when fixed is not the identity (else its multiply is skipped)
};

const uint NO_PARENT = 0xFFFFFFFFu;

// A morph target (src/model/mod.rs: MorphTarget; src/render/model_buffers/mod.rs: morph_records): 32 bytes.
// Its deltas are morph_deltas[first_delta ..+ delta_count], ascending by vertex: the file's sparse
// list, only the vertices it moves.
struct MorphTarget {
    uint first_delta;
    uint delta_count;
    uint first_vertex;     // the lowest and the highest vertex it moves: a vertex outside
    uint last_vertex;      // that span costs one compare, not a search
    float default_weight;  // where no clip keys it
    uint unused[3];
};

// One vertex's offsets in one target, at weight 1, model space: 32 bytes.
struct MorphDelta {
    vec3 position;
    uint vertex;
    vec3 normal;
    float unused;
};

// A compressed track's layout (src/anim/compress: the constants of the same names).
const uint PACKED_SEGMENT_SAMPLES = 16u;
const uint PACKED_MAX_BITS = 24u;
const uint PACKED_RAW_BITS = 32u;
const uint PACKED_HEADER_WORDS = 6u;
const uint PACKED_SEGMENT_WORDS = 3u;
const uint PACKED_BLOCK_SEGMENTS = 32u;
const uint PACKED_BLOCK_WORDS = 97u;
// In a rotation segment's code (its record's second word's top byte): all four components stored.
const uint PACKED_FOUR_COMPONENTS = 4u;

// Weight channels are Channel records too, past the joints' in channels[]: the one of (animation,
// target) at the animation's first_weight_channel + target, one component (x) a key.
const uint PROPERTY_WEIGHT = 3u;

// The morph block: after an instance's joint_count palette entries, the palette pass leaves the
// weights of its active targets (non-zero weight) as floats, 12 to a palette slot: the count, then
// a (target, weight) pair each, ascending by target. The skin pass reads it per vertex, so its cost
// follows the active targets, not all of them. Floats, not bit patterns: small integers are exact.
const uint SLOT_FLOATS = 12u;

// Where an animation's culling cells (src/anim/bounds.rs) and channels start: 32 bytes.
struct AnimationRecord {
    uint first_cell;
    uint cell_count;
    float cell_duration;         // seconds a cell covers
    uint first_channel;          // its joints' channels, only those it keys: at first_channel + the table's entry
    uint first_weight_channel;   // its morph targets' weight channels: target t's at first_weight_channel + t
    uint channel_table;          // in key_values: per joint j and property p, entry 3j + p, 16 bits (CHANNEL_TABLE_WIDE: 32)
    uint unused[2];
};
// A channel table's entry for a property the animation does not key (0xFFFFFFFF in a table of
// 32-bit entries, CHANNEL_TABLE_WIDE).
const uint NO_CHANNEL = 0xFFFFu;
const uint CHANNEL_TABLE_WIDE = 1u << 31;

// Each instance's data this frame (instances.data), which the instances pass makes from its record
// and the clock (instances.comp.glsl): 64 bytes. Animations by index, times already mapped from
// the clip's into the animation's (wrapped into the clip's span).
struct Instance {
    vec4 position_yaw;  // world position xyz, rotation about +Y in radians
    uint animations;    // animation a in the low 16 bits, b in the high 16; NO_CLIP: none
    float time_a;       // seconds into animation a
    float time_b;
    float blend;        // 0: a alone; 1: b alone (a crossfade from a to b)
    uint layer;         // layer animation in the low 16 bits (NO_CLIP: none), its root joint in the high 16
    float time_layer;
    float layer_weight; // how far the layer's subtree blends toward the layer animation
    uint skinning;      // SKINNING_*: how the instance's vertices blend their joints (the low 16
                        // bits), and the INSTANCE_* flags above them
    float scale;        // uniform, about the instance's origin, before the rotation (a crowd's sizes)
    uint tint;          // RGBA8, linear: a hue the forward pass moves the surface's colours toward (rgb)
                        // and how far (a; 0: the model's own colours)
    uint unused[2];     // (its model is its slot's: InstanceSlot.model)
};

// Levels of detail an instance can be drawn at, the full mesh included (src/model/lod.rs).
const uint MAX_LEVELS = 8u;

// A model's record (src/render/model_buffers/mod.rs: model_record): what the cull, palette, skin and
// triangle passes know of an instance's model, read through its instance record (or a work
// table's entry) rather than pushed per model, so that one dispatch serves instances of any model. 208 bytes.
// Several models share the buffers, each model's data after the one before: its first_* fields say
// where its part starts. Indices, influences' joints, joint links and morph deltas' vertices stay
// local to the model (a draw's vertex offset is the instance's place in the skinned buffer).
struct ModelRecord {
    vec4 bind_min;           // the bind pose's bounds (instances without a clip), xyz; w: the blend
    vec4 bind_max;           // reach (how far a crossfade or a layer carries a vertex past the clips'
                             // boxes); bind_max.w: the morph reach (weights set by hand)
    uint vertex_count;       // an instance's vertices: its stride in the skinned buffer
    uint joint_count;
    uint palette_stride;     // palette slots an instance takes: this frame's block, then the previous one
    uint mesh_count;
    uint level_count;        // levels of detail, the full mesh included (1: none)
    uint target_count;       // morph targets
    uint first_vertex;       // its part of sources[], surfaces[]
    uint first_joint;        // of joints[], inverse_binds[], joint_parents[]
    uint first_target;       // of morph_targets[]
    uint first_range;        // of mesh_ranges[]: level l's mesh m at first_range + l × mesh_count + m
    uint first_animation;    // of animations[]: an instance's clip indices are its model's
    uint first_mesh;         // its mesh 0 among all models' meshes (the draw lists' order)
    uint level_vertices[MAX_LEVELS];  // per level, its vertices: the model's first level_vertices[l]
    uint level_indices[MAX_LEVELS];   // per level, its index count
    uint level_first_index[MAX_LEVELS];  // per level, its first index in indices[]
    float level_errors[MAX_LEVELS];   // per level, its error in model units (level 0's: 0)
};

// The instance's world transform: scale, rotation about +Y, then its position.
mat4 instance_world(Instance instance) {
    float c = cos(instance.position_yaw.w) * instance.scale;
    float s = sin(instance.position_yaw.w) * instance.scale;
    return mat4(vec4(c, 0.0, -s, 0.0), vec4(0.0, instance.scale, 0.0, 0.0), vec4(s, 0.0, c, 0.0),
                vec4(instance.position_yaw.xyz, 1.0));
}

const uint SKINNING_LINEAR = 0u;
const uint SKINNING_DUAL_QUATERNION = 1u;
const uint SKINNING_MODE_MASK = 0xFFFFu;
// Set by the instances pass when the instance's data is last frame's: its pose has not moved, so its
// motion is the camera's alone (no second skinning for the motion vectors).
const uint INSTANCE_STILL = 1u << 30;
// Set for the first frame after a jump (a teleport, a clip switched without a crossfade): the
// instance has no motion of its own this frame, so nothing streaks from where it was.
const uint INSTANCE_RESTART = 1u << 31;

// Per instance (cull.motions, written by the cull pass for each kept instance): the frame it was
// last kept in, and MOTION_MOVING when its vertices move by themselves this frame. Then the palette
// pass keeps last frame's palette as the previous block before it computes the new one, and the
// forward vertex shaders skin the vertex a second time from it to find where it was. Not moving: the
// instance is still, was not drawn last frame, restarts, switched skinning mode, or (animation LOD)
// keeps last frame's palette.
const uint MOTION_MOVING = 0x80000000u;
// Set in a skin list's entry (cull.comp) when the instance blends dual quaternions, so that the
// skin pass knows it from the entry it reads anyway, without a load of the palette header per vertex.
const uint LIST_DUAL_QUATERNION = 0x80000000u;

// world × model pose × inverse bind as the top three rows of an affine matrix: 48 bytes.
struct PaletteMatrix {
    vec4 rows[3];
};

// An instance's palette slots, `palette_stride` of them (src/render/model_buffers/mod.rs: palette_stride):
//   [0, J)        each joint's matrix (PaletteMatrix), J = joint_count
//   [J, 2J)       with SKINNING_DUAL_QUATERNION, the same as dual quaternions (src/anim/dual_quaternion.rs):
//                 rows[0] the rotation, rows[1] the dual part, rows[2].x the uniform scale applied
//                 first, rows[2].y 1 when the matrix was a rotation times a uniform scale (else its
//                 vertices blend linearly)
//   2J            the header: rows[0].x the instance's SKINNING_* mode (the vertex strategy's shaders
//                 read it; the skin pass has the mode from its skin list's entry)
//   2J + 1 ...    the morph block, when the model has morph targets
// That is the current block; the previous block (the palette the instance was drawn with last frame,
// when it moves: MOTION_MOVING) follows it, laid out the same: palette_stride covers both, and
// the previous block starts at palette_stride / 2.
// A matrix counts as rigid when its columns are within this of equal lengths and right angles.
const float RIGID_TOLERANCE = 1e-3;

const uint NO_CLIP = 0xFFFFu;

// An axis-aligned box: 32 bytes.
struct Bounds {
    vec4 min_corner;  // xyz, w unused
    vec4 max_corner;
};

// One storage-buffer binding holds at most maxStorageBufferRange bytes (128 MiB on lavapipe), so the
// skinned vertices and the palettes live in chunks of `chunk_instances` instances each: instance i
// is element i % chunk_instances of chunk i / chunk_instances. The shaders see the chunks as arrays
// of buffers, indexed by a value that is uniform across a workgroup (one instance per workgroup
// or workgroup row) or a draw (one instance per draw): dynamic indexing, a core feature. 64, for a
// million instances' palettes in 128 MiB bindings (34 chunks of the bundled figure's); the skin pass
// binds two arrays and eight more buffers, 136 storage buffers a stage (Mesa 25's lavapipe and the
// desktop GPUs allow far more; a device that allows fewer is refused: `device_needs`).
const uint MAX_CHUNKS = 64u;

// The cull pass's distance bands (cull.comp: distance_band), nearest first: a pool too small for a
// frame draws its farthest bands coarser first.
const uint DISTANCE_BANDS = 64u;
// cull.placements' level for an instance not skinned this frame.
const uint NOT_PLACED = 0xFFFFFFFFu;


// The cull pass's work tables (WorkGroup), sections of one buffer: the skin pass's, and the
// triangle pass's camera and light runs'.
const uint TABLE_SKIN = 0u;
const uint TABLE_CAMERA = 1u;
const uint TABLE_LIGHT = 2u;

// What the cull pass produces each frame, read as indirect arguments: 192 + 8 × MAX_CHUNKS
// + 8 × MAX_LEVELS bytes.
struct CullCounters {
    uvec4 palette_dispatch;         // x: workgroups of the palette list (palette.rs), y: 1, z: 1
    uvec4 kept;                     // x: 0, y: instances kept (skinned at some level), z: 1
    uvec4 skeleton_draw;            // VkDrawIndirectCommand: 2 × joints, instances kept, 0, 0 (debug view)
    uvec4 box_draw;                 // VkDrawIndirectCommand: 24, instances kept, 0, 0 (debug view)
    uint camera_draws[MAX_CHUNKS];  // per chunk: instances the camera sees (draws per mesh)
    uint light_draws[MAX_CHUNKS];   // per chunk: instances the light sees
    uint level_counts[2 * MAX_LEVELS];  // per level: instances to skin at it, then instances the camera sees at it
    // Per work table (TABLE_*), the one dispatch over it: x workgroups a row (at most tables[t].y),
    // y rows, 1. The cull pass grows both with each instance's groups.
    uvec4 dispatches[3];
    // Per work table: x its groups; set by the CPU, y a full row's width and z where it starts in
    // the work tables' buffer.
    uvec4 tables[3];
    uvec4 palettes;                 // x: instances whose palettes are computed this frame (the palette list's length)
    uvec4 pool_use;                 // x: instances drawn coarser than their level (a pool too small for the
                                    // frame), y: instances not drawn (not even their coarsest fitted),
                                    // z: skinned vertices placed, w: culled indices placed (both views)
    // Per view (RASTER_CAMERA, RASTER_LIGHT), the raster pass's dispatch over the triangles the
    // triangle pass handed it: x workgroups (RASTER_WORKGROUP triangles each), y 1, z 1; w triangles
    // appended (those past the list's room went to the hardware instead).
    uvec4 raster[2];
    // x: camera samples the raster pass covered, y: shadow-map texels it covered; z: camera
    // triangles the triangle pass left to the hardware rasterizer, w: the light's.
    uvec4 raster_counts;
};

// The raster pass's views, its lists and counters.
const uint RASTER_CAMERA = 0u;
const uint RASTER_LIGHT = 1u;
// Triangles a workgroup of the raster pass takes.
const uint RASTER_WORKGROUP = 64u;

// A triangle the triangle pass hands the raster pass (raster.triangles), 16 bytes: its instance,
// where that instance's skinned vertices start in its chunk, its first index in the model's
// indices, and its mesh among the model's (the resolve's material).
struct RasterTriangle {
    uint instance;
    uint vertex_base;
    uint first_index;
    uint mesh;
};

// One workgroup of the skin or the triangle pass, 20 bytes: a run of one instance's vertices (or
// triangles) at its level. The cull pass appends each instance it skins as its level's vertex
// groups, and each one a view sees as that view's level's triangle groups, so that one dispatch
// serves every kept instance at its own level with no workgroup past its work.
struct WorkGroup {
    uint instance;  // its index; in the skin table, with LIST_DUAL_QUATERNION when it blends dual quaternions
    uint group;     // the group within the instance's vertices or triangles (low 24 bits), its level (high 8)
    uint model;     // the instance's model (its record's index), so that the pass need not read the instance's
    uint vertex_base;   // the instance's place in its chunk's skinned vertices this frame (cull.placements)
    uint second_base;   // skin table: its place in its chunk's palettes (InstanceSlot); triangle tables:
                        // its mesh 0 command in the view's culled draws
};

// Where an instance lives, fixed when the renderer is built (src/render/chunks.rs: InstanceSlots):
// instance i is in chunk i / chunk_instances, at its own base in that chunk's skinned vertices and
// palettes (models differ in size), and its draw commands are in its run, the instances of its
// model in its chunk: mesh m's command for it at first_command + m × run_instances + its place in
// the run this frame (counted at draw_counts[2 × run], the light's at 2 × run + 1). 32 bytes.
struct InstanceSlot {
    uint vertex_base;
    uint palette_base;
    uint run;
    uint first_command;
    uint run_instances;
    uint model;         // its model's record: models[model]
    uint unused[2];
};

// One mesh's triangles for the cull pass's draw commands: 8 bytes.
struct MeshRange {
    uint index_count;
    uint first_index;
};

// VkDrawIndexedIndirectCommand: 20 bytes.
struct DrawCommand {
    uint index_count;
    uint instance_count;
    uint first_index;
    int vertex_offset;
    uint first_instance;
};

// Skinned vertices are 7 uints (28 bytes): position as 3 floats, then the normal and the tangent as
// snorm16 x, y, z, w, matching the vertex attributes R32G32B32_SFLOAT + 2 × R16G16B16A16_SNORM.
const uint SKINNED_VERTEX_UINTS = 7u;
