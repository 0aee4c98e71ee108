//! Loader, instance and the debug-utils messenger that counts validation messages by severity.

use std::ffi::{c_void, CStr, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ash::vk;

use super::{Check, Error, Result};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

#[derive(Clone, Debug, Default)]
pub struct InstanceOptions {
    /// Turn on the Khronos validation layer, with synchronization validation.
    pub validation: bool,
    /// Instance extensions the window system needs (from ash-window); empty when headless.
    pub surface_extensions: Vec<&'static CStr>,
}

/// Messages the validation layer (or the driver) reported, by severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageCounts {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

#[derive(Default)]
struct Counters {
    errors: AtomicUsize,
    warnings: AtomicUsize,
    infos: AtomicUsize,
}

struct Messenger {
    loader: ash::ext::debug_utils::Instance,
    raw: vk::DebugUtilsMessengerEXT,
    /// Read by the callback through the raw pointer registered as user data; this clone keeps the
    /// allocation (and so that pointer) alive as long as the messenger.
    _counters: Arc<Counters>,
}

pub struct Instance {
    // Drop order: messenger before the instance, the entry (the loaded library) last.
    messenger: Option<Messenger>,
    counters: Arc<Counters>,
    pub raw: ash::Instance,
    pub entry: ash::Entry,
    pub validation: bool,
    /// VK_EXT_debug_utils is on: objects get names and passes get labels.
    pub debug_utils: bool,
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the layer passes back the pointer we registered; it lives as long as the messenger.
    let counters = unsafe { &*(user_data as *const Counters) };
    let message = unsafe { data.as_ref() }
        .and_then(|data| unsafe { data.message_as_c_str() })
        .map(|message| message.to_string_lossy().into_owned())
        .unwrap_or_default();
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        counters.errors.fetch_add(1, Ordering::Relaxed);
        log::error!("[vulkan {kind:?}] {message}");
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
        counters.warnings.fetch_add(1, Ordering::Relaxed);
        log::warn!("[vulkan {kind:?}] {message}");
    } else {
        counters.infos.fetch_add(1, Ordering::Relaxed);
        log::debug!("[vulkan {kind:?}] {message}");
    }
    vk::FALSE
}

/// True when VKSKIN_VALIDATION is set to anything but 0/empty.
pub fn validation_from_env() -> bool {
    std::env::var("VKSKIN_VALIDATION").is_ok_and(|value| !value.is_empty() && value != "0")
}

impl Instance {
    pub fn new(options: &InstanceOptions) -> Result<Instance> {
        // SAFETY: loading libvulkan runs its initialisers; nothing else is loaded concurrently here.
        let entry = unsafe { ash::Entry::load() }.map_err(|error| Error::Loader(error.to_string()))?;

        let available_layers =
            unsafe { entry.enumerate_instance_layer_properties() }.check("vkEnumerateInstanceLayerProperties")?;
        let has_layer = |name: &CStr| available_layers.iter().any(|layer| layer.layer_name_as_c_str() == Ok(name));
        if options.validation && !has_layer(VALIDATION_LAYER) {
            return Err(Error::Other(format!(
                "validation was requested but VK_LAYER_KHRONOS_validation is not installed: {}",
                super::INSTALL_VALIDATION
            )));
        }
        let mut layer_extensions = Vec::new();
        if options.validation {
            layer_extensions = unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                .check("vkEnumerateInstanceExtensionProperties")?;
        }
        let instance_extensions =
            unsafe { entry.enumerate_instance_extension_properties(None) }.check("vkEnumerateInstanceExtensionProperties")?;
        let has_extension = |name: &CStr| {
            instance_extensions.iter().chain(&layer_extensions).any(|extension| extension.extension_name_as_c_str() == Ok(name))
        };

        let debug_utils = has_extension(ash::ext::debug_utils::NAME);
        let validation_features = options.validation && has_extension(ash::ext::validation_features::NAME);
        let mut extensions: Vec<*const i8> = options.surface_extensions.iter().map(|name| name.as_ptr()).collect();
        if debug_utils {
            extensions.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        if validation_features {
            extensions.push(ash::ext::validation_features::NAME.as_ptr());
        }
        // MoltenVK (macOS) is a "portability" driver: the loader lists it only for an instance that
        // asks for those too. Where the loader offers the extension, ask (it changes nothing where
        // no such driver is installed).
        let portability = has_extension(ash::khr::portability_enumeration::NAME);
        if portability {
            extensions.push(ash::khr::portability_enumeration::NAME.as_ptr());
        }
        let layers: Vec<*const i8> = if options.validation { vec![VALIDATION_LAYER.as_ptr()] } else { vec![] };

        let application_name = CString::new("vkskin").map_err(|error| Error::Other(error.to_string()))?;
        let application = vk::ApplicationInfo::default()
            .application_name(&application_name)
            .application_version(vk::make_api_version(0, 0, 1, 0))
            .engine_name(&application_name)
            .api_version(vk::API_VERSION_1_3);

        let counters = Arc::new(Counters::default());
        let mut messenger_info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                    | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                    | vk::DebugUtilsMessageSeverityFlagsEXT::INFO,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(on_message))
            .user_data(Arc::as_ptr(&counters) as *mut c_void);
        // Synchronization validation finds missing barriers: the hazards this sample exists to show.
        let enabled_features = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled_features);

        let flags =
            if portability { vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR } else { vk::InstanceCreateFlags::empty() };
        let mut create_info = vk::InstanceCreateInfo::default()
            .flags(flags)
            .application_info(&application)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&extensions);
        if debug_utils {
            // Chained so that messages from vkCreateInstance/vkDestroyInstance are counted too.
            create_info = create_info.push_next(&mut messenger_info);
        }
        if validation_features {
            create_info = create_info.push_next(&mut features);
        }
        let raw = unsafe { entry.create_instance(&create_info, None) }.map_err(|result| match result {
            vk::Result::ERROR_INCOMPATIBLE_DRIVER => {
                Error::NoDevice("no Vulkan driver answered (ERROR_INCOMPATIBLE_DRIVER)".into())
            }
            result => Error::Call { call: "vkCreateInstance", result },
        })?;

        let messenger = if debug_utils {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &raw);
            let created = unsafe { loader.create_debug_utils_messenger(&messenger_info, None) };
            match created {
                Ok(messenger) => Some(Messenger { loader, raw: messenger, _counters: counters.clone() }),
                Err(result) => {
                    unsafe { raw.destroy_instance(None) };
                    return Err(Error::Call { call: "vkCreateDebugUtilsMessengerEXT", result });
                }
            }
        } else {
            None
        };
        Ok(Instance { messenger, counters, raw, entry, validation: options.validation, debug_utils })
    }

    /// Messages counted since the instance was created.
    pub fn message_counts(&self) -> MessageCounts {
        MessageCounts {
            errors: self.counters.errors.load(Ordering::Relaxed),
            warnings: self.counters.warnings.load(Ordering::Relaxed),
            infos: self.counters.infos.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let messenger = self.messenger.take();
        if let Some(messenger) = &messenger {
            unsafe { messenger.loader.destroy_debug_utils_messenger(messenger.raw, None) };
        }
        unsafe { self.raw.destroy_instance(None) };
        // The messenger chained at creation may still report from vkDestroyInstance: keep its
        // counters alive until after it.
        drop(messenger);
    }
}
