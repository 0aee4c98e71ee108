//! Acceleration structures: a `VkAccelerationStructureKHR` over a range of a buffer that holds it,
//! named for RenderDoc, destroyed on drop (the buffer outlives it: its owner drops structures first).

use std::sync::Arc;

use ash::vk;

use super::{Buffer, Check, Device, Error, Result};

pub struct AccelerationStructure {
    pub raw: vk::AccelerationStructureKHR,
    /// What ray queries and instance records name it by.
    pub address: vk::DeviceAddress,
    device: Arc<Device>,
}

impl AccelerationStructure {
    /// A structure of `kind` in `size` bytes of `storage` from `offset` (a multiple of 256).
    pub fn new(
        device: &Arc<Device>,
        name: &str,
        kind: vk::AccelerationStructureTypeKHR,
        storage: &Buffer,
        (offset, size): (vk::DeviceSize, vk::DeviceSize),
    ) -> Result<AccelerationStructure> {
        let Some(ray_query) = &device.ray_query else {
            return Err(Error::Other(format!("{name}: this device has no acceleration structures")));
        };
        let info = vk::AccelerationStructureCreateInfoKHR::default().buffer(storage.raw).offset(offset).size(size).ty(kind);
        let raw = unsafe { ray_query.loader.create_acceleration_structure(&info, None) }
            .check_on("vkCreateAccelerationStructureKHR", name)?;
        let address_info = vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(raw);
        let address = unsafe { ray_query.loader.get_acceleration_structure_device_address(&address_info) };
        device.set_name(raw, name);
        Ok(AccelerationStructure { raw, address, device: device.clone() })
    }
}

impl Drop for AccelerationStructure {
    fn drop(&mut self) {
        if let Some(ray_query) = &self.device.ray_query {
            unsafe { ray_query.loader.destroy_acceleration_structure(self.raw, None) };
        }
    }
}
