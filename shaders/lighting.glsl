// Lambert + ambient, shadowed by a 3×3 PCF shadow-map lookup (each tap itself 2×2-filtered by the
// compare sampler) or, in the RAY_SHADOWS build, by a ray towards the light. Used by forward.frag and
// ground.frag. Needs frame.glsl first.

#ifdef RAY_SHADOWS
// 1 where nothing lies between the point and the light, else 0: one ray query against the trace
// pass's structures. Its origin leaves the surface along the normal and towards the light by twice
// what a traced triangle may stray from the drawn one (src/render/passes/trace.rs: the traced
// level is within a texel of the map, or a pixel at the instance's distance, or its room's error):
// shadow_params.y, plus shadow_params.z per unit of the point's distance from the camera (0 unless
// some instance traces a level a pixel allows, coarser than its map's). The
// ground (SHADOW_RECEIVER: it is in no structure, so it cannot shadow itself) leaves by y alone,
// so that a foot on it still casts its contact shadow. Opaque geometry and the first hit ending
// the query: one rayQueryProceedEXT finds the answer.
float shadow_visibility(vec4 light_clip, vec3 world, vec3 normal) {
    if (light_clip.z >= light_clip.w) {
        return 1.0; // beyond the shadow volume's far plane, as the map has it: nothing there casts
    }
    vec3 towards_light = frame.light_direction.xyz;
#ifdef SHADOW_RECEIVER
    float offset = frame.shadow_params.y;
#else
    float offset = frame.shadow_params.y + frame.shadow_params.z * distance(world, frame.camera_position.xyz);
#endif
    vec3 origin = world + (normal + towards_light) * offset;
    rayQueryEXT query;
    rayQueryInitializeEXT(query, scene_structure, gl_RayFlagsOpaqueEXT | gl_RayFlagsTerminateOnFirstHitEXT, 0xFF,
                          origin, 0.0, towards_light, 1.0e30);
    while (rayQueryProceedEXT(query)) {
    }
    return rayQueryGetIntersectionTypeEXT(query, true) == gl_RayQueryCommittedIntersectionNoneEXT ? 1.0 : 0.0;
}
#else
float shadow_visibility(vec4 light_clip, vec3 world, vec3 normal) {
    vec3 ndc = light_clip.xyz / light_clip.w;
    if (ndc.z >= 1.0) {
        return 1.0; // beyond the shadow volume's far plane: nothing there casts
    }
    vec2 uv = ndc.xy * 0.5 + 0.5;
    float texel = frame.shadow_params.x;
    float lit = 0.0;
    for (int y = -1; y <= 1; ++y) {
        for (int x = -1; x <= 1; ++x) {
            lit += texture(shadow_map, vec3(uv + vec2(x, y) * texel, ndc.z));
        }
    }
    return lit / 9.0;
}
#endif

// `world`: the point's world position: its place in the shadow map, or its shadow ray's origin.
vec3 shade(vec3 albedo, vec3 normal, vec3 world) {
    float lambert = max(dot(normal, frame.light_direction.xyz), 0.0);
    // The light's projection is orthographic (affine): the same as interpolating it per vertex.
    vec4 light_clip = frame.light_view_projection * vec4(world, 1.0);
    float visibility = lambert > 0.0 ? shadow_visibility(light_clip, world, normal) : 1.0;
    float ambient = frame.light_color_ambient.a;
    return albedo * (ambient + frame.light_color_ambient.rgb * lambert * visibility);
}
