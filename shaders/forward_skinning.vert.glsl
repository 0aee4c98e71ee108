#version 460
// Forward pass, `vertex` strategy (the tutorials' way): skins every vertex here from the palettes,
// a second time after the shadow pass did the same. Outputs match forward.vert.
#include "frame.glsl"
#include "common.glsl"
#define SKIN_INPUTS_SET 2
#include "skin_inputs.glsl"
#include "skinning.glsl"

#include "forward_vertex_outputs.glsl"

void main() {
    uint vertex = uint(gl_VertexIndex - gl_BaseVertex);
    uint joint_count = frame.skinning.x;
    uint instance = uint(gl_InstanceIndex);
    bool dual = instance_dual(instance, frame.skinning.y, joint_count, frame.skinning.w);
    SkinnedResult skinned_vertex = skin_vertex(vertex, instance, frame.skinning.y, joint_count, frame.skinning.w, dual);
    vec4 position = vec4(skinned_vertex.position, 1.0);
    gl_Position = frame.view_projection * position;
    out_normal = skinned_vertex.normal;
    out_tangent = vec4(skinned_vertex.tangent, skinned_vertex.bitangent_sign);
    out_uv = texcoords[vertex];
    out_light_clip = frame.light_view_projection * position;
}
