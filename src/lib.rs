//! vkskin: GPU skeletal animation with Vulkan. Skin once in compute, draw twice (shadow, forward).

pub mod anim;
pub mod app;
pub mod bench;
pub mod capture;
pub mod formats;
pub mod generate;
pub mod generate_long;
pub mod gpu;
pub mod imagediff;
pub mod inspect;
pub mod lod;
pub mod model;
pub mod panel;
pub mod plot;
pub mod render;
pub mod viewer;
