#version 460
// Debug view `normals`: hands each skinned vertex (world space, from the skinned buffer) to the
// geometry shader, which draws its normal as a short line.
layout(location = 0) in vec3 position;
layout(location = 1) in vec4 normal;  // snorm16, xyz used

layout(location = 0) out vec3 out_position;
layout(location = 1) out vec3 out_normal;

void main() {
    out_position = position;
    out_normal = normal.xyz;
}
