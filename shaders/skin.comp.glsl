#version 460
// Skin pass: one invocation per (vertex, instance). Blends every influence the vertex has (an
// offset and a count into the influence list, no cap) and writes the world-space position, normal
// and tangent into the one skinned buffer that the shadow and forward passes then read as their
// vertex buffer. Mirrors anim::skin_vertex. One dispatch per level of detail: it skins the level's
// vertices (the model's first vertex_count) of the instances in the level's list.
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Sources { SourceVertex sources[]; };
layout(set = 0, binding = 1) readonly buffer Influences { Influence influences[]; };
layout(set = 0, binding = 2) readonly buffer Palettes { PaletteMatrix palettes[]; } palette_chunks[MAX_CHUNKS];
layout(set = 0, binding = 3) writeonly buffer Skinned { uint skinned[]; } skinned_chunks[MAX_CHUNKS];
// The cull pass's level lists; this level's from list_offset, the dispatch's y size its count (indirect).
layout(set = 0, binding = 4) readonly buffer LevelLists { uint level_lists[]; };

layout(push_constant) uniform Push {
    uint vertex_count;       // the level's
    uint joint_count;
    uint instance_vertices;  // the model's: an instance's stride in the skinned buffer
    uint chunk_instances;    // instances per chunk of palettes and skinned vertices
    uint list_offset;        // where the level's list starts in level_lists
} push;

#include "skinning.glsl"

void main() {
    uint vertex = gl_GlobalInvocationID.x;
    if (vertex >= push.vertex_count) {
        return;
    }
    uint instance_index = level_lists[push.list_offset + gl_GlobalInvocationID.y];
    SkinnedResult skinned_vertex = skin_vertex(vertex, instance_index, push.chunk_instances, push.joint_count);

    uint chunk = instance_index / push.chunk_instances;
    uint base = ((instance_index % push.chunk_instances) * push.instance_vertices + vertex) * SKINNED_VERTEX_UINTS;
    skinned_chunks[chunk].skinned[base + 0u] = floatBitsToUint(skinned_vertex.position.x);
    skinned_chunks[chunk].skinned[base + 1u] = floatBitsToUint(skinned_vertex.position.y);
    skinned_chunks[chunk].skinned[base + 2u] = floatBitsToUint(skinned_vertex.position.z);
    skinned_chunks[chunk].skinned[base + 3u] = packSnorm2x16(skinned_vertex.normal.xy);
    skinned_chunks[chunk].skinned[base + 4u] = packSnorm2x16(vec2(skinned_vertex.normal.z, 0.0));
    skinned_chunks[chunk].skinned[base + 5u] = packSnorm2x16(skinned_vertex.tangent.xy);
    skinned_chunks[chunk].skinned[base + 6u] = packSnorm2x16(vec2(skinned_vertex.tangent.z, skinned_vertex.bitangent_sign));
}
