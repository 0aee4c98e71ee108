// Structures shared by the passes. Mirrored by #[repr(C)] types in src/render/gpu.rs, whose tests
// check sizes and offsets. std430: each vec3 shares its 16-byte slot with the uint after it.

// A bind-pose vertex as the skin pass reads it: 48 bytes.
struct SourceVertex {
    vec3 position;
    uint joints01;   // joint indices 0 and 1, 16 bits each (low half first)
    vec3 normal;
    uint joints23;   // joint indices 2 and 3
    vec4 weights;    // sum to 1; unused slots are 0
};

// A baked model-space joint pose: 32 bytes.
struct Pose {
    vec4 rotation;     // unit quaternion, xyzw
    vec4 translation;  // xyz, w unused
};

// Where a clip's poses start and how it plays: 16 bytes.
struct ClipInfo {
    uint first_pose;   // index into poses[] of frame 0, joint 0
    uint frame_count;
    float frame_rate;
    uint unused;
};

// Per-instance parameters the CPU writes each frame: 32 bytes.
struct Instance {
    vec4 position_yaw; // world position xyz, rotation about +Y in radians
    uint clip;         // NO_CLIP: the bind pose
    float time;        // seconds, already wrapped into [0, duration) by the CPU
    uint unused0;
    uint unused1;
};

// world × pose × inverse bind as the top three rows of an affine matrix: 48 bytes.
struct PaletteMatrix {
    vec4 rows[3];
};

const uint NO_CLIP = 0xFFFFFFFFu;

// Skinned vertices are 5 uints (20 bytes): position as 3 floats, then the normal as snorm16 x, y,
// z and a zero, matching the vertex attributes R32G32B32_SFLOAT + R16G16B16A16_SNORM.
const uint SKINNED_VERTEX_UINTS = 5u;
