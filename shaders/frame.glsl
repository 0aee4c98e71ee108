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
} frame;

layout(set = 0, binding = 1) uniform sampler2DShadow shadow_map;
