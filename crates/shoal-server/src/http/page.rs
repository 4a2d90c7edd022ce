//! The status page: one self-contained HTML document (inline CSS and SVG,
//! no JavaScript, refreshes itself every 10 s) that a person reads instead
//! of raw numbers: tables, regions with size and cache ratio, cache tiers,
//! object-store traffic, and charts of the last hour.

use super::chart::{Series, line_chart};
use crate::metrics::Point;
use crate::status::StatusView;
use std::fmt::Write as _;

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Row keys as HBase prints them (`Bytes.toStringBinary`), escaped for HTML.
fn row(b: &[u8]) -> String {
    if b.is_empty() {
        return "<span class=dim>(unbounded)</span>".into();
    }
    const KEPT: &[u8] = b" `~!@#$%^&*()-_=+[]{}|;:'\",.<>/?";
    let mut s = String::new();
    for &c in b {
        if c.is_ascii_alphanumeric() || KEPT.contains(&c) {
            s.push(c as char);
        } else {
            let _ = write!(s, "\\x{c:02X}");
        }
    }
    esc(&s)
}

fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn pct(r: Option<f64>) -> String {
    r.map_or_else(|| "–".into(), |r| format!("{:.1}%", r * 100.0))
}

fn ratio(h: u64, m: u64) -> Option<f64> {
    (h + m > 0).then(|| h as f64 / (h + m) as f64)
}

fn uptime(d: std::time::Duration) -> String {
    let s = d.as_secs();
    format!("{}h {:02}m {:02}s", s / 3600, s / 60 % 60, s % 60)
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#1d2733;background:#f6f8fa}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;color:#33475b}\
.sub{color:#5a6b7b;font-size:13px}.dim{color:#8a99a8}\
table{border-collapse:collapse;background:#fff;font-size:13px;box-shadow:0 1px 2px #0001}\
th,td{padding:5px 10px;border-bottom:1px solid #e3e8ee;text-align:left}th{background:#eef2f6;font-weight:600}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
.charts{display:flex;flex-wrap:wrap;gap:16px}.chart{background:#fff;box-shadow:0 1px 2px #0001}\
.chart .title{font-size:13px;font-weight:600;fill:#33475b}.chart .axis{font-size:10px;fill:#6b7c8d}\
.chart .legend{font-size:11px;fill:#33475b}.chart .grid{stroke:#e6ebf0}\
.bar{display:inline-block;height:8px;background:#2f80ed;border-radius:2px;vertical-align:middle}\
.barbg{display:inline-block;width:80px;height:8px;background:#e3e8ee;border-radius:2px;margin-right:6px}\
.ok{color:#1e8e3e}.off{color:#b3261e}";

fn cache_bar(r: Option<f64>) -> String {
    match r {
        Some(r) => format!(
            "<span class=barbg><span class=bar style=\"width:{:.0}px\"></span></span>{}",
            (r * 80.0).clamp(0.0, 80.0),
            pct(Some(r))
        ),
        None => "<span class=dim>–</span>".into(),
    }
}

/// The whole page.
pub fn render(v: &StatusView, history: &[Point]) -> String {
    let mut h = String::with_capacity(32 << 10);
    let regions: usize = v.tables.iter().map(|t| t.regions.len()).sum();
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><meta http-equiv=refresh content=10>\
         <title>Shoal status</title><style>{STYLE}</style></head><body>\
         <h1>Shoal</h1><div class=sub>version {} · up {} · data in <code>{}</code> · {} table(s), {} region(s), {} requests served, memstores {}</div>",
        esc(v.version),
        uptime(v.uptime),
        esc(&v.data_location),
        v.tables.len(),
        regions,
        v.requests.total_requests(),
        bytes(v.memstore_bytes)
    );

    // Charts.
    h.push_str("<h2>Last hour</h2><div class=charts>");
    let pts = |f: &dyn Fn(&Point) -> Option<f64>| -> Vec<(f64, Option<f64>)> {
        history.iter().map(|p| (p.uptime_s, f(p))).collect()
    };
    h.push_str(&line_chart(
        "Cache hit ratio",
        &[
            Series {
                name: "L1",
                color: "#2f80ed",
                points: pts(&|p| p.l1_hit_ratio),
            },
            Series {
                name: "L2",
                color: "#27ae60",
                points: pts(&|p| p.l2_hit_ratio),
            },
        ],
        Some(1.0),
        true,
    ));
    h.push_str(&line_chart(
        "Requests per second",
        &[Series {
            name: "ops/s",
            color: "#9b51e0",
            points: pts(&|p| Some(p.ops_per_sec)),
        }],
        None,
        false,
    ));
    h.push_str(&line_chart(
        "Object-store GETs per second",
        &[Series {
            name: "GETs/s",
            color: "#eb5757",
            points: pts(&|p| Some(p.object_gets_per_sec)),
        }],
        None,
        false,
    ));
    h.push_str("</div>");

    // Tables and regions.
    h.push_str("<h2>Tables</h2><table id=tables><tr><th>table</th><th>state</th><th>families</th><th>regions</th><th>size</th></tr>");
    for t in &v.tables {
        let size: u64 = t.regions.iter().map(|r| r.size_bytes).sum();
        let _ = write!(
            h,
            "<tr><td>{}</td><td class={}>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            esc(&t.name),
            if t.enabled { "ok" } else { "off" },
            if t.enabled { "enabled" } else { "disabled" },
            esc(&t.families.join(", ")),
            t.regions.len(),
            bytes(size)
        );
    }
    if v.tables.is_empty() {
        h.push_str("<tr><td colspan=5 class=dim>no tables yet — <code>shoal shell</code>, then <code>create 't', 'cf'</code></td></tr>");
    }
    h.push_str("</table>");

    h.push_str("<h2>Regions</h2><table id=regions><tr><th>table</th><th>region</th><th>start row</th><th>end row</th><th>size</th><th>memstore</th><th>files</th><th>cached</th><th>prefetch</th><th>notes</th></tr>");
    for t in &v.tables {
        for r in &t.regions {
            let prefetch = match r.prefetch {
                Some((done, total)) if total > 0 => format!("{} / {}", bytes(done), bytes(total)),
                Some(_) => "done".into(),
                None => "–".into(),
            };
            let _ = write!(
                h,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&t.name),
                esc(&r.id),
                row(&r.start_row),
                row(&r.end_row),
                bytes(r.size_bytes),
                bytes(r.memstore_bytes),
                r.files,
                cache_bar(r.cache_ratio),
                prefetch,
                if r.has_references {
                    "reads its split parent's files"
                } else {
                    ""
                }
            );
        }
    }
    h.push_str("</table>");

    // Cache tiers.
    h.push_str("<h2>Block cache</h2>");
    match &v.cache {
        None => h.push_str("<p class=dim>The block cache is off (cache.enabled = false).</p>"),
        Some(c) => {
            h.push_str("<table id=cache><tr><th>tier</th><th>used</th><th>free</th><th>entries</th><th>hit ratio</th><th>hits</th><th>misses</th><th>inserts</th><th>evictions</th><th>dropped inserts</th></tr>");
            for (name, p) in [
                ("L1 data", &c.data),
                ("L1 in-memory", &c.in_memory),
                ("L1 meta (index, bloom)", &c.meta),
            ] {
                let _ = write!(
                    h,
                    "<tr><td>{name}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
                    bytes(p.bytes_used),
                    bytes(p.bytes_free),
                    p.entries,
                    cache_bar(ratio(p.hits, p.misses)),
                    p.hits,
                    p.misses,
                    p.inserts,
                    p.evictions,
                    p.rejected
                );
            }
            match &c.l2 {
                Some(l2) => {
                    let _ = write!(
                        h,
                        "<tr><td>L2 disk{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
                        if l2.recovered { "" } else { " (recovering)" },
                        bytes(l2.bytes_used),
                        bytes(l2.bytes_free),
                        l2.entries,
                        cache_bar(ratio(c.l2_hits, c.l2_misses)),
                        c.l2_hits,
                        c.l2_misses,
                        l2.inserts,
                        l2.evicted,
                        l2.dropped
                    );
                }
                None => h.push_str("<tr><td>L2 disk</td><td colspan=9 class=dim>off (cache.l2_capacity = 0)</td></tr>"),
            }
            h.push_str("</table>");
            let _ = write!(
                h,
                "<p class=sub>Object-store GETs caused by misses: {} ({}); misses that joined another's fetch: {}; prefetch {} of {}.</p>",
                c.object_store_gets,
                bytes(c.object_store_bytes),
                c.shared_misses,
                bytes(c.prefetch_bytes_done),
                bytes(c.prefetch_bytes_total)
            );
        }
    }

    // Object store and WAL.
    h.push_str("<h2>Object store</h2><table id=objects><tr><th>operation</th><th>requests</th><th>errors</th><th>retries</th><th>bytes</th><th>p99 ≤</th></tr>");
    for (op, s) in v.object_store.iter() {
        if s.requests == 0 {
            continue;
        }
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            op.as_str(),
            s.requests,
            s.errors,
            s.retries,
            bytes(s.bytes),
            s.latency
                .quantile_upper_bound_us(0.99)
                .map_or_else(|| "–".into(), |us| format!("{:.1} ms", us as f64 / 1000.0))
        );
    }
    h.push_str("</table>");
    let w = &v.wal;
    let _ = write!(
        h,
        "<h2>Write-ahead log</h2><p class=sub>{} appends in {} group commits (mean batch {:.1}, largest {}), {} written, slowest commit {:.1} ms, {} segment(s) live. Flushes {}, compactions {}, splits {}.</p>",
        w.appends,
        w.syncs,
        if w.syncs > 0 {
            w.batch_entries_sum as f64 / w.syncs as f64
        } else {
            0.0
        },
        w.batch_entries_max,
        bytes(w.bytes),
        w.sync_micros_max as f64 / 1000.0,
        w.segments_live,
        v.flushes,
        v.compactions,
        v.splits
    );
    h.push_str("<p class=dim>Prometheus metrics: <a href=\"/metrics\">/metrics</a> · JSON: <a href=\"/api/status\">/api/status</a></p></body></html>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_escapes_and_shows_every_section() {
        let v = crate::metrics::prometheus::tests::view(true);
        let history = vec![
            Point {
                uptime_s: 10.0,
                ops_per_sec: 5.0,
                l1_hit_ratio: Some(0.5),
                l2_hit_ratio: None,
                object_gets_per_sec: 1.0,
                memstore_bytes: 0,
            },
            Point {
                uptime_s: 20.0,
                ops_per_sec: 50.0,
                l1_hit_ratio: Some(0.9),
                l2_hit_ratio: Some(0.8),
                object_gets_per_sec: 0.0,
                memstore_bytes: 0,
            },
        ];
        let html = render(&v, &history);
        assert!(html.contains("t&quot;1"), "table name escaped");
        for id in [
            "id=tables",
            "id=regions",
            "id=cache",
            "id=objects",
            "<svg",
            "Cache hit ratio",
        ] {
            assert!(html.contains(id), "{id} missing");
        }
        assert_eq!(html.matches("<svg").count(), 3);
        assert!(html.contains("\\x00") || !html.contains('\0'));
    }
}
