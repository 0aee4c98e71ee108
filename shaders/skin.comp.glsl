#version 460
// Skin pass: one invocation per (vertex, instance). Blends up to four palette matrices and writes
// the world-space position and normal into the one skinned buffer that the shadow and forward
// passes then read as their vertex buffer. Mirrors anim::skin_vertex.
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Sources { SourceVertex sources[]; };
layout(set = 0, binding = 1) readonly buffer Palettes { PaletteMatrix palettes[]; };
layout(set = 0, binding = 2) writeonly buffer Skinned { uint skinned[]; };

layout(push_constant) uniform Push {
    uint vertex_count;
    uint joint_count;
    uint instance_count;
} push;

void main() {
    uint vertex = gl_GlobalInvocationID.x;
    uint instance_index = gl_GlobalInvocationID.y;
    if (vertex >= push.vertex_count || instance_index >= push.instance_count) {
        return;
    }
    SourceVertex source = sources[vertex];
    uint joints[4] = uint[4](source.joints01 & 0xFFFFu, source.joints01 >> 16, source.joints23 & 0xFFFFu, source.joints23 >> 16);
    vec4 position = vec4(source.position, 1.0);
    vec3 skinned_position = vec3(0.0);
    vec3 skinned_normal = vec3(0.0);
    uint palette_base = instance_index * push.joint_count;
    for (int i = 0; i < 4; ++i) {
        float weight = source.weights[i];
        if (weight == 0.0) {
            continue;
        }
        PaletteMatrix m = palettes[palette_base + joints[i]];
        skinned_position += weight * vec3(dot(m.rows[0], position), dot(m.rows[1], position), dot(m.rows[2], position));
        skinned_normal += weight * vec3(dot(m.rows[0].xyz, source.normal), dot(m.rows[1].xyz, source.normal), dot(m.rows[2].xyz, source.normal));
    }
    float length_squared = dot(skinned_normal, skinned_normal);
    vec3 normal = length_squared > 0.0 ? skinned_normal * inversesqrt(length_squared) : vec3(0.0);

    uint base = (instance_index * push.vertex_count + vertex) * SKINNED_VERTEX_UINTS;
    skinned[base + 0u] = floatBitsToUint(skinned_position.x);
    skinned[base + 1u] = floatBitsToUint(skinned_position.y);
    skinned[base + 2u] = floatBitsToUint(skinned_position.z);
    skinned[base + 3u] = packSnorm2x16(normal.xy);
    skinned[base + 4u] = packSnorm2x16(vec2(normal.z, 0.0));
}
