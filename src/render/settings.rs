//! What the application chooses for its renderers: one value passed whole to
//! `Renderer::with_settings`.

use ash::vk;

/// What the application chooses for a renderer besides the model, the strategy and the count,
/// passed whole to `Renderer::with_settings`: the features it turns on, the skin pass's layout, and
/// (tests) lowered device limits.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RenderSettings {
    /// Room for the triangle pass's light run (`--light-culling on`), where the count fits with it.
    pub light_culling: bool,
    /// Animation LOD (`--animation-lod on`): an instance under this many pixels on screen has its
    /// palette computed every 2nd, 4th or 8th frame by its size (`Setup::animation_lod`); None:
    /// every frame.
    pub animation_lod: Option<f32>,
    /// Shadows from the shadow map, or traced through acceleration structures built from the
    /// skinned buffer (`--shadows ray`: a device with ray query; not the `vertex` strategy, which
    /// has no skinned buffer to build from).
    pub shadows: Shadows,
    /// Motion blur from the velocity target (`--motion-blur on`): the renderer's `motion_blur`
    /// at start, which may change between frames.
    pub motion_blur: bool,
    /// Which rasterizer draws the model's triangles (`--raster`): the renderer's `raster` at
    /// start, which may change between frames.
    pub raster: Raster,
    /// The skin pass's layout; None: the device's default, or what `VKSKIN_SKIN_WORKGROUP` and
    /// `VKSKIN_SKIN_STAGED_STORES` ask for (`SkinTuning::from_env`).
    pub skin: Option<SkinTuning>,
    /// Tests lower the device's limits to reach them with few instances: the bytes one
    /// storage-buffer binding may hold, below maxStorageBufferRange (many chunks)...
    pub binding: Option<u64>,
    /// ...and the bytes of the largest memory heap (a plan short of memory).
    pub heap: Option<u64>,
    /// The skinned-vertex pools' screen term (`chunks::POOL_SCREEN_VERTICES`): tests lower it to
    /// see a frame degrade.
    pub pool_vertices: Option<u64>,
}

impl From<Option<u64>> for RenderSettings {
    /// The binding's limit alone.
    fn from(binding: Option<u64>) -> RenderSettings {
        RenderSettings { binding, ..RenderSettings::default() }
    }
}

/// Where the forward pass's shadows come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Shadows {
    /// A 2048² shadow map drawn from the light (the shadow pass), 3×3 PCF.
    #[default]
    Map,
    /// A ray towards the light from every shaded sample, by ray query against a top-level
    /// structure over every instance's bottom level, built from its skinned vertices each frame
    /// (the trace pass): no shadow pass.
    Ray,
}

impl Shadows {
    pub const ALL: [Shadows; 2] = [Shadows::Map, Shadows::Ray];

    pub fn name(self) -> &'static str {
        match self {
            Shadows::Map => "map",
            Shadows::Ray => "ray",
        }
    }

    pub fn parse(text: &str) -> Option<Shadows> {
        Shadows::ALL.into_iter().find(|shadows| shadows.name().eq_ignore_ascii_case(text.trim()))
    }
}

/// Which rasterizer draws the triangles the triangle pass keeps (the `compute` strategy; the others
/// always draw with the hardware's): `passes::raster`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Raster {
    /// The hardware rasterizer, every triangle (the shadow and forward passes' draws).
    #[default]
    Hardware,
    /// The compute rasterizer, every triangle it can take (in front of the eye, inside its guard
    /// band, while its list has room); the rest the hardware's.
    Compute,
    /// Each triangle by its size: a screen box at most `AUTO_RASTER_PIXELS` across in compute, the
    /// larger ones by the hardware.
    Auto,
}

/// `--raster auto`'s threshold: a triangle whose screen box is at most this many pixels across
/// (texels, in the shadow map) goes to the compute rasterizer. Nanite sends clusters of triangles
/// under about 32 pixels long to its software rasterizer; per triangle, an invocation walking its
/// box, a few pixels is where a sample loop stays short (docs/compute-raster.md, the figures).
pub const AUTO_RASTER_PIXELS: f32 = 4.0;

impl Raster {
    pub const ALL: [Raster; 3] = [Raster::Hardware, Raster::Compute, Raster::Auto];

    pub fn name(self) -> &'static str {
        match self {
            Raster::Hardware => "hardware",
            Raster::Compute => "compute",
            Raster::Auto => "auto",
        }
    }

    pub fn parse(text: &str) -> Option<Raster> {
        Raster::ALL.into_iter().find(|raster| raster.name().eq_ignore_ascii_case(text.trim()))
    }

    /// The triangle pass's threshold (`TrianglesPush::raster_pixels`): the largest screen box the
    /// raster pass takes, 0 for none.
    pub fn pixels(self) -> f32 {
        match self {
            Raster::Hardware => 0.0,
            Raster::Compute => f32::MAX,
            Raster::Auto => AUTO_RASTER_PIXELS,
        }
    }
}

/// How the skin pass's work is laid out. Every layout skins the same bits
/// (tests/it/gpu_skinning.rs); the defaults are what measurements chose (docs/results.md, "On a
/// GPU"), and two variables override them for tuning on another device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkinTuning {
    /// Vertices per workgroup (x); the y dimension walks instances. `VKSKIN_SKIN_WORKGROUP`
    /// (32, 64, 128, 256 or 512). 64 was fastest on an H200 (128: 1.02x its time, 256: 1.08x).
    pub workgroup_size: u32,
    /// The workgroup gathers its skinned words in shared memory and stores them as one contiguous
    /// span (whole sectors a warp store) instead of 7 words 28 bytes apart: 0.65x the pass's time
    /// on an H200, 1.6x on lavapipe, so on for GPUs and off for CPU devices.
    /// `VKSKIN_SKIN_STAGED_STORES=0|1`.
    pub staged_stores: bool,
}

impl SkinTuning {
    /// What the measurements chose for a device of this type.
    pub fn for_device(device_type: vk::PhysicalDeviceType) -> SkinTuning {
        SkinTuning { workgroup_size: 64, staged_stores: device_type != vk::PhysicalDeviceType::CPU }
    }

    /// `defaults`, with what the variables ask for; a value out of range is an error that says
    /// what is allowed rather than a silent default.
    pub fn from_env(defaults: SkinTuning) -> Result<SkinTuning, String> {
        let mut tuning = defaults;
        if let Ok(value) = std::env::var("VKSKIN_SKIN_WORKGROUP") {
            tuning.workgroup_size = match value.trim().parse::<u32>() {
                Ok(size @ (32 | 64 | 128 | 256 | 512)) => size,
                _ => return Err(format!("VKSKIN_SKIN_WORKGROUP={value}: expected 32, 64, 128, 256 or 512")),
            };
        }
        if let Ok(value) = std::env::var("VKSKIN_SKIN_STAGED_STORES") {
            tuning.staged_stores = match value.trim() {
                "1" | "on" => true,
                "0" | "off" => false,
                _ => return Err(format!("VKSKIN_SKIN_STAGED_STORES={value}: expected 0 or 1")),
            };
        }
        Ok(tuning)
    }
}
