//! Animation curves: samplers and channels read and checked, STEP, LINEAR and CUBICSPLINE.

use super::*;

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
}

pub(super) fn read_animations(
    data: &Data<'_>,
    hierarchy: &Hierarchy,
    warnings: &mut Vec<String>,
) -> Result<Vec<Animation>, FormatError> {
    let (root, path) = (data.root, data.path);
    let node_count = root.nodes.len();
    let mut animated_matrices: Vec<usize> = Vec::new();
    let mut animations = Vec::with_capacity(root.animations.len());
    for (animation_index, animation) in root.animations.iter().enumerate() {
        let name =
            animation.name.clone().filter(|name| !name.is_empty()).unwrap_or_else(|| format!("animation_{animation_index}"));
        let mut channels = Vec::with_capacity(animation.channels.len());
        let mut accessors_counted: Vec<usize> = Vec::new();
        let mut file_key_bytes = 0;
        let mut skipped_weights = false;
        for (channel_index, channel) in animation.channels.iter().enumerate() {
            let label = format!("animation {animation_index} (\"{name}\") channel {channel_index}");
            let node = channel.target.node.value();
            if node >= node_count {
                return Err(error(
                    path,
                    format!("{label}: expected a target node below {node_count} (the node count), found {node}"),
                ));
            }
            let property = match channel.target.path {
                Checked::Valid(JsonProperty::Translation) => Property::Translation,
                Checked::Valid(JsonProperty::Rotation) => Property::Rotation,
                Checked::Valid(JsonProperty::Scale) => Property::Scale,
                Checked::Valid(JsonProperty::MorphTargetWeights) => {
                    skipped_weights = true;
                    continue;
                }
                Checked::Invalid => {
                    warnings.push(format!("{label}: skipped, its target path is not translation, rotation, scale or weights"));
                    continue;
                }
            };
            let sampler_index = channel.sampler.value();
            let Some(sampler) = animation.samplers.get(sampler_index) else {
                return Err(error(
                    path,
                    format!("{label}: expected sampler {sampler_index} to exist, found {} samplers", animation.samplers.len()),
                ));
            };
            let sampler_label = format!("animation {animation_index} (\"{name}\") sampler {sampler_index}");
            let curve = read_curve(data, sampler, property, &sampler_label)?;
            for (accessor, floats) in [
                (sampler.input.value(), curve.times.len()),
                (sampler.output.value(), curve.values.len() * if property == Property::Rotation { 4 } else { 3 }),
            ] {
                if !accessors_counted.contains(&accessor) {
                    accessors_counted.push(accessor);
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
        if skipped_weights {
            warnings.push(format!(
                "animation {animation_index} (\"{name}\"): morph-target weight channels skipped (vkskin does not morph)"
            ));
        }
        let duration = channels.iter().filter_map(|channel| channel.curve.times.last().copied()).fold(0.0f32, f32::max);
        animations.push(Animation { name, file_key_bytes, duration, channels });
    }
    Ok(animations)
}

pub(super) fn read_curve(
    data: &Data<'_>,
    sampler: &gltf::json::animation::Sampler,
    property: Property,
    label: &str,
) -> Result<Curve, FormatError> {
    let path = data.path;
    let interpolation = match sampler.interpolation {
        Checked::Valid(JsonInterpolation::Step) => Interpolation::Step,
        Checked::Valid(JsonInterpolation::Linear) => Interpolation::Linear,
        Checked::Valid(JsonInterpolation::CubicSpline) => Interpolation::CubicSpline,
        Checked::Invalid => {
            return Err(error(path, format!("{label}: expected interpolation LINEAR, STEP or CUBICSPLINE, found another")))
        }
    };
    let input = sampler.input.value();
    let input_what = format!("input of {label}");
    let times: Vec<f32> = data.floats::<1>(input, &input_what, FLOAT)?.into_iter().map(|[time]| time).collect();
    if times.is_empty() {
        return Err(error(path, format!("accessor {input} ({input_what}): expected at least one key time, found none")));
    }
    for (key, pair) in times.windows(2).enumerate() {
        if let [before, after] = pair {
            if after < before {
                return Err(located(
                    path,
                    data.element_offset(input, key + 1),
                    format!(
                        "accessor {input} ({input_what}): expected increasing key times, found {after} after {before} at key {}",
                        key + 1
                    ),
                ));
            }
        }
    }
    let output = sampler.output.value();
    let output_what = format!("output of {label}");
    let mut values: Vec<Vec4> = match property {
        Property::Rotation => data.floats::<4>(output, &output_what, QUANTIZED)?.into_iter().map(Vec4::from_array).collect(),
        Property::Translation | Property::Scale => data
            .floats::<3>(output, &output_what, QUANTIZED)?
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
                "accessor {output} ({output_what}): expected {needed} values for {} keys, found {}",
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
                    data.element_offset(output, key),
                    format!("accessor {output} ({output_what}): key {key}: expected a unit quaternion, found zero"),
                )
            })?;
        }
    }
    Ok(Curve { interpolation, times, values })
}

// ---------------------------------------------------------------------------------------------
