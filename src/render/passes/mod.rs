//! The frame's passes, one a file, in recording order: `cull` (instances against the camera and
//! the light, levels of detail, indirect arguments), `palette` (joint palettes from the clips'
//! keys), `skin` (every kept vertex into the skinned buffer), `triangles` (the camera's
//! back-facing and off-screen triangles culled), `shadow` and `forward` (both drawing from the
//! skinned buffer), `debug` (the debug views), `motion` (motion blur or the motion view from the
//! velocity target), `overlay` (the viewer's panel) and `copy` (an
//! image into a buffer for read-back). `super::frame` records them.

pub mod copy;
pub mod cull;
pub mod debug;
pub mod forward;
pub mod motion;
pub mod overlay;
pub mod palette;
pub mod shadow;
pub mod skin;
pub mod trace;
pub mod triangles;
