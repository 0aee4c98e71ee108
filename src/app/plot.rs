//! Line charts as PNG for the benchmark, drawn by `plotters` into an RGB buffer. Text comes from
//! the DejaVu font the `dejavu` crate embeds (registered once as "sans-serif"), so nothing
//! depends on the system's fonts.

use std::sync::OnceLock;

use image::RgbaImage;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

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
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(23, 190, 207),
];

const INK: RGBColor = RGBColor(40, 40, 40);
const GRID: RGBColor = RGBColor(225, 225, 225);

/// An axis's range: whole decades on a log axis; from 0 (or below) with a 5 % margin on a linear one.
fn range(values: impl Iterator<Item = f64>, log: bool) -> std::ops::Range<f64> {
    let values: Vec<f64> = values.filter(|value| value.is_finite() && (!log || *value > 0.0)).collect();
    let (mut low, mut high) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), &v| (low.min(v), high.max(v)));
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
    low..high
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

/// Registers the embedded font once per process.
fn font() -> Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let registered = *REGISTERED.get_or_init(|| register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular()).is_ok());
    if registered {
        Ok(())
    } else {
        Err("the embedded DejaVu font does not parse".into())
    }
}

impl LineChart {
    pub fn render(&self, width: u32, height: u32) -> Result<RgbaImage, String> {
        font()?;
        let xs = range(self.series.iter().flat_map(|series| series.points.iter().map(|point| point.0)), self.log_x);
        let ys = range(self.series.iter().flat_map(|series| series.points.iter().map(|point| point.1)), self.log_y);
        let mut rgb = vec![255u8; width as usize * height as usize * 3];
        {
            let area = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
            // A log axis and a linear one are different coordinate types: one drawing, four ways.
            match (self.log_x, self.log_y) {
                (false, false) => self.draw(&area, xs, ys),
                (true, false) => self.draw(&area, xs.log_scale(), ys),
                (false, true) => self.draw(&area, xs, ys.log_scale()),
                (true, true) => self.draw(&area, xs.log_scale(), ys.log_scale()),
            }
            .map_err(|error| format!("plot {}: {error}", self.title))?;
            area.present().map_err(|error| format!("plot {}: {error}", self.title))?;
        }
        let rgba = rgb.chunks_exact(3).flat_map(|pixel| [pixel[0], pixel[1], pixel[2], 255]).collect();
        RgbaImage::from_raw(width, height, rgba).ok_or_else(|| "plot buffer has the wrong size".into())
    }

    fn draw<X, Y>(&self, area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>, x: X, y: Y) -> Result<(), String>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let error = |error: &dyn std::fmt::Display| error.to_string();
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, ("sans-serif", 18).into_font().color(&INK))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x, y)
            .map_err(|e| error(&e))?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .axis_style(INK)
            .label_style(("sans-serif", 13).into_font().color(&INK))
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .x_label_formatter(&|value| format_tick(*value))
            .y_label_formatter(&|value| format_tick(*value))
            .draw()
            .map_err(|e| error(&e))?;
        for (index, series) in self.series.iter().enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            let points: Vec<(f64, f64)> = series
                .points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!self.log_x || *x > 0.0) && (!self.log_y || *y > 0.0))
                .collect();
            chart
                .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
                .map_err(|e| error(&e))?
                .label(series.name.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(3)));
            chart.draw_series(points.iter().map(|&point| Circle::new(point, 3, color.filled()))).map_err(|e| error(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(GRID)
            .label_font(("sans-serif", 13).into_font().color(&INK))
            .draw()
            .map_err(|e| error(&e))
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
        let RGBColor(r, g, b) = PALETTE[0];
        let series_pixels = image.pixels().filter(|pixel| pixel.0 == [r, g, b, 255]).count();
        let ink_pixels = image.pixels().filter(|pixel| pixel[0] < 120 && pixel[1] < 120 && pixel[2] < 120).count();
        assert!(series_pixels > 200, "the line and markers are drawn ({series_pixels} px)");
        assert!(ink_pixels > 300, "axes and text are drawn ({ink_pixels} px)");
        assert_eq!(range([3.0, 700.0].into_iter(), true), 1.0..1000.0);
        assert_eq!(format_tick(0.25), "0.25");
    }
}
