//! Small server-rendered SVG line charts (no JavaScript): a series over
//! time with axes, gridlines and the latest value.

use std::fmt::Write as _;

/// One line of a chart.
pub struct Series<'a> {
    /// Legend text.
    pub name: &'a str,
    /// CSS colour.
    pub color: &'a str,
    /// (x = seconds since start, y) points; `None` y = gap.
    pub points: Vec<(f64, Option<f64>)>,
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v.abs() >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if v.abs() >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// An SVG chart `width`×`height` titled `title`; `y_max` fixes the scale
/// (e.g. 1.0 for ratios) or `None` to fit the data; `percent` formats the
/// axis as percentages.
pub fn line_chart(title: &str, series: &[Series<'_>], y_max: Option<f64>, percent: bool) -> String {
    let (w, h) = (520.0, 200.0);
    let (left, right, top, bottom) = (52.0, 12.0, 28.0, 26.0);
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let (x0, x1) = match (
        xs.iter().copied().reduce(f64::min),
        xs.iter().copied().reduce(f64::max),
    ) {
        (Some(a), Some(b)) if b > a => (a, b),
        (Some(a), _) => (a - 1.0, a + 1.0),
        _ => (0.0, 1.0),
    };
    let data_max = series
        .iter()
        .flat_map(|s| s.points.iter().filter_map(|p| p.1))
        .fold(0.0f64, f64::max);
    let y1 = y_max.unwrap_or(if data_max > 0.0 { data_max * 1.15 } else { 1.0 });
    let px = |x: f64| left + (x - x0) / (x1 - x0) * (w - left - right);
    let py = |y: f64| top + (1.0 - (y / y1).clamp(0.0, 1.0)) * (h - top - bottom);
    let label = |y: f64| {
        if percent {
            format!("{:.0}%", y * 100.0)
        } else {
            fmt_num(y)
        }
    };
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{title}">"##
    );
    let _ = write!(
        svg,
        r##"<text x="{left}" y="16" class="title">{}</text>"##,
        super::page::esc(title)
    );
    for i in 0..=4 {
        let y = y1 * f64::from(i) / 4.0;
        let yy = py(y);
        let _ = write!(
            svg,
            r##"<line x1="{left}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" class="grid"/><text x="{}" y="{:.1}" class="axis" text-anchor="end">{}</text>"##,
            w - right,
            left - 6.0,
            yy + 4.0,
            label(y)
        );
    }
    let minutes = (x1 - x0) / 60.0;
    let _ = write!(
        svg,
        r##"<text x="{left}" y="{}" class="axis">{}</text><text x="{}" y="{}" class="axis" text-anchor="end">now</text>"##,
        h - 6.0,
        if xs.is_empty() {
            "no samples yet (one every 10 s)".to_string()
        } else {
            format!("{minutes:.0} min ago")
        },
        w - right,
        h - 6.0
    );
    let mut legend_x = w - right - 120.0 * series.len() as f64;
    for s in series {
        let mut d = String::new();
        let mut pen_down = false;
        for &(x, y) in &s.points {
            match y {
                Some(y) => {
                    let _ = write!(
                        d,
                        "{}{:.1},{:.1} ",
                        if pen_down { "L" } else { "M" },
                        px(x),
                        py(y)
                    );
                    pen_down = true;
                }
                None => pen_down = false,
            }
        }
        if !d.is_empty() {
            let _ = write!(
                svg,
                r##"<path d="{d}" fill="none" stroke="{}" stroke-width="2"/>"##,
                s.color
            );
        }
        let last = s.points.iter().rev().find_map(|p| p.1);
        let _ = write!(
            svg,
            r##"<rect x="{legend_x}" y="8" width="10" height="10" fill="{}"/><text x="{}" y="17" class="legend">{} {}</text>"##,
            s.color,
            legend_x + 14.0,
            super::page::esc(s.name),
            last.map(label).unwrap_or_else(|| "–".into())
        );
        legend_x += 120.0;
    }
    svg.push_str("</svg>");
    svg
}
