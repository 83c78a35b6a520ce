//! Draws a [`Figure`] as SVG with plotters, and rasterises that SVG to PNG
//! with resvg, so the two files are the same picture. The legend has its
//! own column to the right of the plot, so it never covers data; each
//! system keeps one colour in every figure of a report ([`Palette`]).

use crate::figure::{Figure, Panel, Point, Series, Ticks};
use crate::format::{axis_value, short};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::sync::OnceLock;

/// Width of every figure, in pixels.
pub const WIDTH: u32 = 960;
const PLOT_WIDTH: u32 = 680;
const TITLE_HEIGHT: u32 = 34;
const PANEL_HEIGHT: u32 = 360;
const FONT: &str = "sans-serif";

/// Colours by system, the same in every figure. Known systems have fixed
/// colours (Okabe and Ito's palette, which colour-blind readers can tell
/// apart); others take the remaining ones in order of first appearance.
#[derive(Debug, Clone, Default)]
pub struct Palette {
    others: Vec<String>,
}

/// Spark and the analytics reference (`kvbench analytics`) have theirs too,
/// so the bars of one analytics figure (map and reduce, kvbench and the
/// paper) never take a system's colour.
const FIXED: [(&str, RGBColor); 6] = [
    ("redis", RGBColor(213, 94, 0)),
    ("valkey", RGBColor(0, 114, 178)),
    ("memcached", RGBColor(0, 158, 115)),
    ("aerospike", RGBColor(204, 121, 167)),
    ("spark", RGBColor(230, 159, 0)),
    ("reference", RGBColor(120, 120, 120)),
];
const SPARE: [RGBColor; 5] = [
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(150, 110, 40),
    RGBColor(240, 228, 66),
    RGBColor(90, 60, 140),
];

impl Palette {
    /// A palette for the colour keys of `figures`.
    pub fn for_figures(figures: &[Figure]) -> Palette {
        let mut others: Vec<String> = Vec::new();
        for s in figures
            .iter()
            .flat_map(|f| &f.panels)
            .flat_map(|p| &p.series)
        {
            let known = FIXED.iter().any(|(k, _)| *k == s.colour_key);
            if !known && !others.contains(&s.colour_key) {
                others.push(s.colour_key.clone());
            }
        }
        Palette { others }
    }

    /// The colour of `key`.
    pub fn colour(&self, key: &str) -> RGBColor {
        if let Some((_, c)) = FIXED.iter().find(|(k, _)| *k == key) {
            return *c;
        }
        let i = self.others.iter().position(|k| k == key).unwrap_or(0);
        SPARE[i % SPARE.len()]
    }

    /// `#rrggbb` of `key`, for the HTML tables.
    pub fn hex(&self, key: &str) -> String {
        let RGBColor(r, g, b) = self.colour(key);
        format!("#{r:02x}{g:02x}{b:02x}")
    }
}

/// The figure as a standalone SVG document.
///
/// # Errors
/// A message when plotters cannot draw it (an empty or infinite range).
pub fn svg(fig: &Figure, palette: &Palette) -> Result<String, String> {
    let height = TITLE_HEIGHT + PANEL_HEIGHT * fig.panels.len().max(1) as u32;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (title, rest) = root.split_vertically(TITLE_HEIGHT);
        title
            .draw_text(
                &fig.title,
                &TextStyle::from((FONT, 16).into_font()).color(&BLACK),
                (12, 10),
            )
            .map_err(err)?;
        let (plots, legend) = rest.split_horizontally(PLOT_WIDTH);
        let areas = plots.split_evenly((fig.panels.len().max(1), 1));
        let last = fig.panels.len().saturating_sub(1);
        for (i, (area, panel)) in areas.iter().zip(&fig.panels).enumerate() {
            draw_panel(area, fig, panel, palette, i == last)?;
        }
        draw_legend(&legend, fig, palette)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("cannot draw the figure: {e:?}")
}

/// The x range of every point, padded; bars are centred on their index.
fn x_range(fig: &Figure) -> (f64, f64) {
    if fig.x.ticks == Ticks::Category {
        return (-0.5, fig.categories.len().max(1) as f64 - 0.5);
    }
    let xs = fig
        .panels
        .iter()
        .flat_map(|p| &p.series)
        .flat_map(|s| &s.points)
        .map(|p| p.x)
        .filter(|x| x.is_finite() && (!fig.x.log || *x > 0.0));
    let (lo, hi) = bounds(xs);
    match fig.x.ticks {
        Ticks::Nines => (0.0, hi.max(1.0)),
        _ if fig.x.log => (lo / 1.25, hi * 1.25),
        _ => (lo.min(0.0), (hi * 1.05).max(lo + 1.0)),
    }
}

fn y_range(panel: &Panel, log: bool) -> (f64, f64) {
    let ys = panel
        .series
        .iter()
        .flat_map(|s| &s.points)
        .flat_map(|p| {
            let (a, b) = p.interval.unwrap_or((p.y, p.y));
            [p.y, a, b]
        })
        .filter(|y| y.is_finite() && (!log || *y > 0.0));
    let (lo, hi) = bounds(ys);
    // An interval as wide as two iterations give must not hide the means:
    // the axis reaches at most twice the highest value and bars are cut there.
    let top = panel
        .series
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| p.y)
        .fold(f64::NEG_INFINITY, f64::max);
    let hi = if top > 0.0 { hi.min(2.0 * top) } else { hi };
    let lo = if lo < 0.0 && all_non_negative(panel) {
        0.0
    } else {
        lo
    };
    if log {
        let lo = if lo > 0.0 { lo } else { 1.0 };
        let hi = if hi > lo { hi } else { lo * 10.0 };
        (lo / 1.6, hi * 1.6)
    } else {
        (lo.min(0.0), if hi > 0.0 { hi * 1.1 } else { 1.0 })
    }
}

/// Throughput, latency, memory and CPU are never negative: an interval
/// that reaches below zero is cut at the axis.
fn all_non_negative(panel: &Panel) -> bool {
    panel
        .series
        .iter()
        .flat_map(|s| &s.points)
        .all(|p| p.y >= 0.0)
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo.is_finite() {
        (lo, hi)
    } else {
        (1.0, 10.0)
    }
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
    panel: &Panel,
    palette: &Palette,
    x_label: bool,
) -> Result<(), String> {
    let (x0, x1) = x_range(fig);
    let (y0, y1) = y_range(panel, panel.y.log);
    match (fig.x.log, panel.y.log) {
        (false, false) => draw_in(area, fig, panel, palette, x_label, x0..x1, y0..y1),
        (true, false) => draw_in(
            area,
            fig,
            panel,
            palette,
            x_label,
            (x0..x1).log_scale(),
            y0..y1,
        ),
        (false, true) => draw_in(
            area,
            fig,
            panel,
            palette,
            x_label,
            x0..x1,
            (y0..y1).log_scale(),
        ),
        (true, true) => draw_in(
            area,
            fig,
            panel,
            palette,
            x_label,
            (x0..x1).log_scale(),
            (y0..y1).log_scale(),
        ),
    }
}

fn draw_in<DB, X, Y>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
    panel: &Panel,
    palette: &Palette,
    x_label: bool,
    x: X,
    y: Y,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin_top(8)
        .margin_right(16)
        .x_label_area_size(if x_label { 44 } else { 26 })
        .y_label_area_size(72)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    let categories = fig.categories.clone();
    let ticks = fig.x.ticks;
    let x_fmt = move |v: &f64| match ticks {
        Ticks::Category => {
            if (v - v.round()).abs() < 1e-6 && *v >= 0.0 {
                categories
                    .get(v.round() as usize)
                    .cloned()
                    .unwrap_or_default()
            } else {
                String::new()
            }
        }
        _ => axis_value(*v, ticks),
    };
    let y_fmt = |v: &f64| short(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .y_desc(panel.y.label.as_str())
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(215, 215, 215));
    if x_label {
        mesh.x_desc(fig.x.label.as_str());
    }
    match ticks {
        Ticks::Nines => {
            mesh.x_labels(6);
        }
        Ticks::Category => {
            mesh.x_labels(fig.categories.len().max(1) * 2 + 1)
                .disable_x_mesh();
        }
        Ticks::Count => {
            mesh.x_labels(10);
        }
    }
    mesh.draw().map_err(err)?;
    if fig.bars {
        let n = panel.series.len().max(1) as f64;
        let width = 0.8 / n;
        // A log axis has no zero: bars rise from its bottom.
        let base = if panel.y.log {
            y_range(panel, true).0
        } else {
            0.0
        };
        for (i, s) in panel.series.iter().enumerate() {
            let colour = palette.colour(&s.colour_key);
            for p in &s.points {
                let left = p.x - 0.4 + width * i as f64;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(left, base), (left + width * 0.92, p.y)],
                        colour.filled(),
                    )))
                    .map_err(err)?;
            }
        }
        return Ok(());
    }
    // On a categorical axis the systems' points share an x: each series is
    // nudged sideways a little so overlapping interval bars stay apart.
    let n = panel.series.len();
    for (i, s) in panel.series.iter().enumerate() {
        let dodge = if ticks == Ticks::Category && n > 1 {
            (i as f64 - (n - 1) as f64 / 2.0) * (0.3 / n as f64)
        } else {
            0.0
        };
        draw_series(&mut chart, s, palette, dodge)?;
    }
    Ok(())
}

fn draw_series<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    s: &Series,
    palette: &Palette,
    dodge: f64,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let colour = palette.colour(&s.colour_key);
    let line = colour.stroke_width(2);
    let shifted: Vec<Point> = s
        .points
        .iter()
        .map(|p| Point {
            x: p.x + dodge,
            ..p.clone()
        })
        .collect();
    let points: Vec<(f64, f64)> = shifted
        .iter()
        .filter(|p| p.x.is_finite() && p.y.is_finite())
        .map(|p| (p.x, p.y))
        .collect();
    if s.dashed {
        chart
            .draw_series(DashedLineSeries::new(points.clone(), 7, 4, line))
            .map_err(err)?;
    } else {
        chart
            .draw_series(LineSeries::new(points.clone(), line))
            .map_err(err)?;
    }
    for p in &shifted {
        if let Some((lo, hi)) = p.interval {
            let (y0, y1) = (chart.y_range().start, chart.y_range().end);
            let (lo, hi) = (lo.max(y0), hi.min(y1));
            chart
                .draw_series(std::iter::once(ErrorBar::new_vertical(
                    p.x,
                    lo,
                    p.y,
                    hi,
                    colour.stroke_width(1),
                    8,
                )))
                .map_err(err)?;
        }
        // Many points (a spectrum, a time series) carry no markers.
        if s.points.len() > 40 && p.flags.is_empty() {
            continue;
        }
        let marker = if p.flags.is_empty() {
            Circle::new((p.x, p.y), 3, colour.filled())
        } else {
            Circle::new((p.x, p.y), 6, colour.stroke_width(2))
        };
        chart.draw_series(std::iter::once(marker)).map_err(err)?;
    }
    Ok(())
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fig: &Figure,
    palette: &Palette,
) -> Result<(), String> {
    let style = TextStyle::from((FONT, 12).into_font()).color(&BLACK);
    let mut names: Vec<&Series> = Vec::new();
    for s in fig.panels.iter().flat_map(|p| &p.series) {
        if !names.iter().any(|n| n.name == s.name) {
            names.push(s);
        }
    }
    let mut y = 16;
    for s in names {
        let colour = palette.colour(&s.colour_key);
        if fig.bars {
            area.draw(&Rectangle::new([(10, y - 5), (30, y + 5)], colour.filled()))
                .map_err(err)?;
        } else if s.dashed {
            for x in [10, 22] {
                area.draw(&PathElement::new(
                    vec![(x, y), (x + 8, y)],
                    colour.stroke_width(2),
                ))
                .map_err(err)?;
            }
        } else {
            area.draw(&PathElement::new(
                vec![(10, y), (30, y)],
                colour.stroke_width(2),
            ))
            .map_err(err)?;
        }
        // Long names wrap at a word so the column holds them.
        let mut line = String::new();
        let mut lines = Vec::new();
        for w in s.name.split(' ') {
            if !line.is_empty() && line.len() + w.len() > 34 {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(w);
        }
        lines.push(line);
        for (i, l) in lines.iter().enumerate() {
            area.draw_text(l, &style, (38, y - 7 + 15 * i as i32))
                .map_err(err)?;
        }
        y += 15 * lines.len() as i32 + 8;
    }
    Ok(())
}

/// The SVG rasterised to PNG at its own size, text set in the first of
/// DejaVu Sans, Liberation Sans, Arial or Noto Sans found on this machine.
///
/// # Errors
/// A message when the SVG does not parse or the PNG cannot be encoded.
pub fn png(svg: &str) -> Result<Vec<u8>, String> {
    use resvg::{tiny_skia, usvg};
    let options = usvg::Options {
        fontdb: fonts().clone(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| format!("SVG: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| "the figure has no area".to_string())?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| format!("PNG: {e}"))
}

/// The machine's fonts, read once per process (it takes tens of ms).
fn fonts() -> &'static std::sync::Arc<resvg::usvg::fontdb::Database> {
    static DB: OnceLock<std::sync::Arc<resvg::usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_system_fonts();
        let families: Vec<String> = db
            .faces()
            .flat_map(|f| f.families.iter().map(|(n, _)| n.clone()))
            .collect();
        if let Some(f) = ["DejaVu Sans", "Liberation Sans", "Arial", "Noto Sans"]
            .iter()
            .find(|f| families.iter().any(|n| n == *f))
        {
            db.set_sans_serif_family(*f);
        }
        std::sync::Arc::new(db)
    })
}

/// Whether a font for the PNGs' text exists here (without one the PNGs
/// have no text; `scripts/setup` installs DejaVu).
pub fn has_font() -> bool {
    !fonts().is_empty()
}
