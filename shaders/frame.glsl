// Per-frame uniforms of the graphics passes (set 0). Mirrored by FrameUniforms in src/render/shader_types/mod.rs.
layout(set = 0, binding = 0, std140) uniform FrameUniforms {
    mat4 view_projection;
    mat4 light_view_projection;
    vec4 camera_position;      // xyz
    vec4 light_direction;      // xyz: unit vector towards the light
    vec4 light_color_ambient;  // rgb: light colour, a: ambient strength
    vec4 ground;               // xyz: centre of the ground plane, w: half size
    vec4 shadow_params;        // x: shadow-map texel size in uv; a shadow ray's offset from the surface:
                               // y (world units) + z × the point's distance from the camera
    uvec4 chunking;            // x: instances per chunk (the vertex shaders that skin find an instance's chunk);
                               // y: debug flags (surface.glsl: DEBUG_RASTER); z, w: 0 (a model's sizes are
                               // in its record, ModelRecord)
    vec4 camera_planes[6];     // the camera frustum: xyz normal (pointing in), w distance
    vec4 light_planes[6];      // the shadow map's volume, likewise
    mat4 previous_view_projection;  // last frame's view_projection (this frame's on the first)
    vec4 viewport;             // xy: the target's size in pixels
} frame;

// A point's clip position under one of the frame's matrices, for the velocity target. This frame's
// and last frame's both go through here, and `precise` keeps the compiler from fusing multiplies
// and adds differently in the two: a point that did not move then gets exactly zero motion on any
// driver.
vec4 clip_position(mat4 view_projection, vec3 world) {
    precise vec4 clip = view_projection * vec4(world, 1.0);
    return clip;
}

// The screen-space motion from where a point was last frame (previous_clip) to where it is
// (clip): pixels, +x right, +y down. Zero when either lies behind its camera.
vec2 pixel_motion(vec4 clip, vec4 previous_clip) {
    if (!(clip.w > 0.0) || !(previous_clip.w > 0.0)) {
        return vec2(0.0);
    }
    // `precise` again: unmarked, a compiler may fuse one side's divide into the subtraction
    // (a fused multiply-add with the reciprocal) and round the other, leaving a few millionths of
    // a pixel between two equal points.
    precise vec2 now = clip.xy / clip.w;
    precise vec2 before = previous_clip.xy / previous_clip.w;
    precise vec2 motion = (now - before) * 0.5 * frame.viewport.xy;
    return motion;
}

layout(set = 0, binding = 1) uniform sampler2DShadow shadow_map;
#ifdef RAY_SHADOWS
// `--shadows ray`: the trace pass's top level, over every instance's skinned triangles.
layout(set = 0, binding = 6) uniform accelerationStructureEXT scene_structure;
#endif
