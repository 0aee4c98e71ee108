//! Descriptor set layouts, a pool, and writes.

use std::sync::Arc;

use ash::vk;

use super::{Buffer, Check, Device, Result};

pub struct DescriptorSetLayout {
    pub raw: vk::DescriptorSetLayout,
    /// Descriptors one set of this layout takes, per type: what a pool must hold for it.
    pub counts: Vec<(vk::DescriptorType, u32)>,
    device: Arc<Device>,
}

impl DescriptorSetLayout {
    /// `bindings`: (binding number, descriptor type, stages).
    pub fn new(
        device: &Arc<Device>,
        name: &str,
        bindings: &[(u32, vk::DescriptorType, vk::ShaderStageFlags)],
    ) -> Result<DescriptorSetLayout> {
        let counted: Vec<_> = bindings.iter().map(|&(binding, kind, stages)| (binding, kind, stages, 1)).collect();
        DescriptorSetLayout::with_counts(device, name, &counted)
    }

    /// Like `new`, with a descriptor count per binding (arrays of buffers: `(binding, type, stages, count)`).
    pub fn with_counts(
        device: &Arc<Device>,
        name: &str,
        bindings: &[(u32, vk::DescriptorType, vk::ShaderStageFlags, u32)],
    ) -> Result<DescriptorSetLayout> {
        let mut counts = Vec::new();
        for &(_, kind, _, count) in bindings {
            add_count(&mut counts, kind, count);
        }
        let bindings: Vec<_> = bindings
            .iter()
            .map(|&(binding, kind, stages, count)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(binding)
                    .descriptor_type(kind)
                    .descriptor_count(count)
                    .stage_flags(stages)
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
        let raw = unsafe { device.raw.create_descriptor_set_layout(&info, None) }.check("vkCreateDescriptorSetLayout")?;
        device.set_name(raw, name);
        Ok(DescriptorSetLayout { raw, counts, device: device.clone() })
    }
}

impl Drop for DescriptorSetLayout {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_descriptor_set_layout(self.raw, None) };
    }
}

/// Adds `count` descriptors of `kind` to a per-type tally.
fn add_count(counts: &mut Vec<(vk::DescriptorType, u32)>, kind: vk::DescriptorType, count: u32) {
    match counts.iter_mut().find(|(known, _)| *known == kind) {
        Some((_, total)) => *total += count,
        None => counts.push((kind, count)),
    }
}

/// A pool of descriptor sets; sets are freed with it.
pub struct DescriptorPool {
    pub raw: vk::DescriptorPool,
    device: Arc<Device>,
}

impl DescriptorPool {
    /// A pool with room for exactly the sets listed: (layout, how many sets of it).
    pub fn for_sets(device: &Arc<Device>, name: &str, sets: &[(&DescriptorSetLayout, u32)]) -> Result<DescriptorPool> {
        let mut totals = Vec::new();
        for &(layout, count) in sets {
            for &(kind, descriptors) in &layout.counts {
                add_count(&mut totals, kind, descriptors * count);
            }
        }
        let max_sets = sets.iter().map(|&(_, count)| count).sum::<u32>().max(1);
        let sizes: Vec<_> = totals
            .iter()
            .filter(|&&(_, count)| count > 0)
            .map(|&(kind, count)| vk::DescriptorPoolSize::default().ty(kind).descriptor_count(count))
            .collect();
        let info = vk::DescriptorPoolCreateInfo::default().max_sets(max_sets).pool_sizes(&sizes);
        let raw = unsafe { device.raw.create_descriptor_pool(&info, None) }.check("vkCreateDescriptorPool")?;
        device.set_name(raw, name);
        Ok(DescriptorPool { raw, device: device.clone() })
    }

    /// A pool of one set of `layout`, named `NAME.pool` and `NAME.set`, with the set written: what a
    /// pass whose set never changes keeps beside it.
    pub fn with_one_set(
        device: &Arc<Device>,
        name: &str,
        layout: &DescriptorSetLayout,
        bindings: &[(u32, Resource<'_>)],
    ) -> Result<(DescriptorPool, vk::DescriptorSet)> {
        let pool = DescriptorPool::for_sets(device, &format!("{name}.pool"), &[(layout, 1)])?;
        let set = pool.allocate(layout, &format!("{name}.set"))?;
        write_set(device, set, bindings);
        Ok((pool, set))
    }

    pub fn allocate(&self, layout: &DescriptorSetLayout, name: &str) -> Result<vk::DescriptorSet> {
        let layouts = [layout.raw];
        let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(self.raw).set_layouts(&layouts);
        let set = unsafe { self.device.raw.allocate_descriptor_sets(&info) }.check("vkAllocateDescriptorSets")?[0];
        self.device.set_name(set, name);
        Ok(set)
    }
}

impl Drop for DescriptorPool {
    fn drop(&mut self) {
        unsafe { self.device.raw.destroy_descriptor_pool(self.raw, None) };
    }
}

/// What goes into one binding of a set.
pub enum Resource<'a> {
    StorageBuffer(&'a Buffer),
    /// An array binding: element i is buffer i.
    StorageBuffers(Vec<&'a Buffer>),
    UniformBuffer(&'a Buffer),
    /// A combined image sampler in SHADER_READ_ONLY_OPTIMAL.
    SampledImage(vk::ImageView, vk::Sampler),
    /// An array binding of them: element i is image i.
    SampledImages(Vec<(vk::ImageView, vk::Sampler)>),
    /// A top-level acceleration structure, for ray queries.
    AccelerationStructure(vk::AccelerationStructureKHR),
}

/// Points the bindings of `set` at resources: `(binding number, resource)`.
pub fn write_set(device: &Device, set: vk::DescriptorSet, bindings: &[(u32, Resource<'_>)]) {
    let buffer_infos: Vec<Vec<vk::DescriptorBufferInfo>> = bindings
        .iter()
        .map(|(_, resource)| match resource {
            Resource::StorageBuffer(buffer) | Resource::UniformBuffer(buffer) => vec![buffer.descriptor()],
            Resource::StorageBuffers(buffers) => buffers.iter().map(|buffer| buffer.descriptor()).collect(),
            Resource::SampledImage(..) | Resource::SampledImages(_) | Resource::AccelerationStructure(_) => {
                vec![vk::DescriptorBufferInfo::default()]
            }
        })
        .collect();
    let image_info = |&(view, sampler): &(vk::ImageView, vk::Sampler)| {
        vk::DescriptorImageInfo::default()
            .image_view(view)
            .sampler(sampler)
            .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)
    };
    let image_infos: Vec<Vec<vk::DescriptorImageInfo>> = bindings
        .iter()
        .map(|(_, resource)| match resource {
            Resource::SampledImage(view, sampler) => vec![image_info(&(*view, *sampler))],
            Resource::SampledImages(images) => images.iter().map(image_info).collect(),
            _ => vec![vk::DescriptorImageInfo::default()],
        })
        .collect();
    let structures: Vec<[vk::AccelerationStructureKHR; 1]> = bindings
        .iter()
        .map(|(_, resource)| match resource {
            Resource::AccelerationStructure(structure) => [*structure],
            _ => [vk::AccelerationStructureKHR::null()],
        })
        .collect();
    let mut structure_writes: Vec<vk::WriteDescriptorSetAccelerationStructureKHR> = structures
        .iter()
        .map(|structure| vk::WriteDescriptorSetAccelerationStructureKHR::default().acceleration_structures(structure))
        .collect();
    let mut structure_writes = structure_writes.iter_mut();
    let writes: Vec<vk::WriteDescriptorSet> = bindings
        .iter()
        .enumerate()
        .map(|(index, (binding, resource))| {
            let structure_write = structure_writes.next().expect("one a binding");
            let write = vk::WriteDescriptorSet::default().dst_set(set).dst_binding(*binding);
            match resource {
                Resource::StorageBuffer(_) | Resource::StorageBuffers(_) => {
                    write.descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(&buffer_infos[index])
                }
                Resource::UniformBuffer(_) => {
                    write.descriptor_type(vk::DescriptorType::UNIFORM_BUFFER).buffer_info(&buffer_infos[index])
                }
                Resource::SampledImage(..) | Resource::SampledImages(_) => {
                    write.descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER).image_info(&image_infos[index])
                }
                Resource::AccelerationStructure(_) => write
                    .descriptor_type(vk::DescriptorType::ACCELERATION_STRUCTURE_KHR)
                    .descriptor_count(1)
                    .push_next(structure_write),
            }
        })
        .collect();
    unsafe { device.raw.update_descriptor_sets(&writes, &[]) };
}
