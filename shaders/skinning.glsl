// The skinning blend, shared by the skin pass (compute, once per frame) and the `vertex` strategy's
// shadow and forward vertex shaders (the tutorials' way: once per pass). The includer declares
// sources[], influences[] and palette_chunks[] first. Mirrors anim::skin_vertex.

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

// `instance` in chunks of `chunk_instances` (common.glsl: MAX_CHUNKS).
SkinnedResult skin_vertex(uint vertex, uint instance, uint chunk_instances, uint joint_count) {
    uint chunk = instance / chunk_instances;
    uint palette_base = (instance % chunk_instances) * joint_count;
    SourceVertex source = sources[vertex];
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
