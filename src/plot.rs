//! Line charts as PNG for the benchmark: drawn on an `image` buffer, text from the DejaVu font the
//! `dejavu` crate embeds, so nothing depends on the system's fonts.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use image::{Rgba, RgbaImage};

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

/// Distinct colours for up to six series, then repeating.
const PALETTE: [[u8; 3]; 6] = [[31, 119, 180], [214, 39, 40], [44, 160, 44], [255, 127, 14], [148, 103, 189], [23, 190, 207]];

const BACKGROUND: Rgba<u8> = Rgba([255, 255, 255, 255]);
const GRID: Rgba<u8> = Rgba([225, 225, 225, 255]);
const INK: Rgba<u8> = Rgba([40, 40, 40, 255]);

/// An axis: the data range, mapped linearly or by log10.
struct Axis {
    low: f64,
    high: f64,
    log: bool,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, log: bool) -> Axis {
        let values: Vec<f64> = values.filter(|value| value.is_finite() && (!log || *value > 0.0)).collect();
        let (mut low, mut high) =
            values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), &v| (low.min(v), high.max(v)));
        if !low.is_finite() {
            (low, high) = if log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if log {
            low = 10f64.powf(low.log10().floor());
            high = 10f64.powf(high.log10().ceil().max(low.log10() + 1.0));
        } else {
            low = low.min(0.0);
            if high <= low {
                high = low + 1.0;
            }
            high += (high - low) * 0.05;
        }
        Axis { low, high, log }
    }

    /// 0..1 along the axis.
    fn fraction(&self, value: f64) -> f64 {
        if self.log {
            (value.max(f64::MIN_POSITIVE).log10() - self.low.log10()) / (self.high.log10() - self.low.log10())
        } else {
            (value - self.low) / (self.high - self.low)
        }
    }

    /// Tick values: powers of ten on a log axis; 1, 2 or 5 × 10^k steps on a linear one.
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (first, last) = (self.low.log10().round() as i32, self.high.log10().round() as i32);
            return (first..=last).map(|power| 10f64.powi(power)).collect();
        }
        let rough = (self.high - self.low) / 6.0;
        let magnitude = 10f64.powf(rough.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|step| *step >= rough).unwrap_or(magnitude * 10.0);
        let mut ticks = Vec::new();
        let mut value = (self.low / step).ceil() * step;
        while value <= self.high + step * 1e-9 && ticks.len() < 50 {
            ticks.push(value);
            value += step;
        }
        ticks
    }
}

fn format_tick(value: f64) -> String {
    if value == 0.0 {
        "0".into()
    } else if value.abs() >= 1e4 || value.abs() < 1e-2 {
        format!("{value:.0e}")
    } else if value.fract().abs() < 1e-9 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

struct Canvas<'a> {
    image: RgbaImage,
    font: FontRef<'a>,
}

impl Canvas<'_> {
    fn put(&mut self, x: i64, y: i64, color: Rgba<u8>) {
        if x >= 0 && y >= 0 && (x as u32) < self.image.width() && (y as u32) < self.image.height() {
            self.image.put_pixel(x as u32, y as u32, color);
        }
    }

    fn square(&mut self, x: i64, y: i64, radius: i64, color: Rgba<u8>) {
        for dy in -radius..=radius {
            for dx in -radius..=radius {
                self.put(x + dx, y + dy, color);
            }
        }
    }

    /// A line `thickness` pixels wide (a square pen walked along it).
    fn line(&mut self, (x0, y0): (f64, f64), (x1, y1): (f64, f64), thickness: i64, color: Rgba<u8>) {
        let steps = (x1 - x0).abs().max((y1 - y0).abs()).ceil().max(1.0) as i64;
        for step in 0..=steps {
            let t = step as f64 / steps as f64;
            self.square((x0 + (x1 - x0) * t).round() as i64, (y0 + (y1 - y0) * t).round() as i64, thickness / 2, color);
        }
    }

    fn text_width(&self, text: &str, size: f32) -> f32 {
        let scaled = self.font.as_scaled(PxScale::from(size));
        text.chars().map(|c| scaled.h_advance(self.font.glyph_id(c))).sum()
    }

    /// Text with its top-left corner at (x, y).
    fn text(&mut self, text: &str, (x, y): (f32, f32), size: f32, color: Rgba<u8>) {
        let scale = PxScale::from(size);
        let scaled = self.font.as_scaled(scale);
        let mut caret = x;
        let baseline = y + scaled.ascent();
        for c in text.chars() {
            let glyph = self.font.glyph_id(c).with_scale_and_position(scale, ab_glyph::point(caret, baseline));
            caret += scaled.h_advance(self.font.glyph_id(c));
            let Some(outline) = self.font.outline_glyph(glyph) else { continue };
            let bounds = outline.px_bounds();
            let mut covered = Vec::new();
            outline.draw(|gx, gy, coverage| covered.push((gx, gy, coverage)));
            for (gx, gy, coverage) in covered {
                let (px, py) = (bounds.min.x as i64 + i64::from(gx), bounds.min.y as i64 + i64::from(gy));
                if px < 0 || py < 0 || px as u32 >= self.image.width() || py as u32 >= self.image.height() {
                    continue;
                }
                let under = *self.image.get_pixel(px as u32, py as u32);
                let mix = |a: u8, b: u8| (f32::from(a) * (1.0 - coverage) + f32::from(b) * coverage).round() as u8;
                self.image.put_pixel(
                    px as u32,
                    py as u32,
                    Rgba([mix(under[0], color[0]), mix(under[1], color[1]), mix(under[2], color[2]), 255]),
                );
            }
        }
    }
}

impl LineChart {
    pub fn render(&self, width: u32, height: u32) -> Result<RgbaImage, String> {
        let font = FontRef::try_from_slice(dejavu::sans::regular()).map_err(|error| format!("embedded font: {error}"))?;
        let mut canvas = Canvas { image: RgbaImage::from_pixel(width, height, BACKGROUND), font };
        let (left, right, top, bottom) = (78.0, width as f64 - 20.0, 56.0, height as f64 - 52.0);
        let x_axis = Axis::new(self.series.iter().flat_map(|series| series.points.iter().map(|point| point.0)), self.log_x);
        let y_axis = Axis::new(self.series.iter().flat_map(|series| series.points.iter().map(|point| point.1)), self.log_y);
        let to_pixel =
            |(x, y): (f64, f64)| (left + x_axis.fraction(x) * (right - left), bottom - y_axis.fraction(y) * (bottom - top));

        for tick in x_axis.ticks() {
            let (x, _) = to_pixel((tick, y_axis.low.max(f64::MIN_POSITIVE)));
            canvas.line((x, top), (x, bottom), 1, GRID);
            let label = format_tick(tick);
            let label_width = f64::from(canvas.text_width(&label, 13.0));
            canvas.text(&label, ((x - label_width / 2.0) as f32, (bottom + 6.0) as f32), 13.0, INK);
        }
        for tick in y_axis.ticks() {
            let (_, y) = to_pixel((x_axis.low.max(f64::MIN_POSITIVE), tick));
            canvas.line((left, y), (right, y), 1, GRID);
            let label = format_tick(tick);
            let label_width = f64::from(canvas.text_width(&label, 13.0));
            canvas.text(&label, ((left - 8.0 - label_width) as f32, (y - 8.0) as f32), 13.0, INK);
        }
        canvas.line((left, top), (left, bottom), 1, INK);
        canvas.line((left, bottom), (right, bottom), 1, INK);
        canvas.text(&self.title, (left as f32, 10.0), 18.0, INK);
        canvas.text(&self.y_label, (left as f32, 34.0), 13.0, INK);
        let x_label_width = canvas.text_width(&self.x_label, 13.0);
        canvas.text(&self.x_label, (((left + right) / 2.0) as f32 - x_label_width / 2.0, (bottom + 26.0) as f32), 13.0, INK);

        // The legend's column fits its longest name: a line sample, a gap, the name, a margin.
        let legend_width = self.series.iter().map(|series| canvas.text_width(&series.name, 13.0) + 34.0).fold(150.0, f32::max);
        for (index, series) in self.series.iter().enumerate() {
            let [r, g, b] = PALETTE[index % PALETTE.len()];
            let color = Rgba([r, g, b, 255]);
            let points: Vec<(f64, f64)> = series
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!self.log_x || *x > 0.0) && (!self.log_y || *y > 0.0))
                .map(|&point| to_pixel(point))
                .collect();
            for pair in points.windows(2) {
                canvas.line(pair[0], pair[1], 2, color);
            }
            for &(x, y) in &points {
                canvas.square(x.round() as i64, y.round() as i64, 3, color);
            }
            // Legend, top right, one row per series.
            let legend_y = top as f32 + 6.0 + index as f32 * 18.0;
            let legend_x = right as f32 - legend_width;
            canvas.line(
                (f64::from(legend_x), f64::from(legend_y) + 8.0),
                (f64::from(legend_x) + 18.0, f64::from(legend_y) + 8.0),
                3,
                color,
            );
            canvas.text(&series.name, (legend_x + 24.0, legend_y), 13.0, INK);
        }
        Ok(canvas.image)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_draws_its_series_and_text() {
        let chart = LineChart {
            title: "frame time".into(),
            x_label: "instances".into(),
            y_label: "ms".into(),
            log_x: true,
            log_y: false,
            series: vec![Series { name: "compute".into(), points: vec![(1.0, 2.0), (10.0, 3.0), (100.0, 9.0)] }],
        };
        let image = chart.render(400, 300).expect("renders");
        let [r, g, b] = PALETTE[0];
        let series_pixels = image.pixels().filter(|pixel| pixel.0 == [r, g, b, 255]).count();
        let ink_pixels = image.pixels().filter(|pixel| pixel[0] < 120 && pixel[1] < 120 && pixel[2] < 120).count();
        assert!(series_pixels > 200, "the line and markers are drawn ({series_pixels} px)");
        assert!(ink_pixels > 300, "axes and text are drawn ({ink_pixels} px)");
        assert_eq!(Axis::new([3.0, 700.0].into_iter(), true).ticks(), vec![1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(format_tick(0.25), "0.25");
    }
}
