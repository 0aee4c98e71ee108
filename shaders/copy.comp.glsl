#version 460
// Bandwidth reference for the benchmark: a plain copy that moves as many bytes as the skin pass
// streams (source vertices and influences read, skinned vertices written). One invocation per
// 16 bytes; what a skin pass cannot beat on this device.
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Source { uvec4 source[]; };
layout(set = 0, binding = 1) writeonly buffer Destination { uvec4 destination[]; };

layout(push_constant) uniform Push {
    uint count;       // uvec4s in this chunk
    uint row_length;  // invocations per dispatch row (groups in x × workgroup size)
} push;

void main() {
    uint index = gl_GlobalInvocationID.y * push.row_length + gl_GlobalInvocationID.x;
    if (index < push.count) {
        destination[index] = source[index];
    }
}
