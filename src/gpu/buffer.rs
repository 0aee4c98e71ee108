//! Buffers: `{raw, allocation}` with a name, freed on drop. Host-visible ones stay mapped.

use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;

use super::{commands, Check, Device, Error, Result};

pub struct Buffer {
    pub raw: vk::Buffer,
    pub size: vk::DeviceSize,
    pub name: String,
    allocation: Option<Allocation>,
    device: Arc<Device>,
}

impl Buffer {
    pub fn new(
        device: &Arc<Device>,
        name: &str,
        size: vk::DeviceSize,
        usage: vk::BufferUsageFlags,
        location: MemoryLocation,
    ) -> Result<Buffer> {
        let info = vk::BufferCreateInfo::default().size(size.max(4)).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        let raw = unsafe { device.raw.create_buffer(&info, None) }.check_on("vkCreateBuffer", name)?;
        let requirements = unsafe { device.raw.get_buffer_memory_requirements(raw) };
        let allocation = device.allocator().allocate(&AllocationCreateDesc {
            name,
            requirements,
            location,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        });
        let allocation = match allocation {
            Ok(allocation) => allocation,
            Err(source) => {
                unsafe { device.raw.destroy_buffer(raw, None) };
                return Err(Error::Allocation { name: name.to_string(), source });
            }
        };
        let bound = unsafe { device.raw.bind_buffer_memory(raw, allocation.memory(), allocation.offset()) };
        let buffer = Buffer { raw, size, name: name.to_string(), allocation: Some(allocation), device: device.clone() };
        bound.check_on("vkBindBufferMemory", name)?;
        device.set_name(raw, name);
        Ok(buffer)
    }

    /// A device-local buffer filled from `bytes` through a staging buffer (a no-op detour on
    /// lavapipe, whose one memory type is both; the real path on a discrete GPU).
    pub fn with_data(device: &Arc<Device>, name: &str, usage: vk::BufferUsageFlags, bytes: &[u8]) -> Result<Buffer> {
        let buffer =
            Buffer::new(device, name, bytes.len() as u64, usage | vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuOnly)?;
        if bytes.is_empty() {
            return Ok(buffer);
        }
        let mut staging = Buffer::new(
            device,
            &format!("{name}.staging"),
            bytes.len() as u64,
            vk::BufferUsageFlags::TRANSFER_SRC,
            MemoryLocation::CpuToGpu,
        )?;
        staging.write_bytes(0, bytes)?;
        commands::submit_once(device, "upload", |command_buffer| {
            let region = vk::BufferCopy::default().size(bytes.len() as u64);
            unsafe { device.raw.cmd_copy_buffer(command_buffer, staging.raw, buffer.raw, &[region]) };
        })?;
        Ok(buffer)
    }

    fn mapped(&mut self) -> Result<&mut [u8]> {
        let name = self.name.clone();
        self.allocation
            .as_mut()
            .and_then(|allocation| allocation.mapped_slice_mut())
            .ok_or_else(|| Error::Other(format!("buffer {name} is not host-visible")))
    }

    /// Copies bytes into a host-visible buffer at `offset`. The caller makes sure the GPU is not
    /// reading that range (a frame-in-flight slot after its fence, or an idle queue).
    pub fn write_bytes(&mut self, offset: usize, bytes: &[u8]) -> Result<()> {
        let name = self.name.clone();
        let mapped = self.mapped()?;
        let end = offset.checked_add(bytes.len()).filter(|&end| end <= mapped.len());
        let Some(end) = end else {
            return Err(Error::Other(format!("write of {} bytes at {offset} overruns buffer {name}", bytes.len())));
        };
        mapped[offset..end].copy_from_slice(bytes);
        Ok(())
    }

    pub fn write<T: bytemuck::Pod>(&mut self, offset: usize, values: &[T]) -> Result<()> {
        self.write_bytes(offset, bytemuck::cast_slice(values))
    }

    /// A host-visible buffer's mapped memory as values, to be written in place (by several threads,
    /// in disjoint parts). The same caller's promise as [`Buffer::write_bytes`].
    pub fn mapped_values<T: bytemuck::Pod>(&mut self) -> Result<&mut [T]> {
        let name = self.name.clone();
        let size = self.size as usize;
        let mapped = self.mapped()?;
        let whole = size.min(mapped.len()) / std::mem::size_of::<T>() * std::mem::size_of::<T>();
        bytemuck::try_cast_slice_mut(&mut mapped[..whole])
            .map_err(|error| Error::Other(format!("buffer {name} cannot be seen as {}: {error}", std::any::type_name::<T>())))
    }

    /// Reads a host-visible buffer back. The caller has waited for the GPU's writes (fence) and made
    /// them visible to the host (a barrier to HOST_READ).
    pub fn read<T: bytemuck::Pod>(&mut self) -> Result<Vec<T>> {
        let size = self.size as usize;
        let mapped = self.mapped()?;
        let bytes = &mapped[..size.min(mapped.len())];
        Ok(bytes.chunks_exact(std::mem::size_of::<T>()).map(bytemuck::pod_read_unaligned).collect())
    }

    /// Its address in GPU memory (acceleration-structure builds read vertices, indices and instances
    /// by address): needs `SHADER_DEVICE_ADDRESS` usage, on a device with ray query.
    pub fn device_address(&self) -> vk::DeviceAddress {
        let info = vk::BufferDeviceAddressInfo::default().buffer(self.raw);
        unsafe { self.device.raw.get_buffer_device_address(&info) }
    }

    /// The whole buffer, for descriptor writes.
    pub fn descriptor(&self) -> vk::DescriptorBufferInfo {
        vk::DescriptorBufferInfo::default().buffer(self.raw).offset(0).range(vk::WHOLE_SIZE)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Some(allocation) = self.allocation.take() {
            // A failing free leaks the block; there is nothing better to do while dropping.
            let _ = self.device.allocator().free(allocation);
        }
        unsafe { self.device.raw.destroy_buffer(self.raw, None) };
    }
}
