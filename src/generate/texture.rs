//! The texture: shirt, trousers, skin and shoes, procedurally shaded.

use image::{Rgba, RgbaImage};

// ---------------------------------------------------------------------------------------------
// Texture
// ---------------------------------------------------------------------------------------------

pub(super) const TEXTURE_SIZE: u32 = 256;
/// Columns from here on hold the skin (top) and shoe leather (bottom) patches.
pub(super) const PATCH_COLUMN: u32 = 192;
/// Rows of the belt band, between the shirt above and the trousers below.
pub(super) const BELT_TOP: u32 = 128;
pub(super) const BELT_BOTTOM: u32 = 144;
pub(super) const BELT_TOP_V: f64 = BELT_TOP as f64 / TEXTURE_SIZE as f64;
pub(super) const BELT_BOTTOM_V: f64 = BELT_BOTTOM as f64 / TEXTURE_SIZE as f64;

/// A small integer hash for texel noise: deterministic everywhere, no RNG crate.
pub(super) fn hash(x: u32, y: u32) -> u32 {
    let mut value = x.wrapping_mul(0x9E37_79B1) ^ y.wrapping_mul(0x85EB_CA77) ^ 0x27D4_EB2F;
    value ^= value >> 15;
    value = value.wrapping_mul(0x2C1B_3C6D);
    value ^= value >> 12;
    value = value.wrapping_mul(0x297A_2D39);
    value ^ (value >> 15)
}

pub(super) fn shade([red, green, blue]: [i32; 3], amount: i32) -> Rgba<u8> {
    let channel = |value: i32| (value + amount).clamp(0, 255) as u8;
    Rgba([channel(red), channel(green), channel(blue), 255])
}

/// 256×256 RGBA: a woven shirt with cream stripes above a leather belt with a brass buckle at the
/// front, denim twill below, and at the right a skin patch and a shoe-leather patch.
pub(super) fn texture() -> RgbaImage {
    RgbaImage::from_fn(TEXTURE_SIZE, TEXTURE_SIZE, texel)
}

pub(super) fn texel(x: u32, y: u32) -> Rgba<u8> {
    let noise = (hash(x, y) % 9) as i32 - 4;
    if x >= PATCH_COLUMN {
        return match y {
            _ if y < BELT_TOP => shade([222, 178, 148], noise / 2),
            _ if y < BELT_BOTTOM => shade([52, 34, 24], noise),
            _ => shade([66, 42, 30], noise + if (x + 3 * y) % 11 == 0 { -8 } else { 0 }),
        };
    }
    if y < BELT_TOP {
        // Plain weave of 4-texel threads: warp over weft on alternate cells, each thread brighter
        // along its middle.
        let (cell_x, cell_y) = (x / 4, y / 4);
        let warp_on_top = (cell_x + cell_y) % 2 == 0;
        let across_thread = if warp_on_top { x % 4 } else { y % 4 };
        let thread_light = [-12, 6, 6, -12][across_thread as usize];
        let stripe = cell_y % 8 == 0;
        let base = if stripe { [214, 204, 178] } else { [66, 104, 160] };
        return shade(base, thread_light + noise);
    }
    if y < BELT_BOTTOM {
        // The buckle sits at the middle of the torso's u range: its front.
        let buckle = (86..106).contains(&x) && (129..143).contains(&y);
        if buckle {
            let centre = (89..103).contains(&x) && (132..140).contains(&y);
            return if !centre { shade([206, 178, 92], noise) } else { shade([70, 44, 28], noise) };
        }
        let stitch = (y == 130 || y == 141) && x % 6 < 3;
        let edge = y == BELT_TOP || y == BELT_BOTTOM - 1;
        return match () {
            _ if stitch => shade([204, 176, 118], noise),
            _ if edge => shade([58, 36, 22], noise),
            _ => shade([96, 60, 36], noise),
        };
    }
    // Denim: a 2/1 twill's diagonal of lighter weft.
    let twill = (x + y) % 6 < 2;
    shade([44, 62, 104], noise + if twill { 18 } else { 0 })
}
