#version 460
// Debug view `bounds`: per kept instance (instanced, the count from the cull pass), the 12 edges
// of the world box the cull pass tested: green when the camera sees it, orange when only the light.
#include "common.glsl"
#include "debug.glsl"

layout(push_constant) uniform Push {
    mat4 view_projection;
} push;

layout(location = 0) out vec4 color;

// The 12 edges as pairs of corners; corner bits: x = 1, y = 2, z = 4.
const uint EDGES[24] = uint[24](0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7);

void main() {
    uint instance = skin_list[gl_InstanceIndex];
    Bounds box = boxes[instance];
    uint corner = EDGES[gl_VertexIndex % 24];
    vec3 position = mix(box.min_corner.xyz, box.max_corner.xyz, vec3(corner & 1u, (corner >> 1) & 1u, (corner >> 2) & 1u));
    gl_Position = push.view_projection * vec4(position, 1.0);
    bool camera_sees = box.min_corner.w > 0.5;
    color = camera_sees ? vec4(0.1, 0.9, 0.2, 1.0) : vec4(1.0, 0.5, 0.1, 1.0);
}
