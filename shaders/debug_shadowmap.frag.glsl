#version 460
// Debug view `shadowmap`: the light's depth as grey, near dark, far light, with a thin frame.
#include "common.glsl"
#include "debug.glsl"

layout(location = 0) in vec4 color;
layout(location = 0) out vec4 out_color;

void main() {
    vec2 uv = color.xy;
    float depth = texture(shadow_depth, uv).r;
    bool edge = any(lessThan(uv, vec2(0.01))) || any(greaterThan(uv, vec2(0.99)));
    out_color = edge ? vec4(1.0, 0.8, 0.2, 1.0) : vec4(vec3(pow(depth, 4.0)), 1.0);
}
