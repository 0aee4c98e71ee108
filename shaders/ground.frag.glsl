#version 460
// Forward pass, the ground: lit checker and, in the VELOCITY build, the velocity target; in the
// RAY_SHADOWS builds, shadowed by a ray query (`--shadows ray`).
// variant: VELOCITY
// variant: RAY_SHADOWS
// variant: VELOCITY+RAY_SHADOWS
#ifdef RAY_SHADOWS
#extension GL_EXT_ray_query : require
#endif
#include "frame.glsl"
// The ground receives shadows and casts none (lighting.glsl: its shadow ray's offset).
#define SHADOW_RECEIVER 1
#include "lighting.glsl"

layout(location = 0) in vec3 world;
#ifdef VELOCITY
layout(location = 2) in vec4 clip;
layout(location = 3) in vec4 previous_clip;
#endif

layout(location = 0) out vec4 color;
#ifdef VELOCITY
layout(location = 1) out vec2 velocity;
#endif

void main() {
    // Ten cells across the half-width: the checker scales with the model, whatever its units.
    vec2 cell = floor(world.xz / (frame.ground.w * 0.1));
    float checker = mod(cell.x + cell.y, 2.0);
    vec3 albedo = mix(vec3(0.46, 0.48, 0.46), vec3(0.54, 0.56, 0.54), checker);
    color = vec4(shade(albedo, vec3(0.0, 1.0, 0.0), world), 1.0);
#ifdef VELOCITY
    velocity = pixel_motion(clip, previous_clip);
#endif
}
