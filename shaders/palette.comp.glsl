#version 460
// Palette pass: one invocation per kept instance walks the skeleton parents first (joints are
// stored that way: a parent's index is below its children's). For each joint it samples the
// channels at the instance's time (the file's own keys: STEP, LINEAR with slerp, CUBICSPLINE,
// Hermite), blends a crossfade and a layer in local space, and writes the joint's palette entry
//     world × model pose × inverse bind  =  parent's entry × fixed × local × inverse bind,
// where `fixed` is the parent's bind matrix × the joint's pre transform (src/render/model_buffers/mod.rs: joint_infos):
// the parent's bind undoes its inverse bind, so a child reads its parent's finished entry and
// each slot is written once. Mirrors Channel::sample, Animation::sample, blend_local,
// local_to_model and palette in src/anim/. For an instance set to dual-quaternion skinning it
// also writes each entry as a dual quaternion (store_dual_quaternion); for a model with morph
// targets it samples their weights and lists the non-zero ones (write_morph_weights). The slots
// these go to: common.glsl.
//
// Why an invocation per instance, not a workgroup per instance composing one depth level at a time
// (the previous design; docs/animation.md has both measured): the 64 lanes of a workgroup are 64
// instances on the same skeleton, so they walk the same joints in lockstep (joint data is read at
// one address for all of them) and never wait at a barrier. The level-by-level workgroup left most
// lanes idle on levels narrower than the workgroup, paid a barrier per level, and on lavapipe a
// fixed cost per workgroup, and wrote and re-read every slot three times.
//
// Every storage-buffer word costs on lavapipe: the pass reads a property's channel record only
// when the animation keys it, the rest pose only for the properties it does not, and a channel's
// base once.
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Channels { Channel channels[]; };
layout(set = 0, binding = 1) readonly buffer KeyTimes { float key_times[]; };
// Words: f32 keys as their bits (key_value reads one), and compressed tracks' words.
layout(set = 0, binding = 2) readonly buffer KeyValues { uint key_values[]; };
layout(set = 0, binding = 3) readonly buffer Joints { JointInfo joints[]; };
layout(set = 0, binding = 4) readonly buffer InverseBinds { mat4 inverse_binds[]; };
layout(set = 0, binding = 5) readonly buffer Instances { Instance instances[]; };
// Written parents first; a joint's children read its entry back.
layout(set = 0, binding = 6) buffer Palettes { PaletteMatrix palettes[]; } palette_chunks[MAX_CHUNKS];
// The kept instances whose palettes are computed this frame (the cull pass's palette list: all of
// them, or with animation LOD only the near ones and half the far); the dispatch covers their count
// in workgroups (indirect).
layout(set = 0, binding = 7) readonly buffer PaletteList { uint palette_list[]; };
// World position of every joint of every instance, for the `skeleton` debug view (instance × joint).
layout(set = 0, binding = 8) writeonly buffer JointPositions { vec4 joint_positions[]; };
// What the cull pass counted: palettes.x is the palette list's length.
layout(set = 0, binding = 9) readonly buffer Counters { CullCounters counters; };
layout(set = 0, binding = 10) readonly buffer MorphTargets { MorphTarget morph_targets[]; };
// Per target, a weight set by hand (the viewer's panel): x the weight, y 1 when it holds.
layout(set = 0, binding = 11) readonly buffer MorphOverrides { vec2 morph_overrides[]; };
// Per instance, whether it moves by itself this frame (common.glsl: MOTION_MOVING, from the cull pass).
layout(set = 0, binding = 12) readonly buffer Motions { uint motions[]; };
// Each model's record; an instance's is models[instance_slots[i].model].
layout(set = 0, binding = 13) readonly buffer Models { ModelRecord models[]; };
// Each animation's record: where its channels start in channels[].
layout(set = 0, binding = 14) readonly buffer Animations { AnimationRecord animations[]; };
// Each instance's slot: where its palette slots start in its chunk.
layout(set = 0, binding = 15) readonly buffer InstanceSlots { InstanceSlot instance_slots[]; };

layout(push_constant) uniform Push {
    uint chunk_instances;        // instances per chunk of palettes
    uint write_joint_positions;  // 1: the skeleton view reads joint_positions this frame
    uint joint_stride;           // joint_positions' entries an instance (the most joints a model has)
} push;

// What the palette pass needs of the instance's model (main loads them, each field alone: a copy
// of the whole record costs every lane its 52 words). Its joints, targets and animations are its
// part of the shared buffers, from first_joint, first_target and first_animation on.
uint joint_count;
uint palette_stride;
uint target_count;
uint first_joint;
uint first_target;
uint first_animation;

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

float key_value(uint index) {
    return uintBitsToFloat(key_values[index]);
}

// `bits` bits (at most 32: a value stored as it is) from bit `bit` of the track whose first word is
// `track`; the second word is read only when the value runs into it (src/anim/compress: read_bits).
uint read_bits(uint track, uint bit, uint bits) {
    if (bits == 0u) {
        return 0u;
    }
    uint word = track + (bit >> 5);
    uint shift = bit & 31u;
    uint value = key_values[word] >> shift;
    if (shift + bits > 32u) {
        value |= key_values[word + 1u] << (32u - shift);
    }
    return value & (0xFFFFFFFFu >> (32u - bits));
}

// A value quantized at `bits` as its fraction of the segment's range: the middle at 0 bits
// (src/anim/compress: level_fraction).
float level_fraction(uint quantized, uint bits) {
    return bits == 0u ? 0.5 : float(quantized) / float((1u << bits) - 1u);
}

// Component `component` of a compressed sample whose x starts at `first_bit`: minimum + extent ×
// (segment minimum + segment extent × fraction), the segment's range in 255ths of the track's.
float packed_component(uint track, uint first_bit, uint bits, uint minimums, uint extents, uint component) {
    float fraction = level_fraction(read_bits(track, first_bit + component * bits, bits), bits);
    uint shift = 8u * component;
    float segment_minimum = float((minimums >> shift) & 255u) / 255.0;
    float segment_extent = float((extents >> shift) & 255u) / 255.0;
    return key_value(track + component) + key_value(track + 3u + component) * (segment_minimum + segment_extent * fraction);
}

// `kept` with `value` put in at component `index` (src/anim/compress: inserted).
vec4 inserted(vec3 kept, uint index, float value) {
    if (index == 0u) {
        return vec4(value, kept);
    } else if (index == 1u) {
        return vec4(kept.x, value, kept.yz);
    } else if (index == 2u) {
        return vec4(kept.xy, value, kept.z);
    }
    return vec4(kept, value);
}

// A unit rotation from the three components kept and a segment's rotation code: the index of the
// one dropped, rebuilt >= 0 from unit length; or, with PACKED_FOUR_COMPONENTS, of the one stored
// as `fourth`, all four normalized (src/anim/compress: rotation_from).
vec4 rotation_from(vec3 kept, uint code, float fourth) {
    if ((code & PACKED_FOUR_COMPONENTS) == 0u) {
        return inserted(kept, code & 3u, sqrt(max(1.0 - dot(kept, kept), 0.0)));
    }
    vec4 value = inserted(kept, code & 3u, fourth);
    float size = length(value);
    return size > 0.0 ? value / size : vec4(0.0, 0.0, 0.0, 1.0);
}

// A sample stored as it is (a segment of PACKED_RAW_BITS) whose x starts at `first_bit`: x y z,
// a rotation's four components with the one its code names last, each its own float's bits
// (src/anim/compress: raw_value).
vec4 raw_value(uint track, uint first_bit, uint code, bool rotation) {
    vec3 kept = vec3(uintBitsToFloat(read_bits(track, first_bit, 32u)), uintBitsToFloat(read_bits(track, first_bit + 32u, 32u)),
                     uintBitsToFloat(read_bits(track, first_bit + 64u, 32u)));
    if (!rotation) {
        return vec4(kept, 0.0);
    }
    return inserted(kept, code & 3u, uintBitsToFloat(read_bits(track, first_bit + 96u, 32u)));
}

// Where segment `segment`'s record is in a packed track (src/anim/compress: segment_record): after
// the header, in blocks of PACKED_BLOCK_SEGMENTS records, each block led by its samples' bit offset.
uint segment_record(uint track, uint segment) {
    return track + PACKED_HEADER_WORDS + (segment / PACKED_BLOCK_SEGMENTS) * PACKED_BLOCK_WORDS + 1u
         + (segment % PACKED_BLOCK_SEGMENTS) * PACKED_SEGMENT_WORDS;
}

// Stored sample `key` of a compressed track (src/anim/compress: packed_value, and the layout there):
// its segment's record gives the width, the ranges and the samples stored before it; its block the
// bit offset; a rotation's dropped component is rebuilt from unit length.
vec4 packed_value(uint track, uint key, bool rotation) {
    uint segment = key / PACKED_SEGMENT_SAMPLES;
    uint record = segment_record(track, segment);
    uint minimums = key_values[record];
    uint extents = key_values[record + 1u];
    uint stored = key_values[record + 2u];
    // A width byte past PACKED_MAX_BITS: the segment's values as they are.
    bool raw = (minimums >> 24) > PACKED_MAX_BITS;
    uint bits = raw ? PACKED_RAW_BITS : minimums >> 24;
    uint block = key_values[track + PACKED_HEADER_WORDS + (segment / PACKED_BLOCK_SEGMENTS) * PACKED_BLOCK_WORDS];
    uint code = (extents >> 24) & 7u;
    uint components = rotation && (raw || (code & PACKED_FOUR_COMPONENTS) != 0u) ? 4u : 3u;
    uint before = uint(bitCount(stored & 0xFFFFu & ((1u << (key % PACKED_SEGMENT_SAMPLES)) - 1u)));
    uint first_bit = block + (stored >> 16) + before * components * bits;
    if (raw) {
        return raw_value(track, first_bit, code, rotation);
    }
    vec4 value = vec4(packed_component(track, first_bit, bits, minimums, extents, 0u),
                      packed_component(track, first_bit, bits, minimums, extents, 1u),
                      packed_component(track, first_bit, bits, minimums, extents, 2u), 0.0);
    if (rotation) {
        float fourth = 0.0;
        if (components == 4u) {
            fourth = level_fraction(read_bits(track, first_bit + 3u * bits, bits), bits);
        }
        value = rotation_from(value.xyz, code, fourth);
    }
    return value;
}

// The stored samples around sample `key` of a compressed track (src/anim/compress: stored_around):
// the last at or before it and the first after it, the next segment's first where its own has
// none left (a segment always stores its first).
void stored_around(uint track, uint key, out uint before, out uint after) {
    uint segment_first = key - key % PACKED_SEGMENT_SAMPLES;
    uint mask = (key_values[segment_record(track, key / PACKED_SEGMENT_SAMPLES) + 2u] & 0xFFFFu) | 1u;
    uint place = key % PACKED_SEGMENT_SAMPLES;
    uint up_to = (2u << place) - 1u;
    before = segment_first + uint(findMSB(mask & up_to));
    uint later = mask & ~up_to;
    after = later == 0u ? segment_first + PACKED_SEGMENT_SAMPLES : segment_first + uint(findLSB(later));
}

// The first key value of a channel (past its base, when it stores one) and the base: xyzw where
// the channel stores none of the components, zero otherwise.
uint channel_values(Channel channel, out vec4 base) {
    base = vec4(0.0);
    uint first = channel.first_value;
    if ((channel.packed & CHANNEL_HAS_BASE) != 0u) {
        base = vec4(key_value(first), key_value(first + 1u), key_value(first + 2u), key_value(first + 3u));
        first += 4u;
    }
    return first;
}

// Stored slot `slot` of a channel as a full value (Channel::entry): the stored components over
// `base` (zero for a tangent), w implied for MD5 rotations.
vec4 channel_entry(Channel channel, uint first, vec4 base, uint slot, bool tangent) {
    uint mask = (channel.packed >> CHANNEL_COMPONENTS_SHIFT) & 15u;
    uint at = first + slot * uint(bitCount(mask));
    vec4 value = tangent ? vec4(0.0) : base;
    // Component by component, no dynamic vector index (which would spill to memory per lane).
    if ((mask & 1u) != 0u) {
        value.x = key_value(at);
        at += 1u;
    }
    if ((mask & 2u) != 0u) {
        value.y = key_value(at);
        at += 1u;
    }
    if ((mask & 4u) != 0u) {
        value.z = key_value(at);
        at += 1u;
    }
    if ((mask & 8u) != 0u) {
        value.w = key_value(at);
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
    vec4 base;
    uint first = 0u;
    vec4 a, b;
    if ((channel.packed & CHANNEL_PACKED) != 0u) {
        // A sample the encoder removed lies on its stored neighbours' line, by its place among
        // the samples (src/anim/compress: packed_pair).
        uint before = key;
        uint after = next;
        if (next != key) {
            stored_around(channel.first_value, key, before, after);
            fraction = (float(key - before) + fraction) / float(after - before);
        }
        a = packed_value(channel.first_value, before, rotation);
        b = packed_value(channel.first_value, after, rotation);
    } else {
        first = channel_values(channel, base);
        a = channel_entry(channel, first, base, key * per_key + value_slot, false);
        b = channel_entry(channel, first, base, next * per_key + value_slot, false);
    }
    vec4 value;
    if (interpolation == INTERPOLATION_STEP) {
        value = a;
    } else if (interpolation == INTERPOLATION_LINEAR) {
        value = rotation ? slerp_shortest(a, b, fraction) : a + (b - a) * fraction;
    } else {
        float scale = interpolation == INTERPOLATION_CUBIC_SPLINE ? span : 1.0;
        vec4 out_tangent = channel_entry(channel, first, base, key * 3u + 2u, true) * scale;
        vec4 in_tangent = channel_entry(channel, first, base, next * 3u, true) * scale;
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
// (Animation::sample). A channel record is read whole only when the animation keys the property,
// the rest pose only for the properties it does not.
JointPose sample_local(uint animation, float time, uint joint) {
    uint first = animations[first_animation + animation].first_channel;
    uint table = animations[first_animation + animation].channel_table;
    bool wide = (table & CHANNEL_TABLE_WIDE) != 0u;
    table &= ~CHANNEL_TABLE_WIDE;
    JointPose pose;
    // One loop, not three copies of sample_channel: the shader stays small (llvmpipe compiles
    // every inlined copy, and a larger loop body costs time on every lane).
    for (uint property = 0u; property < 3u; ++property) {
        // The property's channel among those the animation keys (AnimationData's table).
        uint entry = joint * 3u + property;
        uint index = wide ? key_values[table + entry] : (key_values[table + entry / 2u] >> (16u * (entry & 1u))) & 0xFFFFu;
        vec4 value;
        if (index != (wide ? 0xFFFFFFFFu : NO_CHANNEL)) {
            value = sample_channel(channels[first + index], time);
        } else if (property == 0u) {
            value = joints[first_joint + joint].rest_translation;
        } else if (property == 1u) {
            value = joints[first_joint + joint].rest_rotation;
        } else {
            value = joints[first_joint + joint].rest_scale;
        }
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

mat4 load_slot(uint chunk, uint slot) {
    return from_rows(palette_chunks[chunk].palettes[slot].rows[0], palette_chunks[chunk].palettes[slot].rows[1],
                     palette_chunks[chunk].palettes[slot].rows[2]);
}

// The unit quaternion of a rotation matrix (glam's Quat::from_mat3, which the CPU reference uses).
vec4 quaternion_of(mat3 m) {
    if (m[2][2] <= 0.0) {
        float difference = m[1][1] - m[0][0];
        float one_minus = 1.0 - m[2][2];
        if (difference <= 0.0) {
            float four_x2 = one_minus - difference;
            float inverse = 0.5 * inversesqrt(four_x2);
            return vec4(four_x2, m[0][1] + m[1][0], m[0][2] + m[2][0], m[1][2] - m[2][1]) * inverse;
        }
        float four_y2 = one_minus + difference;
        float inverse = 0.5 * inversesqrt(four_y2);
        return vec4(m[0][1] + m[1][0], four_y2, m[1][2] + m[2][1], m[2][0] - m[0][2]) * inverse;
    }
    float sum = m[1][1] + m[0][0];
    float one_plus = 1.0 + m[2][2];
    if (sum <= 0.0) {
        float four_z2 = one_plus - sum;
        float inverse = 0.5 * inversesqrt(four_z2);
        return vec4(m[0][2] + m[2][0], m[1][2] + m[2][1], four_z2, m[0][1] - m[1][0]) * inverse;
    }
    float four_w2 = one_plus + sum;
    float inverse = 0.5 * inversesqrt(four_w2);
    return vec4(m[1][2] - m[2][1], m[2][0] - m[0][2], m[0][1] - m[1][0], four_w2) * inverse;
}

// Hamilton product of two quaternions (xyzw).
vec4 quaternion_product(vec4 a, vec4 b) {
    return vec4(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

// A palette matrix as dual-quaternion skinning reads it (common.glsl: the slots; mirrors
// DualQuaternion::from_affine): a uniform scale, the rotation, and the dual part 0.5 (t, 0) q.
void store_dual_quaternion(uint chunk, uint slot, mat4 matrix) {
    vec3 x = matrix[0].xyz;
    vec3 y = matrix[1].xyz;
    vec3 z = matrix[2].xyz;
    float scale = (length(x) + length(y) + length(z)) / 3.0;
    float tolerance = RIGID_TOLERANCE * scale;
    bool rigid = scale > 0.0 && abs(length(x) - scale) <= tolerance && abs(length(y) - scale) <= tolerance
              && abs(length(z) - scale) <= tolerance && abs(dot(x, y)) <= tolerance * scale
              && abs(dot(y, z)) <= tolerance * scale && abs(dot(z, x)) <= tolerance * scale
              && determinant(mat3(x, y, z)) > 0.0;
    vec4 real = rigid ? normalize(quaternion_of(mat3(x, y, z) * (1.0 / scale))) : vec4(0.0, 0.0, 0.0, 1.0);
    vec4 dual = 0.5 * quaternion_product(vec4(matrix[3].xyz, 0.0), real);
    palette_chunks[chunk].palettes[slot].rows[0] = real;
    palette_chunks[chunk].palettes[slot].rows[1] = dual;
    palette_chunks[chunk].palettes[slot].rows[2] = vec4(rigid ? scale : 1.0, rigid ? 1.0 : 0.0, 0.0, 0.0);
}

void store_slot(uint chunk, uint slot, mat4 matrix) {
    palette_chunks[chunk].palettes[slot].rows[0] = vec4(matrix[0][0], matrix[1][0], matrix[2][0], matrix[3][0]);
    palette_chunks[chunk].palettes[slot].rows[1] = vec4(matrix[0][1], matrix[1][1], matrix[2][1], matrix[3][1]);
    palette_chunks[chunk].palettes[slot].rows[2] = vec4(matrix[0][2], matrix[1][2], matrix[2][2], matrix[3][2]);
}

// Target `target`'s weight in `animation` at `time`: its channel's, or its default where the
// animation does not key it (keyed false).
float target_weight(uint animation, float time, uint target, out bool keyed) {
    keyed = false;
    if (animation != NO_CLIP) {
        uint record = animations[first_animation + animation].first_weight_channel + target;
        keyed = channels[record].key_count != 0u;
        if (keyed) {
            return sample_channel(channels[record], time).x;
        }
    }
    return morph_targets[first_target + target].default_weight;
}

void store_morph_word(uint chunk, uint block, uint word, float value) {
    palette_chunks[chunk].palettes[block + word / SLOT_FLOATS].rows[(word % SLOT_FLOATS) / 4u][word % 4u] = value;
}

// The instance's morph block (common.glsl): every target's weight, blended as the joints are (a
// crossfade from a to b; a layer over the targets its animation keys), a weight set by hand over
// all, and the non-zero ones listed. Mirrors reference_weights in src/render/reference.rs.
void write_morph_weights(Instance instance, uint chunk, uint block, bool fading, bool layered) {
    uint animation_a = instance.animations & 0xFFFFu;
    uint animation_b = instance.animations >> 16;
    uint active_count = 0u;
    for (uint target = 0u; target < target_count; ++target) {
        bool keyed;
        float weight = target_weight(animation_a, instance.time_a, target, keyed);
        if (fading) {
            weight += (target_weight(animation_b, instance.time_b, target, keyed) - weight) * instance.blend;
        }
        if (layered) {
            float layer = target_weight(instance.layer & 0xFFFFu, instance.time_layer, target, keyed);
            if (keyed) {
                weight += (layer - weight) * instance.layer_weight;
            }
        }
        vec2 set_by_hand = morph_overrides[target];
        if (set_by_hand.y != 0.0) {
            weight = set_by_hand.x;
        }
        if (weight != 0.0) {
            store_morph_word(chunk, block, 1u + 2u * active_count, float(target));
            store_morph_word(chunk, block, 2u + 2u * active_count, weight);
            active_count += 1u;
        }
    }
    store_morph_word(chunk, block, 0u, float(active_count));
}

// Last frame's palette, which the instance was drawn with, into the previous block (common.glsl:
// the slots) before this frame's overwrites it: the slots it skins from, the dual quaternions only
// when it blends them. A copy of what one invocation wrote last frame, so no other reads it.
void keep_previous(uint chunk, uint first_slot, bool dual) {
    uint block_slots = palette_stride / 2u;
    for (uint slot = 0u; slot < block_slots; ++slot) {
        if (!dual && slot >= joint_count && slot < 2u * joint_count) {
            slot = 2u * joint_count;
        }
        palette_chunks[chunk].palettes[first_slot + block_slots + slot] = palette_chunks[chunk].palettes[first_slot + slot];
    }
}

void main() {
    uint entry = gl_GlobalInvocationID.x;
    if (entry >= counters.palettes.x) {
        return;
    }
    uint instance_index = palette_list[entry];
    Instance instance = instances[instance_index];
    uint model = instance_slots[instance_index].model;
    joint_count = models[model].joint_count;
    palette_stride = models[model].palette_stride;
    target_count = models[model].target_count;
    first_joint = models[model].first_joint;
    first_target = models[model].first_target;
    first_animation = models[model].first_animation;
    mat4 world = instance_world(instance);
    uint chunk = instance_index / push.chunk_instances;
    uint first_slot = instance_slots[instance_index].palette_base;

    uint animation_a = instance.animations & 0xFFFFu;
    uint animation_b = instance.animations >> 16;
    uint layer_animation = instance.layer & 0xFFFFu;
    // The joint positions hold one binding's worth of instances (PalettePass::new): the skeleton
    // view shows those.
    bool write_positions = push.write_joint_positions != 0u &&
                           (instance_index + 1u) * push.joint_stride <= uint(joint_positions.length());
    bool fading = animation_a != NO_CLIP && animation_b != NO_CLIP && instance.blend > 0.0;
    bool layered = animation_a != NO_CLIP && layer_animation != NO_CLIP && instance.layer_weight > 0.0;
    uint mode = instance.skinning & SKINNING_MODE_MASK;
    bool dual = mode == SKINNING_DUAL_QUATERNION;
    if ((motions[instance_index] & MOTION_MOVING) != 0u) {
        keep_previous(chunk, first_slot, dual);
    }
    uint dual_slots = first_slot + joint_count;
    uint header = first_slot + 2u * joint_count;
    palette_chunks[chunk].palettes[header].rows[0] = vec4(float(mode), 0.0, 0.0, 0.0);
    if (target_count > 0u) {
        write_morph_weights(instance, chunk, header + 1u, fading, layered);
    }
    if (animation_a == NO_CLIP) {
        // Without an animation every joint stands where the bind pose put it: world × bind × inverse bind.
        for (uint joint = 0u; joint < joint_count; ++joint) {
            if (write_positions) {
                joint_positions[instance_index * push.joint_stride + joint] =
                    vec4((world * inverse(inverse_binds[first_joint + joint]))[3].xyz, 1.0);
            }
            store_slot(chunk, first_slot + joint, world);
            if (dual) {
                store_dual_quaternion(chunk, dual_slots + joint, world);
            }
        }
        return;
    }
    uvec2 layer_span = joints[first_joint + min(instance.layer >> 16, joint_count - 1u)].links.yz;

    // Parents first: each joint's entry from its parent's, finished before it.
    for (uint joint = 0u; joint < joint_count; ++joint) {
        JointPose pose = sample_local(animation_a, instance.time_a, joint);
        if (fading) {
            pose = blend_pose(pose, sample_local(animation_b, instance.time_b, joint), instance.blend);
        }
        uvec4 links = joints[first_joint + joint].links;  // parent, depth-first span, fixed not the identity (the model's numbering)
        if (layered && layer_span.x <= links.y && links.y < layer_span.y) {
            pose = blend_pose(pose, sample_local(layer_animation, instance.time_layer, joint), instance.layer_weight);
        }
        mat4 local = pose_matrix(pose);
        if (links.w != 0u) {
            uint at = first_joint + joint;
            local = from_rows(joints[at].fixed_rows[0], joints[at].fixed_rows[1], joints[at].fixed_rows[2]) * local;
        }
        // world × model pose: the parent's entry × its bind (folded into fixed) × pre × local.
        mat4 posed = (links.x == NO_PARENT ? world : load_slot(chunk, first_slot + links.x)) * local;
        if (write_positions) {
            joint_positions[instance_index * push.joint_stride + joint] = vec4(posed[3].xyz, 1.0);
        }
        mat4 palette = posed * inverse_binds[first_joint + joint];
        store_slot(chunk, first_slot + joint, palette);
        if (dual) {
            store_dual_quaternion(chunk, dual_slots + joint, palette);
        }
    }
}
