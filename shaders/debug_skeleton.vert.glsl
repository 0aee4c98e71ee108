#version 460
// Debug view `skeleton`: per kept instance (instanced, the count from the cull pass), one line per
// joint from the joint to its parent, at the world positions the palette pass wrote. Drawn after
// everything with no depth test: on top.
#include "common.glsl"
#include "debug.glsl"

layout(push_constant) uniform Push {
    mat4 view_projection;
    uint joint_count;
} push;

layout(location = 0) out vec4 color;

void main() {
    uint instance = skin_list[gl_InstanceIndex];
    uint joint = uint(gl_VertexIndex) / 2u;
    bool parent_end = (uint(gl_VertexIndex) & 1u) == 1u;
    uint parent = joint_parents[joint];
    uint shown = (parent_end && parent < push.joint_count) ? parent : joint;
    vec3 position = joint_positions[instance * push.joint_count + shown].xyz;
    gl_Position = push.view_projection * vec4(position, 1.0);
    color = parent_end ? vec4(1.0, 0.55, 0.0, 1.0) : vec4(1.0, 1.0, 0.2, 1.0);
}
