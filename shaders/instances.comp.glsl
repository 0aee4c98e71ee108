#version 460
// Instances pass: one invocation per instance makes this frame's Instance, which every later pass
// reads, from what lives on the GPU between frames: the instance's record (its clip, the clip
// fading out, its layer, each one's time at the renderer's epoch, its speed, place, size and
// tint), which the CPU rewrites only where something changed, and the frame's clock. Mirrors
// InstanceState::playback and Clip::animation_time (src/anim/); src/render/instances.rs writes
// the records.
//
// It also flags the motion (common.glsl: INSTANCE_STILL, INSTANCE_RESTART) against last frame's
// Instance, which it replaces in place: still where the Instance is last frame's to the bit and
// no weight set by hand changed; restarting on the frame after a cut, where the CPU marked a
// teleport (the record's INSTANCE_RESTART, cleared here once used), and where the pose jumps: a
// clip switched without a crossfade, a layer put on or off, a switch of skinning mode
// (FrameHistory::cpu_instances in src/render/history.rs is the CPU's reference of these rules).
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

// `InstanceRecord` in src/render/shader_types/mod.rs. 64 bytes.
struct InstanceRecord {
    vec4 position_yaw;    // world position xyz, rotation about +Y in radians
    uint clips;           // the clip playing in the low 16 bits, the clip fading out in the high 16
                          // (indices into clips[], every model's clips; NO_CLIP: none)
    uint layer;           // the layer's clip in the low 16 bits (NO_CLIP: none), its root joint in the high 16
    float speed;          // clip seconds per second of the clock
    float layer_weight;
    float base_clip;      // each clip's time at the epoch, wrapped into its span: the clip playing,
    float base_from;      // the clip fading out, the layer's
    float base_layer;
    float fade_start;     // when the crossfade began, seconds from the epoch
    float fade_duration;  // seconds (0: none)
    uint skinning;        // SKINNING_*, and INSTANCE_RESTART where the CPU marks a teleport
    float scale;
    uint tint;
};

// `ClipRecord` in src/render/shader_types/mod.rs: a clip of a model's (its animation, the model's
// own index; where in it the clip starts; how long it loops).
struct ClipRecord {
    uint animation;
    float start;
    float duration;
    uint unused;
};

layout(set = 0, binding = 0) buffer Records { InstanceRecord records[]; };
layout(set = 0, binding = 1) readonly buffer Clips { ClipRecord clips[]; };
layout(set = 0, binding = 2) buffer Instances { Instance instances[]; };

// Push.flags
const uint RESTART_ALL = 1u;        // a cut, or the renderer's first frame: no instance moves by itself
const uint OVERRIDES_CHANGED = 2u;  // a morph weight set by hand changed: no instance is still

layout(push_constant) uniform Push {
    uint count;       // instances
    uint row_length;  // invocations per dispatch row (groups in x × workgroup size)
    float clock;      // the frame's time on the shared clock, seconds from the renderer's epoch
    uint flags;       // RESTART_ALL, OVERRIDES_CHANGED
} push;

// The animation's time at the clip time base + clock × speed, wrapped into the clip's span
// (Clip::animation_time); a clip that does not loop holds its start.
float animation_time(ClipRecord clip, float base, float speed) {
    if (!(clip.duration > 0.0)) {
        return clip.start;
    }
    float time = base + push.clock * speed;
    float wrapped = time - clip.duration * floor(time / clip.duration);
    // floor can leave exactly the duration (or a hair under 0) in f32.
    if (wrapped >= clip.duration || wrapped < 0.0) {
        wrapped = 0.0;
    }
    return clip.start + wrapped;
}

uint animation_a(Instance instance) { return instance.animations & 0xFFFFu; }
uint animation_b(Instance instance) { return instance.animations >> 16; }

bool fading(Instance instance) {
    return animation_a(instance) != NO_CLIP && animation_b(instance) != NO_CLIP && instance.blend > 0.0;
}

bool layered(Instance instance) {
    return animation_a(instance) != NO_CLIP && (instance.layer & 0xFFFFu) != NO_CLIP && instance.layer_weight > 0.0;
}

// The pose jumps from last frame's to this one's (history.rs: jumps).
bool jumps(Instance previous, Instance now) {
    bool faded_in = fading(previous) && animation_a(now) == animation_b(previous);
    bool switched = animation_a(now) != animation_a(previous) && !faded_in;
    bool layer_switched = previous.layer != now.layer && (layered(previous) || layered(now));
    bool mode = (previous.skinning & SKINNING_MODE_MASK) != (now.skinning & SKINNING_MODE_MASK);
    return switched || layer_switched || mode;
}

bool same(Instance a, Instance b) {
    return a.position_yaw == b.position_yaw && a.animations == b.animations && a.time_a == b.time_a &&
           a.time_b == b.time_b && a.blend == b.blend && a.layer == b.layer && a.time_layer == b.time_layer &&
           a.layer_weight == b.layer_weight && (a.skinning & SKINNING_MODE_MASK) == (b.skinning & SKINNING_MODE_MASK) &&
           a.scale == b.scale && a.tint == b.tint;
}

void main() {
    uint index = gl_GlobalInvocationID.y * push.row_length + gl_GlobalInvocationID.x;
    if (index >= push.count) {
        return;
    }
    InstanceRecord record = records[index];
    Instance now;
    now.position_yaw = record.position_yaw;
    now.scale = record.scale;
    now.tint = record.tint;
    now.unused[0] = 0u;
    now.unused[1] = 0u;

    // The clip playing as a; during a crossfade, the clip fading out as a and this one as b.
    uint clip = record.clips & 0xFFFFu;
    uint from = record.clips >> 16;
    uint a = NO_CLIP, b = NO_CLIP;
    float time_a = 0.0, time_b = 0.0, blend = 0.0;
    if (clip != NO_CLIP) {
        a = clips[clip].animation;
        time_a = animation_time(clips[clip], record.base_clip, record.speed);
        float progress = (push.clock - record.fade_start) / record.fade_duration;
        // A fade that starts after the clock (moved back past it) is over; so is one of no length.
        if (from != NO_CLIP && progress >= 0.0 && progress < 1.0) {
            b = a;
            time_b = time_a;
            blend = progress;
            a = clips[from].animation;
            time_a = animation_time(clips[from], record.base_from, record.speed);
        }
    }
    now.animations = a | b << 16;
    now.time_a = time_a;
    now.time_b = time_b;
    now.blend = blend;
    uint layer_clip = record.layer & 0xFFFFu;
    if (layer_clip != NO_CLIP) {
        now.layer = clips[layer_clip].animation | (record.layer & 0xFFFF0000u);
        now.time_layer = animation_time(clips[layer_clip], record.base_layer, record.speed);
        now.layer_weight = record.layer_weight;
    } else {
        now.layer = NO_CLIP;
        now.time_layer = 0.0;
        now.layer_weight = 0.0;
    }

    Instance previous = instances[index];
    now.skinning = record.skinning & SKINNING_MODE_MASK;
    bool restart = (push.flags & RESTART_ALL) != 0u || jumps(previous, now);
    bool still = (push.flags & OVERRIDES_CHANGED) == 0u && same(previous, now);
    now.skinning |= restart ? INSTANCE_RESTART : (still ? INSTANCE_STILL : 0u);
    // A teleport restarts whatever the rest says (still too, where nothing else changed).
    now.skinning |= record.skinning & INSTANCE_RESTART;
    instances[index] = now;
    if ((record.skinning & INSTANCE_RESTART) != 0u) {
        records[index].skinning = record.skinning & ~INSTANCE_RESTART;
    }
}
