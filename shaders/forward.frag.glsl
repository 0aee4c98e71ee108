#version 460
// Forward pass, the model: lit colour and, in the VELOCITY build, the velocity target beside it
// (src/render/passes/forward.rs: a pipeline without the target and one with it); in the
// RAY_SHADOWS builds, shadowed by a ray query rather than the shadow map (`--shadows ray`).
// variant: VELOCITY
// variant: RAY_SHADOWS
// variant: VELOCITY+RAY_SHADOWS
#ifdef RAY_SHADOWS
#extension GL_EXT_ray_query : require
#endif
#include "frame.glsl"
#include "lighting.glsl"
#include "surface.glsl"

layout(set = 1, binding = 0) uniform sampler2D base_color_texture;
// Tangent-space normal map; a 1×1 (0.5, 0.5, 1) "flat" image when the material has none.
layout(set = 1, binding = 1) uniform sampler2D normal_texture;

layout(push_constant) uniform Material {
    vec4 base_color;
} material;

layout(location = 0) in vec3 normal;
layout(location = 1) in vec2 uv;
layout(location = 2) in vec3 world;
layout(location = 3) in vec4 tangent;
layout(location = 6) in vec4 vertex_color;
layout(location = 7) flat in vec4 tint;  // the instance's: rgb a hue, a how far toward it
#ifdef VELOCITY
layout(location = 4) in vec4 clip;
layout(location = 5) in vec4 previous_clip;
#endif

layout(location = 0) out vec4 color;
#ifdef VELOCITY
// The velocity target (RG16F): this pixel's motion since last frame, in pixels.
layout(location = 1) out vec2 velocity;
#endif

void main() {
    // glTF's base colour: the material's factor × its texture × the vertex colour.
    vec4 albedo = material.base_color * texture(base_color_texture, uv) * vertex_color;
    vec3 mapped = texture(normal_texture, uv).xyz * 2.0 - 1.0;
    color = vec4(shade_surface(albedo, tint, normal, tangent, mapped, gl_FrontFacing, world), 1.0);
    if ((frame.chunking.y & DEBUG_RASTER) != 0u) {
        color.rgb = mix(color.rgb, HARDWARE_COLOR, 0.6);
    }
#ifdef VELOCITY
    velocity = pixel_motion(clip, previous_clip);
#endif
}
