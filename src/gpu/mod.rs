//! A thin layer over ash. It knows Vulkan objects, memory and synchronization; it knows nothing
//! about joints or skinning (that is `render/`).
//!
//! Every wrapper frees itself in `Drop` and holds an `Arc<Device>`, so the device outlives all of them.

pub mod barrier;
pub mod buffer;
pub mod commands;
pub mod descriptors;
pub mod device;
pub mod image;
pub mod instance;
pub mod pipeline;
pub mod query;
pub mod swapchain;

pub use buffer::Buffer;
pub use device::Device;
pub use image::{Image, ImageDesc, Sampler};
pub use instance::{Instance, InstanceOptions, MessageCounts};

use ash::vk;

/// What can go wrong below the renderer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "cannot load the Vulkan loader (libvulkan.so.1): {0}. Install it with `apt-get install libvulkan1 mesa-vulkan-drivers`"
    )]
    Loader(String),
    #[error("{call} failed: {result}{hint}", hint = hint_for(*.result))]
    Call { call: &'static str, result: vk::Result },
    #[error("no usable Vulkan device: {0}. For a CPU device install `mesa-vulkan-drivers` (lavapipe)")]
    NoDevice(String),
    #[error("GPU memory allocation for {name} failed: {source}")]
    Allocation { name: String, source: gpu_allocator::AllocationError },
    #[error("{0}")]
    Other(String),
}

fn hint_for(result: vk::Result) -> &'static str {
    match result {
        vk::Result::ERROR_DEVICE_LOST => " (the device was lost: the driver reset or crashed)",
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY | vk::Result::ERROR_OUT_OF_HOST_MEMORY => {
            " (out of memory: try fewer instances or a smaller size)"
        }
        vk::Result::ERROR_LAYER_NOT_PRESENT => " (install `vulkan-validationlayers`)",
        vk::Result::ERROR_INCOMPATIBLE_DRIVER => " (no driver: install `mesa-vulkan-drivers`)",
        _ => "",
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches the Vulkan call's name to a raw `vk::Result`.
pub trait Check<T> {
    fn check(self, call: &'static str) -> Result<T>;
}

impl<T> Check<T> for std::result::Result<T, vk::Result> {
    fn check(self, call: &'static str) -> Result<T> {
        self.map_err(|result| Error::Call { call, result })
    }
}
