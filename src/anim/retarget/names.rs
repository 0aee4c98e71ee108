//! Which joint of one skeleton drives which of another: names compared without namespaces,
//! prefixes and case, repeated names told apart by their parents' names.

use ahash::AHashMap as HashMap;

use super::humanoid;
use super::key::joint_key;
use crate::anim::Skeleton;

/// Per source joint, the target joints it drives (see [`retarget`]). Where names repeat (an FBX
/// mesh node named as the bone it hangs from, a glTF node in two skins), a joint first takes those
/// whose parent has its parent's name too, then those of its name left over. Target joints wait in
/// buckets by name that are emptied as they are handed out, so each is looked at a bounded number
/// of times: linear, also for a file of a hundred thousand joints named alike.
pub(super) fn match_joints(source: &Skeleton, target: &Skeleton) -> Vec<Vec<usize>> {
    match_joints_counted(source, target).0
}

/// [`match_joints`], and how many source joints their humanoid role matched (see [`by_role`]).
pub(super) fn match_joints_counted(source: &Skeleton, target: &Skeleton) -> (Vec<Vec<usize>>, usize) {
    let keys = |skeleton: &Skeleton| -> Vec<(String, String)> {
        let names: Vec<String> = skeleton.joints.iter().map(|joint| joint_key(&joint.name)).collect();
        let parent = |joint: &crate::anim::Joint| joint.parent.and_then(|parent| names.get(parent)).cloned().unwrap_or_default();
        skeleton.joints.iter().zip(&names).map(|(joint, name)| (name.clone(), parent(joint))).collect()
    };
    let (source_keys, target_keys) = (keys(source), keys(target));
    let mut taken = vec![false; target.len()];
    let mut map: Vec<Vec<usize>> = vec![Vec::new(); source.len()];
    // Unnamed joints (an exporter's helper nodes) match nothing.
    let named: Vec<usize> = (0..source.len()).filter(|&index| !source_keys[index].0.is_empty()).collect();
    let mut by_pair: HashMap<&(String, String), Vec<usize>> = HashMap::new();
    for (index, key) in target_keys.iter().enumerate() {
        by_pair.entry(key).or_default().push(index);
    }
    let mut sources_by_pair: Vec<(&(String, String), Vec<usize>)> = Vec::new();
    let mut group_of: HashMap<&(String, String), usize> = HashMap::new();
    for &index in &named {
        let group = *group_of.entry(&source_keys[index]).or_insert_with(|| {
            sources_by_pair.push((&source_keys[index], Vec::new()));
            sources_by_pair.len() - 1
        });
        sources_by_pair[group].1.push(index);
    }
    for (pair, sources) in &sources_by_pair {
        if let Some(bucket) = by_pair.remove(pair) {
            share(sources, bucket, &mut taken, &mut map);
        }
    }
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for index in by_pair.into_values().flatten() {
        by_name.entry(target_keys[index].0.as_str()).or_default().push(index);
    }
    let mut sources_by_name: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut name_group: HashMap<&str, usize> = HashMap::new();
    for &index in named.iter().filter(|&&index| map[index].is_empty()) {
        let name = source_keys[index].0.as_str();
        let group = *name_group.entry(name).or_insert_with(|| {
            sources_by_name.push((name, Vec::new()));
            sources_by_name.len() - 1
        });
        sources_by_name[group].1.push(index);
    }
    for (name, sources) in &sources_by_name {
        if let Some(bucket) = by_name.remove(name) {
            share(sources, bucket, &mut taken, &mut map);
        }
    }
    // The last look, at what is left: one side's names without the rig's name in front.
    let (source_prefix, target_prefix) = (rig_prefix(source), rig_prefix(target));
    let mut by_shorter: HashMap<String, Vec<usize>> = HashMap::new();
    if let Some(prefix) = target_prefix.as_deref() {
        for index in by_name.values().flatten() {
            if let Some(shorter) = without_prefix(&target.joints[*index].name, prefix) {
                by_shorter.entry(shorter).or_default().push(*index);
            }
        }
    }
    for &index in &named {
        if map[index].is_empty() {
            if let Some(bucket) = by_shorter.remove(&source_keys[index].0) {
                share(&[index], bucket, &mut taken, &mut map);
            }
            let shorter = source_prefix.as_deref().and_then(|prefix| without_prefix(&source.joints[index].name, prefix));
            if let Some(shorter) = shorter.filter(|_| map[index].is_empty()) {
                if let Some(bucket) = by_name.remove(shorter.as_str()) {
                    share(&[index], bucket, &mut taken, &mut map);
                }
            }
        }
    }
    let by_role = by_role(source, target, &mut map);
    (map, by_role)
}

/// Humanoid roles ([`humanoid`]) over names: a name match that the two joints' roles contradict
/// (CMU's `LeftShoulder`, an upper arm, on a Mixamo rig's clavicle of that name) is undone, and a
/// joint left without a match takes the target joint of its role.
/// Returns how many source joints took their role's joint.
fn by_role(source: &Skeleton, target: &Skeleton, map: &mut [Vec<usize>]) -> usize {
    let (source_roles, target_roles) = (humanoid::roles(source), humanoid::roles(target));
    if source_roles.iter().all(Option::is_none) || target_roles.iter().all(Option::is_none) {
        return 0;
    }
    let same =
        |a: humanoid::Role, b: humanoid::Role| a == b || matches!((a, b), (humanoid::Role::Spine(_), humanoid::Role::Spine(_)));
    for (joint, targets) in map.iter_mut().enumerate() {
        if let Some(role) = source_roles[joint] {
            targets.retain(|&index| target_roles[index].is_none_or(|other| same(role, other)));
        }
    }
    let mut taken = vec![false; target.len()];
    for &index in map.iter().flatten() {
        taken[index] = true;
    }
    let mut matched = 0;
    for (joint, found) in humanoid::by_role(&source_roles, &target_roles).into_iter().enumerate() {
        if let Some(index) = found.filter(|&index| map[joint].is_empty() && !taken[index]) {
            taken[index] = true;
            map[joint].push(index);
            matched += 1;
        }
    }
    matched
}

/// A bucket of target joints shared among the source joints of one name: one source joint takes
/// them all (a glTF node in two skins is two joints, both driven); several take them in turn, in
/// order (the same file's two skins, or a chain of joints named alike, pair up one to one).
fn share(sources: &[usize], bucket: Vec<usize>, taken: &mut [bool], map: &mut [Vec<usize>]) {
    let free = bucket.into_iter().filter(|&index| !taken[index]);
    for (turn, index) in free.collect::<Vec<_>>().into_iter().enumerate() {
        taken[index] = true;
        map[sources[turn % sources.len()]].push(index);
    }
}

/// The first word (before `_` or a space) that more than half of a skeleton's joint names start
/// with: the rig's name an exporter put in front of every joint (`Skeleton_torso_joint_1`).
fn rig_prefix(skeleton: &Skeleton) -> Option<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for joint in &skeleton.joints {
        if let Some((word, _)) = joint.name.split_once(['_', ' ']) {
            *counts.entry(word).or_default() += 1;
        }
    }
    counts.into_iter().filter(|&(_, count)| count * 2 > skeleton.len()).map(|(word, _)| word.to_string()).next()
}

/// A name's key without `prefix` and its separator in front, when it has them.
fn without_prefix(name: &str, prefix: &str) -> Option<String> {
    let rest = name.strip_prefix(prefix)?.strip_prefix(['_', ' '])?;
    Some(joint_key(rest)).filter(|key| !key.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{Joint, JointPose};
    use glam::Mat4;

    #[test]
    fn repeated_names_go_by_their_parents_then_in_turn() {
        let joint = |name: &str, parent| Joint::new(name, parent, Mat4::IDENTITY, JointPose::IDENTITY);
        // A chain of joints all named alike pairs up one to one.
        let chain = Skeleton { joints: vec![joint("j", None), joint("j", Some(0)), joint("j", Some(1)), joint("j", Some(2))] };
        assert_eq!(match_joints(&chain, &chain), vec![vec![0], vec![1], vec![2], vec![3]]);
        // One source joint drives both of the target's (a glTF node in two skins).
        let one = Skeleton { joints: vec![joint("Hips", None)] };
        let two = Skeleton { joints: vec![joint("Hips", None), joint("Hips", None)] };
        assert_eq!(match_joints(&one, &two), vec![vec![0, 1]]);
        // A mesh node named as a bone, under another parent, leaves the bone to the bone.
        let source = Skeleton {
            joints: vec![joint("Body", None), joint("Torso", Some(0)), joint("Abdomen", Some(0)), joint("Torso", Some(2))],
        };
        let target = Skeleton { joints: vec![joint("Body", None), joint("Abdomen", Some(0)), joint("Torso", Some(1))] };
        assert_eq!(match_joints(&source, &target), vec![vec![0], vec![], vec![1], vec![2]]);
    }
}
