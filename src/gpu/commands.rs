//! Command pools and buffers, fences, semaphores, and one-off submissions for uploads.

use std::sync::Arc;

use ash::vk;

use super::{Check, Device, Result};

pub struct CommandPool {
    pub raw: vk::CommandPool,
    device: Arc<Device>,
}

impl CommandPool {
    pub fn new(device: &Arc<Device>, name: &str, flags: vk::CommandPoolCreateFlags) -> Result<CommandPool> {
        let info = vk::CommandPoolCreateInfo::default().queue_family_index(device.queue_family).flags(flags);
        let raw = unsafe { device.raw.create_command_pool(&info, None) }.check("vkCreateCommandPool")?;
        device.set_name(raw, name);
        Ok(CommandPool { raw, device: device.clone() })
    }

    /// Primary command buffers, freed with the pool.
    pub fn allocate(&self, name: &str, count: u32) -> Result<Vec<vk::CommandBuffer>> {
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.raw)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(count);
        let buffers = unsafe { self.device.raw.allocate_command_buffers(&info) }.check("vkAllocateCommandBuffers")?;
        for (index, &buffer) in buffers.iter().enumerate() {
            self.device.set_name(buffer, &format!("{name}[{index}]"));
        }
        Ok(buffers)
    }
}

impl Drop for CommandPool {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_command_pool(self.raw, None) };
    }
}

pub struct Fence {
    pub raw: vk::Fence,
    device: Arc<Device>,
}

impl Fence {
    pub fn new(device: &Arc<Device>, name: &str, signaled: bool) -> Result<Fence> {
        let flags = if signaled { vk::FenceCreateFlags::SIGNALED } else { vk::FenceCreateFlags::empty() };
        let raw =
            unsafe { device.raw.create_fence(&vk::FenceCreateInfo::default().flags(flags), None) }.check("vkCreateFence")?;
        device.set_name(raw, name);
        Ok(Fence { raw, device: device.clone() })
    }

    /// Waits without a time limit short of a minute: a lost device reports itself instead of hanging.
    pub fn wait(&self) -> Result<()> {
        const TIMEOUT_NS: u64 = 60_000_000_000;
        match unsafe { self.device.raw.wait_for_fences(&[self.raw], true, TIMEOUT_NS) } {
            Err(vk::Result::TIMEOUT) => Err(super::Error::Other("the GPU did not finish a frame within 60 s".into())),
            other => other.check("vkWaitForFences"),
        }
    }

    /// Waits in `slices`, asking `more` after each that ends unsignalled whether to wait on (a
    /// first frame whose pipelines compile as it runs: the caller says so and sets the limit).
    pub fn wait_in_slices(&self, slice: std::time::Duration, mut more: impl FnMut() -> bool) -> Result<()> {
        loop {
            let nanoseconds = u64::try_from(slice.as_nanos()).unwrap_or(u64::MAX);
            match unsafe { self.device.raw.wait_for_fences(&[self.raw], true, nanoseconds) } {
                Err(vk::Result::TIMEOUT) if more() => continue,
                Err(vk::Result::TIMEOUT) => return Err(super::Error::Other("the GPU did not finish its first frame".into())),
                other => return other.check("vkWaitForFences"),
            }
        }
    }

    pub fn reset(&self) -> Result<()> {
        unsafe { self.device.raw.reset_fences(&[self.raw]) }.check("vkResetFences")
    }
}

impl Drop for Fence {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_fence(self.raw, None) };
    }
}

pub struct Semaphore {
    pub raw: vk::Semaphore,
    device: Arc<Device>,
}

impl Semaphore {
    pub fn new(device: &Arc<Device>, name: &str) -> Result<Semaphore> {
        let raw = unsafe { device.raw.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }.check("vkCreateSemaphore")?;
        device.set_name(raw, name);
        Ok(Semaphore { raw, device: device.clone() })
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_semaphore(self.raw, None) };
    }
}

pub fn begin(device: &Device, command_buffer: vk::CommandBuffer) -> Result<()> {
    let info = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
    unsafe { device.raw.begin_command_buffer(command_buffer, &info) }.check("vkBeginCommandBuffer")
}

pub fn end(device: &Device, command_buffer: vk::CommandBuffer) -> Result<()> {
    unsafe { device.raw.end_command_buffer(command_buffer) }.check("vkEndCommandBuffer")
}

/// Records, submits and waits for a one-off command buffer. For set-up only, never per frame.
pub fn submit_once(device: &Arc<Device>, name: &str, record: impl FnOnce(vk::CommandBuffer)) -> Result<()> {
    let pool = CommandPool::new(device, &format!("{name}.pool"), vk::CommandPoolCreateFlags::TRANSIENT)?;
    let command_buffer = pool.allocate(name, 1)?[0];
    begin(device, command_buffer)?;
    record(command_buffer);
    end(device, command_buffer)?;
    let fence = Fence::new(device, &format!("{name}.fence"), false)?;
    let command_buffers = [command_buffer];
    let submit = vk::SubmitInfo::default().command_buffers(&command_buffers);
    unsafe { device.raw.queue_submit(device.queue, &[submit], fence.raw) }.check("vkQueueSubmit")?;
    fence.wait()
}
