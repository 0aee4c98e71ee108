//! How far a clip carries the figure (issue 57, root motion): the joint whose horizontal motion is
//! the figure's (its root, or the hips where the root stays put), and how far, how fast and how
//! much it turns over the clip. `inspect` prints it; playing a travelling clip in place and moving
//! the instance by it is root motion's next step.

use glam::{Mat4, Vec3};

use super::Model;
use crate::anim::{local_to_model, JointPose, Property};

/// Samples over a clip for its travel.
const SAMPLES: usize = 64;

/// How far a clip carries the figure, model units on the ground plane (x, z; y is up).
#[derive(Clone, Debug, PartialEq)]
pub struct Travel {
    /// The joint that carries the figure: its root, or the hips where the root stays put.
    pub joint: usize,
    /// From the clip's start to its end, on the ground.
    pub distance: f32,
    /// Along its path, on the ground.
    pub path: f32,
    /// `distance` over the clip's duration, units a second.
    pub speed: f32,
    /// Its heading's change from start to end, degrees (counter-clockwise seen from above).
    pub turn: f32,
}

impl Model {
    /// Animation `index`'s travel; None for one without channels or a model without joints.
    pub fn clip_travel(&self, index: usize) -> Option<Travel> {
        let animation = self.animations.get(index)?;
        if animation.channels.is_empty() || self.skeleton.is_empty() {
            return None;
        }
        let joints = self.skeleton.len();
        let (mut poses, mut models) = (vec![JointPose::IDENTITY; joints], vec![Mat4::IDENTITY; joints]);
        let duration = animation.duration.max(0.0);
        let placements: Vec<Vec<Mat4>> = (0..=SAMPLES)
            .map(|sample| {
                animation.sample(&self.skeleton, duration * sample as f32 / SAMPLES as f32, &mut poses);
                local_to_model(&self.skeleton, &poses, Mat4::IDENTITY, &mut models);
                models.clone()
            })
            .collect();
        let path_of = |joint: usize| {
            let ground = |at: &Vec<Mat4>| at[joint].w_axis.truncate() * Vec3::new(1.0, 0.0, 1.0);
            placements.windows(2).map(|pair| ground(&pair[0]).distance(ground(&pair[1]))).sum::<f32>()
        };
        // The root, unless it stays put (under 1 % of the figure across the clip): then the
        // nearest joint below it with translation keys, the hips of most rigs.
        let root = self.skeleton.joints.iter().position(|joint| joint.parent.is_none()).unwrap_or(0);
        let translated = |joint: usize| {
            animation.channels.iter().any(|channel| channel.joint == joint && channel.property == Property::Translation)
        };
        let still = path_of(root) < 0.01 * self.extent();
        let joint = match still {
            // Joints come parents first: the first translated one is the nearest the root.
            true => (0..joints).find(|&joint| self.skeleton.joints[joint].parent.is_some() && translated(joint)).unwrap_or(root),
            false => root,
        };
        let ground = |at: &Vec<Mat4>| at[joint].w_axis.truncate() * Vec3::new(1.0, 0.0, 1.0);
        let (first, last) = (placements.first()?, placements.last()?);
        let distance = ground(first).distance(ground(last));
        // The heading: where the joint's forward (+z) points on the ground, unwrapped sample to sample.
        let heading = |at: &Vec<Mat4>| {
            let forward = at[joint].transform_vector3(Vec3::Z);
            forward.x.atan2(forward.z)
        };
        let turn: f32 = placements
            .windows(2)
            .map(|pair| {
                let step = heading(&pair[1]) - heading(&pair[0]);
                (step + std::f32::consts::PI).rem_euclid(std::f32::consts::TAU) - std::f32::consts::PI
            })
            .sum();
        let speed = if duration > 0.0 { distance / duration } else { 0.0 };
        Some(Travel { joint, distance, path: path_of(joint), speed, turn: turn.to_degrees() })
    }
}
