//! Minimal SVG charts for scenario reports: line charts (series over time,
//! optional vertical event markers such as flushes, linear axes with round
//! ticks) and horizontal bar charts of two stacked parts per bar.

use std::fmt::Write as _;

/// One line.
pub struct Line {
    /// Legend text.
    pub name: String,
    /// CSS colour.
    pub color: &'static str,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
}

fn nice_max(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if v <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A chart titled `title` with `x_label` and `y_label`, vertical markers
/// at `events` (x values).
pub fn chart(title: &str, x_label: &str, y_label: &str, lines: &[Line], events: &[f64]) -> String {
    let (w, h) = (900.0, 360.0);
    let (l, r, t, b) = (70.0, 20.0, 40.0, 50.0);
    let xs = lines.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let x1 = xs.clone().fold(0.0f64, f64::max).max(1.0);
    let y1 = nice_max(
        lines
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0f64, f64::max),
    );
    let px = |x: f64| l + x / x1 * (w - l - r);
    let py = |y: f64| t + (1.0 - (y / y1).clamp(0.0, 1.0)) * (h - t - b);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12"><rect width="{w}" height="{h}" fill="white"/><text x="{l}" y="22" font-size="15" font-weight="bold">{}</text>"#,
        esc(title)
    );
    for i in 0..=5 {
        let y = y1 * f64::from(i) / 5.0;
        let _ = write!(
            s,
            r##"<line x1="{l}" x2="{}" y1="{py:.1}" y2="{py:.1}" stroke="#e5e7eb"/><text x="{}" y="{:.1}" text-anchor="end" fill="#555">{}</text>"##,
            w - r,
            l - 6.0,
            py(y) + 4.0,
            if y1 >= 10.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.2}")
            },
            py = py(y)
        );
    }
    for i in 0..=6 {
        let x = x1 * f64::from(i) / 6.0;
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{}" text-anchor="middle" fill="#555">{x:.0}</text>"##,
            px(x),
            h - b + 18.0
        );
    }
    for e in events {
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{t}" y2="{}" stroke="#f59e0b" stroke-dasharray="3,3"/>"##,
            h - b,
            x = px(*e)
        );
    }
    for (i, line) in lines.iter().enumerate() {
        let d: String = line
            .points
            .iter()
            .enumerate()
            .map(|(j, (x, y))| {
                format!(
                    "{}{:.1},{:.1}",
                    if j == 0 { "M" } else { " L" },
                    px(*x),
                    py(*y)
                )
            })
            .collect();
        let _ = write!(
            s,
            r#"<path d="{d}" fill="none" stroke="{}" stroke-width="2"/><rect x="{}" y="{}" width="12" height="12" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            line.color,
            l + 10.0 + 150.0 * i as f64,
            h - 22.0,
            line.color,
            l + 26.0 + 150.0 * i as f64,
            h - 12.0,
            esc(&line.name)
        );
    }
    if !events.is_empty() {
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" fill="#b45309">┆ flush</text>"##,
            w - r - 60.0,
            h - 12.0
        );
    }
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" text-anchor="middle" fill="#333">{}</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle" fill="#333">{}</text></svg>"##,
        (l + w - r) / 2.0,
        h - 28.0,
        esc(x_label),
        (t + h - b) / 2.0,
        (t + h - b) / 2.0,
        esc(y_label)
    );
    s
}

/// One horizontal bar: a label and two stacked parts.
pub struct Bar {
    /// The bar's label.
    pub label: String,
    /// The first part (drawn from zero).
    pub first: f64,
    /// The second part (drawn after the first).
    pub second: f64,
}

/// A horizontal bar chart titled `title`; `parts` names the two stacked
/// parts of every bar, `unit` the values' unit.
pub fn bars(title: &str, unit: &str, parts: [&str; 2], bars: &[Bar]) -> String {
    let (w, row) = (900.0, 34.0);
    let (l, r, t, b) = (150.0, 90.0, 40.0, 50.0);
    let h = t + b + row * bars.len().max(1) as f64;
    let max = nice_max(bars.iter().map(|b| b.first + b.second).fold(0.0, f64::max));
    let x = |v: f64| l + (w - l - r) * v / max;
    let colors = ["#2563eb", "#f59e0b"];
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12"><text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        w / 2.0,
        esc(title)
    );
    for (i, bar) in bars.iter().enumerate() {
        let y = t + row * i as f64 + 6.0;
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text><rect x="{l}" y="{y}" width="{}" height="{}" fill="{}"/><rect x="{}" y="{y}" width="{}" height="{}" fill="{}"/><text x="{}" y="{}">{:.1} {}</text>"#,
            l - 8.0,
            y + 15.0,
            esc(&bar.label),
            (x(bar.first) - l).max(0.0),
            row - 12.0,
            colors[0],
            x(bar.first),
            (x(bar.first + bar.second) - x(bar.first)).max(0.0),
            row - 12.0,
            colors[1],
            x(bar.first + bar.second) + 6.0,
            y + 15.0,
            bar.first + bar.second,
            esc(unit)
        );
    }
    for (i, (name, color)) in parts.iter().zip(colors).enumerate() {
        let _ = write!(
            s,
            r#"<rect x="{}" y="{}" width="12" height="12" fill="{color}"/><text x="{}" y="{}">{}</text>"#,
            l + 200.0 * i as f64,
            h - 30.0,
            l + 16.0 + 200.0 * i as f64,
            h - 20.0,
            esc(name)
        );
    }
    s.push_str("</svg>");
    s
}
