//! What the logical device is created with: the features (the caller's needs, what the device
//! offers beside them, the 1.3 pair from core or from extensions, ray query's) and the extensions,
//! and the `vkCreateDevice` call that chains them.

use std::ffi::{c_char, CStr};

use ash::vk;

use super::{DeviceRequest, Needs, RAY_QUERY_EXTENSIONS};
use crate::gpu::{Check, Instance, Result};

/// The features the device is created with: the caller's [`Needs`]; wireframes, geometry shaders,
/// independent blend and 16-bit storage where the device has them (reported on [`Device`]);
/// synchronization2 and dynamic rendering, from core 1.3 or from their extensions; ray query's.
/// [`Features::chain`] links the ones that apply.
pub(super) struct Features {
    pub(super) core: vk::PhysicalDeviceFeatures,
    pub(super) vulkan11: vk::PhysicalDeviceVulkan11Features<'static>,
    pub(super) vulkan12: vk::PhysicalDeviceVulkan12Features<'static>,
    pub(super) vulkan13: vk::PhysicalDeviceVulkan13Features<'static>,
    synchronization2: vk::PhysicalDeviceSynchronization2Features<'static>,
    dynamic_rendering: vk::PhysicalDeviceDynamicRenderingFeatures<'static>,
    acceleration_structure: vk::PhysicalDeviceAccelerationStructureFeaturesKHR<'static>,
    ray_query: vk::PhysicalDeviceRayQueryFeaturesKHR<'static>,
}

impl Features {
    pub(super) fn choose(instance: &Instance, physical: vk::PhysicalDevice, needs: Needs) -> Features {
        let supported = unsafe { instance.raw.get_physical_device_features(physical) };
        let core = vk::PhysicalDeviceFeatures::default()
            .multi_draw_indirect(needs.multi_draw_indirect)
            .draw_indirect_first_instance(needs.draw_indirect_first_instance)
            .shader_storage_buffer_array_dynamic_indexing(needs.storage_buffer_array_dynamic_indexing)
            .fill_mode_non_solid(supported.fill_mode_non_solid == vk::TRUE)
            .geometry_shader(supported.geometry_shader == vk::TRUE)
            .independent_blend(supported.independent_blend == vk::TRUE)
            .occlusion_query_precise(supported.occlusion_query_precise == vk::TRUE);
        // 16-bit storage, where there is some (reported as `storage_buffer_16bit`).
        let mut supported11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut supported2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut supported11);
        unsafe { instance.raw.get_physical_device_features2(physical, &mut supported2) };
        let storage_buffer_16bit = supported11.storage_buffer16_bit_access == vk::TRUE;
        let raster = compute_raster_supported(instance, physical);
        let core = core.shader_int64(raster).sample_rate_shading(raster);
        Features {
            core,
            vulkan11: vk::PhysicalDeviceVulkan11Features::default()
                .shader_draw_parameters(needs.shader_draw_parameters)
                .storage_buffer16_bit_access(storage_buffer_16bit),
            vulkan12: vk::PhysicalDeviceVulkan12Features::default()
                .draw_indirect_count(needs.draw_indirect_count)
                .shader_buffer_int64_atomics(raster)
                .runtime_descriptor_array(raster)
                .shader_sampled_image_array_non_uniform_indexing(raster)
                .shader_storage_buffer_array_non_uniform_indexing(raster),
            vulkan13: vk::PhysicalDeviceVulkan13Features::default().synchronization2(true).dynamic_rendering(true),
            synchronization2: vk::PhysicalDeviceSynchronization2Features::default().synchronization2(true),
            dynamic_rendering: vk::PhysicalDeviceDynamicRenderingFeatures::default().dynamic_rendering(true),
            acceleration_structure: vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default().acceleration_structure(true),
            ray_query: vk::PhysicalDeviceRayQueryFeaturesKHR::default().ray_query(true),
        }
    }

    /// `create_info` with the features linked: the 1.3 pair from core on a 1.3 device, else from
    /// their extensions; ray query's (and buffer device addresses) only where `ray_query`, since a
    /// structure of an extension the device lacks may not be chained.
    fn chain<'a>(
        &'a mut self,
        create_info: vk::DeviceCreateInfo<'a>,
        is_core_1_3: bool,
        ray_query: bool,
    ) -> vk::DeviceCreateInfo<'a> {
        if ray_query {
            self.vulkan12.buffer_device_address = vk::TRUE;
        }
        let mut create_info =
            create_info.enabled_features(&self.core).push_next(&mut self.vulkan11).push_next(&mut self.vulkan12);
        create_info = if is_core_1_3 {
            create_info.push_next(&mut self.vulkan13)
        } else {
            create_info.push_next(&mut self.synchronization2).push_next(&mut self.dynamic_rendering)
        };
        if ray_query {
            create_info = create_info.push_next(&mut self.acceleration_structure).push_next(&mut self.ray_query);
        }
        create_info
    }
}

/// Whether the device has all the compute rasterizer needs (`Device::compute_raster`).
pub(super) fn compute_raster_supported(instance: &Instance, physical: vk::PhysicalDevice) -> bool {
    let core = unsafe { instance.raw.get_physical_device_features(physical) };
    let mut features12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut features2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut features12);
    unsafe { instance.raw.get_physical_device_features2(physical, &mut features2) };
    [
        core.shader_int64,
        core.sample_rate_shading,
        features12.shader_buffer_int64_atomics,
        features12.runtime_descriptor_array,
        features12.shader_sampled_image_array_non_uniform_indexing,
        features12.shader_storage_buffer_array_non_uniform_indexing,
    ]
    .iter()
    .all(|&feature| feature == vk::TRUE)
        && subgroup_ballot(instance, physical)
}

/// Whether compute shaders have subgroup ballots and arithmetic (`Device::subgroup_ballot`).
pub(super) fn subgroup_ballot(instance: &Instance, physical: vk::PhysicalDevice) -> bool {
    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut properties2 = vk::PhysicalDeviceProperties2::default().push_next(&mut subgroup);
    unsafe { instance.raw.get_physical_device_properties2(physical, &mut properties2) };
    let ballot = vk::SubgroupFeatureFlags::BASIC | vk::SubgroupFeatureFlags::BALLOT | vk::SubgroupFeatureFlags::ARITHMETIC;
    subgroup.supported_operations.contains(ballot) && subgroup.supported_stages.contains(vk::ShaderStageFlags::COMPUTE)
}

/// The device extensions to enable, in the order they are asked for.
pub(super) struct DeviceExtensions {
    pub(super) names: Vec<&'static CStr>,
    /// Ray query's extensions are among `names`: every one is offered and its features supported.
    pub(super) ray_query: bool,
}

impl DeviceExtensions {
    pub(super) fn choose(
        instance: &Instance,
        physical: vk::PhysicalDevice,
        request: &DeviceRequest<'_>,
        is_core_1_3: bool,
    ) -> Result<DeviceExtensions> {
        let mut names = Vec::new();
        // A portability driver (MoltenVK) lists VK_KHR_portability_subset, and the spec requires
        // enabling it: the device then runs what it can of full Vulkan, which is all this sample
        // asks (its gaps, such as geometry shaders, are features checked on their own).
        let offered = unsafe { instance.raw.enumerate_device_extension_properties(physical) }
            .check("vkEnumerateDeviceExtensionProperties")?;
        let offers = |name: &CStr| offered.iter().any(|extension| extension.extension_name_as_c_str() == Ok(name));
        if offers(ash::khr::portability_subset::NAME) {
            names.push(ash::khr::portability_subset::NAME);
        }
        if request.surface.is_some() {
            names.push(ash::khr::swapchain::NAME);
        }
        // Ray query where every part of it is offered; the features asked only then (a structure of
        // an extension the device lacks may not be chained).
        let ray_query = RAY_QUERY_EXTENSIONS.iter().all(|&name| offers(name)) && offers_ray_query(instance, physical);
        if ray_query {
            names.extend(RAY_QUERY_EXTENSIONS);
        }
        if !is_core_1_3 {
            names.push(ash::khr::synchronization2::NAME);
            names.push(ash::khr::dynamic_rendering::NAME);
            names.push(ash::khr::create_renderpass2::NAME); // required by dynamic_rendering
            names.push(ash::khr::depth_stencil_resolve::NAME); // likewise
        }
        Ok(DeviceExtensions { names, ray_query })
    }
}

/// The logical device, with one queue from `queue_family`, `extensions` and `features`.
pub(super) fn create_device(
    instance: &Instance,
    physical: vk::PhysicalDevice,
    queue_family: u32,
    extensions: &DeviceExtensions,
    features: &mut Features,
    is_core_1_3: bool,
) -> Result<ash::Device> {
    let names: Vec<*const c_char> = extensions.names.iter().map(|name| name.as_ptr()).collect();
    let priorities = [1.0f32];
    let queue_infos = [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&priorities)];
    let create_info = vk::DeviceCreateInfo::default().queue_create_infos(&queue_infos).enabled_extension_names(&names);
    let create_info = features.chain(create_info, is_core_1_3, extensions.ray_query);
    unsafe { instance.raw.create_device(physical, &create_info, None) }.check("vkCreateDevice")
}

/// Whether `physical` has every feature ray query needs (its extensions offered).
fn offers_ray_query(instance: &Instance, physical: vk::PhysicalDevice) -> bool {
    let mut acceleration = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default();
    let mut query = vk::PhysicalDeviceRayQueryFeaturesKHR::default();
    let mut addresses = vk::PhysicalDeviceVulkan12Features::default();
    let mut supported =
        vk::PhysicalDeviceFeatures2::default().push_next(&mut acceleration).push_next(&mut query).push_next(&mut addresses);
    unsafe { instance.raw.get_physical_device_features2(physical, &mut supported) };
    acceleration.acceleration_structure == vk::TRUE && query.ray_query == vk::TRUE && addresses.buffer_device_address == vk::TRUE
}
