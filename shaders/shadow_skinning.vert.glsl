#version 460
// Shadow pass, `vertex` strategy (the tutorials' way): no skinned buffer; this shader skins every
// vertex from the palettes itself, and the forward pass does it all again.
#include "common.glsl"
#define SKIN_INPUTS_SET 0
#include "skin_inputs.glsl"
#include "skinning.glsl"
// The skin-inputs set's models and slots (the forward shaders have theirs in the frame set).
layout(set = 0, binding = 7) readonly buffer Models { ModelRecord models[]; };
layout(set = 0, binding = 8) readonly buffer InstanceSlots { InstanceSlot instance_slots[]; };
#include "instance_skinning.glsl"

layout(push_constant) uniform Push {
    mat4 light_view_projection;
    uint chunk_instances;
} push;

void main() {
    // Each instance's draw offsets its vertices (vertex_offset) and names it (first_instance).
    uint vertex = uint(gl_VertexIndex - gl_BaseVertex);
    uint instance = uint(gl_InstanceIndex);
    SkinSource at = instance_skin_source(instance, push.chunk_instances);
    bool dual = instance_dual(at.chunk, at.palette_base, at.joint_count);
    SkinnedResult skinned_vertex = skin_vertex(vertex, at, dual, false);
    gl_Position = push.light_view_projection * vec4(skinned_vertex.position, 1.0);
}
