#version 460
// Forward pass, `cpu` strategy: the CPU skinned the vertices into this frame slot's buffer
// (binding 0) and wrote where each was last frame beside it (binding 1: src/render/history.rs,
// FrameHistory::cpu_previous_positions). On the CPU a copy of last frame's positions costs less
// than skinning again. Outputs match forward.vert.
// variant: VELOCITY
#include "frame.glsl"
#include "common.glsl"

layout(location = 0) in vec3 position;
layout(location = 1) in vec4 normal;  // snorm16, xyz used
layout(location = 2) in vec4 tangent; // snorm16, xyz + bitangent sign
#ifdef VELOCITY
layout(location = 3) in vec3 previous_position;
#endif

#include "forward_vertex_outputs.glsl"

void main() {
    write_position(position);
#ifdef VELOCITY
    write_previous_position(previous_position);
#endif
    out_normal = normal.xyz;
    out_tangent = tangent;
    uint instance;
    uint vertex;
    draw_vertex(instance, vertex);
    write_surface(vertex, instance);
}
