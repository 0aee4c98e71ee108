#version 460
// Skin pass: one invocation per (vertex, instance). Adds the instance's active morph targets
// (skinning.glsl: morph_vertex), then blends every influence the vertex has (an
// offset and a count into the influence list, no cap) and writes the world-space position, normal
// and tangent into the one skinned buffer that the shadow and forward passes then read as their
// vertex buffer. Mirrors anim::skin_vertex. One dispatch for every level of detail: each workgroup
// takes one entry of the cull pass's skin table (WorkGroup), a run of consecutive vertices of one
// instance among its level's (a level's vertices are the model's first level_vertices[level]).
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Sources { SourceVertex sources[]; };
layout(set = 0, binding = 1) readonly buffer Influences { Influence influences[]; };
layout(set = 0, binding = 2) readonly buffer Palettes { PaletteMatrix palettes[]; } palette_chunks[MAX_CHUNKS];
layout(set = 0, binding = 3) writeonly buffer Skinned { uint skinned[]; } skinned_chunks[MAX_CHUNKS];
// The cull pass's work tables, the skin table from counters.tables[TABLE_SKIN].z, its length its .x
// (the dispatch's rows cover it; the last row may run past).
layout(set = 0, binding = 4) readonly buffer WorkGroups { WorkGroup work_groups[]; };
layout(set = 0, binding = 5) readonly buffer MorphTargets { MorphTarget morph_targets[]; };
layout(set = 0, binding = 6) readonly buffer MorphDeltas { MorphDelta morph_deltas[]; };
layout(set = 0, binding = 7) readonly buffer InfluenceOffsets { float influence_offsets[]; };
layout(set = 0, binding = 8) readonly buffer Counters { CullCounters counters; };
// Each model's record; a table entry names its instance's.
layout(set = 0, binding = 9) readonly buffer Models { ModelRecord models[]; };

layout(push_constant) uniform Push {
    uint chunk_instances;    // instances per chunk of palettes and skinned vertices
} push;

// STAGED_STORES (skin.rs: SkinTuning; on for GPUs): each invocation leaves its 7 words in shared
// memory, and the workgroup then writes its vertices' contiguous span word by word, so that each
// store instruction of a warp covers consecutive words (whole 32-byte sectors) instead of one word
// every 28 bytes. On an H200 it took the pass from 0.95 to 0.62 ms at 10,000 figures; on lavapipe,
// whose "warps" are SIMD lanes of one CPU thread, it costs more than it saves (docs/results.md).
layout(constant_id = 1) const bool STAGED_STORES = false;
shared uint staged_words[STAGED_STORES ? gl_WorkGroupSize.x * SKINNED_VERTEX_UINTS : 1u];

#include "skinning.glsl"
#include "work_tables.glsl"

void main() {
    WorkGroup skin_group;
    if (!work_entry(TABLE_SKIN, skin_group)) {
        return;  // the whole workgroup leaves
    }
    uint instance_index = skin_group.instance & ~LIST_DUAL_QUATERNION;
    bool dual = (skin_group.instance & LIST_DUAL_QUATERNION) != 0u;
    uint group = skin_group.group & 0xFFFFFFu;
    // The fields it needs, each loaded alone: a copy of the whole record costs every lane its 40
    // words (on lavapipe, 1.16x the pass).
    uint model = skin_group.model;
    uint vertex_count = models[model].level_vertices[skin_group.group >> 24];
    uint vertex = group * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    bool in_level = vertex < vertex_count;
    if (!STAGED_STORES && !in_level) {
        return;
    }
    // Its chunk from its index; its places in the chunk's palettes and skinned vertices from its
    // entry (InstanceSlot: models differ in size).
    SkinSource at = SkinSource(models[model].first_vertex, models[model].first_target, models[model].joint_count,
                               models[model].palette_stride, instance_index / push.chunk_instances, skin_group.second_base);
    uint words[SKINNED_VERTEX_UINTS];
    if (in_level) {
        SkinnedResult skinned_vertex = skin_vertex(vertex, at, dual, false);
        words[0] = floatBitsToUint(skinned_vertex.position.x);
        words[1] = floatBitsToUint(skinned_vertex.position.y);
        words[2] = floatBitsToUint(skinned_vertex.position.z);
        words[3] = packSnorm2x16(skinned_vertex.normal.xy);
        words[4] = packSnorm2x16(vec2(skinned_vertex.normal.z, 0.0));
        words[5] = packSnorm2x16(skinned_vertex.tangent.xy);
        words[6] = packSnorm2x16(vec2(skinned_vertex.tangent.z, skinned_vertex.bitangent_sign));
    }
    if (STAGED_STORES) {
        if (in_level) {
            for (uint i = 0u; i < SKINNED_VERTEX_UINTS; ++i) {
                staged_words[gl_LocalInvocationID.x * SKINNED_VERTEX_UINTS + i] = words[i];
            }
        }
        barrier();
        // The workgroup's vertices are consecutive in the instance's span of the skinned buffer.
        uint first_vertex = group * gl_WorkGroupSize.x;
        uint word_count = min(gl_WorkGroupSize.x, vertex_count - first_vertex) * SKINNED_VERTEX_UINTS;
        uint base = (skin_group.vertex_base + first_vertex) * SKINNED_VERTEX_UINTS;
        for (uint i = gl_LocalInvocationID.x; i < word_count; i += gl_WorkGroupSize.x) {
            skinned_chunks[at.chunk].skinned[base + i] = staged_words[i];
        }
        return;
    }
    uint base = (skin_group.vertex_base + vertex) * SKINNED_VERTEX_UINTS;
    for (uint i = 0u; i < SKINNED_VERTEX_UINTS; ++i) {
        skinned_chunks[at.chunk].skinned[base + i] = words[i];
    }
}
