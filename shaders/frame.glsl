// Per-frame uniforms of the graphics passes (set 0). Mirrored by FrameUniforms in src/render/shader_types/mod.rs.
layout(set = 0, binding = 0, std140) uniform FrameUniforms {
    mat4 view_projection;
    mat4 light_view_projection;
    vec4 camera_position;      // xyz
    vec4 light_direction;      // xyz: unit vector towards the light
    vec4 light_color_ambient;  // rgb: light colour, a: ambient strength
    vec4 ground;               // xyz: centre of the ground plane, w: half size
    vec4 shadow_params;        // x: shadow-map texel size in uv
    uvec4 skinning;            // x: joints per instance, y: instances per palette chunk (`vertex` strategy), z: vertices per instance,
                               // w: palette slots per instance (joints, then the morph block)
    vec4 camera_planes[6];     // the camera frustum: xyz normal (pointing in), w distance
    vec4 light_planes[6];      // the shadow map's volume, likewise
    mat4 previous_view_projection;  // last frame's view_projection (this frame's on the first)
    vec4 viewport;             // xy: the target's size in pixels
} frame;

// The screen-space motion from where a point was last frame (previous_clip) to where it is
// (clip): pixels, +x right, +y down. Zero when either lies behind its camera.
vec2 pixel_motion(vec4 clip, vec4 previous_clip) {
    if (!(clip.w > 0.0) || !(previous_clip.w > 0.0)) {
        return vec2(0.0);
    }
    return (clip.xy / clip.w - previous_clip.xy / previous_clip.w) * 0.5 * frame.viewport.xy;
}

layout(set = 0, binding = 1) uniform sampler2DShadow shadow_map;
