//! vkskin: GPU skeletal animation with Vulkan. Skin once in compute, draw twice (shadow, forward).

pub mod anim;
pub mod app;
pub mod formats;
pub mod inspect;
pub mod generate;
pub mod model;
pub mod render;
pub mod viewer;
pub mod vk;
