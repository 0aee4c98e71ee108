//! Animation curves: samplers and channels read and checked, STEP, LINEAR and CUBICSPLINE.

use super::accessors::Data;
use super::hierarchy::Hierarchy;
use super::{error, located, FLOAT, QUANTIZED};
use crate::anim::{bracket, hermite, slerp_shortest, JointPose};
use crate::formats::FormatError;
use glam::{Quat, Vec3, Vec4};
use gltf::animation::{Interpolation as GltfInterpolation, Property as GltfProperty};

// Animation curves
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Interpolation {
    Step,
    Linear,
    CubicSpline,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Property {
    Translation,
    Rotation,
    Scale,
}

/// One sampler's keys. Values are xyz (translation, scale) or xyzw (rotation); CUBICSPLINE stores
/// three per key: in-tangent, value, out-tangent.
#[derive(Clone, Debug)]
pub(super) struct Curve {
    pub(super) interpolation: Interpolation,
    /// Non-empty and non-decreasing.
    pub(super) times: Vec<f32>,
    pub(super) values: Vec<Vec4>,
}

impl Curve {
    pub(super) fn entry(&self, slot: usize) -> Vec4 {
        self.values.get(slot).copied().unwrap_or(Vec4::ZERO)
    }

    pub(super) fn value(&self, key: usize) -> Vec4 {
        match self.interpolation {
            Interpolation::CubicSpline => self.entry(key * 3 + 1),
            _ => self.entry(key),
        }
    }

    /// The curve at `time`, clamped to its first and last keys. Rotations come back unnormalized
    /// from CUBICSPLINE; the caller normalizes.
    pub(super) fn sample(&self, time: f32, rotation: bool) -> Vec4 {
        // At the first key itself the first key is held (two keys may share that time), as the
        // clips and `locate_key` in palette.comp.glsl do.
        if self.times.first().is_some_and(|&first| time <= first) {
            return self.value(0);
        }
        let Some(at) = bracket(&self.times, |&key_time| key_time, time) else {
            return Vec4::ZERO;
        };
        let (key, next, s, span) = (at.key, at.next, at.fraction, at.span);
        if key == next {
            return self.value(key);
        }
        match self.interpolation {
            Interpolation::Step => self.value(key),
            Interpolation::Linear if rotation => {
                Vec4::from(slerp_shortest(Quat::from_vec4(self.value(key)), Quat::from_vec4(self.value(next)), s))
            }
            Interpolation::Linear => self.value(key).lerp(self.value(next), s),
            // The spec's cubic Hermite, tangents scaled by the key interval.
            Interpolation::CubicSpline => {
                hermite(self.value(key), self.entry(key * 3 + 2) * span, self.value(next), self.entry(next * 3) * span, s)
            }
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Channel {
    pub(super) node: usize,
    pub(super) property: Property,
    pub(super) curve: Curve,
}

impl Channel {
    pub(super) fn apply(&self, time: f32, pose: &mut JointPose) {
        let value = self.curve.sample(time, self.property == Property::Rotation);
        match self.property {
            Property::Translation => pose.translation = value.truncate(),
            Property::Scale => pose.scale = value.truncate(),
            Property::Rotation => pose.rotation = value.try_normalize().map_or(Quat::IDENTITY, Quat::from_vec4),
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Animation {
    pub(super) name: String,
    /// The animation's input and output accessors as f32, each accessor counted once.
    pub(super) file_key_bytes: usize,
    /// The last key time over all channels (0 when there are none).
    pub(super) duration: f32,
    pub(super) channels: Vec<Channel>,
    /// Morph-target weight channels, by node.
    pub(super) weights: Vec<WeightCurve>,
}

/// A node's `weights` channel: per key, one value per morph target of its mesh (in-tangent, value
/// and out-tangent blocks for CUBICSPLINE, as the spec lays them out).
#[derive(Clone, Debug)]
pub(super) struct WeightCurve {
    pub(super) node: usize,
    pub(super) interpolation: Interpolation,
    pub(super) times: Vec<f32>,
    pub(super) values: Vec<f32>,
}

pub(super) fn read_animations(
    data: &Data<'_>,
    hierarchy: &Hierarchy,
    warnings: &mut Vec<String>,
) -> Result<Vec<Animation>, FormatError> {
    let mut animated_matrices: Vec<usize> = Vec::new();
    let mut animations = Vec::with_capacity(data.document.animations().len());
    for animation in data.document.animations() {
        let animation_index = animation.index();
        let name = animation
            .name()
            .filter(|name| !name.is_empty())
            .map_or_else(|| format!("animation_{animation_index}"), str::to_string);
        let mut channels = Vec::new();
        let mut accessors_counted = std::collections::HashSet::new();
        let mut file_key_bytes = 0;
        let mut weights = Vec::new();
        // The spec allows one channel a target (node and path) in an animation; of several, the
        // last is kept (as a later track overrides an earlier one in the engines that accept it),
        // and only it is read, so a file that repeats one channel thousands of times costs one.
        let mut last_of_target = ahash::AHashMap::new();
        for channel in animation.channels() {
            last_of_target.insert((channel.target().node().index(), channel.target().property() as usize), channel.index());
        }
        let repeated = animation.channels().count() - last_of_target.len();
        if repeated > 0 {
            warnings.push(format!(
                "animation {animation_index} (\"{name}\"): {repeated} channels target a node and path that a later channel animates too (the glTF spec allows one); the last of each is kept"
            ));
        }
        for channel in animation.channels() {
            let target = (channel.target().node().index(), channel.target().property() as usize);
            if last_of_target.get(&target) != Some(&channel.index()) {
                continue;
            }
            let node = channel.target().node().index();
            let property = match channel.target().property() {
                GltfProperty::Translation => Property::Translation,
                GltfProperty::Rotation => Property::Rotation,
                GltfProperty::Scale => Property::Scale,
                GltfProperty::MorphTargetWeights => {
                    let sampler = channel.sampler();
                    let label = format!("animation {animation_index} (\"{name}\") sampler {}", sampler.index());
                    let curve = read_weights(data, &sampler, node, &label)?;
                    for (accessor, floats) in
                        [(sampler.input().index(), curve.times.len()), (sampler.output().index(), curve.values.len())]
                    {
                        if accessors_counted.insert(accessor) {
                            file_key_bytes += floats * 4;
                        }
                    }
                    weights.push(curve);
                    continue;
                }
            };
            let sampler = channel.sampler();
            let sampler_label = format!("animation {animation_index} (\"{name}\") sampler {}", sampler.index());
            let curve = read_curve(data, &sampler, property, &sampler_label)?;
            for (accessor, floats) in [
                (sampler.input().index(), curve.times.len()),
                (sampler.output().index(), curve.values.len() * if property == Property::Rotation { 4 } else { 3 }),
            ] {
                if accessors_counted.insert(accessor) {
                    file_key_bytes += floats * 4;
                }
            }
            if hierarchy.has_matrix.get(node).copied().unwrap_or(false) && !animated_matrices.contains(&node) {
                animated_matrices.push(node);
                warnings.push(format!(
                    "node {node} (\"{}\") is animated but given by a matrix: its matrix is taken apart into translation, rotation and scale",
                    hierarchy.name(node)
                ));
            }
            channels.push(Channel { node, property, curve });
        }
        let duration = channels
            .iter()
            .filter_map(|channel| channel.curve.times.last().copied())
            .chain(weights.iter().filter_map(|curve| curve.times.last().copied()))
            .fold(0.0f32, f32::max);
        animations.push(Animation { name, file_key_bytes, duration, channels, weights });
    }
    Ok(animations)
}

/// A `weights` sampler: its times, and its output as plain floats (the target count per key is
/// known once the node's mesh is; `mod.rs` checks it).
fn read_weights(
    data: &Data<'_>,
    sampler: &gltf::animation::Sampler<'_>,
    node: usize,
    label: &str,
) -> Result<WeightCurve, FormatError> {
    let interpolation = match sampler.interpolation() {
        GltfInterpolation::Step => Interpolation::Step,
        GltfInterpolation::Linear => Interpolation::Linear,
        GltfInterpolation::CubicSpline => Interpolation::CubicSpline,
    };
    let times = read_times(data, &sampler.input(), &format!("input of {label}"))?;
    let values =
        data.floats::<1>(&sampler.output(), &format!("output of {label}"), QUANTIZED)?.into_iter().map(|[value]| value).collect();
    Ok(WeightCurve { node, interpolation, times, values })
}

/// An input accessor's key times, which must not decrease.
fn read_times(data: &Data<'_>, input: &gltf::Accessor<'_>, input_what: &str) -> Result<Vec<f32>, FormatError> {
    let times: Vec<f32> = data.floats::<1>(input, input_what, FLOAT)?.into_iter().map(|[time]| time).collect();
    for (key, pair) in times.windows(2).enumerate() {
        if let [before, after] = pair {
            if after < before {
                return Err(located(
                    data.path,
                    data.element_offset(input, key + 1),
                    format!(
                        "accessor {} ({input_what}): expected increasing key times, found {after} after {before} at key {}",
                        input.index(),
                        key + 1
                    ),
                ));
            }
        }
    }
    Ok(times)
}

pub(super) fn read_curve(
    data: &Data<'_>,
    sampler: &gltf::animation::Sampler<'_>,
    property: Property,
    label: &str,
) -> Result<Curve, FormatError> {
    let path = data.path;
    let interpolation = match sampler.interpolation() {
        GltfInterpolation::Step => Interpolation::Step,
        GltfInterpolation::Linear => Interpolation::Linear,
        GltfInterpolation::CubicSpline => Interpolation::CubicSpline,
    };
    let (input, output) = (sampler.input(), sampler.output());
    let times = read_times(data, &input, &format!("input of {label}"))?;
    let output_what = format!("output of {label}");
    let mut values: Vec<Vec4> = match property {
        Property::Rotation => data.floats::<4>(&output, &output_what, QUANTIZED)?.into_iter().map(Vec4::from_array).collect(),
        Property::Translation | Property::Scale => data
            .floats::<3>(&output, &output_what, QUANTIZED)?
            .into_iter()
            .map(|value| Vec3::from_array(value).extend(0.0))
            .collect(),
    };
    let per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 };
    let needed = times.len() * per_key;
    if values.len() < needed {
        return Err(error(
            path,
            format!(
                "accessor {} ({output_what}): expected {needed} values for {} keys, found {}",
                output.index(),
                times.len(),
                values.len()
            ),
        ));
    }
    values.truncate(needed);
    // Slerp assumes unit keys; CUBICSPLINE tangents are not rotations, and its result is normalized.
    if property == Property::Rotation && interpolation != Interpolation::CubicSpline {
        for (key, value) in values.iter_mut().enumerate() {
            *value = value.try_normalize().ok_or_else(|| {
                located(
                    path,
                    data.element_offset(&output, key),
                    format!("accessor {} ({output_what}): key {key}: expected a unit quaternion, found zero", output.index()),
                )
            })?;
        }
    }
    Ok(Curve { interpolation, times, values })
}

// ---------------------------------------------------------------------------------------------
