//! vkskin: GPU skeletal animation with Vulkan. Skin once in compute, draw twice (shadow, forward).
//!
//! The layers, lowest first (tests/it/layering.rs holds each to the ones below it): `gpu` (Vulkan
//! through ash), `anim` (skeletons and clips), `model` (the one model type and its levels of
//! detail), `formats` (the loaders), `render` (the passes), and on top `app` (the viewer, the
//! headless commands' pieces, the benchmark) and `generate` (the bundled figure's maker).

pub mod anim;
pub mod app;
pub mod formats;
pub mod generate;
pub mod gpu;
pub mod model;
pub mod render;
