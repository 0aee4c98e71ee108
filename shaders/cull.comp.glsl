#version 460
// Cull pass: one invocation per instance. Its animated bounds at this frame (the cell of its
// animation's time, see src/anim/bounds.rs; during a crossfade or with a layer, the union of the
// animations' cells grown by the blend reach) are moved into the world and tested against the camera
// frustum and the light's shadow volume. An instance neither sees is not skinned or drawn; one only
// the light sees is skinned and drawn into the shadow map only. Writes the skin list and its count
// straight into the palette and skin passes' indirect dispatch arguments (the skin pass's as a
// table of vertex groups, WorkGroup), and per-mesh draw
// commands with their counts for the shadow (light) and forward (camera) passes.
//
// Levels of detail (src/model/lod.rs): the camera's level is the coarsest whose error, projected at the
// box's nearest point, is at most a pixel; the light's is within a texel of the shadow map at the
// instance's scale (the texel from the CPU). The instance is skinned at the finer of the two (a level's vertices are a
// prefix of every finer level's, so the coarser one's draw finds its vertices skinned): its groups
// of that level's vertices join the skin table, and its triangle groups at the camera's level
// (and the light's) the triangle pass's tables.
//
// Animation level of detail (`--animation-lod on`): a kept instance smaller on screen than a
// threshold has its palette computed every 2nd frame, one under a sixth of it every 4th, one under
// a 24th every 8th (animation_interval; one only the light sees at least every 2nd), on the
// frames of its own phase (instance + frame a multiple of the interval, so each frame takes an
// even share of them) and is skinned from its last palette between; one whose palette is older
// than its interval (culled, or just come near) computes it now. The palette list holds the
// instances whose palettes the palette pass computes this frame (src/render/passes/cull/animation_lod.rs:
// reference_interval and computes_palette mirror it).
//
// Memory by level (POOLED: the `compute` strategy without traced shadows): an instance has no room
// of its own in the skinned vertices; each frame the pass places every instance it skins in its
// chunk's pool, an atomic bump by its level's vertex count, and its base goes into its work-table
// entries and draw commands. The pools are sized by a budget (src/render/chunks/mod.rs: MemoryPlan),
// not by every instance's full mesh, so a frame may ask for more than a pool holds. The pass then
// runs three times: COUNT sums, per chunk and per distance band (DISTANCE_BANDS, nearest first), the
// vertices its instances ask for at their levels, at one level coarser and at their coarsest;
// BUDGET (a workgroup, an invocation a chunk) finds the nearest bands that keep their levels
// and, past them, the bands drawn a level coarser or at the coarsest, so that the sum fits; PLACE
// places each instance at its band's level, counts those drawn coarser than their own level and
// those not drawn at all (even the coarsest did not fit), and writes everything the other passes
// read. Without POOLED, PLACE alone runs and each instance's vertices stay in its slot's room.
// The triangle pass's culled indices are placed the same way, from each view's index pool, at the
// view's level (a pool sized so that it cannot run out before the vertex pool does).
#include "common.glsl"
#include "frame.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
// Palette list entries per palette workgroup (palette.rs: WORKGROUP_SIZE): an entry whose slot is
// a multiple of it adds a workgroup to the palette dispatch.
layout(constant_id = 1) const uint PALETTE_WORKGROUP_SIZE = 64u;
// Vertices a skin workgroup takes (skin.rs: SkinTuning) and triangles a triangle workgroup tests
// (triangles.rs: WORKGROUP_SIZE): an instance's groups at a level in the work tables.
layout(constant_id = 2) const uint SKIN_WORKGROUP_SIZE = 64u;
layout(constant_id = 3) const uint TRIANGLE_WORKGROUP_SIZE = 64u;
// `--shadows ray`: the pass writes each instance's mask in the trace pass's records.
layout(constant_id = 4) const uint TRACE_SHADOWS = 0u;
// Skinned vertices placed from the chunks' pools each frame (else each instance's fixed room).
layout(constant_id = 5) const uint POOLED = 0u;

layout(set = 0, binding = 3) readonly buffer Instances { Instance instances[]; };
layout(set = 0, binding = 4) readonly buffer Animations { AnimationRecord animations[]; };
layout(set = 0, binding = 5) readonly buffer Cells { Bounds cells[]; };
layout(set = 0, binding = 6) readonly buffer Meshes { MeshRange meshes[]; };
layout(set = 0, binding = 7) buffer Counters { CullCounters counters; };
layout(set = 0, binding = 8) writeonly buffer SkinList { uint skin_list[]; };
layout(set = 0, binding = 9) writeonly buffer CameraDraws { DrawCommand camera_draws[]; };
layout(set = 0, binding = 10) writeonly buffer LightDraws { DrawCommand light_draws[]; };
// Each kept instance's world box (min.w: 1 when the camera sees it), for the `bounds` debug view.
layout(set = 0, binding = 11) writeonly buffer DebugBoxes { Bounds debug_boxes[]; };
// The work tables (TABLE_*): each skinned instance's vertex groups at its level, for the skin
// pass; each instance the camera sees, its level's triangle groups, and each the light sees, its
// level's, for the triangle pass's runs. Only the tables some pass reads
// this frame are filled (push.tables_written).
layout(set = 0, binding = 12) writeonly buffer WorkGroups { WorkGroup work_groups[]; };
// Per instance, the frame (push.palette_frame) whose palette its palette slots hold; 0: none yet.
layout(set = 0, binding = 13) buffer PaletteFrames { uint palette_frames[]; };
// The kept instances whose palettes the palette pass computes this frame.
layout(set = 0, binding = 14) writeonly buffer PaletteList { uint palette_list[]; };
// Per instance, the frame it was last kept in and whether it moves by itself (common.glsl: MOTION_MOVING).
layout(set = 0, binding = 15) buffer Motions { uint motions[]; };
// Each model's record; an instance's is models[instance_slots[i].model].
layout(set = 0, binding = 16) readonly buffer Models { ModelRecord models[]; };
// Each instance's slot (its bases in its chunk, its draw run).
layout(set = 0, binding = 17) readonly buffer InstanceSlots { InstanceSlot instance_slots[]; };
// Per draw run (a chunk's instances of one model): the instances the camera sees (2 × run) and
// the light (2 × run + 1), the counts of its meshes' draw lists. Zeroed before the pass.
layout(set = 0, binding = 18) buffer DrawCounts { uint draw_counts[]; };
// With TRACE_SHADOWS, the top level's instance records (VkAccelerationStructureInstanceKHR, 16 words
// each; src/render/passes/trace.rs): word 12 holds the custom index (the instance's) and the mask,
// 0xFF where the light sees the instance (its shadow level's vertices are skinned this frame), 0
// where not (rays pass through it).
layout(set = 0, binding = 19) writeonly buffer TraceInstances { uint trace_words[]; };
const uint TRACE_MASK_WORD = 12u;
// The pools' state, zeroed before the pass: per chunk the vertices placed (used[c]) and the camera's
// and the light's culled indices placed (used[MAX_CHUNKS + c], used[2 MAX_CHUNKS + c]); per chunk
// the bands that keep their levels and those drawn a level coarser (cutoffs[2c], cutoffs[2c + 1]:
// bands below the first keep theirs, below the second go a level coarser, the rest to the
// coarsest); and per chunk and band the vertices asked for at the three choices (demand).
layout(set = 0, binding = 20) buffer Pools {
    uint used[3u * MAX_CHUNKS];
    uint cutoffs[2u * MAX_CHUNKS];
    uint demand[3u * MAX_CHUNKS * DISTANCE_BANDS];
} pools;
// Per instance: where its skinned vertices are this frame (x) and its level there (y), or
// NOT_PLACED in y when it is not skinned this frame (tests and the trace pass read it).
layout(set = 0, binding = 21) writeonly buffer Placements { uvec2 placements[]; };
// Where the triangle pass runs, the commands it counts its survivors into, laid out as the camera's
// and the light's draw lists: index_count 0, first_index the instance's room in its chunk's culled
// indices (plus its mesh's place in its level).
layout(set = 0, binding = 22) writeonly buffer CulledCameraDraws { DrawCommand culled_camera_draws[]; };
layout(set = 0, binding = 23) writeonly buffer CulledLightDraws { DrawCommand culled_light_draws[]; };

const uint RUN_COUNT = 0u;
const uint RUN_BUDGET = 1u;
const uint RUN_PLACE = 2u;

layout(push_constant) uniform Push {
    uint instance_count;
    uint chunk_instances;  // instances per chunk of skinned vertices
    float pixels_at_unit;  // pixels a model unit covers one unit in front of the camera, over the pixel error allowed
    float light_error;     // the shadow map's level for an instance: its model's coarsest whose error × its scale is at most this (a texel)
    uint tables_written;   // bit t: the cull pass fills work table t (TABLE_*) this frame, for the pass that reads it
    uint palette_frame;    // this frame's number, from 2 (palette_frames starts at 0: none)
    float far_ratio;       // animation LOD: an instance is far when its box's diameter is below this
                           // × its distance (a threshold in pixels over pixels_at_unit); 0: off
    uint hand_set;         // 1: some morph weight is set by hand: boxes grow by the model's morph reach
    uint motion_vectors;   // 1: the forward pass writes the velocity target this frame
    uint run;              // RUN_COUNT, RUN_BUDGET or RUN_PLACE
    uint vertex_room;      // vertices a chunk's pool holds (POOLED)
    uint index_room;       // indices a chunk's culled-index pool holds, per view
    uint culled_views;     // bit 0: the triangle pass's camera run runs this frame, bit 1: its light run
} push;

// The instance's model and slot (main sets them before anything reads them).
ModelRecord model;
InstanceSlot instance_slot;

// The animation's cell around `time`, added to the box (AnimationBounds::at in src/anim/bounds.rs).
void grow_by_cell(uint animation, float time, inout vec3 lo, inout vec3 hi) {
    AnimationRecord info = animations[model.first_animation + animation];
    float position = info.cell_duration > 0.0 ? max(time / info.cell_duration, 0.0) : 0.0;
    uint cell = position < float(info.cell_count) ? min(uint(position), info.cell_count - 1u) : info.cell_count - 1u;
    Bounds bounds = cells[info.first_cell + cell];
    lo = min(lo, bounds.min_corner.xyz);
    hi = max(hi, bounds.max_corner.xyz);
}

// Appends `groups` entries for the instance at `level` to work table `table`, and grows the table's
// dispatch to cover them: a row of tables[table].y workgroups (x), as many rows as the groups fill (y).
// Each entry carries the instance's model and the bases its pass reads at: its skinned vertices'
// and, in the skin table, its palette slots' (InstanceSlot); in a triangle table, its mesh 0
// command in the view's culled draws.
void append_groups(uint table, uint instance, uint level, uint groups, uint vertex_base, uint second_base) {
    if ((push.tables_written & (1u << table)) == 0u) {
        return;
    }
    uint first = atomicAdd(counters.tables[table].x, groups);
    uint row = counters.tables[table].y;
    atomicMax(counters.dispatches[table].x, min(first + groups, row));
    atomicMax(counters.dispatches[table].y, (first + groups + row - 1u) / row);
    uint start = counters.tables[table].z + first;
    for (uint group = 0u; group < groups; ++group) {
        work_groups[start + group] = WorkGroup(instance, (level << 24) | group, instance_slot.model, vertex_base, second_base);
    }
}

// The triangle pass's workgroups for the model's level.
uint triangle_groups(uint level) {
    return (model.level_indices[level] / 3u + TRIANGLE_WORKGROUP_SIZE - 1u) / TRIANGLE_WORKGROUP_SIZE;
}

// Outside when the box lies wholly behind any plane.
bool box_in_volume(vec3 center, vec3 extent, vec4 planes[6]) {
    for (int i = 0; i < 6; ++i) {
        vec3 normal = planes[i].xyz;
        if (dot(normal, center) + dot(abs(normal), extent) + planes[i].w < 0.0) {
            return false;
        }
    }
    return true;
}

// The shadow map's level for an instance at `scale`: its model's coarsest whose error, scaled,
// is within a texel (LevelChoice::light_level_at mirrors it: the same product and comparison).
uint light_level(float scale) {
    for (uint level = model.level_count - 1u; level > 0u; --level) {
        if (model.level_errors[level] * scale <= push.light_error) {
            return level;
        }
    }
    return 0u;
}

// The coarsest level whose error, `distance` in front of the camera, covers at most a pixel
// (lod::camera_level mirrors it).
uint camera_level(float distance) {
    for (uint level = model.level_count - 1u; level > 0u; --level) {
        if (model.level_errors[level] * push.pixels_at_unit <= distance) {
            return level;
        }
    }
    return 0u;
}

// Draw commands are grouped by run (a chunk's instances of one model: one vertex buffer, one
// model's meshes), then by mesh: the run's list for mesh m starts at its first command + m × its
// instances, and `place` is the instance's place in it this frame. The level's meshes are
// meshes[first_range + level × mesh_count + m]. Where the view's triangle pass runs, its list gets
// the same commands counting no indices yet, from the instance's room at `index_base`.
void emit(uint place, uint instance_index, bool camera, uint level, uint vertex_base, uint index_base) {
    bool culled = (push.culled_views & (camera ? 1u : 2u)) != 0u;
    for (uint mesh = 0u; mesh < model.mesh_count; ++mesh) {
        MeshRange range = meshes[model.first_range + level * model.mesh_count + mesh];
        DrawCommand command;
        command.index_count = range.index_count;
        command.instance_count = 1u;
        command.first_index = range.first_index;
        command.vertex_offset = int(vertex_base);
        command.first_instance = instance_index;
        uint index = instance_slot.first_command + mesh * instance_slot.run_instances + place;
        DrawCommand counted = command;
        counted.index_count = 0u;
        counted.first_index = index_base + range.first_index - model.level_first_index[level];
        if (camera) {
            camera_draws[index] = command;
            if (culled) {
                culled_camera_draws[index] = counted;
            }
        } else {
            light_draws[index] = command;
            if (culled) {
                culled_light_draws[index] = counted;
            }
        }
    }
}

// The instance's distance band (its distance over its scale, the level's measure): DISTANCE_BANDS
// of them, six an octave, nearest first.
uint distance_band(float scaled_distance) {
    return min(uint(6.0 * log2(1.0 + max(scaled_distance, 0.0))), DISTANCE_BANDS - 1u);
}

// RUN_BUDGET, for `chunk`: the nearest bands that keep their levels while the rest go a level
// coarser, as many as fit the pool; where even all a level coarser do not fit, the nearest that go
// a level coarser while the rest take their coarsest.
void budget(uint chunk) {
    uint first = chunk * DISTANCE_BANDS * 3u;
    uint totals[3] = uint[3](0u, 0u, 0u);
    for (uint band = 0u; band < DISTANCE_BANDS; ++band) {
        for (uint choice = 0u; choice < 3u; ++choice) {
            totals[choice] += pools.demand[first + band * 3u + choice];
        }
    }
    uint room = push.vertex_room;
    uint keep = 0u;
    uint coarser = 0u;
    if (totals[1] <= room) {
        // The largest k whose bands below keep their levels and the rest go a level coarser: the
        // sum grows with k, so the scan stops at the first that does not fit.
        uint sum = totals[1];
        keep = DISTANCE_BANDS;
        for (uint band = 0u; band < DISTANCE_BANDS; ++band) {
            sum += pools.demand[first + band * 3u] - pools.demand[first + band * 3u + 1u];
            if (sum > room) {
                keep = band;
                break;
            }
        }
        coarser = DISTANCE_BANDS;
    } else if (totals[2] <= room) {
        uint sum = totals[2];
        coarser = DISTANCE_BANDS;
        for (uint band = 0u; band < DISTANCE_BANDS; ++band) {
            sum += pools.demand[first + band * 3u + 1u] - pools.demand[first + band * 3u + 2u];
            if (sum > room) {
                coarser = band;
                break;
            }
        }
    }
    pools.cutoffs[2u * chunk] = keep;
    pools.cutoffs[2u * chunk + 1u] = coarser;
}

// Frames between an instance's palettes under animation LOD: 1 (every frame) for one at least
// the threshold across (push.far_ratio × its distance), then 2, 4 and 8 as it is under the
// threshold, a sixth of it and a 24th (cull.rs: ANIMATION_LOD_STEPS); at least 2 for one only
// the light sees. 1 with it off.
uint animation_interval(float diameter, float distance, bool camera_sees) {
    if (push.far_ratio <= 0.0) {
        return 1u;
    }
    float threshold = push.far_ratio * distance;
    uint interval = diameter >= threshold ? 1u : diameter >= threshold / 6.0 ? 2u : diameter >= threshold / 24.0 ? 4u : 8u;
    return camera_sees ? interval : max(interval, 2u);
}

// The instance's room in view `view`'s culled indices (0: the camera's, 1: the light's) for its
// level's indices, from its chunk's index pool; NOT_PLACED where the view's triangle pass does not
// run. The pool holds as many indices per vertex as any level has, over the vertex pool's room, so
// it fills no sooner than the vertex pool: a room past it is counted with the instances not drawn.
uint place_indices(uint view, uint chunk, uint level) {
    if ((push.culled_views & (1u << view)) == 0u) {
        return NOT_PLACED;
    }
    uint count = model.level_indices[level];
    uint base = atomicAdd(pools.used[(view + 1u) * MAX_CHUNKS + chunk], count);
    if (base + count > push.index_room) {
        atomicAdd(counters.pool_use.y, 1u);
        return NOT_PLACED;
    }
    atomicAdd(counters.pool_use.w, count);
    return base;
}

void main() {
    if (push.run == RUN_BUDGET) {
        for (uint chunk = gl_LocalInvocationID.x; chunk < MAX_CHUNKS; chunk += gl_WorkGroupSize.x) {
            budget(chunk);
        }
        return;
    }
    uint instance_index = gl_GlobalInvocationID.x;
    if (instance_index >= push.instance_count) {
        return;
    }
    bool placing = push.run == RUN_PLACE;
    if (placing) {
        placements[instance_index] = uvec2(0u, NOT_PLACED);
        if (TRACE_SHADOWS != 0u) {
            trace_words[instance_index * 16u + TRACE_MASK_WORD] = instance_index & 0xFFFFFFu;
        }
    }
    Instance instance = instances[instance_index];
    instance_slot = instance_slots[instance_index];
    model = models[instance_slot.model];
    vec3 lo = vec3(3.0e38);
    vec3 hi = vec3(-3.0e38);
    uint animation_a = instance.animations & 0xFFFFu;
    uint animation_b = instance.animations >> 16;
    uint layer_animation = instance.layer & 0xFFFFu;
    if (animation_a == NO_CLIP) {
        lo = model.bind_min.xyz;
        hi = model.bind_max.xyz;
    } else {
        grow_by_cell(animation_a, instance.time_a, lo, hi);
        bool fading = animation_b != NO_CLIP && instance.blend > 0.0;
        bool layered = layer_animation != NO_CLIP && instance.layer_weight > 0.0;
        if (fading) {
            grow_by_cell(animation_b, instance.time_b, lo, hi);
        }
        if (layered) {
            grow_by_cell(layer_animation, instance.time_layer, lo, hi);
        }
        // A local-space blend makes poses neither animation has, and dual quaternions blend a vertex
        // off the hull of its joints' images: anything within reach of the roots.
        if (fading || layered || (instance.skinning & SKINNING_MODE_MASK) == SKINNING_DUAL_QUATERNION) {
            lo -= vec3(model.bind_min.w);
            hi += vec3(model.bind_min.w);
        }
    }
    // Morph weights set by hand may be anything in their ranges, at any time.
    float morph_reach = push.hand_set != 0u ? model.bind_max.w : 0.0;
    lo -= vec3(morph_reach);
    hi += vec3(morph_reach);
    // Into the world: scale and rotate the box's centre and extent about +Y, then move it.
    float c = cos(instance.position_yaw.w) * instance.scale;
    float s = sin(instance.position_yaw.w) * instance.scale;
    mat3 rotation = mat3(vec3(c, 0.0, -s), vec3(0.0, instance.scale, 0.0), vec3(s, 0.0, c));
    vec3 center = rotation * ((lo + hi) * 0.5) + instance.position_yaw.xyz;
    vec3 extent = abs(rotation[0]) * ((hi.x - lo.x) * 0.5) + abs(rotation[1]) * ((hi.y - lo.y) * 0.5)
                + abs(rotation[2]) * ((hi.z - lo.z) * 0.5);

    bool camera_sees = box_in_volume(center, extent, frame.camera_planes);
    bool light_sees = box_in_volume(center, extent, frame.light_planes);
    if (!camera_sees && !light_sees) {
        return;
    }
    // The box's nearest point to the camera (0 inside it): no vertex is nearer, none larger on screen.
    float distance = length(max(abs(frame.camera_position.xyz - center) - extent, vec3(0.0)));
    // A level's error grows with the instance's scale: at scale s it looks as it would unscaled,
    // 1/s as far.
    uint shadow_level = light_level(instance.scale);
    uint seen_level = camera_sees ? camera_level(distance / instance.scale) : shadow_level;
    uint skin_level = light_sees ? min(seen_level, shadow_level) : seen_level;
    uint chunk = instance_index / push.chunk_instances;
    uint coarsest = model.level_count - 1u;
    uint band = distance_band(distance / instance.scale);
    if (push.run == RUN_COUNT) {
        uint at = (chunk * DISTANCE_BANDS + band) * 3u;
        atomicAdd(pools.demand[at], model.level_vertices[skin_level]);
        atomicAdd(pools.demand[at + 1u], model.level_vertices[min(skin_level + 1u, coarsest)]);
        atomicAdd(pools.demand[at + 2u], model.level_vertices[coarsest]);
        return;
    }
    // Its vertices' place: its slot's room, or its band's level from the pool. A coarser level
    // than its own draws both views at least that coarse (a level's vertices are a prefix of every
    // finer level's, so only the placed level's are skinned).
    uint vertex_base = instance_slot.vertex_base;
    if (POOLED != 0u) {
        uint placed = band < pools.cutoffs[2u * chunk] ? skin_level
                    : band < pools.cutoffs[2u * chunk + 1u] ? min(skin_level + 1u, coarsest) : coarsest;
        uint count = model.level_vertices[placed];
        vertex_base = atomicAdd(pools.used[chunk], count);
        if (vertex_base + count > push.vertex_room) {
            atomicAdd(counters.pool_use.y, 1u);
            return;
        }
        if (placed != skin_level) {
            atomicAdd(counters.pool_use.x, 1u);
        }
        atomicAdd(counters.pool_use.z, count);
        skin_level = placed;
        seen_level = max(seen_level, placed);
        shadow_level = max(shadow_level, placed);
    }
    placements[instance_index] = uvec2(vertex_base, skin_level);
    uint slot = atomicAdd(counters.kept.y, 1u);
    atomicAdd(counters.skeleton_draw.y, 1u);
    atomicAdd(counters.box_draw.y, 1u);
    skin_list[slot] = instance_index;
    debug_boxes[instance_index].min_corner = vec4(center - extent, camera_sees ? 1.0 : 0.0);
    debug_boxes[instance_index].max_corner = vec4(center + extent, 0.0);
    uint interval = animation_interval(2.0 * length(extent), distance, camera_sees);
    // palette_frames keeps the frame of the instance's palette and, in its top bit, whether it was
    // written with dual quaternions: a switch of mode makes the palette stale, so no frame skins
    // from dual-quaternion slots an older frame left (or none wrote).
    uint dual_bit = (instance.skinning & SKINNING_MODE_MASK) == SKINNING_DUAL_QUATERNION ? LIST_DUAL_QUATERNION : 0u;
    uint frame = push.palette_frame & ~LIST_DUAL_QUATERNION;
    uint kept = palette_frames[instance_index];
    uint kept_frame = kept & ~LIST_DUAL_QUATERNION;
    bool switched = (kept & LIST_DUAL_QUATERNION) != dual_bit;
    bool last_frames = kept_frame + 1u == frame && !switched;
    bool stale = kept_frame == 0u || frame - kept_frame > interval || switched;
    // A restart (a teleport, a cut) takes a new palette now, far or not: the old one has the old
    // place and pose in it.
    bool restarts = (instance.skinning & INSTANCE_RESTART) != 0u;
    bool computes = stale || restarts || ((instance_index + frame) & (interval - 1u)) == 0u;
    // It moves by itself when it was drawn last frame (so its palette slots hold what it was drawn
    // with), gets a new palette now, and does not restart; and only while the velocity target is
    // written (else nothing reads the previous block). A record as last frame's (still) has not
    // moved, when last frame's palette came from that record: not when animation LOD drew it from
    // an older one.
    bool drawn_last_frame = (motions[instance_index] & ~MOTION_MOVING) + 1u == frame;
    bool still = (instance.skinning & INSTANCE_STILL) != 0u && last_frames;
    bool moving = push.motion_vectors != 0u && drawn_last_frame && computes && !switched && !restarts && !still;
    motions[instance_index] = frame | (moving ? MOTION_MOVING : 0u);
    if (computes) {
        palette_frames[instance_index] = frame | dual_bit;
        uint entry = atomicAdd(counters.palettes.x, 1u);
        if (entry % PALETTE_WORKGROUP_SIZE == 0u) {
            atomicAdd(counters.palette_dispatch.x, 1u);
        }
        palette_list[entry] = instance_index;
    }
    atomicAdd(counters.level_counts[skin_level], 1u);
    uint skin_groups = (model.level_vertices[skin_level] + SKIN_WORKGROUP_SIZE - 1u) / SKIN_WORKGROUP_SIZE;
    append_groups(TABLE_SKIN, instance_index | dual_bit, skin_level, skin_groups, vertex_base, instance_slot.palette_base);
    if (camera_sees) {
        atomicAdd(counters.level_counts[MAX_LEVELS + seen_level], 1u);
        atomicAdd(counters.camera_draws[chunk], 1u);
        uint place = atomicAdd(draw_counts[2u * instance_slot.run], 1u);
        uint index_base = place_indices(0u, chunk, seen_level);
        emit(place, instance_index, true, seen_level, vertex_base, index_base);
        if (index_base != NOT_PLACED) {
            append_groups(TABLE_CAMERA, instance_index, seen_level, triangle_groups(seen_level), vertex_base,
                          instance_slot.first_command + place);
        }
    }
    if (light_sees) {
        if (TRACE_SHADOWS != 0u) {
            trace_words[instance_index * 16u + TRACE_MASK_WORD] = (instance_index & 0xFFFFFFu) | 0xFF000000u;
        }
        atomicAdd(counters.light_draws[chunk], 1u);
        uint place = atomicAdd(draw_counts[2u * instance_slot.run + 1u], 1u);
        uint index_base = place_indices(1u, chunk, shadow_level);
        emit(place, instance_index, false, shadow_level, vertex_base, index_base);
        if (index_base != NOT_PLACED) {
            append_groups(TABLE_LIGHT, instance_index, shadow_level, triangle_groups(shadow_level), vertex_base,
                          instance_slot.first_command + place);
        }
    }
}
