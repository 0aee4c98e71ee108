#version 460
// Debug view `skeleton`: per kept instance (instanced, the count from the cull pass), one line per
// joint of its model from the joint to its parent, at the world positions the palette pass wrote. Drawn after
// everything with no depth test: on top.
#include "common.glsl"
#include "debug.glsl"

layout(push_constant) uniform Push {
    mat4 view_projection;
    uint joint_count;  // joint_positions' entries an instance: the most joints a model has
} push;

// The frame set's model records and instance slots (forward_vertex_outputs.glsl declares them for
// the forward shaders): an instance's model, and so its joints.
layout(set = 0, binding = 4) readonly buffer Models { ModelRecord models[]; };
layout(set = 0, binding = 5) readonly buffer InstanceSlots { InstanceSlot instance_slots[]; };

layout(location = 0) out vec4 color;

void main() {
    uint instance = skin_list[gl_InstanceIndex];
    uint model = instance_slots[instance].model;
    uint joint_count = models[model].joint_count;
    uint joint = uint(gl_VertexIndex) / 2u;
    bool parent_end = (uint(gl_VertexIndex) & 1u) == 1u;
    color = parent_end ? vec4(1.0, 0.55, 0.0, 1.0) : vec4(1.0, 1.0, 0.2, 1.0);
    // Past a smaller model's joints, or an instance past the joint positions' binding
    // (PalettePass::new): both ends off screen.
    if (joint >= joint_count || (instance + 1u) * push.joint_count > uint(joint_positions.length())) {
        gl_Position = vec4(2.0, 2.0, 0.5, 1.0);
        return;
    }
    uint parent = joint_parents[models[model].first_joint + joint];  // the model's own numbering
    uint shown = (parent_end && parent < joint_count) ? parent : joint;
    vec3 position = joint_positions[instance * push.joint_count + shown].xyz;
    gl_Position = push.view_projection * vec4(position, 1.0);
}
