#version 460
// Forward pass, skinned model: positions, normals and tangents come from the skinned buffer
// (already in world space); texture coordinates are per model vertex, so they are fetched by the
// index within the instance (forward_vertex_outputs.glsl: draw_vertex).
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
#include "instance_skinning.glsl"

void main() {
    uint instance;
    uint vertex;
    draw_vertex(instance, vertex);
    write_position(position);
#ifdef VELOCITY
    vec3 previous = position;
    if ((motions[instance] & MOTION_MOVING) != 0u) {
        SkinSource at = instance_skin_source(instance, frame.chunking.x);
        bool dual = instance_dual(at.chunk, at.palette_base, at.joint_count);
        previous = skin_vertex(vertex, at, dual, true).position;
    }
    write_previous_position(previous);
#endif
    out_normal = normal.xyz;
    out_tangent = tangent;
    write_surface(vertex, instance);
}
