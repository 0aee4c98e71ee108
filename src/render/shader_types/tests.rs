//! The mirrors' layouts read back out of the compiled SPIR-V: every offset `offset_of!` gives is
//! the one the shader's std430/std140 layout has.
use super::*;
use crate::render::shaders;
use std::collections::HashMap;
use std::mem::{offset_of, size_of};

/// Struct layouts as the compiled shaders declare them: member offsets by name, the array stride
/// of any array of the struct, and where its last member ends. Read from the SPIR-V's names,
/// types and decorations.
#[derive(Default, Debug)]
struct Layouts {
    members: HashMap<String, HashMap<String, u32>>,
    strides: HashMap<String, u32>,
    /// The largest member offset plus that member's size: the block's size for a push block.
    ends: HashMap<String, u32>,
}

fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|word| word.to_le_bytes()).take_while(|&byte| byte != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn reflect(spirv: &[u8]) -> Layouts {
    const OP_NAME: u32 = 5;
    const OP_MEMBER_NAME: u32 = 6;
    const OP_TYPE_INT: u32 = 21;
    const OP_TYPE_FLOAT: u32 = 22;
    const OP_TYPE_VECTOR: u32 = 23;
    const OP_TYPE_MATRIX: u32 = 24;
    const OP_TYPE_ARRAY: u32 = 28;
    const OP_TYPE_RUNTIME_ARRAY: u32 = 29;
    const OP_TYPE_STRUCT: u32 = 30;
    const OP_CONSTANT: u32 = 43;
    const OP_DECORATE: u32 = 71;
    const OP_MEMBER_DECORATE: u32 = 72;
    const DECORATION_ARRAY_STRIDE: u32 = 6;
    const DECORATION_MATRIX_STRIDE: u32 = 7;
    const DECORATION_OFFSET: u32 = 35;
    // Sizes of scalar and vector types; matrices, arrays and structs are sized from their
    // decorations once every instruction is read (types come before their uses in SPIR-V).
    let mut sizes: HashMap<u32, u32> = HashMap::new();
    let mut constants: HashMap<u32, u32> = HashMap::new();
    let mut matrix_strides: HashMap<(u32, u32), u32> = HashMap::new();
    let mut columns: HashMap<u32, u32> = HashMap::new();
    let mut fixed_arrays: Vec<(u32, u32, u32)> = Vec::new(); // (array, element, length id)
    let mut structs: Vec<(u32, Vec<u32>)> = Vec::new();
    let words: Vec<u32> =
        spirv.chunks_exact(4).map(|chunk| u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])).collect();
    let (mut names, mut member_names) = (HashMap::new(), HashMap::new());
    let (mut offsets, mut strides, mut arrays) = (Vec::new(), HashMap::new(), Vec::new());
    let mut at = 5;
    while at < words.len() {
        let (count, opcode) = ((words[at] >> 16) as usize, words[at] & 0xFFFF);
        let operands = &words[at + 1..at + count.max(1)];
        match opcode {
            OP_NAME => {
                names.insert(operands[0], literal_string(&operands[1..]));
            }
            OP_MEMBER_NAME => {
                member_names.insert((operands[0], operands[1]), literal_string(&operands[2..]));
            }
            OP_MEMBER_DECORATE if operands[2] == DECORATION_OFFSET => offsets.push((operands[0], operands[1], operands[3])),
            OP_MEMBER_DECORATE if operands[2] == DECORATION_MATRIX_STRIDE => {
                matrix_strides.insert((operands[0], operands[1]), operands[3]);
            }
            OP_TYPE_INT | OP_TYPE_FLOAT => {
                sizes.insert(operands[0], operands[1] / 8);
            }
            OP_TYPE_VECTOR => {
                let component = sizes.get(&operands[1]).copied().unwrap_or(0);
                sizes.insert(operands[0], component * operands[2]);
            }
            OP_TYPE_MATRIX => {
                columns.insert(operands[0], operands[2]);
            }
            OP_CONSTANT => {
                constants.insert(operands[1], operands[2]);
            }
            OP_TYPE_STRUCT => structs.push((operands[0], operands[1..].to_vec())),
            OP_DECORATE if operands[1] == DECORATION_ARRAY_STRIDE => {
                strides.insert(operands[0], operands[2]);
            }
            OP_TYPE_ARRAY => {
                arrays.push((operands[0], operands[1]));
                fixed_arrays.push((operands[0], operands[1], operands[2]));
            }
            OP_TYPE_RUNTIME_ARRAY => arrays.push((operands[0], operands[1])),
            _ => {}
        }
        at += count.max(1);
    }
    // A member's size: a fixed array is its length times its stride, a runtime array nothing, a
    // matrix its columns times its stride, a struct where its last member ends.
    let mut struct_sizes: HashMap<u32, u32> = HashMap::new();
    let offset_of_member: HashMap<(u32, u32), u32> = offsets.iter().map(|&(s, m, o)| ((s, m), o)).collect();
    let type_size = |id: u32, matrix_stride: Option<u32>, struct_sizes: &HashMap<u32, u32>| -> Option<u32> {
        if let Some(&size) = sizes.get(&id) {
            return Some(size);
        }
        if let Some(&count) = columns.get(&id) {
            return matrix_stride.map(|stride| stride * count);
        }
        if let Some(&(_, _, length)) = fixed_arrays.iter().find(|(array, _, _)| *array == id) {
            return Some(constants.get(&length)? * strides.get(&id)?);
        }
        if arrays.iter().any(|(array, _)| *array == id) {
            return Some(0); // a runtime array
        }
        struct_sizes.get(&id).copied()
    };
    // Structs are declared after their members' types, so one pass in order sizes nested ones.
    for (structure, members) in &structs {
        let mut end = 0;
        for (index, &member_type) in members.iter().enumerate() {
            let index = index as u32;
            let stride = matrix_strides.get(&(*structure, index)).copied();
            let (Some(size), Some(&offset)) =
                (type_size(member_type, stride, &struct_sizes), offset_of_member.get(&(*structure, index)))
            else {
                continue;
            };
            end = end.max(offset + size);
        }
        struct_sizes.insert(*structure, end);
    }
    let mut layouts = Layouts::default();
    for (structure, size) in &struct_sizes {
        if let Some(name) = names.get(structure) {
            layouts.ends.insert(name.clone(), *size);
        }
    }
    for (structure, member, offset) in offsets {
        let (Some(name), Some(member)) = (names.get(&structure), member_names.get(&(structure, member))) else { continue };
        layouts.members.entry(name.clone()).or_default().insert(member.clone(), offset);
    }
    for (array, element) in arrays {
        if let (Some(name), Some(&stride)) = (names.get(&element), strides.get(&array)) {
            layouts.strides.insert(name.clone(), stride);
        }
    }
    layouts
}

/// The shader's `structure` against its Rust mirror: the same members (every one the shader
/// declares is listed, and none more), each at the same offset, and the same size: an array's
/// stride, or for a block never arrayed (a push block, a uniform block) where its last member ends.
fn check(spirv: &[u8], structure: &str, size: usize, members: &[(&str, usize)]) {
    let layouts = reflect(spirv);
    let declared = layouts.members.get(structure).unwrap_or_else(|| panic!("{structure} not found in the shader"));
    let mut shader_names: Vec<&str> = declared.keys().map(String::as_str).collect();
    let mut rust_names: Vec<&str> = members.iter().map(|&(member, _)| member).collect();
    shader_names.sort();
    rust_names.sort();
    assert_eq!(shader_names, rust_names, "{structure}: the shader's members vs the Rust mirror's");
    for &(member, rust_offset) in members {
        assert_eq!(declared.get(member).copied(), Some(rust_offset as u32), "{structure}.{member}: shader offset vs Rust");
    }
    match layouts.strides.get(structure) {
        Some(&stride) => assert_eq!(stride, size as u32, "{structure}: shader array stride vs Rust size"),
        None => {
            assert_eq!(layouts.ends.get(structure).copied(), Some(size as u32), "{structure}: shader block size vs Rust size")
        }
    }
}

#[test]
fn layouts_match_the_compiled_shaders() {
    check(
        shaders::SKIN_COMP,
        "SourceVertex",
        size_of::<SourceVertex>(),
        &[
            ("position", offset_of!(SourceVertex, position)),
            ("first_influence", offset_of!(SourceVertex, first_influence)),
            ("normal", offset_of!(SourceVertex, normal)),
            ("influence_count", offset_of!(SourceVertex, influence_count)),
            ("tangent", offset_of!(SourceVertex, tangent)),
        ],
    );
    check(
        shaders::SKIN_COMP,
        "Influence",
        size_of::<GpuInfluence>(),
        &[("joint", offset_of!(GpuInfluence, joint)), ("weight", offset_of!(GpuInfluence, weight))],
    );
    check(shaders::SKIN_COMP, "PaletteMatrix", size_of::<PaletteMatrix>(), &[("rows", 0)]);
    check(shaders::SKIN_COMP, "Push", size_of::<SkinPush>(), &[("chunk_instances", offset_of!(SkinPush, chunk_instances))]);
    check(
        shaders::SKIN_COMP,
        "WorkGroup",
        size_of::<WorkGroup>(),
        &[
            ("instance", offset_of!(WorkGroup, instance)),
            ("group", offset_of!(WorkGroup, group)),
            ("model", offset_of!(WorkGroup, model)),
            ("vertex_base", offset_of!(WorkGroup, vertex_base)),
            ("second_base", offset_of!(WorkGroup, second_base)),
        ],
    );
    check(
        shaders::CULL_COMP,
        "InstanceSlot",
        size_of::<InstanceSlot>(),
        &[
            ("vertex_base", offset_of!(InstanceSlot, vertex_base)),
            ("palette_base", offset_of!(InstanceSlot, palette_base)),
            ("run", offset_of!(InstanceSlot, run)),
            ("first_command", offset_of!(InstanceSlot, first_command)),
            ("run_instances", offset_of!(InstanceSlot, run_instances)),
            ("model", offset_of!(InstanceSlot, model)),
            ("unused", offset_of!(InstanceSlot, unused)),
        ],
    );
    check(
        shaders::SKIN_COMP,
        "MorphTarget",
        size_of::<GpuMorphTarget>(),
        &[
            ("first_delta", offset_of!(GpuMorphTarget, first_delta)),
            ("delta_count", offset_of!(GpuMorphTarget, delta_count)),
            ("first_vertex", offset_of!(GpuMorphTarget, first_vertex)),
            ("last_vertex", offset_of!(GpuMorphTarget, last_vertex)),
            ("default_weight", offset_of!(GpuMorphTarget, default_weight)),
            ("unused", offset_of!(GpuMorphTarget, unused)),
        ],
    );
    check(
        shaders::SKIN_COMP,
        "MorphDelta",
        size_of::<GpuMorphDelta>(),
        &[
            ("position", offset_of!(GpuMorphDelta, position)),
            ("vertex", offset_of!(GpuMorphDelta, vertex)),
            ("normal", offset_of!(GpuMorphDelta, normal)),
            ("unused", offset_of!(GpuMorphDelta, unused)),
        ],
    );
    check(
        shaders::PALETTE_COMP,
        "Channel",
        size_of::<GpuChannel>(),
        &[
            ("packed", offset_of!(GpuChannel, packed)),
            ("key_count", offset_of!(GpuChannel, key_count)),
            ("first_time", offset_of!(GpuChannel, first_time)),
            ("first_value", offset_of!(GpuChannel, first_value)),
        ],
    );
    check(
        shaders::PALETTE_COMP,
        "JointInfo",
        size_of::<GpuJoint>(),
        &[
            ("rest_rotation", offset_of!(GpuJoint, rest_rotation)),
            ("rest_translation", offset_of!(GpuJoint, rest_translation)),
            ("rest_scale", offset_of!(GpuJoint, rest_scale)),
            ("fixed_rows", offset_of!(GpuJoint, fixed_rows)),
            ("links", offset_of!(GpuJoint, links)),
        ],
    );
    check(
        shaders::CULL_COMP,
        "AnimationRecord",
        size_of::<AnimationRecord>(),
        &[
            ("first_cell", offset_of!(AnimationRecord, first_cell)),
            ("cell_count", offset_of!(AnimationRecord, cell_count)),
            ("cell_duration", offset_of!(AnimationRecord, cell_duration)),
            ("first_channel", offset_of!(AnimationRecord, first_channel)),
            ("first_weight_channel", offset_of!(AnimationRecord, first_weight_channel)),
            ("channel_table", offset_of!(AnimationRecord, channel_table)),
            ("unused", offset_of!(AnimationRecord, unused)),
        ],
    );
    check(
        shaders::PALETTE_COMP,
        "Instance",
        size_of::<InstanceData>(),
        &[
            ("position_yaw", offset_of!(InstanceData, position_yaw)),
            ("animations", offset_of!(InstanceData, animations)),
            ("time_a", offset_of!(InstanceData, time_a)),
            ("time_b", offset_of!(InstanceData, time_b)),
            ("blend", offset_of!(InstanceData, blend)),
            ("layer", offset_of!(InstanceData, layer)),
            ("time_layer", offset_of!(InstanceData, time_layer)),
            ("layer_weight", offset_of!(InstanceData, layer_weight)),
            ("skinning", offset_of!(InstanceData, skinning)),
            ("scale", offset_of!(InstanceData, scale)),
            ("tint", offset_of!(InstanceData, tint)),
            ("unused", offset_of!(InstanceData, unused)),
        ],
    );
    check(
        shaders::INSTANCES_COMP,
        "InstanceRecord",
        size_of::<InstanceRecord>(),
        &[
            ("position_yaw", offset_of!(InstanceRecord, position_yaw)),
            ("clips", offset_of!(InstanceRecord, clips)),
            ("layer", offset_of!(InstanceRecord, layer)),
            ("speed", offset_of!(InstanceRecord, speed)),
            ("layer_weight", offset_of!(InstanceRecord, layer_weight)),
            ("base_clip", offset_of!(InstanceRecord, base_clip)),
            ("base_from", offset_of!(InstanceRecord, base_from)),
            ("base_layer", offset_of!(InstanceRecord, base_layer)),
            ("fade_start", offset_of!(InstanceRecord, fade_start)),
            ("fade_duration", offset_of!(InstanceRecord, fade_duration)),
            ("skinning", offset_of!(InstanceRecord, skinning)),
            ("scale", offset_of!(InstanceRecord, scale)),
            ("tint", offset_of!(InstanceRecord, tint)),
        ],
    );
    check(
        shaders::INSTANCES_COMP,
        "ClipRecord",
        size_of::<ClipRecord>(),
        &[
            ("animation", offset_of!(ClipRecord, animation)),
            ("start", offset_of!(ClipRecord, start)),
            ("duration", offset_of!(ClipRecord, duration)),
            ("motion_first", offset_of!(ClipRecord, motion_first)),
            ("motion_count", offset_of!(ClipRecord, motion_count)),
            ("motion_step", offset_of!(ClipRecord, motion_step)),
            ("unused", offset_of!(ClipRecord, unused)),
        ],
    );
    check(
        shaders::INSTANCES_COMP,
        "Push",
        size_of::<InstancesPush>(),
        &[
            ("count", offset_of!(InstancesPush, count)),
            ("row_length", offset_of!(InstancesPush, row_length)),
            ("clock", offset_of!(InstancesPush, clock)),
            ("flags", offset_of!(InstancesPush, flags)),
            ("area", offset_of!(InstancesPush, area)),
        ],
    );
    check(
        shaders::PALETTE_COMP,
        "Push",
        size_of::<PalettePush>(),
        &[
            ("chunk_instances", offset_of!(PalettePush, chunk_instances)),
            ("write_joint_positions", offset_of!(PalettePush, write_joint_positions)),
            ("joint_stride", offset_of!(PalettePush, joint_stride)),
        ],
    );
    check(
        shaders::FORWARD_FRAG,
        "FrameUniforms",
        size_of::<FrameUniforms>(),
        &[
            ("view_projection", offset_of!(FrameUniforms, view_projection)),
            ("light_view_projection", offset_of!(FrameUniforms, light_view_projection)),
            ("camera_position", offset_of!(FrameUniforms, camera_position)),
            ("light_direction", offset_of!(FrameUniforms, light_direction)),
            ("light_color_ambient", offset_of!(FrameUniforms, light_color_ambient)),
            ("ground", offset_of!(FrameUniforms, ground)),
            ("shadow_params", offset_of!(FrameUniforms, shadow_params)),
            ("chunking", offset_of!(FrameUniforms, chunking)),
            ("camera_planes", offset_of!(FrameUniforms, camera_planes)),
            ("light_planes", offset_of!(FrameUniforms, light_planes)),
            ("previous_view_projection", offset_of!(FrameUniforms, previous_view_projection)),
            ("viewport", offset_of!(FrameUniforms, viewport)),
        ],
    );
    check(shaders::CULL_COMP, "Bounds", size_of::<GpuBounds>(), &[("min_corner", 0), ("max_corner", 16)]);
    check(
        shaders::CULL_COMP,
        "DrawCommand",
        size_of::<DrawCommand>(),
        &[("index_count", 0), ("instance_count", 4), ("first_index", 8), ("vertex_offset", 12), ("first_instance", 16)],
    );
    assert_eq!(size_of::<DrawCommand>(), size_of::<ash::vk::DrawIndexedIndirectCommand>());
    check(shaders::CULL_COMP, "MeshRange", size_of::<MeshRange>(), &[("index_count", 0), ("first_index", 4)]);
    check(
        shaders::CULL_COMP,
        "CullCounters",
        size_of::<CullCounters>(),
        &[
            ("palette_dispatch", offset_of!(CullCounters, palette_dispatch)),
            ("kept", offset_of!(CullCounters, kept)),
            ("skeleton_draw", offset_of!(CullCounters, skeleton_draw)),
            ("box_draw", offset_of!(CullCounters, box_draw)),
            ("camera_draws", offset_of!(CullCounters, camera_draws)),
            ("light_draws", offset_of!(CullCounters, light_draws)),
            ("level_counts", offset_of!(CullCounters, level_counts)),
            ("dispatches", offset_of!(CullCounters, dispatches)),
            ("tables", offset_of!(CullCounters, tables)),
            ("palettes", offset_of!(CullCounters, palettes)),
            ("pool_use", offset_of!(CullCounters, pool_use)),
            ("raster", offset_of!(CullCounters, raster)),
            ("raster_counts", offset_of!(CullCounters, raster_counts)),
        ],
    );
    check(
        shaders::CULL_COMP,
        "Push",
        size_of::<CullPush>(),
        &[
            ("instance_count", offset_of!(CullPush, instance_count)),
            ("chunk_instances", offset_of!(CullPush, chunk_instances)),
            ("pixels_at_unit", offset_of!(CullPush, pixels_at_unit)),
            ("light_error", offset_of!(CullPush, light_error)),
            ("tables_written", offset_of!(CullPush, tables_written)),
            ("palette_frame", offset_of!(CullPush, palette_frame)),
            ("far_ratio", offset_of!(CullPush, far_ratio)),
            ("hand_set", offset_of!(CullPush, hand_set)),
            ("motion_vectors", offset_of!(CullPush, motion_vectors)),
            ("run", offset_of!(CullPush, run)),
            ("vertex_room", offset_of!(CullPush, vertex_room)),
            ("index_room", offset_of!(CullPush, index_room)),
            ("culled_views", offset_of!(CullPush, culled_views)),
        ],
    );
    check(
        shaders::CULL_COMP,
        "ModelRecord",
        size_of::<ModelRecord>(),
        &[
            ("bind_min", offset_of!(ModelRecord, bind_min)),
            ("bind_max", offset_of!(ModelRecord, bind_max)),
            ("vertex_count", offset_of!(ModelRecord, vertex_count)),
            ("joint_count", offset_of!(ModelRecord, joint_count)),
            ("palette_stride", offset_of!(ModelRecord, palette_stride)),
            ("mesh_count", offset_of!(ModelRecord, mesh_count)),
            ("level_count", offset_of!(ModelRecord, level_count)),
            ("target_count", offset_of!(ModelRecord, target_count)),
            ("first_vertex", offset_of!(ModelRecord, first_vertex)),
            ("first_joint", offset_of!(ModelRecord, first_joint)),
            ("first_target", offset_of!(ModelRecord, first_target)),
            ("first_range", offset_of!(ModelRecord, first_range)),
            ("first_animation", offset_of!(ModelRecord, first_animation)),
            ("first_mesh", offset_of!(ModelRecord, first_mesh)),
            ("level_vertices", offset_of!(ModelRecord, level_vertices)),
            ("level_indices", offset_of!(ModelRecord, level_indices)),
            ("level_first_index", offset_of!(ModelRecord, level_first_index)),
            ("level_errors", offset_of!(ModelRecord, level_errors)),
        ],
    );
    check(
        shaders::TRIANGLES_COMP,
        "Push",
        size_of::<TrianglesPush>(),
        &[
            ("view_projection", offset_of!(TrianglesPush, view_projection)),
            ("viewport", offset_of!(TrianglesPush, viewport)),
            ("mesh_count", offset_of!(TrianglesPush, mesh_count)),
            ("vertex_count", offset_of!(TrianglesPush, vertex_count)),
            ("chunk_instances", offset_of!(TrianglesPush, chunk_instances)),
            ("facing_sign", offset_of!(TrianglesPush, facing_sign)),
            ("sample_step", offset_of!(TrianglesPush, sample_step)),
            ("snap", offset_of!(TrianglesPush, snap)),
            ("table", offset_of!(TrianglesPush, table)),
            ("raster_pixels", offset_of!(TrianglesPush, raster_pixels)),
            ("raster_room", offset_of!(TrianglesPush, raster_room)),
        ],
    );
    check(
        shaders::RASTER_COMP,
        "RasterTriangle",
        size_of::<RasterTriangle>(),
        &[("instance", 0), ("vertex_base", 4), ("first_index", 8), ("mesh", 12)],
    );
    check(
        shaders::RASTER_COMP,
        "Push",
        size_of::<RasterPush>(),
        &[
            ("view_projection", offset_of!(RasterPush, view_projection)),
            ("size", offset_of!(RasterPush, size)),
            ("facing_sign", offset_of!(RasterPush, facing_sign)),
            ("chunk_instances", offset_of!(RasterPush, chunk_instances)),
            ("room", offset_of!(RasterPush, room)),
            ("bias_constant", offset_of!(RasterPush, bias_constant)),
            ("bias_slope", offset_of!(RasterPush, bias_slope)),
            ("unused", offset_of!(RasterPush, unused)),
        ],
    );
    check(
        shaders::RASTER_RESOLVE_FRAG,
        "MeshMaterial",
        size_of::<MeshMaterial>(),
        &[("base_color", offset_of!(MeshMaterial, base_color)), ("material", offset_of!(MeshMaterial, material))],
    );
    // The skinned buffer is a uint array in the shader: 7 uints a vertex (SKINNED_VERTEX_UINTS).
    assert_eq!(size_of::<SkinnedVertex>(), 7 * 4);
    assert_eq!(offset_of!(SkinnedVertex, normal), 12);
    assert_eq!(offset_of!(SkinnedVertex, tangent), 20);
}

#[test]
fn frustum_planes_contain_what_the_projection_shows() {
    let view_projection = glam::camera::rh::proj::vulkan::perspective(1.0, 1.5, 0.1, 100.0)
        * glam::camera::rh::view::look_at_mat4(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y);
    let planes = frustum_planes(view_projection);
    let inside = |point: Vec3| planes.iter().all(|plane| Vec4::from_array(*plane).truncate().dot(point) + plane[3] >= 0.0);
    assert!(inside(Vec3::ZERO));
    assert!(!inside(Vec3::new(0.0, 0.0, 6.0)), "behind the camera");
    assert!(!inside(Vec3::new(50.0, 0.0, 0.0)), "far to the side");
    assert!(!inside(Vec3::new(0.0, 0.0, -200.0)), "beyond the far plane");
}

#[test]
fn palette_rows_round_trip() {
    let matrix = Mat4::from_rotation_translation(glam::Quat::from_rotation_x(0.7), Vec3::new(1.0, 2.0, 3.0));
    let rows = [matrix.row(0), matrix.row(1), matrix.row(2)].map(|row| row.to_array());
    assert!(PaletteMatrix { rows }.to_mat4().abs_diff_eq(matrix, 1e-6));
}
