#version 460
// One triangle that covers the target, no vertex buffer: the motion pass, the raster resolve and
// the shadow merge (passes/raster.rs).
void main() {
    vec2 corner = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
