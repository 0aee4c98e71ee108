#version 460
// The ground plane: two triangles generated from gl_VertexIndex, no vertex buffer.
// variant: VELOCITY
#include "frame.glsl"

layout(location = 0) out vec3 out_world;
#ifdef VELOCITY
layout(location = 2) out vec4 out_clip;
layout(location = 3) out vec4 out_previous_clip;
#endif

const vec2 CORNERS[6] = vec2[6](vec2(-1, -1), vec2(1, -1), vec2(1, 1), vec2(-1, -1), vec2(1, 1), vec2(-1, 1));

void main() {
    vec2 corner = CORNERS[gl_VertexIndex] * frame.ground.w;
    vec3 world = frame.ground.xyz + vec3(corner.x, 0.0, corner.y);
    gl_Position = frame.view_projection * vec4(world, 1.0);
#ifdef VELOCITY
    out_clip = clip_position(frame.view_projection, world);
    // The ground stands still: only the camera moves it on screen.
    out_previous_clip = clip_position(frame.previous_view_projection, world);
#endif
    out_world = world;
}
