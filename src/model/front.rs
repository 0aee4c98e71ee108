//! Which way a character faces, so the camera opens in front of it: the three.js Soldier, a
//! COLLADA stormtrooper and the Milkshape ninja face -Z, most glTF characters +Z, and a camera at
//! a fixed side shows some of them from behind.

use glam::Vec3;

use super::Model;

impl Model {
    /// The turn about +Y (radians) from +Z to the way the character faces in its bind pose, from
    /// its joints named left and right (`LeftArm`, `upper_arm_left`, `Bip01 L Thigh`, `hand.L`):
    /// the character's left is from its right joints towards its left ones, and it faces along
    /// left × up ([`Model::named_sides_yaw`]).
    ///
    /// Where the names say nothing (the Milkshape ninja's `Joint1` to `Joint29`), the feet do
    /// ([`Model::feet_yaw`]). Where both tell and disagree by more than a right angle, the feet in
    /// the first pose that plays decide: a rig whose `.L` joints sit on the character's right
    /// (Blender's Bob.md5mesh) and a COLLADA stormtrooper whose bind pose has its toes behind
    /// its ankles, turned round by its clip, each open facing the camera then. None where neither
    /// tells.
    pub fn facing_yaw(&self) -> Option<f32> {
        let bind = self.bind_joint_positions();
        match (self.named_sides_yaw(&bind), self.feet_yaw(&bind)) {
            (Some(names), Some(feet)) if (names - feet).cos() < 0.0 => Some(self.played_feet_yaw(&bind).unwrap_or(names)),
            (names, feet) => names.or(feet),
        }
    }

    /// The feet's yaw in the first pose the default clip plays.
    fn played_feet_yaw(&self, bind: &[Vec3]) -> Option<f32> {
        let clip = self.clips.get(self.default_clip()?)?;
        let mut palette = vec![glam::Mat4::IDENTITY; self.skeleton.len()];
        self.palette_at(clip.animation, clip.start, &mut palette);
        let posed: Vec<Vec3> = bind.iter().zip(&palette).map(|(&position, matrix)| matrix.transform_point3(position)).collect();
        self.feet_yaw(&posed)
    }

    /// [`Model::facing_yaw`] from the joints' names alone, with the joints at `positions`: None
    /// where they say nothing or the two sides do not stand apart.
    pub fn named_sides_yaw(&self, positions: &[Vec3]) -> Option<f32> {
        let (mut left, mut right) = ((Vec3::ZERO, 0u32), (Vec3::ZERO, 0u32));
        for (joint, &position) in self.skeleton.joints.iter().zip(positions) {
            if !position.is_finite() {
                continue;
            }
            match side(&joint.name) {
                Some(Side::Left) => left = (left.0 + position, left.1 + 1),
                Some(Side::Right) => right = (right.0 + position, right.1 + 1),
                None => {}
            }
        }
        if left.1 == 0 || right.1 == 0 {
            return None;
        }
        let across = left.0 / left.1 as f32 - right.0 / right.1 as f32;
        let across = Vec3::new(across.x, 0.0, across.z);
        if across.length() < 0.05 * self.extent() {
            return None;
        }
        let forward = across.cross(Vec3::Y);
        Some(forward.x.atan2(forward.z))
    }
}

impl Model {
    /// [`Model::facing_yaw`] from the feet, with the joints at `positions`: a joint that ends a
    /// chain near the ground (within a tenth of the extent of the lowest joint) and lies mostly
    /// level with its parent is a toe, ahead of its ankle. The character faces the way the toes
    /// point, where at least two do and they agree.
    pub fn feet_yaw(&self, positions: &[Vec3]) -> Option<f32> {
        let joints = &self.skeleton.joints;
        if positions.len() != joints.len() {
            return None;
        }
        let mut ends_chain = vec![true; joints.len()];
        for joint in joints {
            if let Some(parent) = joint.parent.filter(|&parent| parent < joints.len()) {
                ends_chain[parent] = false;
            }
        }
        let lowest =
            positions.iter().filter(|position| position.is_finite()).map(|position| position.y).fold(f32::INFINITY, f32::min);
        let near_ground = lowest + 0.1 * self.extent();
        let (mut forward, mut toes) = (Vec3::ZERO, 0);
        for (index, joint) in joints.iter().enumerate() {
            let Some(parent) = joint.parent.filter(|&parent| parent < joints.len()) else { continue };
            // A joint not at the end of a chain, or not near the ground (a NaN height is not), is no toe.
            let grounded = positions[index].y <= near_ground;
            if !ends_chain[index] || !grounded {
                continue;
            }
            let step = positions[index] - positions[parent];
            let level = Vec3::new(step.x, 0.0, step.z);
            if level.is_finite() && level.length() > 0.5 * step.length() {
                forward += level.normalize();
                toes += 1;
            }
        }
        // Toes that point apart (a star of joints on the ground) say nothing.
        if toes < 2 || forward.length() < 0.7 * toes as f32 {
            return None;
        }
        Some(forward.x.atan2(forward.z))
    }
}

enum Side {
    Left,
    Right,
}

/// The side a joint's name puts it on: a word `left`/`right` anywhere (`mixamorig:LeftArm`,
/// `upper_arm_left`), or a lone `l`/`r` word or suffix (`Bip01 L Thigh`, `hand.L`, `foot_r`).
fn side(name: &str) -> Option<Side> {
    let lower = name.to_lowercase();
    let last = lower.rsplit([':', '|']).next().unwrap_or(&lower);
    if last.contains("left") {
        return Some(Side::Left);
    }
    if last.contains("right") {
        return Some(Side::Right);
    }
    let words: Vec<&str> = last.split(|c: char| !c.is_ascii_alphanumeric()).filter(|word| !word.is_empty()).collect();
    // A lone letter as a word: not the first word alone (`l_hand` is, `lamp` is not).
    if words.len() > 1 {
        if words.contains(&"l") {
            return Some(Side::Left);
        }
        if words.contains(&"r") {
            return Some(Side::Right);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_come_from_the_names_exporters_write() {
        for name in ["mixamorig:LeftArm", "upper_arm_left", "Bip01 L Thigh", "hand.L", "l_foot", "Armature|Left_Leg"] {
            assert!(matches!(side(name), Some(Side::Left)), "{name}");
        }
        for name in ["mixamorig:RightHand", "Bip01 R Calf", "foot_r", "hand.R"] {
            assert!(matches!(side(name), Some(Side::Right)), "{name}");
        }
        for name in ["Hips", "Spine", "lamp", "root", "r"] {
            assert!(side(name).is_none(), "{name}");
        }
    }
}
