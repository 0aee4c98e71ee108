#version 460
// Shadow pass: depth only, from the light, reading the skinned buffer as its vertex buffer.
layout(location = 0) in vec3 position;

layout(push_constant) uniform Push {
    mat4 light_view_projection;
} push;

void main() {
    gl_Position = push.light_view_projection * vec4(position, 1.0);
}
