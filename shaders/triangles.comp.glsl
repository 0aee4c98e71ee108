#version 460
// Triangle pass (`compute` strategy): after the skin pass, every triangle of every kept instance is
// tested against the camera with its skinned, world-space corners, and the survivors' indices are
// compacted into `triangles.camera_indices`, which the forward pass draws. A second run tests the
// light's instances against the shadow map (its matrix, its texels, one sample at each centre)
// into `triangles.light_indices` for the shadow pass: the same shader, the other set. Each kept
// instance has, in the view's culled draws, a command per mesh that the cull pass wrote counting
// no indices yet, from its room in its chunk's culled indices (placed by its level); this pass
// counts the survivors into it and writes them there as instance-relative 16-bit indices (the
// command's vertex offset is the instance's place in the skinned vertices). Only a pass that sees
// skinned vertices before the rasterizer can do this: with `vertex` skinning every triangle
// reaches setup. A triangle is dropped when it is
//   - behind the camera or outside one side of the view frustum (all three corners),
//   - facing away on a closed model (the side the pipeline culls anyway, Model::facing), or
//   - so small that it covers no sample position (4× MSAA: the quarter-pixel lattice at 1/8, 3/8,
//     5/8, 7/8 that holds the standard sample positions; one sample: the centres): its screen box
//     holds none, or each of the few its box holds (at most MAX_SAMPLE_TESTS) lies outside an edge,
// each decided conservatively, so the image is the one drawing every triangle gives.
//
// A survivor whose screen box is at most `raster_pixels` across (`--raster auto`; any size with
// `compute`; none with `hardware`), wholly in front of the eye and inside a guard band, is handed
// to the raster pass instead (raster.camera_triangles or raster.light_triangles: its instance,
// vertex base, first index and mesh), appended one atomic a subgroup, which also grows that pass's
// indirect dispatch; a list full up leaves the rest to the hardware.
//
// One dispatch a run, whatever the levels: each workgroup takes an entry of the run's work table
// (WorkGroup, TABLE_CAMERA or TABLE_LIGHT), which the cull pass appends for each instance the view
// sees: a run of its level's triangles, an invocation each.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_shader_subgroup_ballot : require
#include "common.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Indices { uint indices[]; };
layout(set = 0, binding = 1) readonly buffer MeshRanges { MeshRange mesh_ranges[]; };
layout(set = 0, binding = 2) readonly buffer Skinned { float skinned[]; } skinned_chunks[MAX_CHUNKS];
layout(set = 0, binding = 3) readonly buffer WorkGroups { WorkGroup work_groups[]; };
// One command per (group, mesh), chunk-major, copied from its template before this pass with
// index_count 0: the survivors are counted into it.
// The view's culled draws (the cull pass's layout: run by run, mesh by mesh): the survivors are
// counted into each command's index_count.
layout(set = 0, binding = 4) buffer Draws { DrawCommand draws[]; };
// Per chunk, each instance's room from its command's first index: 16-bit, instance-relative.
layout(set = 0, binding = 5) writeonly buffer CulledIndices { uint16_t culled[]; } culled_chunks[MAX_CHUNKS];
// The run's table's place and length; the raster pass's dispatch and counts, which this pass grows.
layout(set = 0, binding = 6) buffer Counters { CullCounters counters; };
// Each model's record (its levels' first indices); a table entry names its instance's.
layout(set = 0, binding = 7) readonly buffer Models { ModelRecord models[]; };
// Each instance's slot: its run's instances, the stride between its meshes' commands.
layout(set = 0, binding = 8) readonly buffer InstanceSlots { InstanceSlot instance_slots[]; };
// The view's list for the raster pass.
layout(set = 0, binding = 9) writeonly buffer RasterTriangles { RasterTriangle raster_triangles[]; };

layout(push_constant) uniform Push {
    mat4 view_projection;
    vec2 viewport;          // pixels
    uint mesh_count;
    uint vertex_count;
    uint chunk_instances;
    float facing_sign;      // the sign of a hidden triangle's screen area (triangles::facing_sign); 0: none hidden
    uint sample_step;       // samples a pixel row holds on a regular lattice (4: 4× MSAA at the standard
                            // positions, 1: the pixel centres), so the small-triangle test holds; 0: no test
    float snap;             // the rasterizer's sub-pixel grid, 2^-subPixelPrecisionBits pixels
    uint table;             // the run's work table: TABLE_CAMERA or TABLE_LIGHT
    float raster_pixels;    // the largest screen box (pixels across) the raster pass takes; 0: none
    uint raster_room;       // entries the view's raster list holds
} push;

#include "work_tables.glsl"

// Whether [low, high] (pixels) holds a point of the lattice (k + 1/2) / step (step 4: k/4 + 1/8;
// step 1: the centres), once grown by `margin`: more than the rasterizer's snapping and the float
// error of the transform, so that a triangle covering a sample is never dropped.
bool holds_sample_row(float low, float high, float margin) {
    float step = float(push.sample_step);
    return floor((high + margin) * step - 0.5) >= ceil((low - margin) * step - 0.5);
}

// Lattice points a triangle's box may hold for the edge test below; a box holding more keeps its
// triangle (a triangle that large covers a sample, or costs too much to prove it does not).
const float MAX_SAMPLE_TESTS = 9.0;

// Twice the signed area of (a, b, p): the edge function of edge a→b at p.
float edge(vec2 a, vec2 b, vec2 p) {
    return (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x);
}

// Whether edge a→b may have p on its inner side (`orientation`: the triangle's area sign) once the
// rasterizer has moved a and b by up to `margin` each: that moves the edge function by at most
// margin × (2 |p − a| + |b − a|) + 2 margin².
bool inside_edge(vec2 a, vec2 b, vec2 p, float orientation, float margin) {
    float slack = margin * (2.0 * distance(p, a) + distance(a, b)) + 2.0 * margin * margin;
    return orientation * edge(a, b, p) >= -slack;
}

// Whether the triangle may cover one of the lattice points in its box [low, high] grown by margin:
// each tested against the three edges. `area` is twice the signed area; one whose sign snapping
// could flip (`area_slack`) keeps its triangle, as does a box holding too many points.
bool covers_a_sample(vec2 pa, vec2 pb, vec2 pc, float area, float area_slack, vec2 low, vec2 high, float margin) {
    if (abs(area) <= area_slack) {
        return true;
    }
    float step = float(push.sample_step);
    vec2 first = ceil((low - margin) * step - 0.5);
    vec2 last = floor((high + margin) * step - 0.5);
    if ((last.x - first.x + 1.0) * (last.y - first.y + 1.0) > MAX_SAMPLE_TESTS) {
        return true;
    }
    float orientation = sign(area);
    for (float y = first.y; y <= last.y; y += 1.0) {
        for (float x = first.x; x <= last.x; x += 1.0) {
            vec2 p = (vec2(x, y) + 0.5) / step;
            if (inside_edge(pa, pb, p, orientation, margin) && inside_edge(pb, pc, p, orientation, margin) &&
                inside_edge(pc, pa, p, orientation, margin)) {
                return true;
            }
        }
    }
    return false;
}

// What becomes of a triangle: dropped, drawn by the hardware, or handed to the raster pass.
const uint DROPPED = 0u;
const uint HARDWARE = 1u;
const uint COMPUTE = 2u;

// Whether the raster pass can take a visible triangle: small enough, in front of the eye, and
// inside a guard band of a target's size around it (its fixed-point corners stay in range).
bool small(vec4 a, vec4 b, vec4 c) {
    if (push.raster_pixels <= 0.0 || a.w <= 1e-6 || b.w <= 1e-6 || c.w <= 1e-6) {
        return false;
    }
    vec2 pa = (a.xy / a.w * 0.5 + 0.5) * push.viewport;
    vec2 pb = (b.xy / b.w * 0.5 + 0.5) * push.viewport;
    vec2 pc = (c.xy / c.w * 0.5 + 0.5) * push.viewport;
    vec2 low = min(pa, min(pb, pc));
    vec2 high = max(pa, max(pb, pc));
    return max(high.x - low.x, high.y - low.y) <= push.raster_pixels && all(greaterThanEqual(low, -push.viewport)) &&
           all(lessThanEqual(high, 2.0 * push.viewport));
}

bool visible(vec4 a, vec4 b, vec4 c) {
    // Outside one clip plane with all three corners (Vulkan clip space: -w <= x, y <= w, 0 <= z <= w).
    if ((a.x < -a.w && b.x < -b.w && c.x < -c.w) || (a.x > a.w && b.x > b.w && c.x > c.w) ||
        (a.y < -a.w && b.y < -b.w && c.y < -c.w) || (a.y > a.w && b.y > b.w && c.y > c.w) ||
        (a.z < 0.0 && b.z < 0.0 && c.z < 0.0) || (a.z > a.w && b.z > b.w && c.z > c.w)) {
        return false;
    }
    // A corner at or behind the eye plane: its projection means nothing; the clipper decides.
    if (a.w <= 1e-6 || b.w <= 1e-6 || c.w <= 1e-6) {
        return true;
    }
    vec2 pa = (a.xy / a.w * 0.5 + 0.5) * push.viewport;
    vec2 pb = (b.xy / b.w * 0.5 + 0.5) * push.viewport;
    vec2 pc = (c.xy / c.w * 0.5 + 0.5) * push.viewport;
    // Twice the signed area in framebuffer pixels. Snapping the corners to the sub-pixel grid moves
    // it by up to about 4 × scale × snap, so a sliver whose sign that could flip keeps its triangle.
    float area = (pb.x - pa.x) * (pc.y - pa.y) - (pc.x - pa.x) * (pb.y - pa.y);
    float scale = max(max(abs(pb.x - pa.x), abs(pc.x - pa.x)), max(abs(pb.y - pa.y), abs(pc.y - pa.y)));
    float area_slack = 4.0 * scale * push.snap + 1e-5 * scale * scale;
    if (push.facing_sign * area > area_slack) {
        return false;
    }
    if (push.sample_step == 0u) {
        return true;
    }
    vec2 low = min(pa, min(pb, pc));
    vec2 high = max(pa, max(pb, pc));
    // How far the rasterizer's corner may lie from ours: snapping to its sub-pixel grid moves a
    // corner by at most snap / √2, and the two transforms' float rounding differ by under 1e-3
    // pixel in a 2048-texel map; two grid steps cover both with room.
    float margin = 2.0 * push.snap;
    return holds_sample_row(low.x, high.x, margin) && holds_sample_row(low.y, high.y, margin) &&
           covers_a_sample(pa, pb, pc, area, area_slack, low, high, margin);
}

vec4 corner(uint chunk, uint first_vertex, uint index) {
    uint at = (first_vertex + index) * SKINNED_VERTEX_UINTS;
    vec3 position = vec3(skinned_chunks[chunk].skinned[at], skinned_chunks[chunk].skinned[at + 1u],
                         skinned_chunks[chunk].skinned[at + 2u]);
    return push.view_projection * vec4(position, 1.0);
}

// The path of this invocation's triangle, and what the index writes need: its command (the
// instance's mesh), chunk, corners' indices, first index and mesh.
uint classify(WorkGroup work, out uint command, out uint chunk, out uvec3 corners, out uint first, out uint mesh) {
    uint instance_index = work.instance;
    uint level = work.group >> 24;
    // The level's meshes: mesh_ranges[first_range + m]. The pass runs where the renderer holds one
    // model (its groups share one vertex count), whose part of the shared buffers starts at 0.
    uint first_range = models[work.model].first_range + level * push.mesh_count;
    chunk = instance_index / push.chunk_instances;
    uint triangle = (work.group & 0xFFFFFFu) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    first = models[work.model].level_first_index[level] + triangle * 3u;
    mesh = 0u;
    while (mesh < push.mesh_count &&
           (first < mesh_ranges[first_range + mesh].first_index ||
            first + 2u >= mesh_ranges[first_range + mesh].first_index + mesh_ranges[first_range + mesh].index_count)) {
        mesh += 1u;
    }
    if (mesh == push.mesh_count) {
        return DROPPED; // past the last triangle, or in no mesh: never drawn
    }
    corners = uvec3(indices[first], indices[first + 1u], indices[first + 2u]);
    if (max(corners.x, max(corners.y, corners.z)) >= push.vertex_count) {
        return DROPPED;
    }
    vec4 a = corner(chunk, work.vertex_base, corners.x);
    vec4 b = corner(chunk, work.vertex_base, corners.y);
    vec4 c = corner(chunk, work.vertex_base, corners.z);
    if (!visible(a, b, c)) {
        return DROPPED;
    }
    command = work.second_base + mesh * instance_slots[instance_index].run_instances;
    return small(a, b, c) ? COMPUTE : HARDWARE;
}

void main() {
    WorkGroup work;
    uint path = DROPPED;
    uint command, chunk, first, mesh;
    uvec3 corners;
    if (work_entry(push.table, work)) {
        path = classify(work, command, chunk, corners, first, mesh);
    }
    uint view = push.table == TABLE_CAMERA ? RASTER_CAMERA : RASTER_LIGHT;
    // The raster pass's share, appended one atomic a subgroup; the groups of its dispatch grow
    // with the entries that fit (summed over the subgroups, ceil(min(total, room) / workgroup)).
    uvec4 handed = subgroupBallot(path == COMPUTE);
    uint handed_count = subgroupBallotBitCount(handed);
    if (handed_count > 0u) {
        uint base = 0u;
        if (subgroupElect()) {
            base = atomicAdd(counters.raster[view].w, handed_count);
            uint before = (min(base, push.raster_room) + RASTER_WORKGROUP - 1u) / RASTER_WORKGROUP;
            uint after = (min(base + handed_count, push.raster_room) + RASTER_WORKGROUP - 1u) / RASTER_WORKGROUP;
            if (after > before) {
                atomicAdd(counters.raster[view].x, after - before);
            }
        }
        base = subgroupBroadcastFirst(base);
        if (path == COMPUTE) {
            uint at = base + subgroupBallotExclusiveBitCount(handed);
            if (at < push.raster_room) {
                raster_triangles[at] = RasterTriangle(work.instance, work.vertex_base, first, mesh);
            } else {
                path = HARDWARE; // the list is full
            }
        }
    }
    uint hardware = subgroupBallotBitCount(subgroupBallot(path == HARDWARE));
    if (subgroupElect() && hardware > 0u) {
        if (view == RASTER_CAMERA) {
            atomicAdd(counters.raster_counts.z, hardware);
        } else {
            atomicAdd(counters.raster_counts.w, hardware);
        }
    }
    if (path != HARDWARE) {
        return;
    }
    uint at = draws[command].first_index + atomicAdd(draws[command].index_count, 3u);
    culled_chunks[chunk].culled[at] = uint16_t(corners.x);
    culled_chunks[chunk].culled[at + 1u] = uint16_t(corners.y);
    culled_chunks[chunk].culled[at + 2u] = uint16_t(corners.z);
}
