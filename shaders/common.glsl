// Structures shared by the passes. Mirrored by #[repr(C)] types in src/render/gpu.rs, whose test
// reads these offsets back out of the compiled SPIR-V. std430: each vec3 shares its 16-byte slot
// with the uint after it.

// A bind-pose vertex as the skin pass reads it: 48 bytes.
struct SourceVertex {
    vec3 position;
    uint first_influence;  // index into influences[]
    vec3 normal;
    uint influence_count;  // every weight the file gave it, no cap
    vec4 tangent;          // xyz, w = bitangent sign
};

// One joint's weight on a vertex: 8 bytes.
struct Influence {
    uint joint;
    float weight;
};

// A baked model-space joint pose: 48 bytes.
struct Pose {
    vec4 rotation;     // unit quaternion, xyzw
    vec4 translation;  // xyz, w unused
    vec4 scale;        // xyz, w unused
};

// Where a clip's poses start and how it plays: 16 bytes.
struct ClipInfo {
    uint first_pose;    // index into poses[] of frame 0, joint 0
    uint frame_count;   // frames stored
    float frame_rate;
    uint period_frames; // frame intervals in one loop (frame_count, or frame_count - 1 with an end frame)
};

// Per-instance parameters the CPU writes each frame: 32 bytes.
struct Instance {
    vec4 position_yaw; // world position xyz, rotation about +Y in radians
    uint clips;        // clip a in the low 16 bits, clip b in the high 16; NO_CLIP: none
    float time_a;      // seconds into clip a, already wrapped into [0, duration) by the CPU
    float time_b;
    float blend;       // 0: clip a alone; 1: clip b alone (a crossfade from a to b)
};

// world × pose × inverse bind as the top three rows of an affine matrix: 48 bytes.
struct PaletteMatrix {
    vec4 rows[3];
};

const uint NO_CLIP = 0xFFFFu;

// The cull pass grows each animated box by this fraction of its size on every side (cull.rs: BOUNDS_PAD).
const float BOUNDS_PAD = 0.05;

// An axis-aligned box: 32 bytes.
struct Bounds {
    vec4 min_corner;  // xyz, w unused
    vec4 max_corner;
};

// One storage-buffer binding holds at most maxStorageBufferRange bytes (128 MiB on lavapipe), so the
// skinned vertices and the palettes live in chunks of `chunk_instances` instances each: instance i
// is element i % chunk_instances of chunk i / chunk_instances. The shaders see the chunks as arrays
// of buffers, indexed by a value that is uniform across a workgroup (one instance per workgroup
// row) or a draw (one instance per draw): dynamic indexing, a core feature. Twelve, because a stage
// may see only maxPerStageDescriptorStorageBuffers (32 on lavapipe) and the skin pass binds two arrays
// and three more buffers: 2 × 12 + 3 = 27.
const uint MAX_CHUNKS = 12u;

// What the cull pass produces each frame, read as indirect arguments: 64 + 8 × MAX_CHUNKS bytes.
struct CullCounters {
    uvec4 palette_dispatch;         // x: joint groups, y: instances to skin (the count), z: 1
    uvec4 skin_dispatch;            // x: vertex groups, y: instances to skin, z: 1
    uvec4 skeleton_draw;            // VkDrawIndirectCommand: 2 × joints, instances kept, 0, 0 (debug view)
    uvec4 box_draw;                 // VkDrawIndirectCommand: 24, instances kept, 0, 0 (debug view)
    uint camera_draws[MAX_CHUNKS];  // per chunk: instances the camera sees (draws per mesh)
    uint light_draws[MAX_CHUNKS];   // per chunk: instances the light sees
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
