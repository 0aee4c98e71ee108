// The forward pass's frame-set buffers beside its uniforms (set 0, bindings 2-5): what the
// vertex shaders (forward_vertex_outputs.glsl) and the raster resolve (raster_resolve.frag) read of
// a vertex's surface and an instance's tint, model and slot.

// A vertex's texture coordinates and colour (RGBA8, linear): src/render/shader_types: Surface.
struct Surface {
    vec2 uv;
    uint color;
    uint unused;
};
layout(set = 0, binding = 2) readonly buffer Surfaces { Surface surfaces[]; };
// Each instance's data this frame (instances.data, as the cull and palette passes read it): the tints.
layout(set = 0, binding = 3) readonly buffer FrameInstances { Instance frame_instances[]; };
// Each model's record (its vertices' place in surfaces[] and the skinning's sources[]) and each
// instance's slot (its palette slots, for the `vertex` strategy and the motion vectors).
layout(set = 0, binding = 4) readonly buffer Models { ModelRecord models[]; };
layout(set = 0, binding = 5) readonly buffer InstanceSlots { InstanceSlot instance_slots[]; };
