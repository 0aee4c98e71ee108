//! How far a carried clip is from its source, as a person sees it: at each sampled time, the
//! angle between each bone (a joint to a child, in model space) of the source playing its clip and
//! the same bone of the target playing the carried clip, the body's facing taken out (the turn
//! about the vertical that best lines the two skeletons up at that time).

use glam::{Mat4, Vec3};

use super::names::match_joints;
use crate::anim::{posed_models, Animation, Skeleton};

/// Bone angles over every sampled time, in degrees.
#[derive(Clone, Debug, PartialEq)]
pub struct BoneAngles {
    /// Bones compared: pairs (joint, child) matched by name on both sides.
    pub bones: usize,
    pub median: f32,
    pub worst: f32,
    /// The bone of the worst angle, as `joint → child` with the target's names.
    pub worst_bone: String,
    /// The same measures between the two rest poses (no clip): what the rigs differ by.
    pub rest_median: f32,
    pub rest_worst: f32,
}

/// The angles (see the module's text) between `source` playing `source_clip` and `target`
/// playing `target_clip` at `times` (animation times, the same on both). None where no bone is
/// matched on both sides.
pub fn bone_angles(
    source: &Skeleton,
    source_clip: &Animation,
    target: &Skeleton,
    target_clip: &Animation,
    times: &[f32],
) -> Option<BoneAngles> {
    let map = match_joints(source, target);
    let mut driver = vec![None; target.len()];
    for (source_joint, targets) in map.iter().enumerate() {
        for &target_joint in targets {
            driver[target_joint] = Some(source_joint);
        }
    }
    // A bone leads to a child the source clip moves (not a mesh node hanging from a bone, keyed
    // still), and has a length on both sides at rest.
    let mut keyed = vec![false; source.len()];
    for channel in &source_clip.channels {
        if let Some(keyed) = keyed.get_mut(channel.joint) {
            *keyed |= super::varies(channel);
        }
    }
    if !keyed.contains(&true) {
        // A held pose (a "TPose" clip): every keyed joint.
        for channel in &source_clip.channels {
            if let Some(keyed) = keyed.get_mut(channel.joint) {
                *keyed = true;
            }
        }
    }
    let (source_rest, target_rest) = (posed_models(source, None, 0.0), posed_models(target, None, 0.0));
    let long =
        |models: &[Mat4], from: usize, to: usize| models[to].w_axis.truncate().distance(models[from].w_axis.truncate()) > 1e-6;
    // (target joint, target child, source joint, source child)
    let bones: Vec<(usize, usize, usize, usize)> = target
        .joints
        .iter()
        .enumerate()
        .filter_map(|(child, joint)| {
            let parent = joint.parent.filter(|&parent| parent < child)?;
            let (source_joint, source_child) = (driver[parent]?, driver[child].filter(|&child| keyed[child])?);
            let lengths = long(&source_rest, source_joint, source_child) && long(&target_rest, parent, child);
            lengths.then_some((parent, child, source_joint, source_child))
        })
        .collect();
    if bones.is_empty() {
        return None;
    }
    let angles_at = |source_models: &[Mat4], target_models: &[Mat4]| -> Vec<f32> {
        let direction = |models: &[Mat4], from: usize, to: usize| {
            (models[to].w_axis.truncate() - models[from].w_axis.truncate()).normalize_or_zero()
        };
        let pairs: Vec<(Vec3, Vec3)> = bones
            .iter()
            .map(|&(joint, child, source_joint, source_child)| {
                (direction(source_models, source_joint, source_child), direction(target_models, joint, child))
            })
            .collect();
        let facing = facing_turn(&pairs);
        pairs.iter().map(|(from, to)| angle_degrees(*from, facing * *to)).collect()
    };
    let rest = angles_at(&source_rest, &target_rest);
    let mut all: Vec<(f32, usize)> = Vec::new();
    for &time in times {
        let angles = angles_at(&posed_models(source, Some(source_clip), time), &posed_models(target, Some(target_clip), time));
        all.extend(angles.into_iter().enumerate().map(|(bone, angle)| (angle, bone)));
    }
    let (median, worst, worst_index) = summary(&mut all)?;
    let mut rest: Vec<(f32, usize)> = rest.into_iter().enumerate().map(|(bone, angle)| (angle, bone)).collect();
    let (rest_median, rest_worst, _) = summary(&mut rest)?;
    let (joint, child, _, _) = bones[worst_index];
    Some(BoneAngles {
        bones: bones.len(),
        median,
        worst,
        worst_bone: format!("{} → {}", target.joints[joint].name, target.joints[child].name),
        rest_median,
        rest_worst,
    })
}

/// Median, worst and the worst's bone of (angle, bone) samples.
fn summary(samples: &mut [(f32, usize)]) -> Option<(f32, f32, usize)> {
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = samples.get(samples.len() / 2)?.0;
    let &(worst, bone) = samples.last()?;
    Some((median, worst, bone))
}

/// The turn about +Y that best lays each second direction on its first (least squares).
fn facing_turn(pairs: &[(Vec3, Vec3)]) -> glam::Quat {
    // Turning (x, z) by θ about Y: x' = x cos θ + z sin θ, z' = −x sin θ + z cos θ; the sum of
    // dot products is A cos θ + B sin θ, largest at θ = atan2(B, A).
    let (mut a, mut b) = (0.0, 0.0);
    for (to, from) in pairs {
        a += to.x * from.x + to.z * from.z;
        b += to.x * from.z - to.z * from.x;
    }
    let angle = f32::atan2(b, a);
    glam::Quat::from_rotation_y(angle)
}

/// The angle between two unit vectors, in degrees, accurate for small ones (an arc cosine of
/// their dot product is not, in f32).
fn angle_degrees(a: Vec3, b: Vec3) -> f32 {
    (2.0 * f32::atan2((a - b).length(), (a + b).length())).to_degrees()
}
