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

// The chunk whose vertices are bound (the draw's vertex buffer): after the fragment shader's
// material colour.
layout(push_constant) uniform Draw {
    layout(offset = 16) uint chunk;
} draw;

#include "forward_vertex_outputs.glsl"

void main() {
    write_position(position);
#ifdef VELOCITY
    write_previous_position(previous_position);
#endif
    out_normal = normal.xyz;
    out_tangent = tangent;
    uint vertex_count = frame.skinning.z;
    uint instance = draw.chunk * frame.skinning.y + uint(gl_VertexIndex) / vertex_count;
    write_surface(uint(gl_VertexIndex - gl_BaseVertex) % vertex_count, instance);
}
