#version 460
// Shadow pass, `vertex` strategy (the tutorials' way): no skinned buffer; this shader skins every
// vertex from the palettes itself, and the forward pass does it all again.
#include "common.glsl"
#define SKIN_INPUTS_SET 0
#include "skin_inputs.glsl"
#include "skinning.glsl"

layout(push_constant) uniform Push {
    mat4 light_view_projection;
    uint joint_count;
    uint chunk_instances;
    uint palette_stride;
} push;

void main() {
    // Each instance's draw offsets its vertices (vertex_offset) and names it (first_instance).
    uint vertex = uint(gl_VertexIndex - gl_BaseVertex);
    uint instance = uint(gl_InstanceIndex);
    bool dual = instance_dual(instance, push.chunk_instances, push.joint_count, push.palette_stride);
    SkinnedResult skinned_vertex = skin_vertex(vertex, instance, push.chunk_instances, push.joint_count, push.palette_stride, dual, false);
    gl_Position = push.light_view_projection * vec4(skinned_vertex.position, 1.0);
}
