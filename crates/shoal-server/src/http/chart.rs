//! Small server-rendered SVG line charts (no JavaScript): series over the
//! last hour with round-numbered axes, gridlines and a legend showing each
//! series' latest value.

use super::format::esc;
use std::fmt::Write as _;

/// The time window a chart spans, seconds (the x axis ends at the newest
/// point).
const WINDOW_S: f64 = 3600.0;

/// One line of a chart.
pub struct Series<'a> {
    /// Legend text.
    pub name: &'a str,
    /// CSS colour.
    pub color: &'a str,
    /// (x = seconds since start, y) points, oldest first; `None` y = gap.
    pub points: Vec<(f64, Option<f64>)>,
}

/// How the y axis is labelled.
#[derive(Clone, Copy)]
pub enum Scale {
    /// A ratio in 0..=1, shown as percent.
    Ratio,
    /// A rate or count, scaled to fit the data.
    Fit,
}

/// A number in a few characters: `0.25`, `12`, `3.5k`, `1.2M`.
pub fn fmt_num(v: f64) -> String {
    let (v, unit) = match v.abs() {
        a if a >= 1e9 => (v / 1e9, "G"),
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e3 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let digits = if v.abs() >= 100.0 || v == v.trunc() {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{v:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{unit}")
}

/// The smallest of 1, 2, 2.5, 5 × 10^k that is at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// The y ticks: `0, step, …, top`.
fn y_ticks(scale: Scale, data_max: f64) -> Vec<f64> {
    let (step, n) = match scale {
        Scale::Ratio => (0.25, 4),
        Scale::Fit => {
            let step = nice_step(data_max / 4.0);
            (step, ((data_max / step).ceil() as usize).clamp(1, 8))
        }
    };
    (0..=n).map(|i| step * i as f64).collect()
}

/// An SVG line chart titled `title`.
pub fn line_chart(title: &str, series: &[Series<'_>], scale: Scale) -> String {
    let (w, h) = (430.0, 210.0);
    let (left, right, top, bottom) = (46.0, 14.0, 34.0, 26.0);
    let newest = series
        .iter()
        .filter_map(|s| s.points.last().map(|p| p.0))
        .reduce(f64::max);
    let x1 = newest.unwrap_or(WINDOW_S);
    let x0 = x1 - WINDOW_S;
    let data_max = series
        .iter()
        .flat_map(|s| s.points.iter().filter_map(|p| p.1))
        .filter(|y| y.is_finite())
        .fold(0.0f64, f64::max);
    let ticks = y_ticks(scale, data_max);
    let y1 = ticks.last().copied().unwrap_or(1.0);
    let px = |x: f64| left + (x - x0) / WINDOW_S * (w - left - right);
    let py = |y: f64| top + (1.0 - (y / y1).clamp(0.0, 1.0)) * (h - top - bottom);
    let label = |y: f64| match scale {
        Scale::Ratio => format!("{:.0}%", y * 100.0),
        Scale::Fit => fmt_num(y),
    };
    let mut svg = String::new();
    let t = esc(title);
    let _ = write!(
        svg,
        r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}"><text x="12" y="20" class="title">{t}</text>"##
    );
    for &y in &ticks {
        let yy = py(y);
        let _ = write!(
            svg,
            r##"<line x1="{left}" x2="{}" y1="{yy:.1}" y2="{yy:.1}" class="grid"/><text x="{}" y="{:.1}" class="axis" text-anchor="end">{}</text>"##,
            w - right,
            left - 6.0,
            yy + 3.5,
            label(y)
        );
    }
    // Time axis: a tick every 15 minutes, labelled relative to now.
    for m in [60u32, 45, 30, 15, 0] {
        let xx = px(x1 - f64::from(m) * 60.0);
        let text = if m == 0 {
            "now".to_string()
        } else {
            format!("−{m} min")
        };
        let anchor = match m {
            60 => "start",
            0 => "end",
            _ => "middle",
        };
        let _ = write!(
            svg,
            r##"<line x1="{xx:.1}" x2="{xx:.1}" y1="{}" y2="{}" class="tick"/><text x="{xx:.1}" y="{}" class="axis" text-anchor="{anchor}">{text}</text>"##,
            h - bottom,
            h - bottom + 4.0,
            h - 8.0
        );
    }
    if newest.is_none() {
        let _ = write!(
            svg,
            r##"<text x="{}" y="{}" class="axis" text-anchor="middle">no samples yet (one every 10 s)</text>"##,
            (left + w - right) / 2.0,
            (top + h - bottom) / 2.0
        );
    }
    let mut legend_x = w - right - 104.0 * series.len() as f64;
    for s in series {
        let mut d = String::new();
        let mut pen_down = false;
        for &(x, y) in &s.points {
            match y.filter(|y| y.is_finite()) {
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
                r##"<path d="{}" fill="none" stroke="{}" stroke-width="1.8" stroke-linejoin="round"/>"##,
                d.trim_end(),
                esc(s.color)
            );
        }
        let last = s.points.last().and_then(|p| p.1);
        let _ = write!(
            svg,
            r##"<rect x="{legend_x}" y="11" width="10" height="10" rx="2" fill="{}"/><text x="{}" y="20" class="legend">{} <tspan class="now">{}</tspan></text>"##,
            esc(s.color),
            legend_x + 14.0,
            esc(s.name),
            last.map(label).unwrap_or_else(|| "–".into())
        );
        legend_x += 104.0;
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_ticks_are_round() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(0.25), "0.25");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_num(12.0), "12");
        assert_eq!(fmt_num(2500.0), "2.5k");
        assert_eq!(fmt_num(1_200_000.0), "1.2M");
        assert_eq!(y_ticks(Scale::Fit, 7.47), [0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(y_ticks(Scale::Fit, 0.0), [0.0, 1.0]);
        assert_eq!(
            y_ticks(Scale::Fit, 1000.0),
            [0.0, 250.0, 500.0, 750.0, 1000.0]
        );
        assert_eq!(y_ticks(Scale::Ratio, 0.3).len(), 5);
    }

    #[test]
    fn gaps_break_the_line_and_empty_charts_say_so() {
        let s = Series {
            name: "L1",
            color: "#000",
            points: vec![
                (10.0, Some(0.5)),
                (20.0, None),
                (30.0, Some(0.7)),
                (40.0, Some(0.9)),
            ],
        };
        let svg = line_chart("t", &[s], Scale::Ratio);
        assert_eq!(svg.matches('M').count(), 2, "{svg}");
        assert!(svg.contains("90%"), "latest value in the legend");
        let empty = line_chart("<t>", &[], Scale::Fit);
        assert!(empty.contains("no samples yet") && empty.contains("&lt;t&gt;"));
    }
}
