#version 460
// Forward pass, `vertex` strategy (the tutorials' way): skins every vertex here from the palettes,
// a second time after the shadow pass did the same, and a third (position only, from the previous
// palette block) for an instance that moves by itself, for the velocity target. Outputs match forward.vert.
// variant: VELOCITY
#include "frame.glsl"
#include "common.glsl"
#define SKIN_INPUTS_SET 2
#include "skin_inputs.glsl"
#include "skinning.glsl"

#include "forward_vertex_outputs.glsl"
#include "instance_skinning.glsl"

void main() {
    uint vertex = uint(gl_VertexIndex - gl_BaseVertex);
    uint instance = uint(gl_InstanceIndex);
    SkinSource at = instance_skin_source(instance, frame.chunking.x);
    bool dual = instance_dual(at.chunk, at.palette_base, at.joint_count);
    SkinnedResult skinned_vertex = skin_vertex(vertex, at, dual, false);
    write_position(skinned_vertex.position);
#ifdef VELOCITY
    vec3 previous = skinned_vertex.position;
    if ((motions[instance] & MOTION_MOVING) != 0u) {
        previous = skin_vertex(vertex, at, dual, true).position;
    }
    write_previous_position(previous);
#endif
    out_normal = skinned_vertex.normal;
    out_tangent = vec4(skinned_vertex.tangent, skinned_vertex.bitangent_sign);
    write_surface(vertex, instance);
}
