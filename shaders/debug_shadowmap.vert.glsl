#version 460
// Debug view `shadowmap`: a quad over the viewport (which the pass sets to a corner of the target).
layout(location = 0) out vec4 color;  // xy: the texture coordinate

void main() {
    const vec2 CORNERS[6] = vec2[6](vec2(0.0, 0.0), vec2(1.0, 0.0), vec2(1.0, 1.0), vec2(0.0, 0.0), vec2(1.0, 1.0), vec2(0.0, 1.0));
    vec2 uv = CORNERS[gl_VertexIndex];
    gl_Position = vec4(uv * 2.0 - 1.0, 0.0, 1.0);
    color = vec4(uv, 0.0, 1.0);
}
