//! Every integration test, in one binary so that `cargo test` links once (one module per
//! feature; `common` holds what several share).

mod animation_lod;
mod chunking;
mod cli;
mod collada_loader;
mod common;
mod conformance;
mod culling;
mod debug_views;
mod dual_quaternion;
mod fbx_loader;
mod fidelity;
mod first_minute;
mod frame_recipe;
mod framing;
mod fuzz_regressions;
mod gltf_loader;
mod gpu_skinning;
mod headless_image;
mod hidden_faces;
mod hostile;
mod layering;
mod lod;
mod long_runs;
mod md5_parser;
mod missing_parts;
mod morph;
mod motion;
mod ms3d_loader;
mod no_panics;
mod panel;
mod pose;
mod renderdoc;
mod retarget;
mod strategies;
mod triangles;
