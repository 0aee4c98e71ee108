// The debug views' inputs (set 1 of every debug pipeline; set 0 is the forward pass's frame set).
// Matches render::debug's set layout.
layout(set = 1, binding = 0) readonly buffer JointPositions { vec4 joint_positions[]; };  // palette pass, per instance × joint
layout(set = 1, binding = 1) readonly buffer JointParents { uint joint_parents[]; };      // 0xFFFFFFFF: a root
layout(set = 1, binding = 2) readonly buffer DebugSkinList { uint skin_list[]; };         // the cull pass's kept instances
layout(set = 1, binding = 3) readonly buffer DebugBoxes { Bounds boxes[]; };               // the cull pass's world boxes
layout(set = 1, binding = 4) uniform sampler2D shadow_depth;                               // the shadow map, plain sampling
