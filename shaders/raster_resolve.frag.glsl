#version 460
// Raster resolve, inside the forward pass after its draws: one triangle over the target, shaded
// once a sample (it reads gl_SampleID, so the pipeline runs per sample). A sample the raster pass
// covered (raster.visibility) gets that triangle's depth, and its surface rebuilt from the skinned
// buffer: perspective-correct barycentrics at the pixel from the three skinned corners, the
// texture's footprint from the same a pixel over (textureGrad), then the forward pass's shading
// (surface.glsl) and, in the VELOCITY builds, the motion since last frame from the corners where
// they were then. The depth test merges it with what the hardware drew; the MSAA resolve that
// follows averages both alike.
// variant: VELOCITY
// variant: RAY_SHADOWS
// variant: VELOCITY+RAY_SHADOWS
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_EXT_nonuniform_qualifier : require
#ifdef RAY_SHADOWS
#extension GL_EXT_ray_query : require
#endif
#include "frame.glsl"
#include "common.glsl"
#include "lighting.glsl"
#include "surface.glsl"
#include "frame_buffers.glsl"
#define SKIN_INPUTS_SET 2
#define CHUNK_INDEX(chunk) nonuniformEXT(chunk)
#include "skin_inputs.glsl"
#include "skinning.glsl"
#include "instance_skinning.glsl"

// Set 1: the raster pass's output and what rebuilds a surface (passes/raster.rs: RESOLVE_*).
layout(set = 1, binding = 0) readonly buffer Visibility { uint64_t visibility[]; };
layout(set = 1, binding = 1) readonly buffer Triangles { RasterTriangle triangles[]; };
layout(set = 1, binding = 2) readonly buffer Indices { uint indices[]; };
// Sized to the renderer's chunks (the fragment stage's storage buffers are few: RasterPass::fits).
layout(set = 1, binding = 3) readonly buffer Skinned { uint skinned[]; } skinned_chunks[];
// Per mesh: its material's base colour factor and (x of the second) its material's index.
struct MeshMaterial {
    vec4 base_color;
    uvec4 material;
};
layout(set = 1, binding = 4) readonly buffer MeshMaterials { MeshMaterial mesh_materials[]; };
layout(set = 1, binding = 5) uniform sampler2D base_color_textures[];
layout(set = 1, binding = 6) uniform sampler2D normal_textures[];

layout(push_constant) uniform Push {
    uint debug;   // DEBUG_RASTER: the compute path's samples in its colour
} push;

layout(location = 0) out vec4 color;
#ifdef VELOCITY
layout(location = 1) out vec2 velocity;
#endif

// One skinned corner: world position, normal and tangent (SkinnedVertex).
struct Corner {
    vec3 position;
    vec3 normal;
    vec4 tangent;
};

Corner skinned_corner(uint chunk, uint vertex) {
    uint at = vertex * SKINNED_VERTEX_UINTS;
    Corner corner;
    corner.position = uintBitsToFloat(uvec3(skinned_chunks[nonuniformEXT(chunk)].skinned[at], skinned_chunks[nonuniformEXT(chunk)].skinned[at + 1u],
                                            skinned_chunks[nonuniformEXT(chunk)].skinned[at + 2u]));
    corner.normal = vec3(unpackSnorm2x16(skinned_chunks[nonuniformEXT(chunk)].skinned[at + 3u]),
                         unpackSnorm2x16(skinned_chunks[nonuniformEXT(chunk)].skinned[at + 4u]).x);
    corner.tangent = vec4(unpackSnorm2x16(skinned_chunks[nonuniformEXT(chunk)].skinned[at + 5u]),
                          unpackSnorm2x16(skinned_chunks[nonuniformEXT(chunk)].skinned[at + 6u]));
    return corner;
}

// Perspective-correct barycentrics at window point p (pixels) of the triangle whose corners are at
// window points s[i] with clip w[i]: the screen-space weights, each over its corner's w, renormalized.
vec3 barycentrics(vec2 s0, vec2 s1, vec2 s2, vec3 w, vec2 p) {
    float area = (s1.x - s0.x) * (s2.y - s0.y) - (s2.x - s0.x) * (s1.y - s0.y);
    vec3 screen = vec3((s2.x - s1.x) * (p.y - s1.y) - (s2.y - s1.y) * (p.x - s1.x),
                       (s0.x - s2.x) * (p.y - s2.y) - (s0.y - s2.y) * (p.x - s2.x),
                       (s1.x - s0.x) * (p.y - s0.y) - (s1.y - s0.y) * (p.x - s0.x)) / area;
    vec3 perspective = screen / w;
    return perspective / (perspective.x + perspective.y + perspective.z);
}

vec2 window(vec4 clip) {
    return (clip.xy / clip.w * 0.5 + 0.5) * frame.viewport.xy;
}

void main() {
    uvec2 pixel = uvec2(gl_FragCoord.xy);
    uint64_t entry = visibility[(pixel.y * uint(frame.viewport.x) + pixel.x) * 4u + uint(gl_SampleID)];
    if (entry == ~uint64_t(0)) {
        discard; // the hardware's sample, or the background's
    }
    gl_FragDepth = uintBitsToFloat(uint(entry >> 32));
    RasterTriangle triangle = triangles[uint(entry & 0xFFFFFFFFul)];
    uint instance = triangle.instance;
    uint chunk = instance / frame.chunking.x;
    uvec3 vertices = uvec3(indices[triangle.first_index], indices[triangle.first_index + 1u], indices[triangle.first_index + 2u]);
    Corner c0 = skinned_corner(chunk, triangle.vertex_base + vertices.x);
    Corner c1 = skinned_corner(chunk, triangle.vertex_base + vertices.y);
    Corner c2 = skinned_corner(chunk, triangle.vertex_base + vertices.z);
    vec4 clip0 = frame.view_projection * vec4(c0.position, 1.0);
    vec4 clip1 = frame.view_projection * vec4(c1.position, 1.0);
    vec4 clip2 = frame.view_projection * vec4(c2.position, 1.0);
    vec2 s0 = window(clip0);
    vec2 s1 = window(clip1);
    vec2 s2 = window(clip2);
    vec3 w = vec3(clip0.w, clip1.w, clip2.w);
    // The attributes at the pixel's centre, as the hardware interpolates them for a multisampled
    // pixel shaded once (no sample shading): the sample's own position would supersample the
    // texture where the hardware does not. Only the depth is the sample's.
    vec2 p = floor(gl_FragCoord.xy) + 0.5;
    vec3 b = barycentrics(s0, s1, s2, w, p);
    // A pixel over in x and in y: the texture's footprint, as the hardware's quad derivatives take it.
    vec3 bx = barycentrics(s0, s1, s2, w, p + vec2(1.0, 0.0));
    vec3 by = barycentrics(s0, s1, s2, w, p + vec2(0.0, 1.0));

    uint model = instance_slots[instance].model;
    uint first_vertex = models[model].first_vertex;
    Surface u0 = surfaces[first_vertex + vertices.x];
    Surface u1 = surfaces[first_vertex + vertices.y];
    Surface u2 = surfaces[first_vertex + vertices.z];
    mat3x2 uvs = mat3x2(u0.uv, u1.uv, u2.uv);
    vec2 uv = uvs * b;
    vec2 uv_dx = uvs * bx - uv;
    vec2 uv_dy = uvs * by - uv;
    vec4 vertex_color = mat3x4(unpackUnorm4x8(u0.color), unpackUnorm4x8(u1.color), unpackUnorm4x8(u2.color)) * b;
    vec3 world = mat3(c0.position, c1.position, c2.position) * b;
    vec3 normal = mat3(c0.normal, c1.normal, c2.normal) * b;
    vec4 tangent = mat3x4(c0.tangent, c1.tangent, c2.tangent) * b;
    MeshMaterial material = mesh_materials[triangle.mesh];
    uint texture_index = material.material.x;
    vec4 albedo = material.base_color * textureGrad(base_color_textures[nonuniformEXT(texture_index)], uv, uv_dx, uv_dy) *
                  vertex_color;
    vec3 mapped = textureGrad(normal_textures[nonuniformEXT(texture_index)], uv, uv_dx, uv_dy).xyz * 2.0 - 1.0;
    // The window's y points down: a front face (counter-clockwise) has a negative area there.
    bool front_facing = (s1.x - s0.x) * (s2.y - s0.y) - (s2.x - s0.x) * (s1.y - s0.y) < 0.0;
    vec4 tint = unpackUnorm4x8(frame_instances[instance].tint);
    color = vec4(shade_surface(albedo, tint, normal, tangent, mapped, front_facing, world), 1.0);
    if ((push.debug & DEBUG_RASTER) != 0u) {
        color.rgb = mix(color.rgb, COMPUTE_COLOR, 0.6);
    }
#ifdef VELOCITY
    // Where the corners were last frame: skinned again from the previous palette block for an
    // instance that moves by itself (forward.vert does the same a vertex).
    vec3 previous = world;
    if ((motions[instance] & MOTION_MOVING) != 0u) {
        SkinSource at = instance_skin_source(instance, frame.chunking.x);
        bool dual = instance_dual(at.chunk, at.palette_base, at.joint_count);
        previous = mat3(skin_vertex(vertices.x, at, dual, true).position, skin_vertex(vertices.y, at, dual, true).position,
                        skin_vertex(vertices.z, at, dual, true).position) * b;
    }
    velocity = pixel_motion(clip_position(frame.view_projection, world), clip_position(frame.previous_view_projection, previous));
#endif
}
