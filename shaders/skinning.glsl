// The morph and the skinning blend, shared by the skin pass (compute, once per frame) and the
// `vertex` strategy's shadow and forward vertex shaders (the tutorials' way: once per pass). The
// includer declares sources[], influences[], influence_offsets[], palette_chunks[], morph_targets[]
// and morph_deltas[] first. Mirrors Model::morph_vertex, anim::skin_vertex and
// anim::offset_correction.

// How a chunk array is indexed: as is where the chunk is the same across a draw or a workgroup; the
// raster resolve, whose neighbouring samples may be other instances', defines it nonuniformEXT.
#ifndef CHUNK_INDEX
#define CHUNK_INDEX(chunk) chunk
#endif

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

// Influence `index`'s offset (common.glsl: INFLUENCE_OFFSETS).
vec3 influence_offset(uint index) {
    return vec3(influence_offsets[3u * index], influence_offsets[3u * index + 1u], influence_offsets[3u * index + 2u]);
}

// `v` turned by the unit quaternion `q` (xyzw).
vec3 rotate(vec4 q, vec3 v) {
    vec3 t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

// Float `word` of the morph block at palette slot `block` (common.glsl: the morph block).
float morph_word(uint chunk, uint block, uint word) {
    return palette_chunks[CHUNK_INDEX(chunk)].palettes[block + word / SLOT_FLOATS].rows[(word % SLOT_FLOATS) / 4u][word % 4u];
}

// Adds the instance's active targets to the vertex, before skinning (glTF's order): position and
// normal move by weight × delta; the tangent is made perpendicular to the moved normal again. A
// target's deltas are its sparse list, ascending by vertex, so the vertex's entry is found by a
// binary search (log2 of the target's size), after one compare with the span it moves. Why not a
// dense (target × vertex) table: its memory would grow with targets × vertices however few each
// moves; why not a pass per target adding into a scratch copy of the vertices: a buffer of
// instances × vertices more, and atomics for the sum (the order of a float sum would then vary).
void morph_vertex(uint vertex, uint first_target, uint chunk, uint block, inout SourceVertex source) {
    uint active_count = uint(morph_word(chunk, block, 0u));
    bool moved = false;
    for (uint i = 0u; i < active_count; ++i) {
        uint target = uint(morph_word(chunk, block, 1u + 2u * i));
        float weight = morph_word(chunk, block, 2u + 2u * i);
        MorphTarget t = morph_targets[first_target + target];
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

// Dual-quaternion skinning (Kavan et al. 2007; src/anim/dual_quaternion.rs): the influences'
// dual quaternions, each turned to the first one's hemisphere, blended, normalized, and applied
// after the blended uniform scale. False, and nothing written, when an influence's matrix is not
// a rotation times a uniform scale: the vertex then blends linearly.
// With influence offsets, each offset turned by its own influence's rotation and scale is added,
// weighted, as linear blending adds it.
bool skin_dual_quaternion(uint chunk, uint first_entry, uint joint_count, SourceVertex source, out SkinnedResult result) {
    vec4 first_real = vec4(0.0);
    bool found = false;
    vec4 real = vec4(0.0);
    vec4 dual = vec4(0.0);
    float scale = 0.0;
    vec3 correction = vec3(0.0);
    bool offsets = (source.influence_count & INFLUENCE_OFFSETS) != 0u;
    for (uint i = 0u; i < (source.influence_count & ~INFLUENCE_OFFSETS); ++i) {
        Influence influence = influences[source.first_influence + i];
        if (influence.joint >= joint_count) {
            continue;
        }
        PaletteMatrix entry = palette_chunks[CHUNK_INDEX(chunk)].palettes[first_entry + influence.joint];
        if (entry.rows[2].y == 0.0) {
            return false;
        }
        if (!found) {
            first_real = entry.rows[0];
            found = true;
        }
        float w = dot(entry.rows[0], first_real) < 0.0 ? -influence.weight : influence.weight;
        real += w * entry.rows[0];
        dual += w * entry.rows[1];
        scale += abs(w) * entry.rows[2].x;
        if (offsets) {
            correction += influence.weight * entry.rows[2].x * rotate(entry.rows[0], influence_offset(source.first_influence + i));
        }
    }
    float length_real = length(real);
    if (!found || !(length_real > 0.0)) {
        return false;
    }
    real /= length_real;
    dual /= length_real;
    // The translation: 2 (w_r d - w_d r + r × d), r and d the vector parts.
    vec3 translation = 2.0 * (real.w * dual.xyz - dual.w * real.xyz + cross(real.xyz, dual.xyz));
    result.position = rotate(real, source.position * scale) + translation + correction;
    result.normal = safe_normalize(rotate(real, source.normal));
    result.tangent = safe_normalize(rotate(real, source.tangent.xyz));
    result.bitangent_sign = source.tangent.w;
    return true;
}

// Whether the instance whose palette slots start at `palette_base` in chunk `chunk` blends dual
// quaternions, from its palette header (the `vertex` strategy's shaders; the skin pass has it from
// its table's entry).
bool instance_dual(uint chunk, uint palette_base, uint joint_count) {
    return palette_chunks[CHUNK_INDEX(chunk)].palettes[palette_base + 2u * joint_count].rows[0].x == float(SKINNING_DUAL_QUATERNION);
}

// Where an instance's skinning reads: its model's part of the shared buffers and its palette slots.
struct SkinSource {
    uint first_vertex;   // the model's (ModelRecord)
    uint first_target;
    uint joint_count;
    uint palette_stride; // the model's palette layout: this frame's block, then the previous one
    uint chunk;          // the instance's (common.glsl: MAX_CHUNKS; InstanceSlot)
    uint palette_base;
};

// Model vertex `vertex` (the model's own numbering) of the instance `at` describes; `dual`: it
// blends dual quaternions; `previous`: from the previous block (where the vertex was last frame,
// for the motion vectors).
SkinnedResult skin_vertex(uint vertex, SkinSource at, bool dual, bool previous) {
    uint chunk = at.chunk;
    uint joint_count = at.joint_count;
    uint block_slots = at.palette_stride / 2u;
    uint palette_base = at.palette_base + (previous ? block_slots : 0u);
    uint header = palette_base + 2u * joint_count;
    SourceVertex source = sources[at.first_vertex + vertex];
    if (block_slots > 2u * joint_count + 1u) {
        morph_vertex(vertex, at.first_target, chunk, header + 1u, source);
    }
    if (dual) {
        SkinnedResult dual_result;
        if (skin_dual_quaternion(chunk, palette_base + joint_count, joint_count, source, dual_result)) {
            return dual_result;
        }
    }
    // Linear blend skinning is linear in the matrix: blend the influences' rows first (12
    // multiply-adds an influence), then transform the position, normal and tangent once, rather
    // than transforming all three by every influence (30).
    // An influence offset is turned by its own matrix alone (its linear part), weighted.
    vec4 row0 = vec4(0.0);
    vec4 row1 = vec4(0.0);
    vec4 row2 = vec4(0.0);
    vec3 correction = vec3(0.0);
    bool offsets = (source.influence_count & INFLUENCE_OFFSETS) != 0u;
    for (uint i = 0u; i < (source.influence_count & ~INFLUENCE_OFFSETS); ++i) {
        Influence influence = influences[source.first_influence + i];
        if (influence.joint >= joint_count) {
            continue; // loaders never produce this; the CPU reference skips it too
        }
        PaletteMatrix m = palette_chunks[CHUNK_INDEX(chunk)].palettes[palette_base + influence.joint];
        float w = influence.weight;
        row0 += w * m.rows[0];
        row1 += w * m.rows[1];
        row2 += w * m.rows[2];
        if (offsets) {
            vec3 offset = influence_offset(source.first_influence + i);
            correction += w * vec3(dot(m.rows[0].xyz, offset), dot(m.rows[1].xyz, offset), dot(m.rows[2].xyz, offset));
        }
    }
    vec4 position = vec4(source.position, 1.0);
    SkinnedResult result;
    result.position = vec3(dot(row0, position), dot(row1, position), dot(row2, position)) + correction;
    result.normal = vec3(dot(row0.xyz, source.normal), dot(row1.xyz, source.normal), dot(row2.xyz, source.normal));
    result.tangent = vec3(dot(row0.xyz, source.tangent.xyz), dot(row1.xyz, source.tangent.xyz), dot(row2.xyz, source.tangent.xyz));
    result.normal = safe_normalize(result.normal);
    result.tangent = safe_normalize(result.tangent);
    result.bitangent_sign = source.tangent.w;
    return result;
}
