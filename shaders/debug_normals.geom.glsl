#version 460
// Debug view `normals`: for each corner of each triangle the camera's draws produce, a line from
// the skinned position along the skinned normal (corners shared by triangles repeat; harmless).
layout(triangles) in;
layout(line_strip, max_vertices = 6) out;

layout(location = 0) in vec3 in_position[];
layout(location = 1) in vec3 in_normal[];
layout(location = 0) out vec4 color;

layout(push_constant) uniform Push {
    mat4 view_projection;
    float line_length;  // world units: a few percent of the model's size
} push;

void main() {
    for (int corner = 0; corner < 3; ++corner) {
        vec3 base = in_position[corner];
        gl_Position = push.view_projection * vec4(base, 1.0);
        color = vec4(0.1, 0.35, 1.0, 1.0);
        EmitVertex();
        gl_Position = push.view_projection * vec4(base + normalize(in_normal[corner]) * push.line_length, 1.0);
        color = vec4(0.6, 0.9, 1.0, 1.0);
        EmitVertex();
        EndPrimitive();
    }
}
