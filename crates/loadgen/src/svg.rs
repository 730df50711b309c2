//! A small SVG line chart: linear (or logarithmic) x axis, logarithmic y axis, one polyline per
//! series, a legend beside the plot, an optional vertical marker (the knee) and an optional
//! horizontal threshold. Used for `sweep.svg` (latency percentiles
//! against load).
//!
//! Role: a self-contained picture that any browser shows, written without a plotting library.
//!
//! Never: emits text that is not XML-escaped; draws a point at y <= 0 (undefined on a log axis).

use std::fmt::Write as _;

/// One line of the chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    /// (x, y) in data units, drawn in the given order.
    pub points: Vec<(f64, f64)>,
}

#[derive(Clone, Debug)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// A vertical dashed line at x with a label.
    pub marker: Option<(f64, String)>,
    /// A horizontal dotted line at y with a label (a threshold).
    pub threshold: Option<(f64, String)>,
    /// Logarithmic x axis (for series that differ by orders of magnitude).
    pub log_x: bool,
}

const W: f64 = 1000.0;
const H: f64 = 540.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 60.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#2ca02c", "#ff7f0e", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// Escapes `&`, `<`, `>`, `"` and `'`.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A round step for about `n` ticks over `span`.
fn nice_step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

fn fmt_num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.1}")
    }
}

/// Renders the chart as a complete SVG document.
pub fn render(chart: &Chart) -> String {
    let pts = || {
        chart
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|p| p.0.is_finite() && p.1.is_finite() && p.1 > 0.0)
            .filter(|p| !chart.log_x || p.0 > 0.0)
    };
    let (x_lo, x_hi_data) = pts()
        .map(|p| p.0)
        .fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (dx_lo, dx_hi) = if x_lo <= x_hi_data && x_lo > 0.0 {
        let lo = x_lo.log10().floor();
        let hi = x_hi_data.log10().ceil();
        (lo, if hi > lo { hi } else { lo + 1.0 })
    } else {
        (0.0, 1.0)
    };
    let x_max = pts()
        .map(|p| p.0)
        .chain(chart.marker.iter().map(|m| m.0))
        .fold(0.0f64, f64::max);
    let x_max = if x_max > 0.0 { x_max * 1.05 } else { 1.0 };
    let (y_lo, y_hi) = pts()
        .map(|p| p.1)
        .chain(chart.threshold.iter().map(|t| t.0).filter(|y| *y > 0.0))
        .fold((f64::MAX, f64::MIN), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let (d_lo, d_hi) = if y_lo <= y_hi {
        let lo = y_lo.log10().floor();
        let hi = y_hi.log10().ceil();
        (lo, if hi > lo { hi } else { lo + 1.0 })
    } else {
        (0.0, 3.0)
    };
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let sx = |x: f64| {
        if chart.log_x {
            LEFT + (x.log10() - dx_lo) / (dx_hi - dx_lo) * pw
        } else {
            LEFT + x / x_max * pw
        }
    };
    let sy = |y: f64| TOP + ph - (y.log10() - d_lo) / (d_hi - d_lo) * ph;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">
<rect x="0" y="0" width="{W}" height="{H}" fill="white"/>
<text x="{}" y="28" text-anchor="middle" font-size="16">{}</text>"#,
        W / 2.0,
        escape(&chart.title)
    );
    // Horizontal grid: decades and 2x, 5x.
    let mut d = d_lo;
    while d <= d_hi + 1e-9 {
        for (m, major) in [(1.0, true), (2.0, false), (5.0, false)] {
            let v = m * 10f64.powf(d);
            if v.log10() > d_hi + 1e-9 {
                continue;
            }
            let y = sy(v);
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{}" stroke-width="1"/>"##,
                LEFT + pw,
                if major { "#cccccc" } else { "#eeeeee" }
            );
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT - 6.0,
                y + 4.0,
                fmt_num(v)
            );
        }
        d += 1.0;
    }
    // Vertical grid: round steps, or decades and 2x, 5x on a log axis.
    let mut xs: Vec<f64> = Vec::new();
    if chart.log_x {
        let mut d = dx_lo;
        while d <= dx_hi + 1e-9 {
            for m in [1.0, 2.0, 5.0] {
                let v = m * 10f64.powf(d);
                if v.log10() <= dx_hi + 1e-9 {
                    xs.push(v);
                }
            }
            d += 1.0;
        }
    } else {
        let step = nice_step(x_max, 8.0);
        let mut x = 0.0;
        while x <= x_max + 1e-9 {
            xs.push(x);
            x += step;
        }
    }
    for x in xs {
        let px = sx(x);
        let _ = writeln!(
            s,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#eeeeee" stroke-width="1"/>"##,
            TOP + ph
        );
        let _ = writeln!(
            s,
            r#"<text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            TOP + ph + 18.0,
            fmt_num(x)
        );
    }
    // Axes and labels.
    let _ = writeln!(
        s,
        r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black" stroke-width="1"/>
<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>
<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{}</text>"#,
        LEFT + pw / 2.0,
        H - 18.0,
        escape(&chart.x_label),
        TOP + ph / 2.0,
        TOP + ph / 2.0,
        escape(&chart.y_label)
    );
    if let Some((mx, label)) = &chart.marker {
        let px = sx(*mx);
        let _ = writeln!(
            s,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#444444" stroke-width="1.5" stroke-dasharray="6,4"/>
<text x="{:.1}" y="{:.1}" fill="#444444">{}</text>"##,
            TOP + ph,
            px + 4.0,
            TOP + 14.0,
            escape(label)
        );
    }
    if let Some((ty, label)) = chart.threshold.as_ref().filter(|t| t.0 > 0.0) {
        let py = sy(*ty);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#444444" stroke-width="1" stroke-dasharray="2,3"/>
<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#444444">{}</text>"##,
            LEFT + pw,
            LEFT + pw - 4.0,
            py - 4.0,
            escape(label)
        );
    }
    // Series.
    for (i, series) in chart.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let points: Vec<(f64, f64)> = series
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite() && p.1 > 0.0)
            .filter(|p| !chart.log_x || p.0 > 0.0)
            .map(|&(x, y)| (sx(x), sy(y)))
            .collect();
        let path: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = writeln!(
            s,
            r#"<g class="series" data-name="{}"><polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            escape(&series.name),
            path.join(" ")
        );
        for (x, y) in &points {
            let _ = writeln!(
                s,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{color}"/>"#
            );
        }
        s.push_str("</g>\n");
        // Legend entry, beside the plot.
        let ly = TOP + 8.0 + i as f64 * 18.0;
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="3"/>
<text x="{:.1}" y="{:.1}">{}</text>"#,
            LEFT + pw + 12.0,
            LEFT + pw + 36.0,
            LEFT + pw + 42.0,
            ly + 4.0,
            escape(&series.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests;
