//! What each joint of a humanoid rig is (hips, spine, left upper arm, ...) whatever the naming
//! convention, for clips carried between conventions that give one name to different bones.
//!
//! Motion capture libraries and character rigs name the same bones differently: CMU's 3ds Max
//! release (`LeftHip`, `LeftKnee`, `LeftCollar`, `LeftShoulder` for the *upper arm*, `LeftElbow`,
//! `LeftWrist`), its MotionBuilder release and Mixamo (`LeftUpLeg`, `LeftLeg`, `LeftShoulder` for
//! the *clavicle*, `LeftArm`, `LeftForeArm`, `LeftHand`), DAZ (`lThigh`, `lShldr`), Unreal
//! (`thigh_l`, `upperarm_l`), 3ds Max's Biped (`Bip01 L Thigh`). A name match alone sends CMU's upper
//! arm to Mixamo's clavicle. So a joint's role comes from its name's body part and side, with the
//! ambiguous "shoulder" read by its neighbours (the upper arm where the same side has a collar or
//! clavicle, else the clavicle), and the spine from the skeleton's shape: the joints between the
//! hips and the neck, bottom to top.

use ahash::AHashMap as HashMap;

use super::super::Skeleton;
use super::key::joint_key;

/// A humanoid bone, sided ones as left and right.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    Hips,
    /// The spine's joints between the hips and the neck: the position from the bottom over
    /// the count, as a fraction in 0..=1000 (both skeletons' chains are matched by it).
    Spine(u16),
    Neck,
    Head,
    Clavicle(Side),
    UpperArm(Side),
    Forearm(Side),
    Hand(Side),
    UpperLeg(Side),
    LowerLeg(Side),
    Foot(Side),
    Toes(Side),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Left,
    Right,
}

/// A sided body part, before "shoulder" is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Clavicle,
    /// Clavicle or upper arm, by the neighbours.
    Shoulder,
    UpperArm,
    Forearm,
    Hand,
    UpperLeg,
    LowerLeg,
    Foot,
    Toes,
}

fn part(word: &str) -> Option<Part> {
    Some(match word {
        "collar" | "clavicle" => Part::Clavicle,
        "shoulder" => Part::Shoulder,
        "arm" | "upperarm" | "uparm" | "shldr" => Part::UpperArm,
        "forearm" | "lowerarm" | "elbow" => Part::Forearm,
        "hand" | "wrist" | "palm" => Part::Hand,
        "upleg" | "upperleg" | "thigh" | "hip" => Part::UpperLeg,
        "leg" | "lowerleg" | "knee" | "shin" | "calf" => Part::LowerLeg,
        "foot" | "ankle" => Part::Foot,
        "toebase" | "toe" | "toes" | "ball" => Part::Toes,
        _ => return None,
    })
}

/// A key's side and body part: `left`/`right` or `l`/`r` before or after the part's word.
fn sided_part(key: &str) -> Option<(Side, Part)> {
    let key = key.strip_prefix("bip01").or_else(|| key.strip_prefix("bip001")).unwrap_or(key);
    for (affix, side) in [("left", Side::Left), ("right", Side::Right), ("l", Side::Left), ("r", Side::Right)] {
        let rest = key.strip_prefix(affix).or_else(|| key.strip_suffix(affix));
        if let Some(part) = rest.and_then(part) {
            return Some((side, part));
        }
    }
    None
}

/// Candidates a limb role's hierarchy check looks at (the first joints named for it): what keeps a
/// file of a hundred thousand joints named alike linear.
const CANDIDATES: usize = 4;

/// Each joint's role, where its name and place tell one; each role goes to the first joint (in
/// the skeleton's parents-first order) that has it. `None` for every joint of a skeleton in which
/// fewer than eight roles are found: not a humanoid this reads. Linear in the joints, whatever the
/// names and depth.
pub fn roles(skeleton: &Skeleton) -> Vec<Option<Role>> {
    let keys: Vec<String> = skeleton.joints.iter().map(|joint| joint_key(&joint.name)).collect();
    let settled = limb_roles(skeleton, &keys);
    let mut roles = vec![None; skeleton.len()];
    for (&role, &joint) in &settled {
        roles[joint] = Some(role);
    }
    trunk_roles(skeleton, &keys, &settled, &mut roles);
    if roles.iter().flatten().count() < 8 {
        return vec![None; skeleton.len()];
    }
    roles
}

/// A joint's parent, where it comes before the joint (as a skeleton stores them).
fn parent_of(skeleton: &Skeleton, joint: usize) -> Option<usize> {
    skeleton.joints[joint].parent.filter(|&parent| parent < joint)
}

/// The limbs' roles, by name and side, each settled on a joint below the limb's joint before it.
fn limb_roles(skeleton: &Skeleton, keys: &[String]) -> HashMap<Role, usize> {
    let parts: Vec<Option<(Side, Part)>> = keys.iter().map(|key| sided_part(key)).collect();
    let has_clavicle = [Side::Left, Side::Right].map(|side| parts.iter().flatten().any(|&found| found == (side, Part::Clavicle)));
    let named: Vec<Option<Role>> = parts
        .iter()
        .map(|found| {
            let (side, part) = (*found)?;
            Some(match part {
                Part::Clavicle => Role::Clavicle(side),
                Part::Shoulder if has_clavicle[side as usize] => Role::UpperArm(side),
                Part::Shoulder => Role::Clavicle(side),
                Part::UpperArm => Role::UpperArm(side),
                Part::Forearm => Role::Forearm(side),
                Part::Hand => Role::Hand(side),
                Part::UpperLeg => Role::UpperLeg(side),
                Part::LowerLeg => Role::LowerLeg(side),
                Part::Foot => Role::Foot(side),
                Part::Toes => Role::Toes(side),
            })
        })
        .collect();
    let is_ancestor = |ancestor: usize, mut joint: usize| {
        while let Some(up) = parent_of(skeleton, joint) {
            if up == ancestor {
                return true;
            }
            if up < ancestor {
                return false; // parents come first: the ancestor is no longer ahead
            }
            joint = up;
        }
        false
    };
    // Each limb role to the first of its first few candidates that hangs below the role before it
    // in the limb, where the skeleton has that one (a foot IK target at the root named `Foot.L`
    // is no foot). Limbs are settled from the body out, so "before" is already settled.
    let before = |role: Role| match role {
        Role::Forearm(side) => Some(Role::UpperArm(side)),
        Role::Hand(side) => Some(Role::Forearm(side)),
        Role::LowerLeg(side) => Some(Role::UpperLeg(side)),
        Role::Foot(side) => Some(Role::LowerLeg(side)),
        Role::Toes(side) => Some(Role::Foot(side)),
        _ => None,
    };
    let mut candidates: HashMap<Role, Vec<usize>> = HashMap::new();
    for (joint, role) in named.iter().enumerate() {
        if let Some(role) = *role {
            let list = candidates.entry(role).or_default();
            if list.len() < CANDIDATES {
                list.push(joint);
            }
        }
    }
    let mut settled: HashMap<Role, usize> = HashMap::new();
    let limb_order = |side| {
        [
            Role::Clavicle(side),
            Role::UpperArm(side),
            Role::Forearm(side),
            Role::Hand(side),
            Role::UpperLeg(side),
            Role::LowerLeg(side),
            Role::Foot(side),
            Role::Toes(side),
        ]
    };
    for role in limb_order(Side::Left).into_iter().chain(limb_order(Side::Right)) {
        let Some(list) = candidates.get(&role) else { continue };
        let needed = before(role).filter(|wanted| candidates.contains_key(wanted));
        let chosen = match needed {
            None => list.first().copied(),
            Some(wanted) => {
                let above = settled.get(&wanted).copied();
                list.iter().copied().find(|&joint| above.is_some_and(|above| is_ancestor(above, joint)))
            }
        };
        if let Some(joint) = chosen {
            settled.insert(role, joint);
        }
    }
    settled
}

/// The hips, spine, neck and head, into `roles` where the limbs left the joints free.
fn trunk_roles(skeleton: &Skeleton, keys: &[String], settled: &HashMap<Role, usize>, roles: &mut [Option<Role>]) {
    // The head by name; the hips where the legs and the spine meet, the lowest joint above both
    // upper legs and the head (a rig may hang its legs from a `Body` above its `Hips`), or by name
    // without legs; the neck as the head's parent where it is named so; the spine between.
    let head = keys.iter().position(|key| key == "head" || key == "bip01head");
    let mut on_spine = vec![false; skeleton.len()];
    let mut spine_chain = Vec::new();
    if let Some(head) = head {
        let mut at = Some(head);
        while let Some(joint) = at {
            on_spine[joint] = true;
            spine_chain.push(joint);
            at = parent_of(skeleton, joint);
        }
    }
    let legs: Vec<usize> =
        [Side::Left, Side::Right].iter().filter_map(|&side| settled.get(&Role::UpperLeg(side)).copied()).collect();
    let meeting = if head.is_some() && legs.len() == 2 {
        // Each leg's first ancestor on the head's chain; the one highest up (the lowest index,
        // parents coming first) holds all three.
        legs.iter()
            .map(|&leg| {
                let mut at = parent_of(skeleton, leg);
                while let Some(joint) = at.filter(|&joint| !on_spine[joint]) {
                    at = parent_of(skeleton, joint);
                }
                at
            })
            .collect::<Option<Vec<usize>>>()
            .and_then(|meets| meets.into_iter().min())
    } else {
        None
    };
    let hips = meeting.or_else(|| keys.iter().position(|key| matches!(key.as_str(), "hips" | "hip" | "pelvis" | "bip01pelvis")));
    if let (Some(hips), Some(head)) = (hips, head) {
        if on_spine[hips] && roles[hips].is_none() && roles[head].is_none() {
            roles[hips] = Some(Role::Hips);
            roles[head] = Some(Role::Head);
            // Between them, bottom to top.
            let mut chain: Vec<usize> = spine_chain.iter().copied().skip(1).take_while(|&joint| joint != hips).collect();
            chain.reverse();
            if chain.last().is_some_and(|&neck| keys[neck].contains("neck")) {
                if let Some(neck) = chain.pop() {
                    roles[neck] = Some(Role::Neck);
                }
            }
            // A second neck joint (CMU's `lowerneck`) is neck, not spine.
            while chain.last().is_some_and(|&neck| keys[neck].contains("neck")) {
                chain.pop();
            }
            let last = chain.len().saturating_sub(1).max(1);
            for (order, &index) in chain.iter().enumerate() {
                if roles[index].is_none() {
                    roles[index] = Some(Role::Spine((order * 1000 / last) as u16));
                }
            }
        }
    }
}

/// The target joint each source joint's role points to, from the two skeletons' [`roles`]: the
/// spine by the nearest position along the chain, every other role by itself.
pub fn by_role(source_roles: &[Option<Role>], target_roles: &[Option<Role>]) -> Vec<Option<usize>> {
    let mut spine: Vec<(u16, usize)> = Vec::new();
    let mut index_of: HashMap<Role, usize> = HashMap::new();
    for (index, role) in target_roles.iter().enumerate() {
        match role {
            Some(Role::Spine(at)) => spine.push((*at, index)),
            Some(role) => {
                index_of.entry(*role).or_insert(index);
            }
            None => {}
        }
    }
    let mut taken = vec![false; target_roles.len()];
    source_roles
        .iter()
        .map(|role| {
            let found = match (*role)? {
                Role::Spine(at) => spine.iter().min_by_key(|(other, _)| other.abs_diff(at)).map(|&(_, index)| index),
                role => index_of.get(&role).copied(),
            }?;
            // Two source spine joints may be nearest to one target joint: the first takes it.
            (!std::mem::replace(&mut taken[found], true)).then_some(found)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Joint, JointPose};
    use glam::Mat4;

    /// A skeleton of `(name, parent)` pairs.
    fn skeleton(joints: &[(&str, Option<usize>)]) -> Skeleton {
        Skeleton {
            joints: joints.iter().map(|&(name, parent)| Joint::new(name, parent, Mat4::IDENTITY, JointPose::IDENTITY)).collect(),
        }
    }

    /// CMU's 3ds Max naming, one side (as 131_01.bvh has it).
    fn cmu_max() -> Skeleton {
        skeleton(&[
            ("Hips", None),
            ("LHipJoint", Some(0)),
            ("LeftHip", Some(1)),
            ("LeftKnee", Some(2)),
            ("LeftAnkle", Some(3)),
            ("LeftToe", Some(4)),
            ("lowerback", Some(0)),
            ("Chest", Some(6)),
            ("Chest2", Some(7)),
            ("lowerneck", Some(8)),
            ("Neck", Some(9)),
            ("Head", Some(10)),
            ("LeftCollar", Some(8)),
            ("LeftShoulder", Some(12)),
            ("LeftElbow", Some(13)),
            ("LeftWrist", Some(14)),
            ("lhand", Some(15)),
        ])
    }

    /// Mixamo's naming, one side.
    fn mixamo() -> Skeleton {
        skeleton(&[
            ("mixamorig:Hips", None),
            ("mixamorig:LeftUpLeg", Some(0)),
            ("mixamorig:LeftLeg", Some(1)),
            ("mixamorig:LeftFoot", Some(2)),
            ("mixamorig:LeftToeBase", Some(3)),
            ("mixamorig:Spine", Some(0)),
            ("mixamorig:Spine1", Some(5)),
            ("mixamorig:Spine2", Some(6)),
            ("mixamorig:Neck", Some(7)),
            ("mixamorig:Head", Some(8)),
            ("mixamorig:LeftShoulder", Some(7)),
            ("mixamorig:LeftArm", Some(10)),
            ("mixamorig:LeftForeArm", Some(11)),
            ("mixamorig:LeftHand", Some(12)),
        ])
    }

    #[test]
    fn cmu_max_names_meet_mixamo_by_role_not_by_the_shared_word() {
        let map = by_role(&roles(&cmu_max()), &roles(&mixamo()));
        let target = mixamo();
        let name = |source: usize| map[source].map(|index| target.joints[index].name.as_str());
        // CMU's LeftShoulder is the upper arm; Mixamo's is the clavicle.
        assert_eq!(name(13), Some("mixamorig:LeftArm"));
        assert_eq!(name(12), Some("mixamorig:LeftShoulder"));
        assert_eq!(name(2), Some("mixamorig:LeftUpLeg"));
        assert_eq!(name(3), Some("mixamorig:LeftLeg"));
        assert_eq!(name(15), Some("mixamorig:LeftHand"));
        assert_eq!(name(16), None, "lhand under LeftWrist is no second hand");
        assert_eq!(name(1), None, "LHipJoint has no role");
        assert_eq!([name(6), name(7), name(8)], [Some("mixamorig:Spine"), Some("mixamorig:Spine1"), Some("mixamorig:Spine2")]);
        assert_eq!((name(9), name(10)), (None, Some("mixamorig:Neck")));
    }

    #[test]
    fn a_hundred_thousand_joints_named_alike_are_read_in_linear_time() {
        // A chain alternating limb names, 100,000 deep, under a head: quadratic work here would take
        // minutes (each joint walking to the root, or searching every other).
        let mut joints = vec![("Hips", None), ("Head", Some(0))];
        for index in 2..100_002 {
            joints.push((if index % 2 == 0 { "LeftUpLeg" } else { "LeftLeg" }, Some(index - 1)));
        }
        let chain = skeleton(&joints);
        let roles = roles(&chain);
        assert!(roles.iter().flatten().count() <= 4, "one joint a role at most");
        let map = by_role(&roles, &super::roles(&mixamo()));
        assert_eq!(map.len(), chain.len());
    }

    #[test]
    fn a_skeleton_that_is_no_humanoid_has_no_roles() {
        let tail = skeleton(&[("root", None), ("tail1", Some(0)), ("tail2", Some(1)), ("LeftFin", Some(0))]);
        assert!(roles(&tail).iter().all(Option::is_none));
    }
}
