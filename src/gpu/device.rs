//! Physical-device choice, the logical device with its one queue, the memory allocator, object names
//! and the two Vulkan 1.3 features we build on (dynamic rendering, synchronization2), called through
//! their KHR extensions where the device reports 1.2 (RenderDoc 1.24 makes lavapipe do that).

use std::ffi::{CStr, CString};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};

use super::{Check, Error, Instance, Result};

mod features;

use features::{create_device, subgroup_ballot, DeviceExtensions, Features};

/// How the 1.3 commands are reached on this device.
enum Dispatch {
    Core,
    Extensions { synchronization2: ash::khr::synchronization2::Device, dynamic_rendering: ash::khr::dynamic_rendering::Device },
}

impl Dispatch {
    /// Core on a 1.3 device; below it, the extensions' loaders (enabled by `DeviceExtensions::choose`).
    fn new(instance: &Instance, raw: &ash::Device, is_core_1_3: bool) -> Dispatch {
        if is_core_1_3 {
            Dispatch::Core
        } else {
            Dispatch::Extensions {
                synchronization2: ash::khr::synchronization2::Device::new(&instance.raw, raw),
                dynamic_rendering: ash::khr::dynamic_rendering::Device::new(&instance.raw, raw),
            }
        }
    }
}

pub struct Device {
    // Drop order matters: the allocator frees its memory before the device goes, and the device goes
    // before the instance (see Drop). Every other object holds an Arc<Device> and is gone by then.
    allocator: ManuallyDrop<Arc<Mutex<Allocator>>>,
    dispatch: Dispatch,
    debug_utils: Option<ash::ext::debug_utils::Device>,
    pub raw: ash::Device,
    pub physical: vk::PhysicalDevice,
    pub properties: vk::PhysicalDeviceProperties,
    pub driver_name: String,
    pub queue: vk::Queue,
    pub queue_family: u32,
    /// fillModeNonSolid (wireframes), enabled where the device has it.
    pub fill_mode_non_solid: bool,
    /// Geometry shaders, enabled where the device has them.
    pub geometry_shader: bool,
    /// independentBlend (a pipeline that leaves its second attachment unwritten), enabled where
    /// the device has it: every desktop GPU and lavapipe.
    pub independent_blend: bool,
    /// storageBuffer16BitAccess, enabled where the device has it.
    pub storage_buffer_16bit: bool,
    /// What the compute rasterizer needs (`passes::raster`), all enabled where the device has every
    /// one: 64-bit integers and their atomics on storage buffers (the visibility buffer), arrays of
    /// textures and buffers indexed per sample (the resolve's materials and chunks), sample-rate
    /// shading, and subgroup
    /// ballots in compute shaders (one atomic a subgroup where triangles are appended).
    pub compute_raster: bool,
    /// Subgroup ballots and arithmetic in compute shaders (the triangle pass appends with them).
    pub subgroup_ballot: bool,
    /// Occlusion queries count samples exactly (`SamplesQuery`: the bench's hardware samples).
    pub occlusion_query_precise: bool,
    /// Acceleration structures and ray query, where the device offers them: `--shadows ray`.
    pub ray_query: Option<RayQuery>,
    pub instance: Instance,
    /// `vkCmdPipelineBarrier2` calls recorded through [`Device::cmd_pipeline_barrier2`], counted
    /// where they are issued (so a test can hold the frame's own record of its barriers to them).
    barrier_calls: AtomicU64,
    /// Compute dispatches recorded through [`Device::cmd_dispatch`] and
    /// [`Device::cmd_dispatch_indirect`], counted likewise.
    dispatch_calls: AtomicU64,
}

/// What tracing rays needs of a device (`VK_KHR_acceleration_structure`, `VK_KHR_ray_query` and
/// `bufferDeviceAddress`), enabled wherever it is offered: lavapipe from Mesa 24.1, most GPUs.
pub struct RayQuery {
    pub loader: ash::khr::acceleration_structure::Device,
    /// minAccelerationStructureScratchOffsetAlignment: where each build's scratch may start.
    pub scratch_alignment: u64,
}

/// The extensions [`RayQuery`] needs (deferred host operations: required by acceleration structures).
const RAY_QUERY_EXTENSIONS: [&CStr; 3] =
    [ash::khr::acceleration_structure::NAME, ash::khr::ray_query::NAME, ash::khr::deferred_host_operations::NAME];

/// What a caller asks of the device: where it presents, and what its work needs beyond the layer's
/// own (Vulkan 1.2, synchronization2, dynamic rendering, one graphics and compute queue).
pub struct DeviceRequest<'a> {
    /// The queue family must be able to present to this surface.
    pub surface: Option<(&'a ash::khr::surface::Instance, vk::SurfaceKHR)>,
    pub needs: Needs,
}

/// Features and limits a device must have for the caller's work; each is checked on every device
/// and enabled on the one chosen. (What a caller merely uses where present, such as wireframes,
/// geometry shaders and 16-bit storage, is enabled when supported and reported on [`Device`].)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    pub multi_draw_indirect: bool,
    pub draw_indirect_first_instance: bool,
    /// vkCmdDraw*IndirectCount.
    pub draw_indirect_count: bool,
    /// Arrays of storage buffers indexed dynamically in shaders.
    pub storage_buffer_array_dynamic_indexing: bool,
    /// gl_DrawID and gl_BaseInstance in vertex shaders.
    pub shader_draw_parameters: bool,
    /// maxPerStageDescriptorStorageBuffers at least this.
    pub storage_buffers_per_stage: u32,
}

fn device_type_rank(kind: vk::PhysicalDeviceType) -> u32 {
    match kind {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

impl Device {
    pub fn new(instance: Instance, request: DeviceRequest<'_>) -> Result<Device> {
        let (physical, properties, queue_family) = Self::pick(&instance, &request)?;
        let api_version = properties.api_version;
        let is_core_1_3 = vk::api_version_minor(api_version) >= 3 || vk::api_version_major(api_version) > 1;
        let mut features = Features::choose(&instance, physical, request.needs);
        let extensions = DeviceExtensions::choose(&instance, physical, &request, is_core_1_3)?;
        let raw = create_device(&instance, physical, queue_family, &extensions, &mut features, is_core_1_3)?;
        let queue = unsafe { raw.get_device_queue(queue_family, 0) };

        let dispatch = Dispatch::new(&instance, &raw, is_core_1_3);
        let debug_utils = instance.debug_utils.then(|| ash::ext::debug_utils::Device::new(&instance.raw, &raw));
        let allocator = match allocator(&instance, &raw, physical, extensions.ray_query) {
            Ok(allocator) => allocator,
            Err(source) => {
                unsafe { raw.destroy_device(None) };
                return Err(Error::Allocation { name: "allocator".into(), source });
            }
        };

        let driver_name = driver_name(&instance, physical);
        let ray_query = extensions.ray_query.then(|| ray_query_of(&instance, physical, &raw));
        let device = Device {
            allocator: ManuallyDrop::new(Arc::new(Mutex::new(allocator))),
            dispatch,
            debug_utils,
            raw,
            physical,
            properties,
            driver_name,
            queue,
            queue_family,
            // Each enabled exactly where the device has it (`Features::choose`).
            fill_mode_non_solid: features.core.fill_mode_non_solid == vk::TRUE,
            geometry_shader: features.core.geometry_shader == vk::TRUE,
            independent_blend: features.core.independent_blend == vk::TRUE,
            storage_buffer_16bit: features.vulkan11.storage_buffer16_bit_access == vk::TRUE,
            compute_raster: features.vulkan12.shader_buffer_int64_atomics == vk::TRUE,
            subgroup_ballot: subgroup_ballot(&instance, physical),
            occlusion_query_precise: features.core.occlusion_query_precise == vk::TRUE,
            ray_query,
            barrier_calls: AtomicU64::new(0),
            dispatch_calls: AtomicU64::new(0),
            instance,
        };
        device.set_name(device.queue, "queue.main");
        log::info!("device: {} ({})", device.name(), device.driver_name);
        Ok(device)
    }

    /// The physical device to use, its properties and its queue family: a discrete GPU first; lavapipe
    /// (a CPU device) is fine when it is all there is. An error lists why each was refused.
    fn pick(instance: &Instance, request: &DeviceRequest<'_>) -> Result<(vk::PhysicalDevice, vk::PhysicalDeviceProperties, u32)> {
        let physical_devices = unsafe { instance.raw.enumerate_physical_devices() }.check("vkEnumeratePhysicalDevices")?;
        if physical_devices.is_empty() {
            return Err(Error::NoDevice("the loader found no physical device".into()));
        }
        let mut rejected = Vec::new();
        let mut candidates = Vec::new();
        for &physical in &physical_devices {
            let properties = unsafe { instance.raw.get_physical_device_properties(physical) };
            let name = properties.device_name_as_c_str().unwrap_or(c"?").to_string_lossy().into_owned();
            match Self::suitability(instance, physical, &properties, request) {
                Ok(queue_family) => {
                    candidates.push((device_type_rank(properties.device_type), physical, properties, queue_family))
                }
                Err(reason) => rejected.push(format!("{name}: {reason}")),
            }
        }
        candidates.sort_by_key(|candidate| candidate.0);
        match candidates.first() {
            Some(&(_, physical, properties, queue_family)) => Ok((physical, properties, queue_family)),
            None => Err(Error::NoDevice(rejected.join("; "))),
        }
    }

    /// Why a physical device will not do, or the queue family to use on it.
    fn suitability(
        instance: &Instance,
        physical: vk::PhysicalDevice,
        properties: &vk::PhysicalDeviceProperties,
        request: &DeviceRequest<'_>,
    ) -> std::result::Result<u32, String> {
        if vk::api_version_major(properties.api_version) == 1 && vk::api_version_minor(properties.api_version) < 2 {
            return Err("needs Vulkan 1.2 or newer".into());
        }
        let needs = request.needs;
        let features = unsafe { instance.raw.get_physical_device_features(physical) };
        let mut features11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut features12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut features2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut features11).push_next(&mut features12);
        unsafe { instance.raw.get_physical_device_features2(physical, &mut features2) };
        let missing: Vec<&str> = [
            (needs.multi_draw_indirect, features.multi_draw_indirect, "multiDrawIndirect"),
            (needs.draw_indirect_first_instance, features.draw_indirect_first_instance, "drawIndirectFirstInstance"),
            (needs.draw_indirect_count, features12.draw_indirect_count, "drawIndirectCount"),
            (
                needs.storage_buffer_array_dynamic_indexing,
                features.shader_storage_buffer_array_dynamic_indexing,
                "shaderStorageBufferArrayDynamicIndexing",
            ),
            (needs.shader_draw_parameters, features11.shader_draw_parameters, "shaderDrawParameters"),
        ]
        .into_iter()
        .filter(|&(needed, supported, _)| needed && supported != vk::TRUE)
        .map(|(_, _, name)| name)
        .collect();
        if !missing.is_empty() {
            return Err(format!("needs {}", missing.join(", ")));
        }
        let limit = properties.limits.max_per_stage_descriptor_storage_buffers;
        if limit < needs.storage_buffers_per_stage {
            return Err(format!(
                "maxPerStageDescriptorStorageBuffers is {limit}, the work binds {} in one stage",
                needs.storage_buffers_per_stage
            ));
        }
        let is_core_1_3 = vk::api_version_minor(properties.api_version) >= 3;
        if !is_core_1_3 {
            let extensions =
                unsafe { instance.raw.enumerate_device_extension_properties(physical) }.map_err(|error| error.to_string())?;
            for needed in [ash::khr::synchronization2::NAME, ash::khr::dynamic_rendering::NAME] {
                if !extensions.iter().any(|extension| extension.extension_name_as_c_str() == Ok(needed)) {
                    return Err(format!("needs {}", needed.to_string_lossy()));
                }
            }
        }
        let families = unsafe { instance.raw.get_physical_device_queue_family_properties(physical) };
        let wanted = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
        families
            .iter()
            .enumerate()
            .filter(|(_, family)| family.queue_flags.contains(wanted))
            .map(|(index, _)| index as u32)
            .find(|&index| match request.surface {
                Some((loader, surface)) => {
                    unsafe { loader.get_physical_device_surface_support(physical, index, surface) }.unwrap_or(false)
                }
                None => true,
            })
            .ok_or_else(|| "no queue family with graphics + compute (and present)".into())
    }

    /// What a buffer that acceleration-structure builds read (vertices, indices) needs besides its
    /// own usage, on a device with ray query; nothing elsewhere.
    pub fn build_input_usage(&self) -> vk::BufferUsageFlags {
        match self.ray_query {
            Some(_) => {
                vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
                    | vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR
            }
            None => vk::BufferUsageFlags::empty(),
        }
    }

    pub fn name(&self) -> String {
        self.properties.device_name_as_c_str().unwrap_or(c"?").to_string_lossy().into_owned()
    }

    pub fn limits(&self) -> &vk::PhysicalDeviceLimits {
        &self.properties.limits
    }

    /// gpu-allocator's live allocations and its memory blocks' capacity, in bytes (soak reports).
    pub fn allocated_bytes(&self) -> (u64, u64) {
        let report = self.allocator().generate_report();
        (report.total_allocated_bytes, report.total_capacity_bytes)
    }

    /// The allocator, for a library that allocates through it (the overlay's egui renderer); every
    /// holder is gone before the device is (they hold an `Arc<Device>` too).
    pub fn shared_allocator(&self) -> Arc<Mutex<Allocator>> {
        Arc::clone(&self.allocator)
    }

    pub fn allocator(&self) -> MutexGuard<'_, Allocator> {
        // A poisoned lock only means another thread panicked mid-allocation; the allocator is still sound.
        self.allocator.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Gives an object a name that RenderDoc and the validation layer show.
    pub fn set_name<T: vk::Handle>(&self, object: T, name: &str) {
        let Some(debug_utils) = &self.debug_utils else { return };
        let Ok(name) = CString::new(name) else { return };
        let info = vk::DebugUtilsObjectNameInfoEXT::default().object_handle(object).object_name(&name);
        // Naming is best effort: a failure changes nothing about rendering.
        let _ = unsafe { debug_utils.set_debug_utils_object_name(&info) };
    }

    /// Opens a command-buffer label: a named region in RenderDoc's event browser.
    pub fn begin_label(&self, command_buffer: vk::CommandBuffer, name: &CStr) {
        if let Some(debug_utils) = &self.debug_utils {
            let label = vk::DebugUtilsLabelEXT::default().label_name(name);
            unsafe { debug_utils.cmd_begin_debug_utils_label(command_buffer, &label) };
        }
    }

    /// How many `vkCmdPipelineBarrier2` calls this device has recorded.
    pub fn barrier_calls(&self) -> u64 {
        self.barrier_calls.load(Ordering::Relaxed)
    }

    /// How many compute dispatches, direct or indirect, this device has recorded.
    pub fn dispatch_calls(&self) -> u64 {
        self.dispatch_calls.load(Ordering::Relaxed)
    }

    /// `vkCmdDispatch`, counted.
    pub fn cmd_dispatch(&self, command_buffer: vk::CommandBuffer, (x, y, z): (u32, u32, u32)) {
        self.dispatch_calls.fetch_add(1, Ordering::Relaxed);
        unsafe { self.raw.cmd_dispatch(command_buffer, x, y, z) };
    }

    /// `vkCmdDispatchIndirect` with the arguments at `offset` in `buffer`, counted.
    pub fn cmd_dispatch_indirect(&self, command_buffer: vk::CommandBuffer, buffer: vk::Buffer, offset: u64) {
        self.dispatch_calls.fetch_add(1, Ordering::Relaxed);
        unsafe { self.raw.cmd_dispatch_indirect(command_buffer, buffer, offset) };
    }

    pub fn end_label(&self, command_buffer: vk::CommandBuffer) {
        if let Some(debug_utils) = &self.debug_utils {
            unsafe { debug_utils.cmd_end_debug_utils_label(command_buffer) };
        }
    }

    pub fn cmd_pipeline_barrier2(&self, command_buffer: vk::CommandBuffer, dependency: &vk::DependencyInfo<'_>) {
        self.barrier_calls.fetch_add(1, Ordering::Relaxed);
        match &self.dispatch {
            Dispatch::Core => unsafe { self.raw.cmd_pipeline_barrier2(command_buffer, dependency) },
            Dispatch::Extensions { synchronization2, .. } => unsafe {
                synchronization2.cmd_pipeline_barrier2(command_buffer, dependency)
            },
        }
    }

    pub fn cmd_write_timestamp2(
        &self,
        command_buffer: vk::CommandBuffer,
        stage: vk::PipelineStageFlags2,
        pool: vk::QueryPool,
        query: u32,
    ) {
        match &self.dispatch {
            Dispatch::Core => unsafe { self.raw.cmd_write_timestamp2(command_buffer, stage, pool, query) },
            Dispatch::Extensions { synchronization2, .. } => unsafe {
                synchronization2.cmd_write_timestamp2(command_buffer, stage, pool, query)
            },
        }
    }

    pub fn cmd_begin_rendering(&self, command_buffer: vk::CommandBuffer, rendering: &vk::RenderingInfo<'_>) {
        match &self.dispatch {
            Dispatch::Core => unsafe { self.raw.cmd_begin_rendering(command_buffer, rendering) },
            Dispatch::Extensions { dynamic_rendering, .. } => unsafe {
                dynamic_rendering.cmd_begin_rendering(command_buffer, rendering)
            },
        }
    }

    pub fn cmd_end_rendering(&self, command_buffer: vk::CommandBuffer) {
        match &self.dispatch {
            Dispatch::Core => unsafe { self.raw.cmd_end_rendering(command_buffer) },
            Dispatch::Extensions { dynamic_rendering, .. } => unsafe { dynamic_rendering.cmd_end_rendering(command_buffer) },
        }
    }

    /// Waits for the device to finish everything. Only at set-up, resize and shutdown.
    pub fn wait_idle(&self) -> Result<()> {
        unsafe { self.raw.device_wait_idle() }.check("vkDeviceWaitIdle")
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        unsafe {
            // Errors here (a lost device) cannot be acted on during teardown.
            let _ = self.raw.device_wait_idle();
            ManuallyDrop::drop(&mut self.allocator);
            self.raw.destroy_device(None);
        }
        // `instance` drops after this, as the last field.
    }
}

/// The allocator for `raw`, with buffer device addresses where ray query needs them.
fn allocator(
    instance: &Instance,
    raw: &ash::Device,
    physical: vk::PhysicalDevice,
    buffer_device_address: bool,
) -> std::result::Result<Allocator, gpu_allocator::AllocationError> {
    Allocator::new(&AllocatorCreateDesc {
        instance: instance.raw.clone(),
        device: raw.clone(),
        physical_device: physical,
        debug_settings: Default::default(),
        buffer_device_address,
        allocation_sizes: Default::default(),
    })
}

/// The driver's name and version string, as the log and the reports show it.
fn driver_name(instance: &Instance, physical: vk::PhysicalDevice) -> String {
    let mut driver_properties = vk::PhysicalDeviceDriverProperties::default();
    let mut properties2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver_properties);
    unsafe { instance.raw.get_physical_device_properties2(physical, &mut properties2) };
    format!(
        "{} {}",
        driver_properties.driver_name_as_c_str().unwrap_or(c"?").to_string_lossy(),
        driver_properties.driver_info_as_c_str().unwrap_or(c"").to_string_lossy()
    )
}

/// The acceleration-structure functions and the scratch alignment, for a device with ray query.
fn ray_query_of(instance: &Instance, physical: vk::PhysicalDevice, raw: &ash::Device) -> RayQuery {
    let mut acceleration = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
    let mut properties2 = vk::PhysicalDeviceProperties2::default().push_next(&mut acceleration);
    unsafe { instance.raw.get_physical_device_properties2(physical, &mut properties2) };
    RayQuery {
        loader: ash::khr::acceleration_structure::Device::new(&instance.raw, raw),
        scratch_alignment: u64::from(acceleration.min_acceleration_structure_scratch_offset_alignment).max(1),
    }
}
