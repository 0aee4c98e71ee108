#version 460
// The ground plane: two triangles generated from gl_VertexIndex, no vertex buffer.
#include "frame.glsl"

layout(location = 0) out vec3 out_world;
layout(location = 1) out vec4 out_light_clip;
layout(location = 2) out vec4 out_clip;
layout(location = 3) out vec4 out_previous_clip;

const vec2 CORNERS[6] = vec2[6](vec2(-1, -1), vec2(1, -1), vec2(1, 1), vec2(-1, -1), vec2(1, 1), vec2(-1, 1));

void main() {
    vec2 corner = CORNERS[gl_VertexIndex] * frame.ground.w;
    vec3 world = frame.ground.xyz + vec3(corner.x, 0.0, corner.y);
    out_clip = frame.view_projection * vec4(world, 1.0);
    gl_Position = out_clip;
    // The ground stands still: only the camera moves it on screen.
    out_previous_clip = frame.previous_view_projection * vec4(world, 1.0);
    out_world = world;
    out_light_clip = frame.light_view_projection * vec4(world, 1.0);
}
