//! `vkskin inspect FILE --pose TIME`: what the GPU passes evaluate at one time, read back, in the
//! file's own units, axes, joint order and vertex order, so that other tools can hold vkskin's
//! evaluation against their own (`--json`).
//!
//! One instance at the origin plays the clip on the renderer the viewer uses (compute strategy,
//! the full mesh); the palette pass's matrices give the joints (`palette × bind`), the skin pass's
//! buffer the vertices. [`crate::model::FileLayout`] maps both back to the file.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use serde_json::json;

use crate::app::{HeadlessRenderer, SceneSetup};
use crate::gpu::Device;
use crate::model::Model;

/// A pose read back from the GPU, in the file's terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Pose {
    /// Seconds into the clip (past its end it loops, as the viewer plays it).
    pub time: f64,
    /// `None`: the model has no clips, and this is the bind pose.
    pub clip: Option<String>,
    /// Each joint in the file's order: its name and its transform to the file's model space.
    pub joints: Vec<(String, Mat4)>,
    /// Each mesh in the file's order: its name and its skinned vertices in the file's order
    /// (`None` for a vertex no triangle uses, which vkskin does not keep).
    pub meshes: Vec<(String, Vec<Option<Vec3>>)>,
}

/// Renders `model` (without levels of detail, with its culling cells) once at `time` into `clip`
/// and reads back what the palette and skin passes wrote.
pub fn evaluate(device: &Arc<Device>, model: Model, clip: Option<usize>, time: f64) -> Result<Pose, String> {
    if !model.levels.is_empty() {
        return Err("the pose is read from the full mesh: load the model without levels of detail".into());
    }
    let clip_name = clip.and_then(|clip| model.clips.get(clip)).map(|clip| clip.name.clone());
    let mut setup = SceneSetup::new(model, 1);
    for instance in &mut setup.instances {
        // At the origin, unturned and in step: the palettes are the joints' model matrices.
        instance.position = Vec3::ZERO;
        instance.yaw = 0.0;
        instance.phase = 0.0;
        instance.speed = 1.0;
        instance.clip = clip;
        instance.fade = None;
        instance.layer = None;
    }
    setup.frame_played();
    let mut headless = HeadlessRenderer::new(device, &setup, 64, 64).map_err(|error| error.to_string())?;
    headless.render(&setup.frame(time, headless.aspect())).map_err(|error| error.to_string())?;
    let (skinned, palettes) = headless.renderer.read_back_skinning().map_err(|error| error.to_string())?;

    let model = &setup.model;
    let to_file = model.layout.to_model.inverse();
    let joints = model
        .layout
        .joints(model.skeleton.len())
        .into_iter()
        .filter_map(|index| {
            let joint = model.skeleton.joints.get(index)?;
            let palette = palettes.get(index)?.to_mat4();
            Some((joint.name.clone(), to_file * palette * joint.inverse_bind.inverse()))
        })
        .collect();
    let meshes = model
        .file_meshes()
        .into_iter()
        .map(|mesh| {
            let positions = mesh
                .vertices
                .iter()
                .map(|vertex| {
                    let skinned = skinned.get((*vertex)? as usize)?;
                    Some(to_file.transform_point3(Vec3::from_array(skinned.position)))
                })
                .collect();
            (mesh.name, positions)
        })
        .collect();
    Ok(Pose { time, clip: clip_name, joints, meshes })
}

impl Pose {
    /// `{"time", "clip", "joints": [{"name", "model": [16 floats, column-major]}], "meshes":
    /// [{"name", "positions": [[x, y, z] or null, ...]}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "time": self.time,
            "clip": self.clip,
            "joints": self.joints.iter().map(|(name, model)| json!({"name": name, "model": model.to_cols_array()})).collect::<Vec<_>>(),
            "meshes": self.meshes.iter().map(|(name, positions)| json!({
                "name": name,
                "positions": positions.iter().map(|position| position.map(|p| p.to_array())).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    /// [`Pose::to_json`] as text a person can page through: one joint, one vertex a line (a
    /// character's pose is megabytes, which on one line no editor or pager shows).
    pub fn to_json_lines(&self) -> String {
        let value = self.to_json();
        // An array's items, compact, one a line.
        let items = |array: &serde_json::Value, indent: &str| {
            let items = array.as_array().map(Vec::as_slice).unwrap_or_default();
            items.iter().map(|item| format!("{indent}{item}")).collect::<Vec<_>>().join(",\n")
        };
        let meshes: Vec<String> = value["meshes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|mesh| {
                format!("    {{\"name\": {}, \"positions\": [\n{}\n    ]}}", mesh["name"], items(&mesh["positions"], "        "))
            })
            .collect();
        format!(
            "{{\"time\": {}, \"clip\": {},\n  \"joints\": [\n{}\n  ],\n  \"meshes\": [\n{}\n  ]\n}}\n",
            value["time"],
            value["clip"],
            items(&value["joints"], "    "),
            meshes.join(",\n")
        )
    }

    /// The same, for reading: each joint's position, each mesh's vertex count and box.
    pub fn describe(&self) -> String {
        let mut out = format!(
            "pose at {:.4} s of {} (file units and axes)\njoints: {}\n",
            self.time,
            self.clip.as_deref().map_or_else(|| "the bind pose".to_string(), |clip| format!("\"{clip}\"")),
            self.joints.len()
        );
        for (name, model) in &self.joints {
            let at = model.w_axis;
            out += &format!("  {}: [{:.5}, {:.5}, {:.5}]\n", crate::formats::files::one_line(name), at.x, at.y, at.z);
        }
        out += &format!("meshes: {}\n", self.meshes.len());
        for (name, positions) in &self.meshes {
            let bounds = crate::anim::Aabb::from_points(positions.iter().flatten().copied());
            out += &format!(
                "  {}: {} vertices, box [{:.4}, {:.4}, {:.4}] .. [{:.4}, {:.4}, {:.4}]\n",
                crate::formats::files::one_line(name),
                positions.len(),
                bounds.min.x,
                bounds.min.y,
                bounds.min.z,
                bounds.max.x,
                bounds.max.y,
                bounds.max.z
            );
        }
        out
    }
}
