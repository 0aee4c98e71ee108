//! A model's records as the passes read them, built on the CPU before the upload: its vertices,
//! influences, joints, levels, culling cells and morph targets, each in its GPU layout.

use super::keys::AnimationData;
use super::{palette_stride, GpuLevel, GpuPart};
use crate::anim::Aabb;
use crate::model::Model;
use crate::render::shader_types::{
    AnimationRecord, GpuBounds, GpuChannel, GpuInfluence, GpuJoint, GpuMorphDelta, GpuMorphTarget, MeshRange, ModelRecord,
    SourceVertex, Surface, NO_PARENT,
};
use glam::Mat4;

/// The model's record: its bounds and reaches, sizes and `levels`, as the passes read them.
pub(super) fn model_record(model: &Model, levels: &[GpuLevel], groups: usize) -> ModelRecord {
    let bind = model.rest_bounds();
    let per_level = |value: &dyn Fn(&GpuLevel) -> u32| std::array::from_fn(|level| levels.get(level).map_or(0, value));
    ModelRecord {
        bind_min: bind.min.extend(model.bounds.blend_reach).to_array(),
        bind_max: bind.max.extend(model.bounds.morph_reach).to_array(),
        vertex_count: model.vertices.len() as u32,
        joint_count: model.skeleton.len().max(1) as u32,
        palette_stride: palette_stride(model),
        mesh_count: groups as u32,
        level_count: levels.len() as u32,
        target_count: model.morph_targets.len() as u32,
        first_vertex: 0,
        first_joint: 0,
        first_target: 0,
        first_range: 0,
        first_animation: 0,
        first_mesh: 0,
        level_vertices: per_level(&|level| level.vertex_count),
        level_indices: per_level(&|level| level.index_count),
        level_first_index: per_level(&|level| level.first_index),
        level_errors: std::array::from_fn(|level| levels.get(level).map_or(0.0, |level| level.error)),
    }
}

/// What [`GpuModel::upload`] puts in buffers, one record kind each, as the shaders read them: one
/// model's ([`Records::of`]), or several back to back ([`Records::append`]).
#[derive(Default)]
pub(super) struct Records {
    pub(super) sources: Vec<SourceVertex>,
    /// At least one a model (a storage buffer may not be empty).
    pub(super) influences: Vec<GpuInfluence>,
    /// Three floats an influence (as many as `influences` where a model has offsets); at least one
    /// offset.
    pub(super) offsets: Vec<[f32; 3]>,
    pub(super) surfaces: Vec<Surface>,
    /// Every level's indices, the full mesh's first.
    pub(super) indices: Vec<u32>,
    pub(super) mesh_ranges: Vec<MeshRange>,
    pub(super) levels: Vec<GpuLevel>,
    /// The clips' channels, key times and key values (`AnimationData`).
    pub(super) channels: Vec<GpuChannel>,
    pub(super) times: Vec<f32>,
    pub(super) values: Vec<u32>,
    pub(super) joints: Vec<GpuJoint>,
    /// At least one joint: a model without a skeleton is skinned by one identity joint.
    pub(super) inverse_binds: Vec<[f32; 16]>,
    /// Each joint's parent (u32::MAX for a root), for the skeleton debug view.
    pub(super) parents: Vec<u32>,
    pub(super) cells: Vec<GpuBounds>,
    pub(super) animations: Vec<AnimationRecord>,
    pub(super) targets: Vec<GpuMorphTarget>,
    pub(super) deltas: Vec<GpuMorphDelta>,
    /// One model's record (its first_* fields 0: [`Records::append`] sets them).
    pub(super) model: ModelRecord,
    /// One model's draw groups' materials, the model's own numbering ([`draw_groups`]).
    pub(super) group_materials: Vec<usize>,
}

impl Records {
    pub(super) fn of(model: &Model) -> Records {
        let joint_count = model.skeleton.len().max(1);
        let mut influences: Vec<GpuInfluence> = model.influences.iter().map(GpuInfluence::from).collect();
        if influences.is_empty() {
            influences.push(GpuInfluence { joint: 0, weight: 0.0 });
        }
        let mut offsets: Vec<[f32; 3]> = model.influence_offsets.iter().map(|offset| offset.to_array()).collect();
        if offsets.is_empty() {
            offsets.push([0.0; 3]);
        }
        let mut inverse_binds: Vec<[f32; 16]> =
            model.skeleton.joints.iter().map(|joint| joint.inverse_bind.to_cols_array()).collect();
        inverse_binds.resize(joint_count, Mat4::IDENTITY.to_cols_array());
        let mut parents: Vec<u32> =
            model.skeleton.joints.iter().map(|joint| joint.parent.map_or(u32::MAX, |parent| parent as u32)).collect();
        parents.resize(joint_count, u32::MAX);
        let keys = AnimationData::new(model);
        let (cells, animations) = cell_records(model, &keys);
        let groups = draw_groups(model);
        let (indices, mesh_ranges, levels) = level_records(model, &groups);
        let (targets, deltas) = morph_records(model);
        let record = model_record(model, &levels, groups.len());
        Records {
            sources: model.vertices.iter().map(|vertex| SourceVertex::of(model, vertex)).collect(),
            influences,
            offsets,
            surfaces: model.vertices.iter().map(Surface::from).collect(),
            indices,
            mesh_ranges,
            levels,
            channels: keys.channels,
            times: keys.times,
            values: keys.values,
            joints: joint_infos(model),
            inverse_binds,
            parents,
            cells,
            animations,
            targets,
            deltas,
            model: record,
            group_materials: groups.iter().map(|group| model.meshes[group[0]].material).collect(),
        }
    }

    /// Appends one model's records after those already here, their references into the shared
    /// buffers made absolute (a vertex's first influence, a level's and a mesh's first index, a
    /// channel's first key time and value, an animation's first cell and channels, a target's first
    /// delta); what stays local to the model is numbered from its record's first_* fields. Returns
    /// the model's part (its first mesh and its materials' numbering among all models' are the
    /// caller's).
    pub(super) fn append(&mut self, mut model: Records) -> GpuPart {
        let count = |length: usize| length as u32;
        let first_influence = count(self.influences.len());
        let first_index = count(self.indices.len());
        let (first_time, first_value) = (count(self.times.len()), count(self.values.len()));
        let (first_cell, first_channel, first_delta) =
            (count(self.cells.len()), count(self.channels.len()), count(self.deltas.len()));
        let record = &mut model.model;
        record.first_vertex = count(self.sources.len());
        record.first_joint = count(self.joints.len());
        record.first_target = count(self.targets.len());
        record.first_range = count(self.mesh_ranges.len());
        record.first_animation = count(self.animations.len());
        for level in record.level_first_index.iter_mut().take(model.levels.len()) {
            *level += first_index;
        }
        for source in &mut model.sources {
            source.first_influence += first_influence;
        }
        for range in &mut model.mesh_ranges {
            range.first_index += first_index;
        }
        for level in &mut model.levels {
            level.first_index += first_index;
        }
        for channel in model.channels.iter_mut().filter(|channel| channel.key_count != 0) {
            channel.first_time += first_time;
            channel.first_value += first_value;
        }
        for animation in &mut model.animations {
            animation.first_cell += first_cell;
            animation.first_channel += first_channel;
            animation.first_weight_channel += first_channel;
            // The table's place among the key words; its width flag kept.
            animation.channel_table += first_value;
        }
        for target in &mut model.targets {
            target.first_delta += first_delta;
        }
        let ranges = model.mesh_ranges.iter().map(|range| (range.first_index, range.index_count)).collect();
        // Offsets are read at their influence's index: a model's start where its influences do.
        self.offsets.resize(first_influence as usize, [0.0; 3]);
        self.sources.append(&mut model.sources);
        self.influences.append(&mut model.influences);
        self.offsets.append(&mut model.offsets);
        self.surfaces.append(&mut model.surfaces);
        self.indices.append(&mut model.indices);
        self.mesh_ranges.append(&mut model.mesh_ranges);
        self.channels.append(&mut model.channels);
        self.times.append(&mut model.times);
        self.values.append(&mut model.values);
        self.joints.append(&mut model.joints);
        self.inverse_binds.append(&mut model.inverse_binds);
        self.parents.append(&mut model.parents);
        self.cells.append(&mut model.cells);
        self.animations.append(&mut model.animations);
        self.targets.append(&mut model.targets);
        self.deltas.append(&mut model.deltas);
        GpuPart { record: model.model, ranges, levels: model.levels, mesh_materials: model.group_materials }
    }

    /// Their bytes, buffer by buffer.
    pub(super) fn bytes(&self) -> u64 {
        use std::mem::size_of_val;
        (size_of_val(self.sources.as_slice())
            + size_of_val(self.influences.as_slice())
            + size_of_val(self.offsets.as_slice())
            + size_of_val(self.surfaces.as_slice())
            + size_of_val(self.indices.as_slice())
            + size_of_val(self.mesh_ranges.as_slice())
            + size_of_val(self.channels.as_slice())
            + size_of_val(self.times.as_slice())
            + size_of_val(self.values.as_slice())
            + size_of_val(self.joints.as_slice())
            + size_of_val(self.inverse_binds.as_slice())
            + size_of_val(self.parents.as_slice())
            + size_of_val(self.cells.as_slice())
            + size_of_val(self.animations.as_slice())
            + size_of_val(self.targets.as_slice())
            + size_of_val(self.deltas.as_slice())
            + size_of_val(&self.model)) as u64
    }
}

/// The culling cells of every animation, back to back, and each animation's record: where its
/// cells start (at least one cell each: the rest bounds where an animation has none; at least one
/// record in all) and where its channels start in `keys`.
pub(super) fn cell_records(model: &Model, keys: &AnimationData) -> (Vec<GpuBounds>, Vec<AnimationRecord>) {
    let bind_bounds = model.rest_bounds();
    let to_gpu = |bounds: Aabb| {
        let bounds = if bounds.is_empty() { bind_bounds } else { bounds };
        GpuBounds { min_corner: bounds.min.extend(0.0).to_array(), max_corner: bounds.max.extend(0.0).to_array() }
    };
    let mut cells: Vec<GpuBounds> = Vec::new();
    let mut animations = Vec::new();
    for (index, bounds) in model.bounds.animations.iter().enumerate() {
        let (first_channel, first_weight_channel, channel_table) = keys.channel_starts(index);
        animations.push(AnimationRecord {
            first_cell: cells.len() as u32,
            cell_count: bounds.cells.len().max(1) as u32,
            cell_duration: bounds.cell_duration,
            first_channel,
            first_weight_channel,
            channel_table,
            unused: [0; 2],
        });
        cells.extend(bounds.cells.iter().map(|&cell| to_gpu(cell)));
        if bounds.cells.is_empty() {
            cells.push(to_gpu(bind_bounds));
        }
    }
    if cells.is_empty() {
        cells.push(to_gpu(bind_bounds));
    }
    if animations.is_empty() {
        animations.push(AnimationRecord { first_cell: 0, cell_count: 1, cell_duration: 0.0, ..bytemuck::Zeroable::zeroed() });
    }
    (cells, animations)
}

/// The model's meshes in draw groups: its meshes of one material together (in the order the
/// materials first appear, each material's meshes in the file's order), drawn by one command an
/// instance. Exporters split a character into many meshes of few materials (the Quaternius robot:
/// 19 meshes, 3 materials): a draw a mesh would cost the CPU a command each, per pass, per model,
/// and the GPU as many indirect commands an instance.
pub(super) fn draw_groups(model: &Model) -> Vec<Vec<usize>> {
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (index, mesh) in model.meshes.iter().enumerate() {
        match groups.iter_mut().find(|(material, _)| *material == mesh.material) {
            Some((_, meshes)) => meshes.push(index),
            None => groups.push((mesh.material, vec![index])),
        }
    }
    groups.into_iter().map(|(_, meshes)| meshes).collect()
}

/// Every level's indices back to back (level 0, the model's, first), each draw group's meshes'
/// indices together, each group's range in them level by level (at least one range), and each
/// level's record.
pub(super) fn level_records(model: &Model, groups: &[Vec<usize>]) -> (Vec<u32>, Vec<MeshRange>, Vec<GpuLevel>) {
    let mut all_indices = Vec::with_capacity(model.indices.len());
    let mut mesh_ranges = Vec::new();
    // A level's indices, group by group: `range(m)` is mesh m's (first, count) in `indices`.
    let mut gather = |indices: &[u32], range: &dyn Fn(usize) -> (u32, u32), all: &mut Vec<u32>| {
        if groups.is_empty() {
            all.extend_from_slice(indices);
        }
        for group in groups {
            let start = all.len() as u32;
            for &mesh in group {
                let (first, count) = range(mesh);
                all.extend_from_slice(indices.get(first as usize..(first + count) as usize).unwrap_or_default());
            }
            mesh_ranges.push(MeshRange { index_count: all.len() as u32 - start, first_index: start });
        }
    };
    // Level 0 is the model; each coarser level's indices and group ranges follow.
    gather(&model.indices, &|mesh| (model.meshes[mesh].first_index, model.meshes[mesh].index_count), &mut all_indices);
    let mut levels = vec![GpuLevel {
        vertex_count: model.vertices.len() as u32,
        first_index: 0,
        index_count: all_indices.len() as u32,
        error: 0.0,
    }];
    for level in &model.levels {
        let first_index = all_indices.len() as u32;
        gather(&level.indices, &|mesh| level.ranges.get(mesh).copied().unwrap_or((0, 0)), &mut all_indices);
        levels.push(GpuLevel {
            vertex_count: level.vertex_count,
            first_index,
            index_count: all_indices.len() as u32 - first_index,
            error: level.error,
        });
    }
    if mesh_ranges.is_empty() {
        mesh_ranges.push(MeshRange { index_count: 0, first_index: 0 });
    }
    (all_indices, mesh_ranges, levels)
}

/// The morph targets as the skin pass reads them: a record per target, and every target's deltas
/// back to back, each target's ascending by vertex (as `MorphTarget` keeps them). One placeholder
/// each for a model without targets: storage buffers may not be empty.
pub(super) fn morph_records(model: &Model) -> (Vec<GpuMorphTarget>, Vec<GpuMorphDelta>) {
    let mut targets = Vec::with_capacity(model.morph_targets.len().max(1));
    let mut deltas = Vec::new();
    for target in &model.morph_targets {
        targets.push(GpuMorphTarget {
            first_delta: deltas.len() as u32,
            delta_count: target.vertices.len() as u32,
            first_vertex: target.vertices.first().copied().unwrap_or(1),
            last_vertex: target.vertices.last().copied().unwrap_or(0),
            default_weight: target.default_weight,
            unused: [0; 3],
        });
        deltas.extend(target.vertices.iter().zip(target.position_deltas.iter().zip(&target.normal_deltas)).map(
            |(&vertex, (position, normal))| GpuMorphDelta {
                position: position.to_array(),
                vertex,
                normal: normal.to_array(),
                unused: 0,
            },
        ));
    }
    if targets.is_empty() {
        targets.push(GpuMorphTarget { first_vertex: 1, ..GpuMorphTarget::default() });
    }
    if deltas.is_empty() {
        deltas.push(GpuMorphDelta::default());
    }
    (targets, deltas)
}

/// Each joint's rest pose, `pre`, parent and subtree span; one identity joint for a model without
/// a skeleton.
pub(super) fn joint_infos(model: &Model) -> Vec<GpuJoint> {
    let spans = model.skeleton.subtree_spans();
    let mut joints: Vec<GpuJoint> = model
        .skeleton
        .joints
        .iter()
        .zip(&spans)
        .map(|(joint, &(enter, exit))| {
            // The palette pass composes a joint onto its parent's palette entry (model pose ×
            // inverse bind): the parent's bind matrix undoes the inverse bind. In f64, so the
            // round trip adds no error of its own beyond the final rounding.
            let fixed = match joint.parent.and_then(|parent| model.skeleton.joints.get(parent)) {
                Some(parent) => (parent.inverse_bind.as_dmat4().inverse() * joint.pre.as_dmat4()).as_mat4(),
                None => joint.pre,
            };
            let rows = fixed.transpose();
            GpuJoint {
                rest_rotation: joint.rest.rotation.to_array(),
                rest_translation: joint.rest.translation.extend(0.0).to_array(),
                rest_scale: joint.rest.scale.extend(0.0).to_array(),
                fixed_rows: [rows.x_axis.to_array(), rows.y_axis.to_array(), rows.z_axis.to_array()],
                links: [joint.parent.map_or(NO_PARENT, |parent| parent as u32), enter, exit, u32::from(fixed != Mat4::IDENTITY)],
            }
        })
        .collect();
    if joints.is_empty() {
        joints.push(GpuJoint {
            rest_rotation: [0.0, 0.0, 0.0, 1.0],
            rest_translation: [0.0; 4],
            rest_scale: [1.0, 1.0, 1.0, 0.0],
            fixed_rows: [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]],
            links: [NO_PARENT, 0, 1, 0],
        });
    }
    joints
}
