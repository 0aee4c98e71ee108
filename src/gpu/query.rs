//! Timestamp and sample-count queries: a pool per frame in flight, read back after that frame's
//! fence.

use std::sync::Arc;

use ash::vk;

use super::{Check, Device, Result};

pub struct TimestampPool {
    pub raw: vk::QueryPool,
    pub count: u32,
    /// Nanoseconds per tick (`timestampPeriod`).
    pub period_ns: f64,
    /// Set once the pool has been written by a submitted frame (results exist to read).
    pub written: bool,
    device: Arc<Device>,
}

impl TimestampPool {
    pub fn new(device: &Arc<Device>, name: &str, count: u32) -> Result<TimestampPool> {
        let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(count);
        let raw = unsafe { device.raw.create_query_pool(&info, None) }.check("vkCreateQueryPool")?;
        device.set_name(raw, name);
        let period_ns = f64::from(device.limits().timestamp_period);
        Ok(TimestampPool { raw, count, period_ns, written: false, device: device.clone() })
    }

    /// Resets every query; recorded at the start of the frame, before any write.
    pub fn reset(&self, command_buffer: vk::CommandBuffer) {
        unsafe { self.device.raw.cmd_reset_query_pool(command_buffer, self.raw, 0, self.count) };
    }

    /// Writes a timestamp once every command before it has finished `stage`.
    pub fn write(&self, command_buffer: vk::CommandBuffer, stage: vk::PipelineStageFlags2, index: u32) {
        self.device.cmd_write_timestamp2(command_buffer, stage, self.raw, index);
    }

    /// Every timestamp of the last submission, in ticks. Call after that submission's fence.
    pub fn read(&self) -> Result<Option<Vec<u64>>> {
        if !self.written {
            return Ok(None);
        }
        let mut ticks = vec![0u64; self.count as usize];
        unsafe { self.device.raw.get_query_pool_results(self.raw, 0, &mut ticks, vk::QueryResultFlags::TYPE_64) }
            .check("vkGetQueryPoolResults")?;
        Ok(Some(ticks))
    }
}

impl Drop for TimestampPool {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_query_pool(self.raw, None) };
    }
}

/// One precise occlusion query: the samples that passed the depth test between its begin and end
/// (the forward pass's hardware-drawn model samples, for the bench). Needs
/// `occlusionQueryPrecise` (`Device::occlusion_query_precise`).
pub struct SamplesQuery {
    pub raw: vk::QueryPool,
    device: Arc<Device>,
}

impl SamplesQuery {
    pub fn new(device: &Arc<Device>, name: &str) -> Result<SamplesQuery> {
        let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::OCCLUSION).query_count(1);
        let raw = unsafe { device.raw.create_query_pool(&info, None) }.check("vkCreateQueryPool")?;
        device.set_name(raw, name);
        Ok(SamplesQuery { raw, device: device.clone() })
    }

    /// Resets it; recorded outside any rendering, before it begins.
    pub fn reset(&self, command_buffer: vk::CommandBuffer) {
        unsafe { self.device.raw.cmd_reset_query_pool(command_buffer, self.raw, 0, 1) };
    }

    /// Counts from here (inside the rendering whose draws it counts)...
    pub fn begin(&self, command_buffer: vk::CommandBuffer) {
        unsafe { self.device.raw.cmd_begin_query(command_buffer, self.raw, 0, vk::QueryControlFlags::PRECISE) };
    }

    /// ...to here.
    pub fn end(&self, command_buffer: vk::CommandBuffer) {
        unsafe { self.device.raw.cmd_end_query(command_buffer, self.raw, 0) };
    }

    /// The last submission's count. Call after that submission's fence.
    pub fn read(&self) -> Result<u64> {
        let mut samples = [0u64; 1];
        unsafe { self.device.raw.get_query_pool_results(self.raw, 0, &mut samples, vk::QueryResultFlags::TYPE_64) }
            .check("vkGetQueryPoolResults")?;
        Ok(samples[0])
    }
}

impl Drop for SamplesQuery {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_query_pool(self.raw, None) };
    }
}
