//! The forward pass's targets: the multisampled colour, depth and velocity attachments, what they
//! resolve into, and the hazards on them before the pass.

use std::sync::Arc;

use ash::vk;

use super::{DEPTH_FORMAT, SAMPLES, VELOCITY_FORMAT};
use crate::gpu::barrier::{side, Hazard, Side};
use crate::gpu::{self, Device, Image, ImageDesc};

/// The multisampled attachments, the velocity target they resolve into, and the image the colour
/// resolves into when the motion pass follows: sized to the target and rebuilt with it.
pub struct ForwardTargets {
    pub color: Image,
    pub depth: Image,
    pub velocity_msaa: Image,
    /// Resolved (averaged over a pixel's samples): the motion pass samples it, tests read it back.
    pub velocity: Image,
    /// The resolved colour, when the motion pass makes the frame's image from it.
    pub scene_color: Image,
}

impl ForwardTargets {
    /// Before the pass: last frame's use of the attachments is done; their contents are
    /// discarded (the pass clears them). `velocity`: the pass writes the velocity target.
    pub fn hazards_before(&self, velocity: bool) -> Vec<Hazard> {
        use vk::{AccessFlags2 as Access, ImageLayout, PipelineStageFlags2 as Stage};
        let color = side("colour output", Stage::COLOR_ATTACHMENT_OUTPUT, Access::COLOR_ATTACHMENT_WRITE);
        let depth = side(
            "depth tests and writes",
            Stage::EARLY_FRAGMENT_TESTS | Stage::LATE_FRAGMENT_TESTS,
            Access::DEPTH_STENCIL_ATTACHMENT_READ | Access::DEPTH_STENCIL_ATTACHMENT_WRITE,
        );
        let mut hazards = vec![
            Hazard::image(
                "forward.color_msaa",
                &self.color,
                color,
                color,
                (ImageLayout::UNDEFINED, ImageLayout::COLOR_ATTACHMENT_OPTIMAL),
            ),
            Hazard::image(
                "forward.depth_msaa",
                &self.depth,
                depth,
                depth,
                (ImageLayout::UNDEFINED, ImageLayout::DEPTH_ATTACHMENT_OPTIMAL),
            ),
        ];
        if !velocity {
            return hazards;
        }
        hazards.extend([
            Hazard::image(
                "forward.velocity_msaa",
                &self.velocity_msaa,
                color,
                color,
                (ImageLayout::UNDEFINED, ImageLayout::COLOR_ATTACHMENT_OPTIMAL),
            ),
            Hazard::image(
                "forward.velocity",
                &self.velocity,
                side("last frame's motion-pass reads and read-back", Stage::FRAGMENT_SHADER | Stage::COPY, Access::NONE),
                side("the resolve", Stage::COLOR_ATTACHMENT_OUTPUT, Access::COLOR_ATTACHMENT_WRITE),
                (ImageLayout::UNDEFINED, ImageLayout::COLOR_ATTACHMENT_OPTIMAL),
            ),
        ]);
        hazards
    }

    /// Before the forward pass resolves into `scene_color` (the motion pass is on): last frame's
    /// motion pass is done reading it.
    pub fn scene_color_hazard(&self, resolve: Side) -> Hazard {
        use vk::{AccessFlags2 as Access, ImageLayout, PipelineStageFlags2 as Stage};
        Hazard::image(
            "forward.scene_color",
            &self.scene_color,
            side("last frame's motion-pass reads", Stage::FRAGMENT_SHADER, Access::NONE),
            resolve,
            (ImageLayout::UNDEFINED, ImageLayout::COLOR_ATTACHMENT_OPTIMAL),
        )
    }

    pub fn new(device: &Arc<Device>, format: vk::Format, extent: vk::Extent2D) -> gpu::Result<ForwardTargets> {
        // TRANSIENT: the multisampled contents never leave the pass (tile memory on mobile GPUs).
        let transient = vk::ImageUsageFlags::TRANSIENT_ATTACHMENT;
        let color =
            Image::new(device, "forward.color_msaa", ImageDesc::color_attachment(format, extent, SAMPLES).with_usage(transient))?;
        let depth = Image::new(
            device,
            "forward.depth_msaa",
            ImageDesc::depth_attachment(DEPTH_FORMAT, extent, SAMPLES).with_usage(transient),
        )?;
        let velocity_msaa = Image::new(
            device,
            "forward.velocity_msaa",
            ImageDesc::color_attachment(VELOCITY_FORMAT, extent, SAMPLES).with_usage(transient),
        )?;
        let single = vk::SampleCountFlags::TYPE_1;
        let sampled = vk::ImageUsageFlags::SAMPLED;
        let velocity = Image::new(
            device,
            "forward.velocity",
            ImageDesc::color_attachment(VELOCITY_FORMAT, extent, single).with_usage(sampled | vk::ImageUsageFlags::TRANSFER_SRC),
        )?;
        let scene_color =
            Image::new(device, "forward.scene_color", ImageDesc::color_attachment(format, extent, single).with_usage(sampled))?;
        Ok(ForwardTargets { color, depth, velocity_msaa, velocity, scene_color })
    }
}
