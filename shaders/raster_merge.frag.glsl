#version 460
// Shadow merge, inside the shadow pass after its draws: one triangle over the map, a texel the
// raster pass covered (raster.shadow_depth: its depth with the bias already added) written as its
// depth; the depth test keeps the nearer of it and what the hardware drew.

layout(set = 0, binding = 0) readonly buffer Depth { uint texels[]; };

layout(push_constant) uniform Push {
    uint width;   // the shadow map's texels a row
} push;

void main() {
    uint depth = texels[uint(gl_FragCoord.y) * push.width + uint(gl_FragCoord.x)];
    if (depth == 0xFFFFFFFFu) {
        discard;
    }
    gl_FragDepth = uintBitsToFloat(depth);
}
