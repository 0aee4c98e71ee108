//! Where the frame's resolved image goes, and the hazards on it at the frame's end.

use ash::vk;
use vk::{AccessFlags2 as Access, PipelineStageFlags2 as Stage};

use super::offscreen::OffscreenTarget;
use crate::gpu;
use crate::gpu::barrier::{self, side, Hazard};

/// Where the frame's resolved image goes.
pub enum Output<'a> {
    /// Headless: resolve into `offscreen.color`, then copy to its readback buffer.
    Offscreen(&'a OffscreenTarget),
    /// A swapchain image acquired with the slot's `image_available` semaphore.
    Swapchain {
        image: vk::Image,
        view: vk::ImageView,
        extent: vk::Extent2D,
        render_finished: vk::Semaphore,
        /// The image takes copies (`TRANSFER_DST`): the overlay may copy the panel onto it.
        takes_copies: bool,
    },
}

impl Output<'_> {
    /// The image the frame ends in, its view and its size.
    pub(super) fn target(&self) -> (vk::Image, vk::ImageView, vk::Extent2D) {
        match self {
            Output::Offscreen(target) => (target.color.raw, target.color.view, target.color.extent()),
            Output::Swapchain { image, view, extent, .. } => (*image, *view, *extent),
        }
    }

    /// Whether the image takes copies (the overlay may copy its cached panel onto it).
    pub(super) fn takes_copies(&self) -> bool {
        match self {
            Output::Offscreen(_) => true,
            Output::Swapchain { takes_copies, .. } => *takes_copies,
        }
    }

    /// Before the forward pass resolves into the target: its previous use is done.
    pub(super) fn resolve_hazard(&self, resolve: barrier::Side) -> Hazard {
        match self {
            Output::Offscreen(target) => target.resolve_hazard(resolve),
            Output::Swapchain { image, .. } => {
                // The submit waits for the acquire at colour output: the same stage orders this.
                let acquired =
                    side("the acquire (semaphore wait at colour output)", Stage::COLOR_ATTACHMENT_OUTPUT, Access::NONE);
                let layouts = (vk::ImageLayout::UNDEFINED, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL);
                Hazard::raw_image("swapchain image", *image, gpu::swapchain::color_range(), acquired, resolve, layouts)
            }
        }
    }

    /// After the last write to the image (the resolve, or the overlay), in the layout it left:
    /// the copy-out, or presentation (the submit's semaphore orders it).
    pub(super) fn after_resolve_hazards(&self, (last, layout): (barrier::Side, vk::ImageLayout)) -> Vec<Hazard> {
        match self {
            Output::Offscreen(target) => target.copy_hazards(last, layout),
            Output::Swapchain { image, .. } => {
                let present = side("presentation", Stage::NONE, Access::NONE);
                let layouts = (layout, vk::ImageLayout::PRESENT_SRC_KHR);
                vec![Hazard::raw_image("swapchain image", *image, gpu::swapchain::color_range(), last, present, layouts)]
            }
        }
    }

    pub(super) fn record_copy_out(&self, command_buffer: vk::CommandBuffer) {
        if let Output::Offscreen(target) = self {
            target.record_copy_out(command_buffer);
        }
    }

    pub(super) fn host_hazard(&self) -> Option<Hazard> {
        match self {
            Output::Offscreen(target) => Some(target.host_hazard()),
            Output::Swapchain { .. } => None,
        }
    }
}
