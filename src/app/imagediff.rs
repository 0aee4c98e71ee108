//! How far apart two renders of the same scene are: what the levels of detail cost in the image
//! (the bench's table, the tests' bound).

/// A channel that moved by more than this (of 255) counts its pixel as changed: below it lie the
/// shading shifts of a slightly different normal, above it a visible edge or a missing part.
pub const CHANGED_ABOVE: u8 = 16;

/// The difference between two images of one size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImageDifference {
    /// Pixels with a channel that moved by more than [`CHANGED_ABOVE`].
    pub changed: u64,
    pub pixels: u64,
    /// Mean absolute difference over every colour channel, of 255.
    pub mean: f64,
    /// Peak signal-to-noise ratio over the colour channels, dB (infinite for equal images).
    pub psnr: f64,
}

impl ImageDifference {
    /// Changed pixels as a share of all of them.
    pub fn changed_share(&self) -> f64 {
        self.changed as f64 / self.pixels.max(1) as f64
    }

    /// `a` against `b`; None when their sizes differ.
    pub fn between(a: &image::RgbaImage, b: &image::RgbaImage) -> Option<ImageDifference> {
        if a.dimensions() != b.dimensions() {
            return None;
        }
        let (mut changed, mut sum, mut squares) = (0u64, 0u64, 0u64);
        for (p, q) in a.pixels().zip(b.pixels()) {
            let mut largest = 0;
            for channel in 0..3 {
                let delta = p[channel].abs_diff(q[channel]);
                largest = largest.max(delta);
                sum += u64::from(delta);
                squares += u64::from(delta) * u64::from(delta);
            }
            changed += u64::from(largest > CHANGED_ABOVE);
        }
        let pixels = u64::from(a.width()) * u64::from(a.height());
        let samples = (pixels * 3).max(1) as f64;
        let mse = squares as f64 / samples;
        let psnr = if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0f64 * 255.0 / mse).log10() };
        Some(ImageDifference { changed, pixels, mean: sum as f64 / samples, psnr })
    }
}

impl std::fmt::Display for ImageDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.3}% of pixels changed, {:.1} dB PSNR", 100.0 * self.changed_share(), self.psnr)
    }
}

/// The strategies test's measure (tests/it/strategies.rs; `examples/compare_renders`): pixels
/// whose largest channel moved by more than [`FAR_ABOVE`], and the mean of each pixel's largest
/// channel difference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LargestDifference {
    pub far: u64,
    pub pixels: u64,
    /// Mean over pixels of the largest channel difference, in levels of 255.
    pub mean: f64,
}

/// A pixel whose largest channel moved by more than this is far (shading a level or two apart
/// stays near; a silhouette pixel that flipped does not).
pub const FAR_ABOVE: u8 = 12;

impl LargestDifference {
    /// `a` against `b` (the same size; extra pixels of either are not compared).
    pub fn between(a: &image::RgbaImage, b: &image::RgbaImage) -> LargestDifference {
        let (mut far, mut sum) = (0u64, 0u64);
        for (p, q) in a.pixels().zip(b.pixels()) {
            let largest = (0..3).map(|channel| p[channel].abs_diff(q[channel])).max().unwrap_or(0);
            sum += u64::from(largest);
            far += u64::from(largest > FAR_ABOVE);
        }
        let pixels = u64::from(a.width()) * u64::from(a.height());
        LargestDifference { far, pixels, mean: sum as f64 / pixels.max(1) as f64 }
    }

    /// At most 0.5 % of pixels far, and a mean under one level.
    pub fn within_strategies_tolerance(&self) -> bool {
        self.far * 200 <= self.pixels && self.mean < 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_pixels_that_moved_past_the_threshold() {
        let a = image::RgbaImage::from_pixel(4, 2, image::Rgba([100, 100, 100, 255]));
        let mut b = a.clone();
        b.put_pixel(0, 0, image::Rgba([100 + CHANGED_ABOVE, 100, 100, 255])); // at the threshold: unchanged
        b.put_pixel(1, 0, image::Rgba([100, 100 + CHANGED_ABOVE + 1, 100, 255]));
        let difference = ImageDifference::between(&a, &b).unwrap();
        assert_eq!((difference.changed, difference.pixels), (1, 8));
        assert!((difference.mean - f64::from(2 * CHANGED_ABOVE + 1) / 24.0).abs() < 1e-12);
        assert!(difference.psnr.is_finite() && difference.psnr > 20.0);
        assert_eq!(ImageDifference::between(&a, &a).unwrap().psnr, f64::INFINITY);
        assert!(ImageDifference::between(&a, &image::RgbaImage::new(2, 2)).is_none());
    }
}
