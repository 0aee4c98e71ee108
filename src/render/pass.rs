//! The frame's timed passes, in recording order: what the timings, the bench and the barrier
//! table name them.

/// The passes the frame's recipe records, each timed with GPU timestamps. `Resolve` is what follows
/// the forward pass's MSAA resolve: the present transition or the copy of a headless frame into
/// its readback buffer, and the copy of the cull counts for the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Instances,
    Cull,
    Palette,
    Skin,
    Triangles,
    Raster,
    Blas,
    Tlas,
    Shadow,
    Forward,
    Motion,
    Overlay,
    Resolve,
}

impl Pass {
    /// Every pass in recording order (each one's discriminant is its place here): timestamp i + 1
    /// closes `ALL[i]`.
    pub const ALL: [Pass; 13] = [
        Pass::Instances,
        Pass::Cull,
        Pass::Palette,
        Pass::Skin,
        Pass::Triangles,
        Pass::Raster,
        Pass::Blas,
        Pass::Tlas,
        Pass::Shadow,
        Pass::Forward,
        Pass::Motion,
        Pass::Overlay,
        Pass::Resolve,
    ];

    /// Its name in the timings, the bench's report and the frame's barrier table.
    pub const fn name(self) -> &'static str {
        match self {
            Pass::Instances => "instances",
            Pass::Cull => "cull",
            Pass::Palette => "palette",
            Pass::Skin => "skin",
            Pass::Triangles => "triangles",
            Pass::Raster => "raster",
            Pass::Blas => "blas",
            Pass::Tlas => "tlas",
            Pass::Shadow => "shadow",
            Pass::Forward => "forward",
            Pass::Motion => "motion",
            Pass::Overlay => "overlay",
            Pass::Resolve => "resolve",
        }
    }
}

// The recorder writes pass i's closing timestamp at i + 1 from its discriminant: checked when
// compiling.
const _: () = {
    let mut index = 0;
    while index < Pass::ALL.len() {
        assert!(Pass::ALL[index] as usize == index, "Pass::ALL lists the passes in discriminant order");
        index += 1;
    }
};
