#version 460
// Forward pass, skinned model: positions, normals and tangents come from the skinned buffer
// (already in world space); texture coordinates are per model vertex, so they are fetched by the
// index within the instance. A draw's first vertex and first instance are its first instance's,
// and one draw may cover several consecutive instances (the triangle pass's groups): the vertex's
// offset in the draw, over the vertices per instance, gives both.
//
// Where the vertex was last frame, for the velocity target: an instance that moves by itself
// (common.glsl: MOTION_MOVING) is skinned a second time here, position only, from its previous
// palette block; any other was where it is. Why the previous palette and not last frame's skinned
// buffer: the buffer is the largest thing the frame writes (28 bytes a vertex of every instance),
// and a second one would halve the instances that fit; the palette is a few slots an instance, and
// the second skinning runs only for vertices the forward pass draws of instances that move.
// variant: VELOCITY
#include "frame.glsl"
#include "common.glsl"
#define SKIN_INPUTS_SET 2
#include "skin_inputs.glsl"
#include "skinning.glsl"

layout(location = 0) in vec3 position;
layout(location = 1) in vec4 normal;  // snorm16, xyz used
layout(location = 2) in vec4 tangent; // snorm16, xyz + bitangent sign

#include "forward_vertex_outputs.glsl"

void main() {
    uint vertex_count = frame.skinning.z;
    uint offset = uint(gl_VertexIndex - gl_BaseVertex);
    uint vertex = offset % vertex_count;
    uint instance = uint(gl_InstanceIndex) + offset / vertex_count;
    write_position(position);
#ifdef VELOCITY
    vec3 previous = position;
    if ((motions[instance] & MOTION_MOVING) != 0u) {
        uint joint_count = frame.skinning.x;
        bool dual = instance_dual(instance, frame.skinning.y, joint_count, frame.skinning.w);
        previous = skin_vertex(vertex, instance, frame.skinning.y, joint_count, frame.skinning.w, dual, true).position;
    }
    write_previous_position(previous);
#endif
    out_normal = normal.xyz;
    out_tangent = tangent;
    write_surface(vertex, instance);
}
