// What the forward vertex shaders (forward.vert: skinned buffer; forward_skinning.vert: the
// `vertex` strategy; forward_streamed.vert: the `cpu` strategy's buffers) hand to forward.frag, and
// the per-model surface attributes and the per-instance tint they read. Each is built twice: without the velocity target,
// and with it (VELOCITY: where the vertex was last frame, as well).

#include "frame_buffers.glsl"

// The draw's instance and model vertex: a draw's first vertex and first instance are its first
// instance's, and one draw may cover several consecutive instances of one model (the triangle
// pass's groups): the vertex's offset in the draw, over the model's vertices, gives both.
void draw_vertex(out uint instance, out uint vertex) {
    uint vertex_count = models[instance_slots[gl_InstanceIndex].model].vertex_count;
    uint offset = uint(gl_VertexIndex - gl_BaseVertex);
    vertex = offset % vertex_count;
    instance = uint(gl_InstanceIndex) + offset / vertex_count;
}

layout(location = 0) out vec3 out_normal;
layout(location = 1) out vec2 out_uv;
// World position: the fragment shader finds the shadow map's texel from it, or traces its shadow ray.
layout(location = 2) out vec3 out_world;
layout(location = 3) out vec4 out_tangent;
layout(location = 6) out vec4 out_color;
layout(location = 7) flat out vec4 out_tint;
#ifdef VELOCITY
// This frame's and last frame's clip positions, for the velocity target.
layout(location = 4) out vec4 out_clip;
layout(location = 5) out vec4 out_previous_clip;
#endif

// gl_Position and the clip positions of a vertex now at `position` (world space).
void write_position(vec3 position) {
    gl_Position = frame.view_projection * vec4(position, 1.0);
    out_world = position;
#ifdef VELOCITY
    out_clip = clip_position(frame.view_projection, position);
#endif
}

// The texture coordinates and colour of vertex `vertex` of instance `instance`'s model, and the
// instance's tint.
void write_surface(uint vertex, uint instance) {
    uint at = models[instance_slots[instance].model].first_vertex + vertex;
    out_uv = surfaces[at].uv;
    out_color = unpackUnorm4x8(surfaces[at].color);
    out_tint = unpackUnorm4x8(frame_instances[instance].tint);
}

#ifdef VELOCITY
// Where the vertex was last frame (world space), on last frame's screen.
void write_previous_position(vec3 previous) {
    out_previous_clip = clip_position(frame.previous_view_projection, previous);
}
#endif
