//! Which clip plays when the user names none: what people open a character to see. Files list
//! their clips in any order (X Bot's first is a nod, "agree"; the three.js Frankie's a blink; a
//! Mixamo download's an empty "Take 001"), so the first is no answer. In order:
//! 1. a clip from another file (`--anim`), which is what the user came to see;
//! 2. a clip that moves (its pose changes over its loop, judged on the clip as it plays here, so a
//!    carried "Take 001" that holds one pose does not count) before one that holds still;
//! 3. locomotion, dance or idle by name (a walk first, then a run, a dance, an idle) before other
//!    names, and those before a blink, a pain, a pose or a death ([`NameKind`]);
//! 4. the clip that moves the most of the body the furthest for the longest ([`Model::clip_motion`]).

use glam::Vec4;

use super::Model;
use crate::anim::{JointPose, Property};

/// A translation this far from rest, in units of the model's extent, moves the joint.
const TRANSLATION_TOLERANCE: f32 = 1e-5;
/// A rotation this far from rest (radians), or a scale this far from it (relative), moves it.
const ROTATION_TOLERANCE: f32 = 1e-4;
const SCALE_TOLERANCE: f32 = 1e-5;
/// A morph weight this far from its default moves the target.
const WEIGHT_TOLERANCE: f32 = 1e-4;
/// How finely a clip is sampled to judge its motion: poses over its loop, points a pose.
const JUDGED_POSES: usize = 16;
const JUDGED_POINTS: usize = 256;
/// A point whose path over the clip spans this share of the model's extent moves as far as a
/// clip's motion counts it ([`Model::clip_motion`]): a limb's swing, not a breath.
const MOVING: f32 = 0.25;

/// What a clip's name says of it, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameKind {
    /// Locomotion, dance or idle: what a character is opened to see, in the order of
    /// [`WANTED`]'s tiers (0: a walk, 1: a run, 2: a dance, 3: an idle).
    Wanted(u8),
    /// Any other name ("agree", "Survey", "Step Scale").
    Plain,
    /// A blink, a pain, a pose or a death: played only where nothing else is.
    Avoided,
}

/// Word beginnings (after splitting a name into words) of the wanted kinds, by tier, and of the
/// avoided kind.
const WANTED: [&[&str]; 4] = [
    &["walk", "locomot", "stride", "strut", "march", "stroll"],
    &["run", "jog", "sprint", "gallop", "trot", "swim", "fly", "flap"],
    &["danc", "samba", "salsa", "hiphop", "breakdanc", "twerk"],
    &["idle", "breath"],
];
/// Words that qualify a clip's name without making it another clip.
const QUALIFIERS: &[&str] =
    &["normal", "loop", "cycle", "inplace", "in", "place", "anim", "animation", "take", "clip", "default"];
const AVOIDED: &[&str] = &[
    "blink", "pain", "hurt", "hit", "damage", "flinch", "pose", "tpose", "apose", "bind", "death", "die", "dies", "dying",
    "dead", "killed",
];

impl NameKind {
    /// The kind of a clip named `name`: its words (split at anything not a letter or digit, and
    /// where a lower-case letter meets an upper-case one: "WalkJump", "mixamorig|Idle") each
    /// compared by their beginning, an avoided word winning over a wanted one ("Idle_Pose").
    pub fn of(name: &str) -> NameKind {
        let words = words(name);
        let has = |starts: &[&str]| {
            words.iter().any(|word| starts.iter().any(|start| word.starts_with(start) && word_fits(word, start)))
        };
        if has(AVOIDED) {
            return NameKind::Avoided;
        }
        match WANTED.iter().position(|tier| has(tier)) {
            Some(tier) => NameKind::Wanted(tier as u8),
            None => NameKind::Plain,
        }
    }
}

/// Whether `word` is `start` or grows from it as a word does ("walking", "running", "dies"), not
/// a longer word that merely begins the same ("hitch", "history"). Long beginnings stand alone.
fn word_fits(word: &str, start: &str) -> bool {
    const SUFFIXES: [&str; 12] = ["", "s", "es", "d", "ed", "er", "ers", "ing", "e", "y", "ion", "cycle"];
    if start.len() >= 5 {
        return true;
    }
    let rest = &word[start.len()..];
    // A doubled consonant: "running", "swimming", "hitting".
    let undoubled = start.chars().last().and_then(|last| rest.strip_prefix(last)).unwrap_or(rest);
    SUFFIXES.contains(&rest) || SUFFIXES[1..].contains(&undoubled)
}

/// A name's words, lower case.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for character in name.chars() {
        if !character.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = false;
            continue;
        }
        if character.is_uppercase() && previous_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = character.is_lowercase() || character.is_ascii_digit();
        word.extend(character.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

impl Model {
    /// Whether clip `clip` moves anything: some joint away from its rest pose, or some morph
    /// target away from its default weight, at a key inside the clip's span or at either end.
    /// A clip without keys, or keyed at the rest pose throughout (an empty FBX stack, baked),
    /// moves nothing.
    pub fn clip_moves(&self, clip: usize) -> bool {
        let Some(clip) = self.clips.get(clip) else { return false };
        let Some(animation) = self.animations.get(clip.animation) else { return false };
        let (start, end) = (clip.start, clip.start + clip.duration.max(0.0));
        let extent = self.extent().max(f32::MIN_POSITIVE);
        let joint_moves = animation.channels.iter().any(|channel| {
            let Some(joint) = self.skeleton.joints.get(channel.joint) else { return false };
            let rest = joint.rest;
            let keys = (0..channel.times.count()).filter(|&key| (start..=end).contains(&channel.times.time(key)));
            let values = keys.map(|key| channel.key_value(key)).chain([channel.sample(start), channel.sample(end)]);
            values.into_iter().any(|value: Vec4| {
                let mut pose = rest;
                channel.set(value, &mut pose);
                moved(channel.property, &rest, &pose, extent)
            })
        });
        let defaults = self.default_weights();
        let weight_moves = animation.weights.iter().any(|channel| {
            let default = defaults.get(channel.target).copied().unwrap_or(0.0);
            let keys = (0..channel.times.count()).map(|key| channel.times.time(key)).filter(|time| (start..=end).contains(time));
            keys.chain([start, end]).any(|time| (channel.sample(time) - default).abs() > WEIGHT_TOLERANCE)
        });
        joint_moves || weight_moves
    }

    /// How much a clip moves: over the model's surface (its joints, without a mesh), how far each
    /// point's path over the loop spans, as a share of [`MOVING`] times the model's extent (a
    /// point that goes further counts as one that goes that far), averaged, times the loop's
    /// length in seconds. 0 for a clip that holds one pose, whatever pose that is.
    pub fn clip_motion(&self, clip: usize) -> f32 {
        let Some(duration) = self.clips.get(clip).map(|clip| clip.duration) else { return 0.0 };
        let samples = self.pose_samples(Some(clip), JUDGED_POSES, JUDGED_POINTS, false);
        samples.mean_path(MOVING * self.extent()) * duration.max(0.0)
    }

    /// The clip played when none is named (see the module's text), or None without clips. Of two
    /// wanted clips of one tier, the one with fewer other words in its name plays first ("Walking"
    /// before "WalkJump"): words every clip's name has (the rig's, "HumanArmature|Man_") and
    /// qualifiers ("normal", "loop", numbers) do not count.
    pub fn default_clip(&self) -> Option<usize> {
        let names: Vec<Vec<String>> = self.clips.iter().map(|clip| words(&clip.name)).collect();
        let common: Vec<&String> = names
            .first()
            .map(|first| first.iter().filter(|word| names.iter().all(|name| name.contains(word))).collect())
            .unwrap_or_default();
        let extra_words = |clip: usize| {
            let plain = |word: &String| {
                common.contains(&word)
                    || word.chars().all(|c| c.is_ascii_digit())
                    || QUALIFIERS.contains(&word.as_str())
                    || WANTED.iter().flat_map(|tier| tier.iter()).any(|start| word.starts_with(start) && word_fits(word, start))
            };
            if self.clips.len() < 2 {
                0
            } else {
                names[clip].iter().filter(|word| !plain(word)).count()
            }
        };
        let ranked = (0..self.clips.len()).map(|clip| {
            let motion = self.clip_motion(clip);
            let from_another_file = self.clip_source(clip).is_some() && motion > 0.0;
            let kind = NameKind::of(&self.clips[clip].name);
            let extra = if matches!(kind, NameKind::Wanted(_)) { extra_words(clip) } else { 0 };
            // Lower is better; the clip's index last, so that equals keep the file's order.
            ((!from_another_file, motion <= 0.0, kind, extra), -motion, clip)
        });
        ranked.min_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2))).map(|(_, _, clip)| clip)
    }

    /// The first of `clips` that moves something.
    pub fn first_moving(&self, mut clips: impl Iterator<Item = usize>) -> Option<usize> {
        clips.find(|&clip| self.clip_moves(clip))
    }

    /// The file a clip's animation came from, where it is not the model's own (`--anim`, MD5's
    /// .md5anim files).
    pub fn clip_source(&self, clip: usize) -> Option<&std::path::Path> {
        self.animations.get(self.clips.get(clip)?.animation)?.source.as_deref()
    }
}

fn moved(property: Property, rest: &JointPose, pose: &JointPose, extent: f32) -> bool {
    match property {
        Property::Translation => pose.translation.distance(rest.translation) > TRANSLATION_TOLERANCE * extent,
        Property::Rotation => crate::anim::curve::rotation_distance(pose.rotation, rest.rotation) > ROTATION_TOLERANCE,
        Property::Scale => {
            let difference = (pose.scale - rest.scale).abs().max_element();
            difference > SCALE_TOLERANCE * rest.scale.abs().max_element().max(f32::MIN_POSITIVE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::NameKind::{self, Avoided, Plain, Wanted};
    const WALK: NameKind = Wanted(0);
    const RUN: NameKind = Wanted(1);
    const DANCE: NameKind = Wanted(2);
    const IDLE: NameKind = Wanted(3);

    #[test]
    fn names_say_what_a_clip_is() {
        let cases = [
            ("Walk", WALK),
            ("WalkJump", WALK),
            ("Running", RUN),
            ("HumanArmature|Man_Idle", IDLE),
            ("Walk cycle 1", WALK),
            ("Samba Dancing", DANCE),
            ("idle", IDLE),
            ("agree", Plain),
            ("headShake", Plain),
            ("Survey", Plain),
            ("Step Scale", Plain),
            ("mixamo.com", Plain),
            ("Soldier_Salute", Plain),
            ("Take 001", Plain),
            ("Blink", Avoided),
            ("pain", Avoided),
            ("sad_pose", Avoided),
            ("TPose", Avoided),
            ("Death", Avoided),
            ("Die and fall forwards", Avoided),
            ("Idle_Pose", Avoided),
            ("hit_reaction", Avoided),
            ("history", Plain),
            ("Swimming", RUN),
            ("hitch", Plain),
        ];
        for (name, kind) in cases {
            assert_eq!(NameKind::of(name), kind, "{name}");
        }
    }
}
