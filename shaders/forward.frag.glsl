#version 460
#include "frame.glsl"
#include "lighting.glsl"

layout(set = 1, binding = 0) uniform sampler2D base_color_texture;

layout(push_constant) uniform Material {
    vec4 base_color;
} material;

layout(location = 0) in vec3 normal;
layout(location = 1) in vec2 uv;
layout(location = 2) in vec4 light_clip;

layout(location = 0) out vec4 color;

void main() {
    vec4 albedo = material.base_color * texture(base_color_texture, uv);
    vec3 n = normalize(normal);
    // Culling is off (MD5 winding varies between exporters), so light the side we see.
    n = gl_FrontFacing ? n : -n;
    color = vec4(shade(albedo.rgb, n, light_clip), 1.0);
}
