#version 460
// Palette pass: one invocation per (joint, instance). Samples the instance's clip at its time,
// interpolates the two baked frames (lerp + shortest-path slerp), crossfades with a second clip
// when one is fading in, and writes world × pose × inverse bind. Mirrors Clip::sample_point,
// JointPose::interpolate, anim::blend_poses and anim::palette in src/anim/mod.rs.
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Poses { Pose poses[]; };
layout(set = 0, binding = 1) readonly buffer Clips { ClipInfo clips[]; };
layout(set = 0, binding = 2) readonly buffer InverseBinds { mat4 inverse_binds[]; };
layout(set = 0, binding = 3) readonly buffer Instances { Instance instances[]; };
layout(set = 0, binding = 4) writeonly buffer Palettes { PaletteMatrix palettes[]; } palette_chunks[MAX_CHUNKS];
// The instances the cull pass kept; the dispatch's y size is their count (indirect).
layout(set = 0, binding = 5) readonly buffer SkinList { uint skin_list[]; };
// World position of every joint of every instance, for the `skeleton` debug view (instance × joint).
layout(set = 0, binding = 6) writeonly buffer JointPositions { vec4 joint_positions[]; };

layout(push_constant) uniform Push {
    uint joint_count;
    uint instance_count;
    uint chunk_instances;  // instances per chunk of palettes
} push;

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

struct JointPose {
    vec4 rotation;
    vec3 translation;
    vec3 scale;
};

JointPose interpolate_pose(JointPose a, JointPose b, float t) {
    JointPose result;
    result.rotation = slerp_shortest(a.rotation, b.rotation, t);
    result.translation = a.translation + (b.translation - a.translation) * t;
    result.scale = a.scale + (b.scale - a.scale) * t;
    return result;
}

JointPose baked_pose(uint index) {
    Pose pose = poses[index];
    JointPose result;
    result.rotation = pose.rotation;
    result.translation = pose.translation.xyz;
    result.scale = pose.scale.xyz;
    return result;
}

// The clip's pose of `joint` at `time`: the two frames around it, interpolated.
JointPose sample_pose(uint clip_index, float time, uint joint) {
    ClipInfo clip = clips[clip_index];
    float position = max(time * clip.frame_rate, 0.0);
    float whole = floor(position);
    uint frame0 = uint(whole) % clip.period_frames;
    uint frame1 = (frame0 + 1u) % clip.frame_count;
    JointPose a = baked_pose(clip.first_pose + frame0 * push.joint_count + joint);
    JointPose b = baked_pose(clip.first_pose + frame1 * push.joint_count + joint);
    return interpolate_pose(a, b, position - whole);
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

void main() {
    uint joint = gl_GlobalInvocationID.x;
    if (joint >= push.joint_count || gl_GlobalInvocationID.y >= push.instance_count) {
        return;
    }
    uint instance_index = skin_list[gl_GlobalInvocationID.y];
    Instance instance = instances[instance_index];
    float c = cos(instance.position_yaw.w);
    float s = sin(instance.position_yaw.w);
    mat4 world = mat4(vec4(c, 0.0, -s, 0.0), vec4(0.0, 1.0, 0.0, 0.0), vec4(s, 0.0, c, 0.0), vec4(instance.position_yaw.xyz, 1.0));

    uint clip_a = instance.clips & 0xFFFFu;
    uint clip_b = instance.clips >> 16;
    mat4 skin = world;
    // Without a clip the joint stands where the bind pose put it: the inverse bind's inverse.
    vec3 joint_position = (world * inverse(inverse_binds[joint]))[3].xyz;
    if (clip_a != NO_CLIP) {
        JointPose pose = sample_pose(clip_a, instance.time_a, joint);
        if (clip_b != NO_CLIP && instance.blend > 0.0) {
            pose = interpolate_pose(pose, sample_pose(clip_b, instance.time_b, joint), instance.blend);
        }
        mat4 posed = world * pose_matrix(pose);
        skin = posed * inverse_binds[joint];
        joint_position = posed[3].xyz;
    }
    joint_positions[instance_index * push.joint_count + joint] = vec4(joint_position, 1.0);
    uint chunk = instance_index / push.chunk_instances;
    uint index = (instance_index % push.chunk_instances) * push.joint_count + joint;
    palette_chunks[chunk].palettes[index].rows[0] = vec4(skin[0][0], skin[1][0], skin[2][0], skin[3][0]);
    palette_chunks[chunk].palettes[index].rows[1] = vec4(skin[0][1], skin[1][1], skin[2][1], skin[3][1]);
    palette_chunks[chunk].palettes[index].rows[2] = vec4(skin[0][2], skin[1][2], skin[2][2], skin[3][2]);
}
