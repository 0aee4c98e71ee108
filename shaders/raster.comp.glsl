#version 460
// Raster pass (`--raster compute|auto`): the small triangles the triangle pass handed over
// (raster.camera_triangles), rasterized in compute straight from the skinned buffer. An
// invocation a triangle walks the samples its screen box holds: the forward pass's 4× MSAA
// positions, each pixel's, and for every sample inside the triangle (a top-left fill rule on
// corners snapped to the hardware's 1/256-pixel grid, integer edge functions) and inside the depth
// range, one 64-bit atomicMin into the visibility buffer: the depth's bits above the triangle's
// place in the list, so the nearest triangle wins, as the depth test would have it. The forward
// pass's resolve shades what won and merges it with the hardware's samples by depth.
//
// The SHADOW build takes the light's list (raster.light_triangles) into a 32-bit depth a texel of
// the shadow map (raster.shadow_depth), one sample at the texel's centre, with the shadow
// pipeline's slope-scaled depth bias added; the shadow pass merges it into its map.
// variant: SHADOW
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Indices { uint indices[]; };
layout(set = 0, binding = 1) readonly buffer Skinned { float skinned[]; } skinned_chunks[MAX_CHUNKS];
layout(set = 0, binding = 2) readonly buffer Triangles { RasterTriangle triangles[]; };
layout(set = 0, binding = 3) buffer Counters { CullCounters counters; };
#ifdef SHADOW
// A texel's depth as float bits (non-negative, so ordered as unsigned integers); ~0: none.
layout(set = 0, binding = 4) buffer Depth { uint texels[]; };
const uint VIEW = RASTER_LIGHT;
const uint SAMPLES = 1u;
const ivec2 SAMPLE_OFFSETS[1] = ivec2[](ivec2(128, 128));
#else
// A sample's (depth bits << 32 | triangle), pixel-major, 4 samples a pixel; ~0: none.
layout(set = 0, binding = 4) buffer Visibility { uint64_t visibility[]; };
const uint VIEW = RASTER_CAMERA;
const uint SAMPLES = 4u;
// Vulkan's standard 4× sample positions, in 1/256 pixel: (0.375, 0.125), (0.875, 0.375),
// (0.125, 0.625), (0.625, 0.875). Sample i of a pixel is the forward pass's gl_SampleID i.
const ivec2 SAMPLE_OFFSETS[4] = ivec2[](ivec2(96, 32), ivec2(224, 96), ivec2(32, 160), ivec2(160, 224));
#endif

layout(push_constant) uniform Push {
    mat4 view_projection;
    uvec2 size;             // the target's pixels (the frame's, or the shadow map's texels)
    float facing_sign;      // the sign of a hidden triangle's area (triangles::facing_sign); 0: none hidden
    uint chunk_instances;
    uint room;              // the list's room: entries past it were never written
    float bias_constant;    // SHADOW: the shadow pipeline's depth bias (constant, slope)
    float bias_slope;
    uint unused;
} push;

// The sub-pixel grid: corners snap to 1/256 pixel, as the hardware's 8 sub-pixel bits do.
const float SUBPIXELS = 256.0;

vec4 corner(uint chunk, uint vertex) {
    uint at = vertex * SKINNED_VERTEX_UINTS;
    vec3 position = vec3(skinned_chunks[chunk].skinned[at], skinned_chunks[chunk].skinned[at + 1u],
                         skinned_chunks[chunk].skinned[at + 2u]);
    return push.view_projection * vec4(position, 1.0);
}

// Twice the signed area of (a, b, p) in 1/256-pixel units squared: exact in 64 bits.
int64_t edge(ivec2 a, ivec2 b, ivec2 p) {
    return int64_t(b.x - a.x) * int64_t(p.y - a.y) - int64_t(b.y - a.y) * int64_t(p.x - a.x);
}

// The top-left rule: a sample exactly on edge a→b (the interior on its positive side, x right and
// y down) belongs to the triangle only when the edge is a left edge (it goes up) or a top edge
// (horizontal, going right): of two triangles sharing an edge, exactly one owns such a sample.
int64_t tie_bias(ivec2 a, ivec2 b) {
    int dy = b.y - a.y;
    int dx = b.x - a.x;
    return (dy < 0 || (dy == 0 && dx > 0)) ? int64_t(0) : int64_t(-1);
}

#ifdef SHADOW
// The shadow pipeline's depth bias for a triangle with these window-space corners (pixels) and
// depths: constant × the float format's step at its largest depth, plus slope × its steepest
// depth slope in pixels, as the rasterizer computes it for a D32 target.
float depth_bias(vec2 a, vec2 b, vec2 c, vec3 z) {
    float det = (b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y);
    float dzdx = ((z.y - z.x) * (c.y - a.y) - (z.z - z.x) * (b.y - a.y)) / det;
    float dzdy = ((z.z - z.x) * (b.x - a.x) - (z.y - z.x) * (c.x - a.x)) / det;
    int exponent;
    frexp(max(z.x, max(z.y, z.z)), exponent);
    float step = exp2(float(exponent - 1 - 23));
    return push.bias_constant * step + push.bias_slope * max(abs(dzdx), abs(dzdy));
}
#endif

// Rasterizes list entry `id`; returns the samples it covered (whatever the depth test made of them).
uint rasterize(uint id) {
    RasterTriangle triangle = triangles[id];
    uint chunk = triangle.instance / push.chunk_instances;
    uint base = triangle.vertex_base;
    vec4 a = corner(chunk, base + indices[triangle.first_index]);
    vec4 b = corner(chunk, base + indices[triangle.first_index + 1u]);
    vec4 c = corner(chunk, base + indices[triangle.first_index + 2u]);
    // The triangle pass hands over only triangles in front of the eye, inside its guard band.
    if (a.w <= 0.0 || b.w <= 0.0 || c.w <= 0.0) {
        return 0u;
    }
    vec2 size = vec2(push.size);
    ivec2 pa = ivec2(round((a.xy / a.w * 0.5 + 0.5) * size * SUBPIXELS));
    ivec2 pb = ivec2(round((b.xy / b.w * 0.5 + 0.5) * size * SUBPIXELS));
    ivec2 pc = ivec2(round((c.xy / c.w * 0.5 + 0.5) * size * SUBPIXELS));
    vec3 z = vec3(a.z / a.w, b.z / b.w, c.z / c.w);
    int64_t area = edge(pa, pb, pc);
    // Degenerate once snapped, or the side the pipeline culls: the hardware draws neither.
    if (area == 0 || push.facing_sign * float(sign(area)) > 0.0) {
        return 0u;
    }
    // Wound so that the interior is on each edge's positive side.
    if (area < 0) {
        ivec2 swap = pb;
        pb = pc;
        pc = swap;
        z = z.xzy;
        area = -area;
    }
    int64_t bias_a = tie_bias(pb, pc);
    int64_t bias_b = tie_bias(pc, pa);
    int64_t bias_c = tie_bias(pa, pb);
    ivec2 low = min(pa, min(pb, pc));
    ivec2 high = max(pa, max(pb, pc));
    // Pixel x holds samples in [256 x, 256 x + 256): the pixels the box touches, on the target.
    ivec2 first = max(low, ivec2(0)) >> 8;
    ivec2 last = min(high >> 8, ivec2(push.size) - 1);
#ifdef SHADOW
    float bias = depth_bias(vec2(pa) / SUBPIXELS, vec2(pb) / SUBPIXELS, vec2(pc) / SUBPIXELS, z);
#endif
    float inverse_area = 1.0 / float(area);
    uint covered = 0u;
    for (int y = first.y; y <= last.y; ++y) {
        for (int x = first.x; x <= last.x; ++x) {
            for (uint s = 0u; s < SAMPLES; ++s) {
                ivec2 p = ivec2(x, y) * 256 + SAMPLE_OFFSETS[s];
                int64_t wa = edge(pb, pc, p);
                int64_t wb = edge(pc, pa, p);
                int64_t wc = edge(pa, pb, p);
                if (wa + bias_a < 0 || wb + bias_b < 0 || wc + bias_c < 0) {
                    continue;
                }
                // Depth is affine in window space: the barycentric blend of the corners' depths.
                float depth = (float(wa) * z.x + float(wb) * z.y + float(wc) * z.z) * inverse_area;
                if (depth < 0.0 || depth > 1.0) {
                    continue; // clipped by the near or far plane
                }
                covered += 1u;
                uint pixel = uint(y) * push.size.x + uint(x);
#ifdef SHADOW
                atomicMin(texels[pixel], floatBitsToUint(max(depth + bias, 0.0)));
#else
                atomicMin(visibility[pixel * SAMPLES + s], (uint64_t(floatBitsToUint(depth)) << 32) | uint64_t(id));
#endif
            }
        }
    }
    return covered;
}

void main() {
    uint id = gl_GlobalInvocationID.x;
    uint covered = id < min(counters.raster[VIEW].w, push.room) ? rasterize(id) : 0u;
    // One atomic a subgroup for the statistics.
    uint total = subgroupAdd(covered);
    if (subgroupElect() && total > 0u) {
        if (VIEW == RASTER_CAMERA) {
            atomicAdd(counters.raster_counts.x, total);
        } else {
            atomicAdd(counters.raster_counts.y, total);
        }
    }
}
