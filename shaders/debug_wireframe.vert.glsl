#version 460
// Debug view `wireframe`: the camera's culled draws again, from the skinned buffer, rasterized as
// lines (polygon mode LINE), dark, slightly in front of the shaded triangles (depth bias).
#include "frame.glsl"

layout(location = 0) in vec3 position;
layout(location = 0) out vec4 color;

void main() {
    gl_Position = frame.view_projection * vec4(position, 1.0);
    color = vec4(0.03, 0.03, 0.05, 1.0);
}
