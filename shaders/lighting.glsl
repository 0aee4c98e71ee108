// Lambert + ambient with a 3×3 PCF shadow lookup; each tap is itself 2×2-filtered by the compare
// sampler. Used by forward.frag and ground.frag. Needs frame.glsl first.

float shadow_visibility(vec4 light_clip) {
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

vec3 shade(vec3 albedo, vec3 normal, vec4 light_clip) {
    float lambert = max(dot(normal, frame.light_direction.xyz), 0.0);
    float visibility = lambert > 0.0 ? shadow_visibility(light_clip) : 1.0;
    float ambient = frame.light_color_ambient.a;
    return albedo * (ambient + frame.light_color_ambient.rgb * lambert * visibility);
}
