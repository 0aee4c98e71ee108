#version 460
// Forward pass, skinned model: positions, normals and tangents come from the skinned buffer
// (already in world space); texture coordinates are per model vertex, so they are fetched by the
// index within the instance: a draw's vertex offset is its first instance's, and one draw may
// cover several instances (the triangle pass's groups), so modulo the vertices per instance.
#include "frame.glsl"

layout(location = 0) in vec3 position;
layout(location = 1) in vec4 normal;  // snorm16, xyz used
layout(location = 2) in vec4 tangent; // snorm16, xyz + bitangent sign

#include "forward_vertex_outputs.glsl"

void main() {
    gl_Position = frame.view_projection * vec4(position, 1.0);
    out_normal = normal.xyz;
    out_tangent = tangent;
    out_uv = texcoords[uint(gl_VertexIndex - gl_BaseVertex) % frame.skinning.z];
    out_light_clip = frame.light_view_projection * vec4(position, 1.0);
}
