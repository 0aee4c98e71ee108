#version 460
// Palette pass: one workgroup per kept instance. Each invocation samples its joints' channels at
// the instance's time (the file's own keys: STEP, LINEAR with slerp, CUBICSPLINE, Hermite), blends
// a crossfade and a layer in local space, and writes world × pre × local into the instance's
// palette slots; then the skeleton is composed parents first, one depth level at a time with a
// workgroup barrier between levels (each joint reads its parent's finished slot), and every slot is
// finally multiplied by the joint's inverse bind. Mirrors Channel::sample, Animation::sample,
// blend_local, local_to_model and palette in src/anim/.
//
// The workgroup is the device's subgroup (palette.rs: workgroup_size). Why one workgroup per
// instance and levels: a joint needs every ancestor composed first. Walking
// each joint's parent chain alone would sample every ancestor again (depth × the work); composing
// in one invocation per instance would leave the lanes of a wide GPU idle. Levels compose each joint
// once, all joints of a level in parallel, at the cost of one barrier per level (6-10 for a figure).
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Channels { Channel channels[]; };
layout(set = 0, binding = 1) readonly buffer KeyTimes { float key_times[]; };
layout(set = 0, binding = 2) readonly buffer KeyValues { float key_values[]; };
layout(set = 0, binding = 3) readonly buffer Joints { JointInfo joints[]; };
layout(set = 0, binding = 4) readonly buffer InverseBinds { mat4 inverse_binds[]; };
// Level starts (level_count + 1 of them), then the joints ordered by level.
layout(set = 0, binding = 5) readonly buffer JointLevels { uint joint_levels[]; };
layout(set = 0, binding = 6) readonly buffer Instances { Instance instances[]; };
// Read back within the workgroup between levels: coherent, with a memory barrier before each barrier().
layout(set = 0, binding = 7) coherent buffer Palettes { PaletteMatrix palettes[]; } palette_chunks[MAX_CHUNKS];
// The instances the cull pass kept; the dispatch's y size is their count (indirect).
layout(set = 0, binding = 8) readonly buffer SkinList { uint skin_list[]; };
// World position of every joint of every instance, for the `skeleton` debug view (instance × joint).
layout(set = 0, binding = 9) writeonly buffer JointPositions { vec4 joint_positions[]; };

layout(push_constant) uniform Push {
    uint joint_count;
    uint instance_count;
    uint chunk_instances;  // instances per chunk of palettes
    uint level_count;
} push;

struct JointPose {
    vec4 rotation;
    vec3 translation;
    vec3 scale;
};

vec4 slerp_shortest(vec4 a, vec4 b, float t) {
    float cos_theta = dot(a, b);
    if (cos_theta < 0.0) {
        b = -b;
        cos_theta = -cos_theta;
    }
    vec4 blended;
    if (cos_theta > 0.9995) {
        blended = a + (b - a) * t;
    } else {
        float theta = acos(min(cos_theta, 1.0));
        float sin_theta = sin(theta);
        blended = a * (sin((1.0 - t) * theta) / sin_theta) + b * (sin(t * theta) / sin_theta);
    }
    return normalize(blended);
}

JointPose blend_pose(JointPose a, JointPose b, float t) {
    JointPose result;
    result.rotation = slerp_shortest(a.rotation, b.rotation, t);
    result.translation = a.translation + (b.translation - a.translation) * t;
    result.scale = a.scale + (b.scale - a.scale) * t;
    return result;
}

// Stored slot `slot` of a channel as a full value (Channel::entry): the stored components over the
// base (zero for a tangent), w implied for MD5 rotations.
vec4 channel_entry(Channel channel, uint slot, bool tangent) {
    uint mask = (channel.packed >> CHANNEL_COMPONENTS_SHIFT) & 15u;
    uint stride = uint(bitCount(mask));
    uint first = channel.first_value;
    vec4 value = vec4(0.0);
    if ((channel.packed & CHANNEL_HAS_BASE) != 0u) {
        if (!tangent) {
            value = vec4(key_values[first], key_values[first + 1u], key_values[first + 2u], key_values[first + 3u]);
        }
        first += 4u;
    }
    uint at = first + slot * stride;
    // Component by component, no dynamic vector index (which would spill to memory per lane).
    if ((mask & 1u) != 0u) {
        value.x = key_values[at];
        at += 1u;
    }
    if ((mask & 2u) != 0u) {
        value.y = key_values[at];
        at += 1u;
    }
    if ((mask & 4u) != 0u) {
        value.z = key_values[at];
        at += 1u;
    }
    if ((mask & 8u) != 0u) {
        value.w = key_values[at];
    }
    if ((channel.packed & CHANNEL_IMPLIED_W) != 0u && !tangent) {
        value.w = -sqrt(max(1.0 - dot(value.xyz, value.xyz), 0.0));
    }
    return value;
}

// The keys around `time` (Channel::locate): key, next key, fraction, interval in seconds.
void locate_key(Channel channel, float time, out uint key, out uint next, out float fraction, out float span) {
    key = 0u;
    next = 0u;
    fraction = 0.0;
    span = 1.0;
    uint count = channel.key_count;
    if (count <= 1u) {
        return;
    }
    if ((channel.packed & CHANNEL_UNIFORM) != 0u) {
        float start = key_times[channel.first_time];
        float step = key_times[channel.first_time + 1u];
        float position = (time - start) / step;
        if (!(position > 0.0)) {
            return;
        }
        float whole = floor(position);
        // Past the last key the index saturates (a float too large for uint stays the last key).
        uint index = whole < float(count) ? uint(whole) : count;
        if (index + 1u < count) {
            key = index;
            next = index + 1u;
        } else if ((channel.packed & CHANNEL_WRAPS) != 0u && index + 1u == count) {
            key = index;
            next = 0u;
        } else {
            key = count - 1u;
            next = key;
            return;
        }
        fraction = position - whole;
        span = step;
        return;
    }
    uint first = channel.first_time;
    if (!(time > key_times[first])) {
        return;
    }
    if (time >= key_times[first + count - 1u]) {
        key = count - 1u;
        next = key;
        return;
    }
    // Binary search for the last key at or before `time`: times[low] <= time < times[high].
    uint low = 0u;
    uint high = count - 1u;
    while (high - low > 1u) {
        uint middle = (low + high) / 2u;
        if (key_times[first + middle] <= time) {
            low = middle;
        } else {
            high = middle;
        }
    }
    key = low;
    next = high;
    span = key_times[first + high] - key_times[first + low];
    fraction = (time - key_times[first + low]) / span;
}

// The channel's value at `time` (Channel::sample).
vec4 sample_channel(Channel channel, float time) {
    uint key, next;
    float fraction, span;
    locate_key(channel, time, key, next, fraction, span);
    uint interpolation = (channel.packed >> CHANNEL_INTERPOLATION_SHIFT) & 3u;
    bool rotation = (channel.packed & CHANNEL_PROPERTY_MASK) == 1u;
    uint per_key = interpolation >= INTERPOLATION_CUBIC_SPLINE ? 3u : 1u;
    uint value_slot = interpolation >= INTERPOLATION_CUBIC_SPLINE ? 1u : 0u;
    vec4 a = channel_entry(channel, key * per_key + value_slot, false);
    vec4 b = channel_entry(channel, next * per_key + value_slot, false);
    vec4 value;
    if (interpolation == INTERPOLATION_STEP) {
        value = a;
    } else if (interpolation == INTERPOLATION_LINEAR) {
        value = rotation ? slerp_shortest(a, b, fraction) : a + (b - a) * fraction;
    } else {
        float scale = interpolation == INTERPOLATION_CUBIC_SPLINE ? span : 1.0;
        vec4 out_tangent = channel_entry(channel, key * 3u + 2u, true) * scale;
        vec4 in_tangent = channel_entry(channel, next * 3u, true) * scale;
        float s = fraction;
        float s2 = s * s;
        float s3 = s2 * s;
        value = a * (2.0 * s3 - 3.0 * s2 + 1.0) + out_tangent * (s3 - 2.0 * s2 + s) + b * (-2.0 * s3 + 3.0 * s2)
              + in_tangent * (s3 - s2);
    }
    if (rotation) {
        float length_squared = dot(value, value);
        value = length_squared > 0.0 ? value * inversesqrt(length_squared) : vec4(0.0, 0.0, 0.0, 1.0);
    }
    return value;
}

// A joint's local pose in an animation at a time: rest with the animated properties replaced
// (Animation::sample).
JointPose sample_local(uint animation, float time, uint joint) {
    JointPose pose;
    pose.rotation = joints[joint].rest_rotation;
    pose.translation = joints[joint].rest_translation.xyz;
    pose.scale = joints[joint].rest_scale.xyz;
    uint first = (animation * push.joint_count + joint) * 3u;
    for (uint property = 0u; property < 3u; ++property) {
        Channel channel = channels[first + property];
        if (channel.key_count == 0u) {
            continue;
        }
        vec4 value = sample_channel(channel, time);
        if (property == 0u) {
            pose.translation = value.xyz;
        } else if (property == 1u) {
            pose.rotation = value;
        } else {
            pose.scale = value.xyz;
        }
    }
    return pose;
}

mat4 pose_matrix(JointPose pose) {
    vec4 q = pose.rotation;
    float x2 = q.x + q.x, y2 = q.y + q.y, z2 = q.z + q.z;
    float xx = q.x * x2, xy = q.x * y2, xz = q.x * z2;
    float yy = q.y * y2, yz = q.y * z2, zz = q.z * z2;
    float wx = q.w * x2, wy = q.w * y2, wz = q.w * z2;
    return mat4(
        vec4(1.0 - (yy + zz), xy + wz, xz - wy, 0.0) * pose.scale.x,
        vec4(xy - wz, 1.0 - (xx + zz), yz + wx, 0.0) * pose.scale.y,
        vec4(xz + wy, yz - wx, 1.0 - (xx + yy), 0.0) * pose.scale.z,
        vec4(pose.translation, 1.0));
}

mat4 from_rows(vec4 row0, vec4 row1, vec4 row2) {
    return transpose(mat4(row0, row1, row2, vec4(0.0, 0.0, 0.0, 1.0)));
}

mat4 load_slot(uint chunk, uint index) {
    return from_rows(palette_chunks[chunk].palettes[index].rows[0], palette_chunks[chunk].palettes[index].rows[1],
                     palette_chunks[chunk].palettes[index].rows[2]);
}

void store_slot(uint chunk, uint index, mat4 matrix) {
    palette_chunks[chunk].palettes[index].rows[0] = vec4(matrix[0][0], matrix[1][0], matrix[2][0], matrix[3][0]);
    palette_chunks[chunk].palettes[index].rows[1] = vec4(matrix[0][1], matrix[1][1], matrix[2][1], matrix[3][1]);
    palette_chunks[chunk].palettes[index].rows[2] = vec4(matrix[0][2], matrix[1][2], matrix[2][2], matrix[3][2]);
}

void main() {
    // gl_WorkGroupID.y is uniform over the workgroup, so every invocation reaches every barrier.
    if (gl_WorkGroupID.y >= push.instance_count) {
        return;
    }
    uint instance_index = skin_list[gl_WorkGroupID.y];
    Instance instance = instances[instance_index];
    float c = cos(instance.position_yaw.w);
    float s = sin(instance.position_yaw.w);
    mat4 world = mat4(vec4(c, 0.0, -s, 0.0), vec4(0.0, 1.0, 0.0, 0.0), vec4(s, 0.0, c, 0.0), vec4(instance.position_yaw.xyz, 1.0));
    uint chunk = instance_index / push.chunk_instances;
    uint first_slot = (instance_index % push.chunk_instances) * push.joint_count;
    uint stride = gl_WorkGroupSize.x;
    uint lane = gl_LocalInvocationID.x;

    uint animation_a = instance.animations & 0xFFFFu;
    uint animation_b = instance.animations >> 16;
    uint layer_animation = instance.layer & 0xFFFFu;
    if (animation_a == NO_CLIP) {
        // Without an animation every joint stands where the bind pose put it: world × bind × inverse bind.
        for (uint joint = lane; joint < push.joint_count; joint += stride) {
            joint_positions[instance_index * push.joint_count + joint] = vec4((world * inverse(inverse_binds[joint]))[3].xyz, 1.0);
            store_slot(chunk, first_slot + joint, world);
        }
        return;
    }
    bool fading = animation_b != NO_CLIP && instance.blend > 0.0;
    bool layered = layer_animation != NO_CLIP && instance.layer_weight > 0.0;
    uvec2 layer_span = joints[min(instance.layer >> 16, push.joint_count - 1u)].links.yz;

    // Local poses, blended, as world-or-parent-relative matrices in the slots.
    for (uint joint = lane; joint < push.joint_count; joint += stride) {
        JointPose pose = sample_local(animation_a, instance.time_a, joint);
        if (fading) {
            pose = blend_pose(pose, sample_local(animation_b, instance.time_b, joint), instance.blend);
        }
        uvec2 links = joints[joint].links.xy;  // parent, depth-first entry
        if (layered && layer_span.x <= links.y && links.y < layer_span.y) {
            pose = blend_pose(pose, sample_local(layer_animation, instance.time_layer, joint), instance.layer_weight);
        }
        mat4 local = pose_matrix(pose);
        if (joints[joint].links.w != 0u) {
            local = from_rows(joints[joint].pre_rows[0], joints[joint].pre_rows[1], joints[joint].pre_rows[2]) * local;
        }
        store_slot(chunk, first_slot + joint, links.x == NO_PARENT ? world * local : local);
    }
    memoryBarrierBuffer();
    barrier();

    // Parents first: level 0 (the roots) is done; each later level multiplies in its parents' slots.
    for (uint level = 1u; level < push.level_count; ++level) {
        uint level_end = joint_levels[level + 1u];
        for (uint at = joint_levels[level] + lane; at < level_end; at += stride) {
            uint joint = joint_levels[push.level_count + 1u + at];
            uint parent = joints[joint].links.x;
            store_slot(chunk, first_slot + joint, load_slot(chunk, first_slot + parent) * load_slot(chunk, first_slot + joint));
        }
        memoryBarrierBuffer();
        barrier();
    }

    for (uint joint = lane; joint < push.joint_count; joint += stride) {
        mat4 posed = load_slot(chunk, first_slot + joint);
        joint_positions[instance_index * push.joint_count + joint] = vec4(posed[3].xyz, 1.0);
        store_slot(chunk, first_slot + joint, posed * inverse_binds[joint]);
    }
}
