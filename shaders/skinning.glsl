// The morph and the skinning blend, shared by the skin pass (compute, once per frame) and the
// `vertex` strategy's shadow and forward vertex shaders (the tutorials' way: once per pass). The
// includer declares sources[], influences[], palette_chunks[], morph_targets[] and morph_deltas[]
// first. Mirrors Model::morph_vertex and anim::skin_vertex.

struct SkinnedResult {
    vec3 position;
    vec3 normal;
    vec3 tangent;
    float bitangent_sign;
};

vec3 safe_normalize(vec3 v) {
    float length_squared = dot(v, v);
    return length_squared > 0.0 ? v * inversesqrt(length_squared) : vec3(0.0);
}

// Float `word` of the morph block at palette slot `block` (common.glsl: the morph block).
float morph_word(uint chunk, uint block, uint word) {
    return palette_chunks[chunk].palettes[block + word / SLOT_FLOATS].rows[(word % SLOT_FLOATS) / 4u][word % 4u];
}

// Adds the instance's active targets to the vertex, before skinning (glTF's order): position and
// normal move by weight × delta; the tangent is made perpendicular to the moved normal again. A
// target's deltas are its sparse list, ascending by vertex, so the vertex's entry is found by a
// binary search (log2 of the target's size), after one compare with the span it moves. Why not a
// dense (target × vertex) table: its memory would grow with targets × vertices however few each
// moves; why not a pass per target adding into a scratch copy of the vertices: a buffer of
// instances × vertices more, and atomics for the sum (the order of a float sum would then vary).
void morph_vertex(uint vertex, uint chunk, uint block, inout SourceVertex source) {
    uint active_count = uint(morph_word(chunk, block, 0u));
    bool moved = false;
    for (uint i = 0u; i < active_count; ++i) {
        uint target = uint(morph_word(chunk, block, 1u + 2u * i));
        float weight = morph_word(chunk, block, 2u + 2u * i);
        MorphTarget t = morph_targets[target];
        if (vertex < t.first_vertex || vertex > t.last_vertex) {
            continue;
        }
        uint low = t.first_delta;
        uint high = t.first_delta + t.delta_count;
        while (low < high) {
            uint middle = (low + high) / 2u;
            if (morph_deltas[middle].vertex < vertex) {
                low = middle + 1u;
            } else {
                high = middle;
            }
        }
        if (low < t.first_delta + t.delta_count && morph_deltas[low].vertex == vertex) {
            source.position += weight * morph_deltas[low].position;
            source.normal += weight * morph_deltas[low].normal;
            moved = true;
        }
    }
    if (moved) {
        source.normal = safe_normalize(source.normal);
        source.tangent.xyz = safe_normalize(source.tangent.xyz - source.normal * dot(source.normal, source.tangent.xyz));
    }
}

// `instance` in chunks of `chunk_instances` (common.glsl: MAX_CHUNKS); its palette slots are
// `palette_stride` apart: joint_count entries, then the morph block when the model has targets.
SkinnedResult skin_vertex(uint vertex, uint instance, uint chunk_instances, uint joint_count, uint palette_stride) {
    uint chunk = instance / chunk_instances;
    uint palette_base = (instance % chunk_instances) * palette_stride;
    SourceVertex source = sources[vertex];
    if (palette_stride > joint_count) {
        morph_vertex(vertex, chunk, palette_base + joint_count, source);
    }
    // Linear blend skinning is linear in the matrix: blend the influences' rows first (12
    // multiply-adds an influence), then transform the position, normal and tangent once, rather
    // than transforming all three by every influence (30).
    vec4 row0 = vec4(0.0);
    vec4 row1 = vec4(0.0);
    vec4 row2 = vec4(0.0);
    for (uint i = 0u; i < source.influence_count; ++i) {
        Influence influence = influences[source.first_influence + i];
        if (influence.joint >= joint_count) {
            continue; // loaders never produce this; the CPU reference skips it too
        }
        PaletteMatrix m = palette_chunks[chunk].palettes[palette_base + influence.joint];
        float w = influence.weight;
        row0 += w * m.rows[0];
        row1 += w * m.rows[1];
        row2 += w * m.rows[2];
    }
    vec4 position = vec4(source.position, 1.0);
    SkinnedResult result;
    result.position = vec3(dot(row0, position), dot(row1, position), dot(row2, position));
    result.normal = vec3(dot(row0.xyz, source.normal), dot(row1.xyz, source.normal), dot(row2.xyz, source.normal));
    result.tangent = vec3(dot(row0.xyz, source.tangent.xyz), dot(row1.xyz, source.tangent.xyz), dot(row2.xyz, source.tangent.xyz));
    result.normal = safe_normalize(result.normal);
    result.tangent = safe_normalize(result.tangent);
    result.bitangent_sign = source.tangent.w;
    return result;
}
