//! Which way a character faces, so the camera opens in front of it: the three.js Soldier, a
//! COLLADA stormtrooper and the Milkshape ninja face -Z, most glTF characters +Z, and a camera at
//! a fixed side shows some of them from behind.

use glam::Vec3;

use super::Model;

impl Model {
    /// The turn about +Y (radians) from +Z to the way the character faces in its bind pose, from
    /// its joints named left and right (`LeftArm`, `upper_arm_left`, `Bip01 L Thigh`, `hand.L`):
    /// the character's left is from its right joints towards its left ones, and it faces along
    /// left × up. None where the names say nothing or the two sides do not stand apart.
    pub fn facing_yaw(&self) -> Option<f32> {
        let (mut left, mut right) = ((Vec3::ZERO, 0u32), (Vec3::ZERO, 0u32));
        for joint in &self.skeleton.joints {
            let position = joint.inverse_bind.inverse().w_axis.truncate();
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
