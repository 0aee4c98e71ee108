//! What the user did in the panel: the [`Action`]s the viewer applies, and their text form
//! (`view --drive`).

use crate::anim::{Layer, Skinning};
use crate::render::passes::debug::DebugViews;
use crate::render::{Raster, Shadows, Strategy};

/// What the user did in the panel this frame.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Strategy(Strategy),
    Instances(usize),
    Clip(usize),
    Fade(f32),
    Speed(f32),
    Pause(bool),
    Step,
    Seek(f64),
    Debug(DebugViews),
    /// A second clip over a joint and its descendants, or none.
    Layer(Option<Layer>),
    /// Capture the next frame with RenderDoc.
    Capture,
    /// Open a model file (what dropping it on the window does).
    Open(std::path::PathBuf),
    /// Shows or hides the panel (F1).
    Panel(bool),
    /// Animation LOD on or off (`--animation-lod`): far instances' palettes every 2nd, 4th or 8th frame.
    AnimationLod(bool),
    /// A morph target's weight held by hand over every instance's clips, or given back to them.
    Morph(usize, Option<f32>),
    /// Every instance blends its joints linearly or as dual quaternions.
    Skinning(Skinning),
    /// Motion blur on or off (`--motion-blur`).
    MotionBlur(bool),
    /// Shadows from the map or traced (`--shadows`): a new renderer.
    Shadows(Shadows),
    /// The rasterizer (`--raster`), from the next frame.
    Raster(Raster),
    /// The crowd varied or copies (`--variety`).
    Variety(bool),
    /// Travelling clips in place with root motion, or as the files have them (`--root-motion`).
    RootMotion(bool),
    /// Model N of a crowd of several leaves it (its instances go to the others).
    RemoveModel(usize),
}

impl Action {
    /// An action written as `strategy=vertex`, `instances=16`, `clip=1`, `fade=0.5`, `speed=2`,
    /// `pause`, `play`, `step`, `seek=0.5`, `debug=skeleton,bounds`, `layer=1@4:0.8` (clip, joint
    /// and weight by number) or `layer=none`, `capture`, `open=PATH`, `panel=off` or
    /// `animation-lod=on`, `morph=TARGET:WEIGHT` or `morph=TARGET:clip`, `skinning=dual-quaternion`,
    /// `motion-blur=on`, `shadows=ray`, `raster=compute`, `variety=off`, `remove-model=N` (`view --drive`: a test or a demo runs the panel's controls
    /// without a pointer).
    pub fn parse(text: &str) -> Result<Action, String> {
        let (name, value) = text.split_once('=').unwrap_or((text, ""));
        let number = |what: &str| {
            value
                .parse::<f64>()
                .ok()
                .filter(|number| number.is_finite() && *number >= 0.0)
                .ok_or(format!("{what}: expected a number, found '{value}'"))
        };
        Ok(match name {
            "strategy" => Action::Strategy(
                Strategy::ALL
                    .into_iter()
                    .find(|strategy| strategy.name() == value)
                    .ok_or(format!("strategy: expected compute, vertex or cpu, found '{value}'"))?,
            ),
            "instances" => Action::Instances(number("instances")? as usize),
            "clip" => Action::Clip(number("clip")? as usize),
            "fade" => Action::Fade(number("fade")? as f32),
            "speed" => Action::Speed(number("speed")? as f32),
            "seek" => Action::Seek(number("seek")?),
            "pause" => Action::Pause(true),
            "play" => Action::Pause(false),
            "step" => Action::Step,
            "debug" => Action::Debug(DebugViews::parse(value)?),
            "panel" if value == "on" || value == "off" => Action::Panel(value == "on"),
            "animation-lod" if value == "on" || value == "off" => Action::AnimationLod(value == "on"),
            "motion-blur" if value == "on" || value == "off" => Action::MotionBlur(value == "on"),
            "shadows" => Action::Shadows(Shadows::parse(value).ok_or(format!("shadows: expected map or ray, found '{value}'"))?),
            "raster" => Action::Raster(
                Raster::parse(value).ok_or(format!("raster: expected hardware, compute or auto, found '{value}'"))?,
            ),
            "variety" if value == "on" || value == "off" => Action::Variety(value == "on"),
            "root-motion" if value == "on" || value == "off" => Action::RootMotion(value == "on"),
            "layer" if value == "none" => Action::Layer(None),
            "layer" => {
                // CLIP@JOINT:WEIGHT, all three as numbers.
                let expected = || format!("layer: expected CLIP@JOINT:WEIGHT (numbers) or none, found '{value}'");
                let (clip, rest) = value.split_once('@').ok_or_else(expected)?;
                let (joint, weight) = rest.split_once(':').ok_or_else(expected)?;
                let clip = clip.parse().map_err(|_| expected())?;
                let joint = joint.parse().map_err(|_| expected())?;
                let weight = weight.parse::<f32>().ok().filter(|weight| (0.0..=1.0).contains(weight)).ok_or_else(expected)?;
                Action::Layer(Some(Layer { clip, joint, weight }))
            }
            "skinning" => Action::Skinning(
                Skinning::parse(value).ok_or(format!("skinning: expected linear or dual-quaternion, found '{value}'"))?,
            ),
            "morph" => {
                let expected = || format!("morph: expected TARGET:WEIGHT or TARGET:clip (numbers), found '{value}'");
                let (target, weight) = value.split_once(':').ok_or_else(expected)?;
                let target = target.parse().map_err(|_| expected())?;
                let weight = match weight {
                    "clip" => None,
                    weight => Some(weight.parse::<f32>().ok().filter(|weight| weight.is_finite()).ok_or_else(expected)?),
                };
                Action::Morph(target, weight)
            }
            "capture" => Action::Capture,
            "remove-model" => Action::RemoveModel(number("remove-model")? as usize),
            "open" if !value.is_empty() => Action::Open(value.into()),
            _ => {
                return Err(format!(
                "expected strategy, instances, clip, fade, speed, seek, pause, play, step, debug, layer, capture, open=PATH, panel=on|off, animation-lod=on|off, morph=TARGET:WEIGHT|clip, skinning=linear|dual-quaternion, motion-blur=on|off, shadows=map|ray, raster=hardware|compute|auto or variety=on|off, found '{text}'"
            ))
            }
        })
    }
}
