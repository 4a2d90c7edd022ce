//! The status page: one self-contained HTML document (inline CSS and SVG,
//! no JavaScript, reloads itself every 10 s) that a person reads instead of
//! raw numbers: key figures, charts of the last hour, tables, regions, cache
//! tiers, requests, object-store traffic and the WAL.

use super::chart::{Scale, Series, line_chart};
use super::format::esc;
use super::format::{bytes, count, pct, ratio, to_string_binary, uptime};
use crate::metrics::status::StatusView;
use crate::metrics::{LATENCY_BOUNDS_US, OpFigures, Point};
use shoal_storage::cache::{CacheMetricsSnapshot, PoolSnapshot};
use std::fmt::Write as _;

const STYLE: &str = "\
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:0;color:#1d2733;background:#f4f6f9}\
header{background:#14263b;color:#fff;padding:16px 28px}header h1{font-size:22px;margin:0 0 2px;letter-spacing:.5px}\
header .sub{color:#b9c7d6;font-size:13px}header code{color:#fff}\
main{padding:8px 28px 28px}h2{font-size:15px;margin:26px 0 8px;color:#33475b;text-transform:uppercase;letter-spacing:.6px}\
.sub{color:#5a6b7b;font-size:13px}.dim{color:#8a99a8}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}\
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-top:18px}\
.card{background:#fff;border-radius:6px;box-shadow:0 1px 3px #0002;padding:10px 14px;min-width:108px}\
.card .k{font-size:12px;color:#5a6b7b}.card .v{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums}\
table{border-collapse:collapse;background:#fff;font-size:13px;box-shadow:0 1px 3px #0002;border-radius:6px;overflow:hidden}\
th,td{padding:6px 12px;border-bottom:1px solid #e6ebf0;text-align:left;white-space:nowrap}\
th{background:#eaeff5;font-weight:600;color:#33475b}tr:last-child td{border-bottom:0}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
.charts{display:flex;flex-wrap:wrap;gap:14px}.chart{background:#fff;box-shadow:0 1px 3px #0002;border-radius:6px}\
.chart .title{font-size:13px;font-weight:600;fill:#33475b}.chart .axis{font-size:10px;fill:#6b7c8d}\
.chart .legend{font-size:11px;fill:#33475b}.chart .now{font-weight:600}.chart .grid{stroke:#e6ebf0}.chart .tick{stroke:#b9c4cf}\
.barbg{display:inline-block;width:70px;height:8px;background:#e3e8ee;border-radius:4px;margin-right:8px;vertical-align:middle;overflow:hidden}\
.bar{display:block;height:8px;background:#2f80ed}.bar.pf{background:#27ae60}\
.ok{color:#1e8e3e;font-weight:600}.off{color:#b3261e;font-weight:600}.warn{color:#b26a00}\
footer{margin-top:28px;color:#8a99a8;font-size:12px}";

/// A percentage with a small bar, `–` when unknown.
fn bar(r: Option<f64>, class: &str) -> String {
    match r {
        Some(r) => format!(
            "<span class=barbg><span class=\"bar {class}\" style=\"width:{:.0}%\"></span></span>{}",
            (r * 100.0).clamp(0.0, 100.0),
            pct(Some(r))
        ),
        None => "<span class=dim>–</span>".into(),
    }
}

fn td_n(h: &mut String, v: impl std::fmt::Display) {
    let _ = write!(h, "<td class=n>{v}</td>");
}

/// Upper bound of the bucket holding quantile `q` of a request histogram.
fn request_quantile(f: &OpFigures, q: f64) -> Option<String> {
    let count: u64 = f.buckets.iter().sum();
    if count == 0 {
        return None;
    }
    let rank = ((q * count as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (i, n) in f.buckets.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return Some(match LATENCY_BOUNDS_US.get(i) {
                Some(us) => format!("≤ {}", ms(*us)),
                None => "> 300 s".into(),
            });
        }
    }
    None
}

fn ms(us: u64) -> String {
    if us >= 1_000_000 {
        format!("{:.1} s", us as f64 / 1e6)
    } else {
        format!("{:.2} ms", us as f64 / 1e3)
    }
}

fn header(h: &mut String, v: &StatusView, history: &[Point]) {
    let regions: usize = v.tables.iter().map(|t| t.regions.len()).sum();
    let _ = write!(
        h,
        "<header><h1>Shoal</h1><div class=sub>version {} · up {} · data in <code>{}</code></div></header><main><div class=cards>",
        esc(v.version),
        uptime(v.uptime),
        esc(&v.data_location),
    );
    let latest = history.last();
    let (l1, l2) = match &v.cache {
        Some(c) => {
            let (hits, misses) = l1_totals(c);
            (
                latest.and_then(|p| p.l1_hit_ratio).or(ratio(hits, misses)),
                latest
                    .and_then(|p| p.l2_hit_ratio)
                    .or(ratio(c.l2_hits, c.l2_misses)),
            )
        }
        None => (None, None),
    };
    let cards = [
        ("tables", v.tables.len().to_string()),
        ("regions", regions.to_string()),
        (
            "requests/s",
            latest.map_or("–".into(), |p| super::chart::fmt_num(p.ops_per_sec)),
        ),
        ("L1 hit ratio", pct(l1)),
        ("L2 hit ratio", pct(l2)),
        (
            "object GETs/s",
            latest.map_or("–".into(), |p| {
                super::chart::fmt_num(p.object_gets_per_sec)
            }),
        ),
        ("memstores", bytes(v.memstore_bytes)),
        ("requests served", count(v.requests.total_requests())),
    ];
    for (k, val) in cards {
        let _ = write!(
            h,
            "<div class=card><div class=k>{k}</div><div class=v>{}</div></div>",
            esc(&val)
        );
    }
    h.push_str("</div>");
}

fn charts(h: &mut String, history: &[Point]) {
    let pts = |f: &dyn Fn(&Point) -> Option<f64>| -> Vec<(f64, Option<f64>)> {
        history.iter().map(|p| (p.uptime_s, f(p))).collect()
    };
    h.push_str("<h2>Last hour</h2><div class=charts>");
    let hit = [
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
    ];
    h.push_str(&line_chart("Cache hit ratio", &hit, Scale::Ratio));
    let ops = [Series {
        name: "ops/s",
        color: "#9b51e0",
        points: pts(&|p| Some(p.ops_per_sec)),
    }];
    h.push_str(&line_chart("Requests per second", &ops, Scale::Fit));
    let gets = [Series {
        name: "GETs/s",
        color: "#eb5757",
        points: pts(&|p| Some(p.object_gets_per_sec)),
    }];
    h.push_str(&line_chart(
        "Object-store GETs per second",
        &gets,
        Scale::Fit,
    ));
    h.push_str("</div>");
}

fn tables(h: &mut String, v: &StatusView) {
    h.push_str("<h2>Tables</h2><table id=tables><tr><th>table</th><th>state</th><th>families</th><th>regions</th><th>size</th><th>memstore</th></tr>");
    for t in &v.tables {
        let size: u64 = t.regions.iter().map(|r| r.size_bytes).sum();
        let mem: u64 = t.regions.iter().map(|r| r.memstore_bytes).sum();
        let _ = write!(
            h,
            "<tr><td>{}</td><td class={}>{}</td><td>{}</td>",
            esc(&t.name),
            if t.enabled { "ok" } else { "off" },
            if t.enabled { "enabled" } else { "disabled" },
            esc(&t.families.join(", ")),
        );
        td_n(h, t.regions.len());
        td_n(h, bytes(size));
        td_n(h, bytes(mem));
        h.push_str("</tr>");
    }
    if v.tables.is_empty() {
        h.push_str("<tr><td colspan=6 class=dim>no tables yet — <code>shoal shell</code>, then <code>create 't', 'cf'</code></td></tr>");
    }
    h.push_str("</table>");

    h.push_str("<h2>Regions</h2><table id=regions><tr><th>table</th><th>region</th><th>start row</th><th>end row</th><th>size</th><th>memstore</th><th>files</th><th>cached</th><th title='where its data blocks came from on this server: memory, this server&#39;s L2, a former owner&#39;s L2, the object store'>blocks from</th><th>references</th><th>prefetch</th></tr>");
    let row = |b: &[u8]| {
        if b.is_empty() {
            "<span class=dim>(unbounded)</span>".to_string()
        } else {
            format!("<code>{}</code>", esc(&to_string_binary(b)))
        }
    };
    for t in &v.tables {
        for r in &t.regions {
            let _ = write!(
                h,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td>",
                esc(&t.name),
                esc(&r.id),
                row(&r.start_row),
                row(&r.end_row),
            );
            td_n(h, bytes(r.size_bytes));
            td_n(h, bytes(r.memstore_bytes));
            td_n(h, r.files);
            let sources = match r.block_sources {
                Some(s) if s.total() > 0 => {
                    let pct = |n: u64| n as f64 * 100.0 / s.reads().max(1) as f64;
                    let mut cell = format!(
                        "reads: L1 {:.0}% · L2 {:.0}% · peer {:.0}% · object store {:.0}%",
                        pct(s.l1),
                        pct(s.l2),
                        pct(s.peer),
                        pct(s.object_store),
                    );
                    if s.prefetch_peer + s.prefetch_object_store > 0 {
                        let _ = write!(
                            cell,
                            "<br>prefetched: {} from a peer · {} from the object store",
                            s.prefetch_peer, s.prefetch_object_store
                        );
                    }
                    let _ = write!(cell, " ({} GETs)", s.object_store_gets);
                    cell
                }
                _ => "<span class=dim>–</span>".into(),
            };
            let _ = write!(
                h,
                "<td>{}</td><td>{sources}</td><td>{}</td>",
                bar(r.cache_ratio, ""),
                if r.has_references {
                    "<span class=warn>reads its split parent's files</span>"
                } else {
                    "<span class=dim>–</span>"
                }
            );
            let prefetch = match r.prefetch {
                Some((done, total)) if total > 0 && done < total => format!(
                    "{} {} of {}",
                    bar(Some(done as f64 / total as f64), "pf"),
                    bytes(done),
                    bytes(total)
                ),
                Some((_, total)) => format!("done ({})", bytes(total)),
                None => "<span class=dim>–</span>".into(),
            };
            let _ = write!(h, "<td>{prefetch}</td></tr>");
        }
    }
    if v.tables.iter().all(|t| t.regions.is_empty()) {
        h.push_str("<tr><td colspan=11 class=dim>no open regions</td></tr>");
    }
    h.push_str("</table>");
}

fn l1_totals(c: &CacheMetricsSnapshot) -> (u64, u64) {
    [&c.data, &c.in_memory, &c.meta, &c.rows]
        .iter()
        .fold((0, 0), |(h, m), p| (h + p.hits, m + p.misses))
}

fn cache(h: &mut String, v: &StatusView) {
    h.push_str("<h2>Block cache</h2>");
    let Some(c) = &v.cache else {
        h.push_str("<p class=dim>The block cache is off.</p>");
        return;
    };
    h.push_str("<table id=cache><tr><th>tier</th><th>used</th><th>free</th><th>entries</th><th>hit ratio</th><th>hits</th><th>misses</th><th>inserts</th><th>evictions</th><th>dropped inserts</th></tr>");
    let pool = |h: &mut String, name: &str, p: &PoolSnapshot| {
        let _ = write!(h, "<tr><td>{name}</td>");
        td_n(h, bytes(p.bytes_used));
        td_n(h, bytes(p.bytes_free));
        td_n(h, count(p.entries));
        let _ = write!(h, "<td>{}</td>", bar(ratio(p.hits, p.misses), ""));
        for n in [p.hits, p.misses, p.inserts, p.evictions, p.rejected] {
            td_n(h, count(n));
        }
        h.push_str("</tr>");
    };
    pool(h, "L1 data", &c.data);
    pool(h, "L1 in-memory", &c.in_memory);
    pool(h, "L1 meta (index, bloom)", &c.meta);
    pool(h, "L1 rows", &c.rows);
    match &c.l2 {
        Some(l2) => {
            let _ = write!(
                h,
                "<tr><td>L2 disk{}</td>",
                if l2.recovered {
                    ""
                } else {
                    " <span class=warn>(recovering)</span>"
                }
            );
            td_n(h, bytes(l2.bytes_used));
            td_n(h, bytes(l2.bytes_free));
            td_n(h, count(l2.entries));
            let _ = write!(h, "<td>{}</td>", bar(ratio(c.l2_hits, c.l2_misses), ""));
            for n in [c.l2_hits, c.l2_misses, l2.inserts, l2.evicted, l2.dropped] {
                td_n(h, count(n));
            }
            h.push_str("</tr>");
        }
        None => h.push_str("<tr><td>L2 disk</td><td colspan=9 class=dim>off</td></tr>"),
    }
    h.push_str("</table>");
    let _ = write!(
        h,
        "<p class=sub>Object-store GETs caused by misses: {} ({}); misses that joined another's fetch: {}; prefetch warmed {} of {}{}.</p>",
        count(c.object_store_gets),
        bytes(c.object_store_bytes),
        count(c.shared_misses),
        bytes(c.prefetch_bytes_done),
        bytes(c.prefetch_bytes_total),
        c.l2.as_ref().map_or(String::new(), |l2| format!(
            "; L2 index {} in memory, {} entries recovered at start in {:.1} s",
            bytes(l2.index_bytes),
            count(l2.recovered_entries),
            l2.recovery_micros as f64 / 1e6
        )),
    );
    let p = &c.peer;
    if p.hits + p.misses + p.fallbacks + p.corrupt + p.served > 0 {
        let _ = write!(
            h,
            "<p class=sub>Peers (moved regions): {} blocks ({}) read from a former owner's L2 instead of the object store, {} it lacked, {} read from the object store after a failed or slow peer, {} refused for a bad checksum; {} blocks ({}) handed to other servers.</p>",
            count(p.hits),
            bytes(p.bytes),
            count(p.misses),
            count(p.fallbacks),
            count(p.corrupt),
            count(p.served),
            bytes(p.served_bytes),
        );
    }
}

fn requests(h: &mut String, v: &StatusView) {
    h.push_str("<h2>Requests</h2><table id=requests><tr><th>operation</th><th>calls</th><th>errors</th><th>mean</th><th>p99</th></tr>");
    let mut any = false;
    for (op, f) in v.requests.ops.iter().filter(|(_, f)| f.count > 0) {
        any = true;
        let _ = write!(h, "<tr><td>{}</td>", op.as_str());
        td_n(h, count(f.count));
        td_n(h, count(f.errors));
        td_n(h, ms(f.sum_us / f.count));
        td_n(h, request_quantile(f, 0.99).unwrap_or_else(|| "–".into()));
        h.push_str("</tr>");
    }
    if !any {
        h.push_str("<tr><td colspan=5 class=dim>no requests yet</td></tr>");
    }
    h.push_str("</table>");
}

fn object_store(h: &mut String, v: &StatusView) {
    h.push_str("<h2>Object store</h2><table id=objects><tr><th>operation</th><th>requests</th><th>errors</th><th>retries</th><th>bytes</th><th>mean</th><th>p99</th></tr>");
    let mut any = false;
    for (op, s) in v.object_store.iter().filter(|(_, s)| s.requests > 0) {
        any = true;
        let _ = write!(h, "<tr><td>{}</td>", op.as_str());
        td_n(h, count(s.requests));
        td_n(h, count(s.errors));
        td_n(h, count(s.retries));
        td_n(h, bytes(s.bytes));
        let n = s.latency.count().max(1);
        td_n(h, ms(s.latency.sum_us / n));
        td_n(
            h,
            s.latency
                .quantile_upper_bound_us(0.99)
                .map_or_else(|| "–".into(), |us| format!("≤ {}", ms(us))),
        );
        h.push_str("</tr>");
    }
    if !any {
        h.push_str("<tr><td colspan=7 class=dim>no requests yet</td></tr>");
    }
    h.push_str("</table>");
}

fn wal(h: &mut String, v: &StatusView) {
    let w = &v.wal;
    let _ = write!(
        h,
        "<h2>Write-ahead log</h2><p class=sub>{} appends in {} group commits (mean batch {:.1}, largest {}), {} written, mean commit {}, slowest {}, {} segment(s) live. Flushes {}, compactions {}, splits {} since start.</p>",
        count(w.appends),
        count(w.syncs),
        w.batch_entries_sum as f64 / w.syncs.max(1) as f64,
        w.batch_entries_max,
        bytes(w.bytes),
        ms(w.sync_micros_sum / w.syncs.max(1)),
        ms(w.sync_micros_max),
        w.segments_live,
        v.flushes,
        v.compactions,
        v.splits
    );
}

fn cluster(h: &mut String, v: &StatusView) {
    let Some(c) = &v.cluster else {
        return;
    };
    let master = c.master.as_ref().map_or_else(
        || "none right now".to_string(),
        |(n, a)| format!("{} ({})", esc(n), esc(a)),
    );
    let _ = write!(
        h,
        "<h2>Cluster</h2><p class=sub>This server: {}{}. Master: {}. Lease {}{}. Balancer {}. \
         Failovers here {} ({} ms in all), regions moved away {} ({} ms), reads answered through \
         those moves {}, leases lost {}. Regions moved here whose former owner ended its reads when \
         asked {}, that waited out its bound {}. \
         Peer block reads {} ({} failed or too slow), regions reading from a former owner now {}.</p>\
         <table><tr><th>server</th><th>address</th><th>regions</th></tr>",
        esc(&c.name),
        if c.is_master { " (master)" } else { "" },
        master,
        if c.lease_held { "held" } else { "NOT held" },
        c.lease_age_s
            .map_or_else(String::new, |s| format!(", renewed {s:.1} s ago")),
        if c.balancer_on { "on" } else { "off" },
        c.failovers.0,
        c.failovers.1,
        c.moves_out.0,
        c.moves_out.1,
        c.move_reads.0,
        c.lease_losses,
        c.move_reads.1,
        c.move_reads.2,
        c.peer_calls.calls,
        c.peer_calls.failures,
        c.peer_calls.hinted_regions
    );
    for s in &c.servers {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&s.name),
            esc(&s.addr),
            s.regions
        );
    }
    h.push_str("</table>");
    if !c.recent.is_empty() {
        h.push_str("<table><tr><th>recent failover</th><th>WAL runs replayed</th><th>open ms</th><th>at (s after start)</th></tr>");
        for f in c.recent.iter().rev() {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&f.region),
                f.replayed_runs,
                f.open_ms,
                f.at_s
            );
        }
        h.push_str("</table>");
    }
}

/// The whole page for `v`, with charts of `history` (oldest first).
pub fn render(v: &StatusView, history: &[Point]) -> String {
    let mut h = String::with_capacity(32 << 10);
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><meta http-equiv=refresh content=10>\
         <meta name=viewport content=\"width=device-width\"><title>Shoal status</title><style>{STYLE}</style></head><body>"
    );
    header(&mut h, v, history);
    charts(&mut h, history);
    tables(&mut h, v);
    cache(&mut h, v);
    requests(&mut h, v);
    object_store(&mut h, v);
    wal(&mut h, v);
    cluster(&mut h, v);
    h.push_str("<footer>Reloads every 10 s · Prometheus: <a href=\"/metrics\">/metrics</a> · JSON: <a href=\"/api/status\">/api/status</a></footer></main></body></html>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_escapes_and_shows_every_section() {
        let v = crate::metrics::test_support::view(true);
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
            "id=requests",
            "id=objects",
            "<svg",
            "Cache hit ratio",
            "<code>m</code>",
        ] {
            assert!(html.contains(id), "{id} missing");
        }
        assert_eq!(html.matches("<svg").count(), 3);
        assert!(html.contains("Peer block reads 0"), "cluster peer figures");
        assert!(
            !html.contains("Peers (moved regions)"),
            "no peer line without peer traffic"
        );
        let mut peered = crate::metrics::test_support::view(true);
        if let Some(c) = peered.cache.as_mut() {
            c.peer.hits = 48;
            c.peer.bytes = 48 << 16;
            c.peer.corrupt = 1;
        }
        let html = render(&peered, &history);
        assert!(
            html.contains("48 blocks") && html.contains("1 refused for a bad checksum"),
            "peer line"
        );
        let off = render(&crate::metrics::test_support::view(false), &[]);
        assert!(off.contains("block cache is off") && off.contains("no samples yet"));
    }
}
