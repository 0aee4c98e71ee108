//! A thin layer over ash. It knows Vulkan objects, memory and synchronization; it knows nothing
//! about joints or skinning (that is `render/`).
//!
//! Every wrapper frees itself in `Drop` and holds an `Arc<Device>`, so the device outlives all of them.

pub mod acceleration;
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

pub use acceleration::AccelerationStructure;
pub use buffer::Buffer;
pub use device::Device;
pub use image::{Image, ImageDesc, Sampler};
pub use instance::{Instance, InstanceOptions, MessageCounts};

use ash::vk;

/// Where the Vulkan loader comes from, on this system.
#[cfg(windows)]
const INSTALL_LOADER: &str = "vulkan-1.dll comes with the GPU's driver, and with the Vulkan SDK (https://vulkan.lunarg.com)";
#[cfg(target_os = "macos")]
const INSTALL_LOADER: &str = "Install the Vulkan SDK (https://vulkan.lunarg.com): its libvulkan.1.dylib loads MoltenVK";
#[cfg(not(any(windows, target_os = "macos")))]
const INSTALL_LOADER: &str = "Install libvulkan.so.1 with `apt-get install libvulkan1 mesa-vulkan-drivers`";

/// Where a Vulkan device comes from, on this system.
#[cfg(windows)]
const INSTALL_DEVICE: &str = "Install or update the GPU's driver";
#[cfg(target_os = "macos")]
const INSTALL_DEVICE: &str = "MoltenVK comes with the Vulkan SDK; vkskin needs one with drawIndirectCount";
#[cfg(not(any(windows, target_os = "macos")))]
const INSTALL_DEVICE: &str = "For a CPU device install `mesa-vulkan-drivers` (lavapipe)";

/// Where the validation layer comes from, on this system.
#[cfg(any(windows, target_os = "macos"))]
pub(crate) const INSTALL_VALIDATION: &str = "install the Vulkan SDK (https://vulkan.lunarg.com)";
#[cfg(not(any(windows, target_os = "macos")))]
pub(crate) const INSTALL_VALIDATION: &str = "`apt-get install vulkan-validationlayers`";

/// What can go wrong below the renderer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot load the Vulkan loader: {0}. {hint}", hint = INSTALL_LOADER)]
    Loader(String),
    #[error("{call} failed: {result}{hint}", hint = hint_for(*.result))]
    Call { call: &'static str, result: vk::Result },
    /// A call on one named object (binding memory to an image or a buffer), which the message names.
    #[error("{call} for {name} failed: {result}{hint}", hint = hint_for(*.result))]
    CallOn { call: &'static str, name: String, result: vk::Result },
    #[error("no usable Vulkan device: {0}. {hint}", hint = INSTALL_DEVICE)]
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
    /// `check`, naming the object the call was on.
    fn check_on(self, call: &'static str, name: &str) -> Result<T>;
}

impl<T> Check<T> for std::result::Result<T, vk::Result> {
    fn check(self, call: &'static str) -> Result<T> {
        self.map_err(|result| Error::Call { call, result })
    }

    fn check_on(self, call: &'static str, name: &str) -> Result<T> {
        self.map_err(|result| Error::CallOn { call, name: name.to_string(), result })
    }
}
