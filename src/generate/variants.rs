//! Variants of the bundled figure for a crowd a clone can show (`vkskin --instances 1000` with no
//! model given): the same skeleton and clips, other proportions, each its own model, so the crowd
//! is several models in one frame as a user's own characters would be.
//!
//! A variant moves only bind-pose vertices: each away from (or toward) the bone it hangs on, so a
//! limb or the trunk grows thicker or thinner along its whole length without getting longer, and
//! the head grows about its joint. The skeleton and the clips stay the figure's, so every clip
//! plays on every variant, and skinning stays linear in the moved positions.

use glam::Vec3;

use crate::model::Model;

/// How one variant differs from the figure.
struct Proportions {
    suffix: &'static str,
    /// Distance from the bone, times this: the trunk and limbs.
    girth: f32,
    /// Distance from the head joint, times this.
    head: f32,
    /// The clip it plays first (the figure's clip order, turned by this many).
    lead_clip: usize,
}

const VARIANTS: [Proportions; 3] = [
    Proportions { suffix: "broad", girth: 1.3, head: 1.0, lead_clip: 0 },
    Proportions { suffix: "slim", girth: 0.78, head: 1.08, lead_clip: 1 },
    Proportions { suffix: "big-headed", girth: 0.95, head: 1.4, lead_clip: 0 },
];

/// The figure's variants, for a crowd beside the figure itself (named `figure (broad)` etc.).
/// `figure` is the figure as read (before culling cells and levels of detail, which depend on the
/// vertices: each variant gets its own).
pub fn crowd_variants(figure: &Model) -> Vec<Model> {
    VARIANTS.iter().map(|proportions| variant(figure, proportions)).collect()
}

fn variant(figure: &Model, proportions: &Proportions) -> Model {
    let mut model = figure.clone();
    model.name = format!("{} ({})", figure.name, proportions.suffix);
    let joints = &figure.skeleton.joints;
    let bind: Vec<Vec3> = joints.iter().map(|joint| joint.inverse_bind.inverse().w_axis.truncate()).collect();
    let children: Vec<Vec<usize>> = (0..joints.len())
        .map(|parent| (0..joints.len()).filter(|&child| joints[child].parent == Some(parent)).collect())
        .collect();
    let head = joints.iter().position(|joint| joint.name.eq_ignore_ascii_case("head"));
    for index in 0..model.vertices.len() {
        let vertex = model.vertices[index];
        let Some(heaviest) = model.influences.get(vertex.first_influence as usize) else { continue };
        let joint = heaviest.joint as usize;
        if joint >= bind.len() {
            continue;
        }
        // The head grows about its joint; anything else moves from the nearest point of the bone
        // from its joint to a child (a leaf: the joint).
        let (pivot, factor) = if Some(joint) == head {
            (bind[joint], proportions.head)
        } else {
            let nearest = children[joint]
                .iter()
                .map(|&child| nearest_on_segment(vertex.position, bind[joint], bind[child]))
                .min_by(|a, b| a.distance_squared(vertex.position).total_cmp(&b.distance_squared(vertex.position)))
                .unwrap_or(bind[joint]);
            (nearest, proportions.girth)
        };
        model.vertices[index].position = pivot + (vertex.position - pivot) * factor;
        // A weight's own position (MD5: `influence_offsets`) moves with the vertex: its offset
        // from the vertex scales alike.
        let influences = vertex.first_influence as usize..(vertex.first_influence + vertex.influence_count) as usize;
        if let Some(offsets) = model.influence_offsets.get_mut(influences) {
            for offset in offsets {
                *offset *= factor;
            }
        }
    }
    let turn = proportions.lead_clip.min(model.clips.len().saturating_sub(1));
    model.clips.rotate_left(turn);
    model.levels.clear();
    model
}

/// The point of segment a–b nearest to `point`.
fn nearest_on_segment(point: Vec3, a: Vec3, b: Vec3) -> Vec3 {
    let along = b - a;
    let length_squared = along.length_squared();
    if length_squared <= f32::EPSILON {
        return a;
    }
    a + along * ((point - a).dot(along) / length_squared).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variant keeps the figure's skeleton, clips and topology, and moves its vertices: the
    /// broad one's trunk is wider, the big-headed one's head larger, the others unmoved there.
    #[test]
    fn variants_change_proportions_and_keep_the_rig() {
        let path = crate::app::default_model_path();
        let figure = crate::formats::read_model(&path, &crate::app::default_animations(&path, &[])).expect("the figure");
        let variants = crowd_variants(&figure);
        assert_eq!(variants.len(), 3);
        // The trunk's width: the mean distance from the middle of the vertices the chest carries most.
        let chest = figure.skeleton.joints.iter().position(|joint| joint.name == "chest").expect("a chest") as u32;
        let width = |model: &Model| {
            let on_chest: Vec<f32> = model
                .vertices
                .iter()
                .filter(|vertex| model.influences[vertex.first_influence as usize].joint == chest)
                .map(|vertex| vertex.position.x.abs())
                .collect();
            on_chest.iter().sum::<f32>() / on_chest.len() as f32
        };
        let top = |model: &Model| model.vertices.iter().map(|vertex| vertex.position.y).fold(f32::MIN, f32::max);
        for variant in &variants {
            assert_eq!(variant.skeleton, figure.skeleton, "{}", variant.name);
            assert_eq!((variant.vertices.len(), &variant.indices), (figure.vertices.len(), &figure.indices), "{}", variant.name);
            assert_eq!(variant.clips.len(), figure.clips.len(), "{}", variant.name);
            assert_ne!(variant.vertices, figure.vertices, "{}", variant.name);
        }
        let [broad, slim, big_headed] = &variants[..] else { panic!("three variants") };
        assert!(width(broad) > width(&figure) * 1.2, "{} against {}", width(broad), width(&figure));
        assert!(width(slim) < width(&figure) * 0.85, "{} against {}", width(slim), width(&figure));
        assert!(top(big_headed) > top(&figure) + 0.02, "{} against {}", top(big_headed), top(&figure));
        // The slim one leads with the figure's second clip.
        assert_eq!(slim.clips[0].name, figure.clips[1].name);
    }
}
