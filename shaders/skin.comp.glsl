#version 460
// Skin pass: one invocation per (vertex, instance). Blends every influence the vertex has (an
// offset and a count into the influence list, no cap) and writes the world-space position, normal
// and tangent into the one skinned buffer that the shadow and forward passes then read as their
// vertex buffer. Mirrors anim::skin_vertex.
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Sources { SourceVertex sources[]; };
layout(set = 0, binding = 1) readonly buffer Influences { Influence influences[]; };
layout(set = 0, binding = 2) readonly buffer Palettes { PaletteMatrix palettes[]; };
layout(set = 0, binding = 3) writeonly buffer Skinned { uint skinned[]; };

layout(push_constant) uniform Push {
    uint vertex_count;
    uint joint_count;
    uint instance_count;
} push;

vec3 safe_normalize(vec3 v) {
    float length_squared = dot(v, v);
    return length_squared > 0.0 ? v * inversesqrt(length_squared) : vec3(0.0);
}

void main() {
    uint vertex = gl_GlobalInvocationID.x;
    uint instance_index = gl_GlobalInvocationID.y;
    if (vertex >= push.vertex_count || instance_index >= push.instance_count) {
        return;
    }
    SourceVertex source = sources[vertex];
    vec4 position = vec4(source.position, 1.0);
    vec3 skinned_position = vec3(0.0);
    vec3 skinned_normal = vec3(0.0);
    vec3 skinned_tangent = vec3(0.0);
    uint palette_base = instance_index * push.joint_count;
    for (uint i = 0u; i < source.influence_count; ++i) {
        Influence influence = influences[source.first_influence + i];
        if (influence.joint >= push.joint_count) {
            continue; // loaders never produce this; the CPU reference skips it too
        }
        PaletteMatrix m = palettes[palette_base + influence.joint];
        float w = influence.weight;
        skinned_position += w * vec3(dot(m.rows[0], position), dot(m.rows[1], position), dot(m.rows[2], position));
        skinned_normal += w * vec3(dot(m.rows[0].xyz, source.normal), dot(m.rows[1].xyz, source.normal), dot(m.rows[2].xyz, source.normal));
        skinned_tangent += w * vec3(dot(m.rows[0].xyz, source.tangent.xyz), dot(m.rows[1].xyz, source.tangent.xyz), dot(m.rows[2].xyz, source.tangent.xyz));
    }
    vec3 normal = safe_normalize(skinned_normal);
    vec3 tangent = safe_normalize(skinned_tangent);

    uint base = (instance_index * push.vertex_count + vertex) * SKINNED_VERTEX_UINTS;
    skinned[base + 0u] = floatBitsToUint(skinned_position.x);
    skinned[base + 1u] = floatBitsToUint(skinned_position.y);
    skinned[base + 2u] = floatBitsToUint(skinned_position.z);
    skinned[base + 3u] = packSnorm2x16(normal.xy);
    skinned[base + 4u] = packSnorm2x16(vec2(normal.z, 0.0));
    skinned[base + 5u] = packSnorm2x16(tangent.xy);
    skinned[base + 6u] = packSnorm2x16(vec2(tangent.z, source.tangent.w));
}
