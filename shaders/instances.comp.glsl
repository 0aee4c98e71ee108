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
//
// Root motion (src/anim/motion.rs, which this mirrors): where a clip's motion was taken out of its
// keys, the instance stands where the record puts it (at the epoch, or where a crossfade began)
// moved by the motion since, in closed form; a crowd's walkers wrap round its area, restarting.
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

// `InstanceRecord` in src/render/shader_types/mod.rs. 64 bytes.
struct InstanceRecord {
    vec4 position_yaw;    // world position xyz, rotation about +Y in radians
    uint clips;           // the clip playing in the low 16 bits, the clip fading out in the high 16
                          // (indices into clips[], every model's clips; NO_CLIP: none)
    uint layer;           // the layer's clip in the low 16 bits (NO_CLIP: none), its root joint in bits 16-30,
                          // LAYER_CARRIES_MOTION in bit 31
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
// Its root motion: the first of its animation's samples in motion[], how many (0: none), the
// seconds between them.
struct ClipRecord {
    uint animation;
    float start;
    float duration;
    uint motion_first;
    uint motion_count;
    float motion_step;
    uint unused[2];
};

layout(set = 0, binding = 0) buffer Records { InstanceRecord records[]; };
layout(set = 0, binding = 1) readonly buffer Clips { ClipRecord clips[]; };
layout(set = 0, binding = 2) buffer Instances { Instance instances[]; };
// Root motion samples: (x, z, yaw, 0), the move from the animation's start (RootMotion::samples).
layout(set = 0, binding = 3) readonly buffer Motion { vec4 motion[]; };

// Push.flags
const uint RESTART_ALL = 1u;        // a cut, or the renderer's first frame: no instance moves by itself
const uint OVERRIDES_CHANGED = 2u;  // a morph weight set by hand changed: no instance is still

layout(push_constant) uniform Push {
    uint count;       // instances
    uint row_length;  // invocations per dispatch row (groups in x × workgroup size)
    float clock;      // the frame's time on the shared clock, seconds from the renderer's epoch
    uint flags;       // RESTART_ALL, OVERRIDES_CHANGED
    vec4 area;        // where walkers wrap: min x, min z, size x, size z (size 0: nowhere)
} push;

const uint LAYER_CARRIES_MOTION = 1u << 31;
const int FADE_STEPS = 16;  // motion::FADE_STEPS

// The animation's time at the clip time base + clock × speed, wrapped into the clip's span
// (Clip::animation_time); a clip that does not loop holds its start.
// The loop a clip time falls in and the time within it (Clip::loop_time's wrap); a clip of no
// length is held at its start.
vec2 loop_of(ClipRecord clip, float time) {
    float within = time - clip.duration * floor(time / clip.duration);
    // floor can leave exactly the duration (or a hair under 0) in f32.
    if (within >= clip.duration || within < 0.0) {
        within = 0.0;
    }
    return vec2(round((time - within) / clip.duration), within);
}

float animation_time(ClipRecord clip, float base, float speed) {
    if (!(clip.duration > 0.0)) {
        return clip.start;
    }
    return clip.start + loop_of(clip, base + push.clock * speed).y;
}

// A move on the ground (Motion): (x, z) offset and the yaw, a turn about +Y before it.
vec2 turned(vec2 v, float yaw) {
    float c = cos(yaw), s = sin(yaw);
    return vec2(c * v.x + s * v.y, -s * v.x + c * v.y);
}

vec3 then_move(vec3 first, vec3 next) { return vec3(first.xy + turned(next.xy, first.z), first.z + next.z); }

vec3 inverse_move(vec3 move) { return vec3(-turned(move.xy, -move.z), -move.z); }

vec3 lerp_move(vec3 a, vec3 b, float weight) { return mix(a, b, weight); }

// The move made `times` times over, in closed form (Motion::repeated).
vec3 repeated(vec3 move, float times) {
    float half_turn = 0.5 * move.z;
    float s = sin(half_turn);
    float factor = abs(s) < 1e-6 ? times : sin(times * half_turn) / s;
    return vec3(turned(move.xy, (times - 1.0) * half_turn) * factor, times * move.z);
}

// The move from the animation's start to `time`, between the samples (RootMotion::at).
vec3 motion_at(ClipRecord clip, float time) {
    if (clip.motion_count == 1u) {
        return motion[clip.motion_first].xyz;
    }
    float at = clamp(time / max(clip.motion_step, 1e-30), 0.0, float(clip.motion_count - 1u));
    uint index = min(uint(at), clip.motion_count - 2u);
    vec3 a = motion[clip.motion_first + index].xyz, b = motion[clip.motion_first + index + 1u].xyz;
    return lerp_move(a, b, at - float(index));
}

// The root motion from clip time `from` to `to` (Clip::motion_between).
vec3 motion_between(ClipRecord clip, float from, float to) {
    if (clip.motion_count == 0u || !(clip.duration > 0.0)) {
        return vec3(0.0);
    }
    vec3 start = inverse_move(motion_at(clip, clip.start));
    vec2 a = loop_of(clip, from), b = loop_of(clip, to);
    vec3 whole = then_move(start, motion_at(clip, clip.start + clip.duration));
    vec3 back = inverse_move(then_move(start, motion_at(clip, clip.start + a.y)));
    vec3 on = then_move(start, motion_at(clip, clip.start + b.y));
    return then_move(then_move(back, repeated(whole, b.x - a.x)), on);
}

// The steady motion of `clip` (its time at the epoch `base`) between two clocks, blended with the
// layer's where the layer carries motion (InstanceState::carried's `steady`).
vec3 steady(InstanceRecord record, uint clip, float base, float from, float to) {
    vec3 move = motion_between(clips[clip], base + from * record.speed, base + to * record.speed);
    uint layer_clip = record.layer & 0xFFFFu;
    if (layer_clip != NO_CLIP && (record.layer & LAYER_CARRIES_MOTION) != 0u && record.layer_weight > 0.0) {
        float layer_base = record.base_layer;
        vec3 layered = motion_between(clips[layer_clip], layer_base + from * record.speed, layer_base + to * record.speed);
        move = lerp_move(move, layered, record.layer_weight);
    }
    return move;
}

// A crossfade's motion from its start to `to`: both clips' steps blended by the fade's progress.
vec3 blended(InstanceRecord record, uint clip, uint from_clip, float to) {
    float step = (to - record.fade_start) / float(FADE_STEPS);
    vec3 move = vec3(0.0);
    for (int index = 0; index < FADE_STEPS; ++index) {
        float at = record.fade_start + step * float(index);
        float weight = (at + 0.5 * step - record.fade_start) / record.fade_duration;
        vec3 old_step = steady(record, from_clip, record.base_from, at, at + step);
        vec3 new_step = steady(record, clip, record.base_clip, at, at + step);
        move = then_move(move, lerp_move(old_step, new_step, weight));
    }
    return move;
}

// Where the instance's clips have carried it since the record's place (InstanceState::carried).
vec3 carried(InstanceRecord record) {
    uint clip = record.clips & 0xFFFFu;
    uint from_clip = record.clips >> 16;
    if (clip == NO_CLIP) {
        return vec3(0.0);
    }
    if (from_clip == NO_CLIP || !(record.fade_duration > 0.0)) {
        return steady(record, clip, record.base_clip, 0.0, push.clock);
    }
    float end = record.fade_start + record.fade_duration;
    if (push.clock < record.fade_start) {
        return steady(record, clip, record.base_clip, record.fade_start, push.clock);
    }
    if (push.clock < end) {
        return blended(record, clip, from_clip, push.clock);
    }
    return then_move(blended(record, clip, from_clip, end), steady(record, clip, record.base_clip, end, push.clock));
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
    // The record's place moved by the root motion since (turned by its yaw, at its size), and
    // brought into the walkers' area.
    vec3 move = carried(record);
    vec2 offset = turned(move.xy, record.position_yaw.w) * record.scale;
    now.position_yaw = vec4(record.position_yaw.xyz + vec3(offset.x, 0.0, offset.y), record.position_yaw.w + move.z);
    bool wraps = push.area.z > 0.0 && push.area.w > 0.0;
    if (wraps) {
        now.position_yaw.xz = push.area.xy + mod(now.position_yaw.xz - push.area.xy, push.area.zw);
    }
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
        now.layer = clips[layer_clip].animation | (record.layer & 0x7FFF0000u);
        now.time_layer = animation_time(clips[layer_clip], record.base_layer, record.speed);
        now.layer_weight = record.layer_weight;
    } else {
        now.layer = NO_CLIP;
        now.time_layer = 0.0;
        now.layer_weight = 0.0;
    }

    Instance previous = instances[index];
    now.skinning = record.skinning & SKINNING_MODE_MASK;
    // Round the area's edge in one frame (WalkArea::wrapped): a restart, no streak across it.
    vec2 moved = abs(now.position_yaw.xz - previous.position_yaw.xz);
    bool wrapped = wraps && (moved.x > 0.5 * push.area.z || moved.y > 0.5 * push.area.w);
    bool restart = (push.flags & RESTART_ALL) != 0u || jumps(previous, now) || wrapped;
    bool still = (push.flags & OVERRIDES_CHANGED) == 0u && same(previous, now);
    now.skinning |= restart ? INSTANCE_RESTART : (still ? INSTANCE_STILL : 0u);
    // A teleport restarts whatever the rest says (still too, where nothing else changed).
    now.skinning |= record.skinning & INSTANCE_RESTART;
    instances[index] = now;
    if ((record.skinning & INSTANCE_RESTART) != 0u) {
        records[index].skinning = record.skinning & ~INSTANCE_RESTART;
    }
}
