//! The Prometheus text exposition format (0.0.4) of a [`StatusView`]. Every
//! family has `# HELP` and `# TYPE`; counters end in `_total`; histograms
//! have cumulative `_bucket{le=…}` lines ending in `+Inf`, then `_sum` and
//! `_count`. Names are listed in `docs/metrics.md`.

use super::requests::LATENCY_BOUNDS_US;
use crate::status::StatusView;
use std::fmt::Write as _;

/// Escapes a label value.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

struct Out(String);

impl Out {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}");
        let _ = writeln!(self.0, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{k}=\"{}\"", esc(v));
            }
            self.0.push('}');
        }
        if value.is_finite() {
            let _ = writeln!(self.0, " {value}");
        } else {
            let _ = writeln!(self.0, " NaN");
        }
    }

    /// A histogram from per-bucket counts with upper bounds (seconds);
    /// `bounds.len() == counts.len() - 1` (the last count is +Inf).
    fn histogram(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        bounds: &[f64],
        counts: &[u64],
        sum: f64,
    ) {
        let mut cum = 0u64;
        for (i, c) in counts.iter().enumerate() {
            cum += c;
            let le = bounds
                .get(i)
                .map_or_else(|| "+Inf".to_string(), |b| format!("{b}"));
            let mut l: Vec<(&str, &str)> = labels.to_vec();
            l.push(("le", &le));
            self.sample(&format!("{name}_bucket"), &l, cum as f64);
        }
        self.sample(&format!("{name}_sum"), labels, sum);
        self.sample(&format!("{name}_count"), labels, cum as f64);
    }
}

fn ratio(hits: u64, misses: u64) -> f64 {
    if hits + misses == 0 {
        0.0
    } else {
        hits as f64 / (hits + misses) as f64
    }
}

/// Renders every metric of `view`.
pub fn render(view: &StatusView) -> String {
    let mut o = Out(String::with_capacity(16 << 10));

    // Requests.
    o.family(
        "shoal_requests_total",
        "counter",
        "Client calls completed, by operation.",
    );
    for (op, f) in &view.requests.ops {
        o.sample(
            "shoal_requests_total",
            &[("op", op.as_str())],
            f.count as f64,
        );
    }
    o.family(
        "shoal_request_errors_total",
        "counter",
        "Client calls answered with an error, by operation.",
    );
    for (op, f) in &view.requests.ops {
        o.sample(
            "shoal_request_errors_total",
            &[("op", op.as_str())],
            f.errors as f64,
        );
    }
    o.family(
        "shoal_request_duration_seconds",
        "histogram",
        "Latency of client calls (a scan: the whole stream), by operation.",
    );
    let bounds: Vec<f64> = LATENCY_BOUNDS_US.iter().map(|&b| b as f64 / 1e6).collect();
    for (op, f) in &view.requests.ops {
        o.histogram(
            "shoal_request_duration_seconds",
            &[("op", op.as_str())],
            &bounds,
            &f.buckets,
            f.sum_us as f64 / 1e6,
        );
    }
    o.family(
        "shoal_scan_rows_total",
        "counter",
        "Rows (or row chunks) returned by scans.",
    );
    o.sample("shoal_scan_rows_total", &[], view.requests.scan_rows as f64);

    // Block cache.
    if let Some(c) = &view.cache {
        let pools = [
            ("data", &c.data),
            ("in_memory", &c.in_memory),
            ("meta", &c.meta),
        ];
        let l1_hits: u64 = pools.iter().map(|(_, p)| p.hits).sum();
        let l1_misses: u64 = pools.iter().map(|(_, p)| p.misses).sum();
        let l2 = c.l2.as_ref();
        o.family(
            "shoal_cache_hits_total",
            "counter",
            "Block cache hits by tier (L1 also by pool).",
        );
        o.sample("shoal_cache_hits_total", &[("tier", "l1")], l1_hits as f64);
        for (name, p) in &pools {
            o.sample(
                "shoal_cache_hits_total",
                &[("tier", "l1"), ("pool", name)],
                p.hits as f64,
            );
        }
        o.sample(
            "shoal_cache_hits_total",
            &[("tier", "l2")],
            c.l2_hits as f64,
        );
        o.family(
            "shoal_cache_misses_total",
            "counter",
            "Block cache misses by tier (L1 also by pool).",
        );
        o.sample(
            "shoal_cache_misses_total",
            &[("tier", "l1")],
            l1_misses as f64,
        );
        for (name, p) in &pools {
            o.sample(
                "shoal_cache_misses_total",
                &[("tier", "l1"), ("pool", name)],
                p.misses as f64,
            );
        }
        o.sample(
            "shoal_cache_misses_total",
            &[("tier", "l2")],
            c.l2_misses as f64,
        );
        o.family(
            "shoal_cache_hit_ratio",
            "gauge",
            "Hits / lookups since start, by tier.",
        );
        o.sample(
            "shoal_cache_hit_ratio",
            &[("tier", "l1")],
            ratio(l1_hits, l1_misses),
        );
        o.sample(
            "shoal_cache_hit_ratio",
            &[("tier", "l2")],
            ratio(c.l2_hits, c.l2_misses),
        );
        o.family(
            "shoal_cache_inserts_total",
            "counter",
            "Blocks inserted, by tier.",
        );
        o.sample(
            "shoal_cache_inserts_total",
            &[("tier", "l1")],
            pools.iter().map(|(_, p)| p.inserts).sum::<u64>() as f64,
        );
        o.sample(
            "shoal_cache_inserts_total",
            &[("tier", "l2")],
            l2.map_or(0, |m| m.inserts) as f64,
        );
        o.family(
            "shoal_cache_evictions_total",
            "counter",
            "Blocks evicted to make room, by tier.",
        );
        o.sample(
            "shoal_cache_evictions_total",
            &[("tier", "l1")],
            pools.iter().map(|(_, p)| p.evictions).sum::<u64>() as f64,
        );
        o.sample(
            "shoal_cache_evictions_total",
            &[("tier", "l2")],
            l2.map_or(0, |m| m.evicted) as f64,
        );
        o.family("shoal_cache_dropped_inserts_total", "counter", "Inserts not cached: L1 entries larger than a shard, L2 inserts beyond the writer's queue.");
        o.sample(
            "shoal_cache_dropped_inserts_total",
            &[("tier", "l1")],
            pools.iter().map(|(_, p)| p.rejected).sum::<u64>() as f64,
        );
        o.sample(
            "shoal_cache_dropped_inserts_total",
            &[("tier", "l2")],
            l2.map_or(0, |m| m.dropped) as f64,
        );
        o.family("shoal_cache_bytes", "gauge", "Bytes held, by tier.");
        o.sample(
            "shoal_cache_bytes",
            &[("tier", "l1")],
            pools.iter().map(|(_, p)| p.bytes_used).sum::<u64>() as f64,
        );
        o.sample(
            "shoal_cache_bytes",
            &[("tier", "l2")],
            l2.map_or(0, |m| m.bytes_used) as f64,
        );
        o.family(
            "shoal_cache_free_bytes",
            "gauge",
            "Budget not in use, by tier.",
        );
        o.sample(
            "shoal_cache_free_bytes",
            &[("tier", "l1")],
            pools.iter().map(|(_, p)| p.bytes_free).sum::<u64>() as f64,
        );
        o.sample(
            "shoal_cache_free_bytes",
            &[("tier", "l2")],
            l2.map_or(0, |m| m.bytes_free) as f64,
        );
        o.family("shoal_cache_entries", "gauge", "Blocks held, by tier.");
        o.sample(
            "shoal_cache_entries",
            &[("tier", "l1")],
            pools.iter().map(|(_, p)| p.entries).sum::<u64>() as f64,
        );
        o.sample(
            "shoal_cache_entries",
            &[("tier", "l2")],
            l2.map_or(0, |m| m.entries) as f64,
        );
        o.family(
            "shoal_cache_index_bytes",
            "gauge",
            "Memory of the L2 index.",
        );
        o.sample(
            "shoal_cache_index_bytes",
            &[("tier", "l2")],
            l2.map_or(0, |m| m.index_bytes) as f64,
        );
        o.family(
            "shoal_cache_corrupt_total",
            "counter",
            "L2 entries that failed their checksum (served as misses).",
        );
        o.sample(
            "shoal_cache_corrupt_total",
            &[("tier", "l2")],
            c.l2_corrupt as f64,
        );
        o.family(
            "shoal_cache_object_store_gets_total",
            "counter",
            "Object-store GETs caused by cache misses.",
        );
        o.sample(
            "shoal_cache_object_store_gets_total",
            &[],
            c.object_store_gets as f64,
        );
        o.family(
            "shoal_cache_object_store_bytes_total",
            "counter",
            "Bytes read from the object store on cache misses.",
        );
        o.sample(
            "shoal_cache_object_store_bytes_total",
            &[],
            c.object_store_bytes as f64,
        );
        o.family(
            "shoal_cache_shared_misses_total",
            "counter",
            "Misses that joined another caller's fetch (single-flight).",
        );
        o.sample(
            "shoal_cache_shared_misses_total",
            &[],
            c.shared_misses as f64,
        );
        o.family(
            "shoal_prefetch_target_bytes_total",
            "counter",
            "Bytes prefetch-on-open set out to warm.",
        );
        o.sample(
            "shoal_prefetch_target_bytes_total",
            &[],
            c.prefetch_bytes_total as f64,
        );
        o.family(
            "shoal_prefetch_done_bytes_total",
            "counter",
            "Bytes prefetch-on-open warmed or found already cached.",
        );
        o.sample(
            "shoal_prefetch_done_bytes_total",
            &[],
            c.prefetch_bytes_done as f64,
        );
        o.family(
            "shoal_cache_recovery_seconds",
            "gauge",
            "Time the L2 index took to rebuild at start (0 while it runs).",
        );
        o.sample(
            "shoal_cache_recovery_seconds",
            &[],
            l2.map_or(0, |m| m.recovery_micros) as f64 / 1e6,
        );
    }

    // Object store.
    o.family(
        "shoal_object_store_requests_total",
        "counter",
        "Object-store request attempts, by operation.",
    );
    for (op, s) in view.object_store.iter() {
        o.sample(
            "shoal_object_store_requests_total",
            &[("op", op.as_str())],
            s.requests as f64,
        );
    }
    o.family(
        "shoal_object_store_errors_total",
        "counter",
        "Object-store attempts that failed, by operation.",
    );
    for (op, s) in view.object_store.iter() {
        o.sample(
            "shoal_object_store_errors_total",
            &[("op", op.as_str())],
            s.errors as f64,
        );
    }
    o.family(
        "shoal_object_store_retries_total",
        "counter",
        "Object-store attempts that retried a transient failure, by operation.",
    );
    for (op, s) in view.object_store.iter() {
        o.sample(
            "shoal_object_store_retries_total",
            &[("op", op.as_str())],
            s.retries as f64,
        );
    }
    o.family(
        "shoal_object_store_bytes_total",
        "counter",
        "Payload bytes moved by successful object-store requests, by operation.",
    );
    for (op, s) in view.object_store.iter() {
        o.sample(
            "shoal_object_store_bytes_total",
            &[("op", op.as_str())],
            s.bytes as f64,
        );
    }
    o.family(
        "shoal_object_store_request_duration_seconds",
        "histogram",
        "Object-store attempt latency, by operation.",
    );
    for (op, s) in view.object_store.iter() {
        let n = s.latency.buckets.len();
        let bounds: Vec<f64> = (0..n - 1)
            .filter_map(shoal_storage::object::LatencySnapshot::bucket_upper_bound_us)
            .map(|us| us as f64 / 1e6)
            .collect();
        o.histogram(
            "shoal_object_store_request_duration_seconds",
            &[("op", op.as_str())],
            &bounds,
            &s.latency.buckets,
            s.latency.sum_us as f64 / 1e6,
        );
    }

    // WAL.
    let w = &view.wal;
    o.family(
        "shoal_wal_appends_total",
        "counter",
        "WAL entries acknowledged durable.",
    );
    o.sample("shoal_wal_appends_total", &[], w.appends as f64);
    o.family(
        "shoal_wal_failed_appends_total",
        "counter",
        "WAL appends answered with an error.",
    );
    o.sample(
        "shoal_wal_failed_appends_total",
        &[],
        w.failed_appends as f64,
    );
    o.family(
        "shoal_wal_bytes_total",
        "counter",
        "WAL record bytes made durable.",
    );
    o.sample("shoal_wal_bytes_total", &[], w.bytes as f64);
    o.family(
        "shoal_wal_syncs_total",
        "counter",
        "WAL group commits (one write+fdatasync or one PUT each).",
    );
    o.sample("shoal_wal_syncs_total", &[], w.syncs as f64);
    o.family(
        "shoal_wal_batch_entries",
        "histogram",
        "Entries per WAL group commit.",
    );
    let log2_bounds = |n: usize, scale: f64| -> Vec<f64> {
        (0..n - 1)
            .map(|i| {
                if i == 0 {
                    0.0
                } else {
                    (1u64 << i) as f64 / scale
                }
            })
            .collect()
    };
    o.histogram(
        "shoal_wal_batch_entries",
        &[],
        &log2_bounds(w.batch_entries_histogram.len(), 1.0),
        &w.batch_entries_histogram,
        w.batch_entries_sum as f64,
    );
    o.family(
        "shoal_wal_sync_duration_seconds",
        "histogram",
        "Latency of WAL group commits.",
    );
    o.histogram(
        "shoal_wal_sync_duration_seconds",
        &[],
        &log2_bounds(w.sync_micros_histogram.len(), 1e6),
        &w.sync_micros_histogram,
        w.sync_micros_sum as f64 / 1e6,
    );
    o.family(
        "shoal_wal_sync_max_seconds",
        "gauge",
        "Slowest WAL group commit since start.",
    );
    o.sample(
        "shoal_wal_sync_max_seconds",
        &[],
        w.sync_micros_max as f64 / 1e6,
    );
    o.family(
        "shoal_wal_segments",
        "gauge",
        "WAL segments that exist now.",
    );
    o.sample("shoal_wal_segments", &[], w.segments_live as f64);

    // Regions.
    o.family("shoal_memstore_bytes", "gauge", "Bytes in all memstores.");
    o.sample("shoal_memstore_bytes", &[], view.memstore_bytes as f64);
    o.family(
        "shoal_flushes_total",
        "counter",
        "Memstore flushes completed.",
    );
    o.sample("shoal_flushes_total", &[], view.flushes as f64);
    o.family(
        "shoal_compactions_total",
        "counter",
        "Compactions completed.",
    );
    o.sample("shoal_compactions_total", &[], view.compactions as f64);
    o.family("shoal_splits_total", "counter", "Region splits completed.");
    o.sample("shoal_splits_total", &[], view.splits as f64);
    o.family("shoal_tables", "gauge", "Tables.");
    o.sample("shoal_tables", &[], view.tables.len() as f64);
    o.family("shoal_regions", "gauge", "Open regions.");
    o.sample(
        "shoal_regions",
        &[],
        view.tables.iter().map(|t| t.regions.len()).sum::<usize>() as f64,
    );
    o.family(
        "shoal_region_size_bytes",
        "gauge",
        "Bytes of a region's files and memstore.",
    );
    for t in &view.tables {
        for r in &t.regions {
            o.sample(
                "shoal_region_size_bytes",
                &[("table", &t.name), ("region", &r.id)],
                r.size_bytes as f64,
            );
        }
    }
    o.family(
        "shoal_region_cache_ratio",
        "gauge",
        "Fraction of a region's data blocks held in the block cache.",
    );
    for t in &view.tables {
        for r in &t.regions {
            if let Some(c) = r.cache_ratio {
                o.sample(
                    "shoal_region_cache_ratio",
                    &[("table", &t.name), ("region", &r.id)],
                    c,
                );
            }
        }
    }
    o.family(
        "shoal_region_prefetch_bytes_done",
        "gauge",
        "Prefetch-on-open progress of a region: bytes warmed.",
    );
    for t in &view.tables {
        for r in &t.regions {
            if let Some((done, _)) = r.prefetch {
                o.sample(
                    "shoal_region_prefetch_bytes_done",
                    &[("table", &t.name), ("region", &r.id)],
                    done as f64,
                );
            }
        }
    }
    o.family(
        "shoal_uptime_seconds",
        "gauge",
        "Seconds since the server started.",
    );
    o.sample("shoal_uptime_seconds", &[], view.uptime.as_secs_f64());
    o.0
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::metrics::{RequestMetrics, RequestOp};
    use crate::status::{RegionView, TableView};
    use std::collections::{HashMap, HashSet};
    use std::time::Duration;

    pub(crate) fn view(with_cache: bool) -> StatusView {
        let requests = RequestMetrics::default();
        requests.record(RequestOp::Get, Duration::from_micros(120), true);
        requests.record(RequestOp::Scan, Duration::from_millis(30), false);
        StatusView {
            version: "0.1.0",
            uptime: Duration::from_secs(42),
            data_location: "file:///tmp/x".into(),
            tables: vec![TableView {
                name: "t\"1".into(),
                enabled: true,
                families: vec!["cf".into()],
                regions: vec![RegionView {
                    id: "r1".into(),
                    start_row: bytes::Bytes::new(),
                    end_row: bytes::Bytes::from_static(b"m"),
                    size_bytes: 1 << 20,
                    memstore_bytes: 1000,
                    files: 2,
                    cache_ratio: Some(0.5),
                    has_references: false,
                    prefetch: Some((10, 20)),
                }],
            }],
            cache: with_cache.then(shoal_storage::cache::CacheMetricsSnapshot::default),
            object_store: Default::default(),
            wal: Default::default(),
            requests: requests.snapshot(),
            memstore_bytes: 1000,
            flushes: 3,
            compactions: 1,
            splits: 0,
        }
    }

    /// A strict reader of the text format: every sample belongs to a family
    /// declared with HELP and TYPE; histogram buckets are cumulative and end
    /// in +Inf equal to `_count`.
    pub(crate) fn check(text: &str) -> HashSet<String> {
        let mut types: HashMap<String, String> = HashMap::new();
        let mut helps = HashSet::new();
        let mut names = HashSet::new();
        let mut last_bucket: HashMap<String, (f64, bool)> = HashMap::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                helps.insert(rest.split(' ').next().unwrap().to_string());
                continue;
            }
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let mut it = rest.split(' ');
                let (n, t) = (it.next().unwrap(), it.next().unwrap());
                assert!(["counter", "gauge", "histogram"].contains(&t), "{line}");
                types.insert(n.to_string(), t.to_string());
                continue;
            }
            assert!(!line.starts_with('#'), "{line}");
            let (series, value) = line.rsplit_once(' ').expect(line);
            let value: f64 = value.parse().expect(line);
            let name = series.split('{').next().unwrap();
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{line}"
            );
            if let Some(labels) = series.strip_prefix(name).filter(|l| !l.is_empty()) {
                assert!(labels.starts_with('{') && labels.ends_with('}'), "{line}");
            }
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| {
                    name.strip_suffix(s)
                        .filter(|f| types.get(*f).map(String::as_str) == Some("histogram"))
                })
                .unwrap_or(name);
            assert!(
                types.contains_key(family) && helps.contains(family),
                "no HELP/TYPE for {line}"
            );
            if types[family] == "counter" {
                assert!(family.ends_with("_total"), "{family}");
            }
            if name.ends_with("_bucket") {
                let key = series
                    .split(",le=")
                    .next()
                    .unwrap()
                    .split("{le=")
                    .next()
                    .unwrap()
                    .to_string();
                let inf = series.contains("le=\"+Inf\"");
                if let Some((prev, done)) = last_bucket.get(&key) {
                    assert!(!done, "bucket after +Inf: {line}");
                    assert!(value >= *prev, "buckets not cumulative: {line}");
                }
                last_bucket.insert(key, (value, inf));
            }
            if name.ends_with("_count")
                && types.get(family).map(String::as_str) == Some("histogram")
            {
                let key = series.replace("_count", "_bucket");
                let key = key.trim_end_matches('}').trim_end_matches('{').to_string();
                let found = last_bucket
                    .iter()
                    .find(|(k, _)| k.starts_with(&key))
                    .map(|(_, v)| *v);
                if let Some((inf_value, done)) = found {
                    assert!(done, "histogram without +Inf: {line}");
                    assert_eq!(inf_value, value, "{line}");
                }
            }
            names.insert(family.to_string());
        }
        names
    }

    #[test]
    fn output_is_valid_exposition_with_and_without_cache() {
        let with = render(&view(true));
        let names = check(&with);
        for n in [
            "shoal_requests_total",
            "shoal_request_duration_seconds",
            "shoal_cache_hit_ratio",
            "shoal_object_store_requests_total",
            "shoal_wal_syncs_total",
            "shoal_region_cache_ratio",
        ] {
            assert!(names.contains(n), "{n} missing");
        }
        assert!(with.contains("table=\"t\\\"1\""), "label escaped");
        let without = render(&view(false));
        let names = check(&without);
        assert!(!names.contains("shoal_cache_hits_total"));
    }
}
