//! Test helpers of the metrics and HTTP modules: a synthetic [`StatusView`]
//! and a strict reader of the Prometheus text format.

use crate::metrics::status::{RegionView, StatusView, TableView};
use crate::metrics::{RequestMetrics, RequestOp};
use shoal_storage::cache::{CacheMetricsSnapshot, DiskCacheMetrics, PoolSnapshot};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// A small server: one table whose name needs escaping everywhere, one
/// region, a few requests, WAL batches and object-store GETs; both cache
/// tiers when `with_cache`.
pub(crate) fn view(with_cache: bool) -> StatusView {
    let requests = RequestMetrics::default();
    requests.record(RequestOp::Get, Duration::from_micros(120), true);
    requests.record(RequestOp::Scan, Duration::from_millis(30), false);
    requests.record_scan_rows(10);
    let mut wal = shoal_storage::wal::WalMetricsSnapshot {
        appends: 11,
        syncs: 4,
        batch_entries_sum: 11,
        batch_entries_max: 5,
        sync_micros_sum: 4000,
        sync_micros_max: 2000,
        segments_live: 2,
        ..Default::default()
    };
    wal.batch_entries_histogram[1..4].copy_from_slice(&[1, 2, 1]);
    wal.sync_micros_histogram[10..12].copy_from_slice(&[3, 1]);
    let mut object_store = shoal_storage::object::ObjectMetricsSnapshot::default();
    object_store.get.requests = 2;
    object_store.get.latency.buckets[..2].copy_from_slice(&[1, 1]);
    object_store.get.latency.sum_us = 3;
    let cache = CacheMetricsSnapshot {
        data: PoolSnapshot {
            hits: 2,
            misses: 6,
            ..Default::default()
        },
        meta: PoolSnapshot {
            hits: 4,
            ..Default::default()
        },
        l2_hits: 7,
        l2_misses: 1,
        l2: Some(DiskCacheMetrics {
            recovered: true,
            ..Default::default()
        }),
        ..Default::default()
    };
    StatusView {
        version: "0.1.0",
        uptime: Duration::from_secs(42),
        cpu: crate::process_cpu::ProcessCpu {
            user: Duration::from_millis(1500),
            system: Duration::from_millis(250),
        },
        data_location: "file:///tmp/x".into(),
        tables: vec![TableView {
            name: "t\"1\\\n".into(),
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
                block_sources: Some(shoal_storage::cache::BlockSourcesSnapshot {
                    l1: 7,
                    l2: 5,
                    peer: 3,
                    object_store: 2,
                    prefetch_peer: 4,
                    prefetch_object_store: 1,
                    object_store_gets: 1,
                }),
                has_references: false,
                prefetch: Some((10, 20)),
            }],
        }],
        cache: with_cache.then_some(cache),
        object_store,
        wal,
        requests: requests.snapshot(),
        memstore_bytes: 1000,
        flushes: 3,
        compactions: 1,
        splits: 0,
        snapshots: Default::default(),
        cluster: Some(crate::metrics::status::ClusterView {
            name: "s1".into(),
            is_master: true,
            lease_held: true,
            failovers: (2, 150),
            ..Default::default()
        }),
        write: crate::metrics::status::WritePathView {
            memstore_limit: 1 << 30,
            flush_watermark: 1 << 29,
            blocked_writes: 2,
            blocked_seconds: 0.5,
            stages: {
                let stages = shoal_storage::write_stages::WriteStages::default();
                stages.record(shoal_storage::write_stages::Stage::Wal, 1_500);
                stages.snapshot()
            },
            ..Default::default()
        },
    }
}

/// Labels of one sample, in order.
type Labels = Vec<(String, String)>;

/// One metric family as read back.
#[derive(Debug, Default)]
pub(crate) struct Family {
    /// counter, gauge or histogram.
    pub kind: String,
    /// (sample name, labels, value).
    pub samples: Vec<(String, Labels, f64)>,
}

/// Text exposition read back, strictly.
#[derive(Debug, Default)]
pub(crate) struct Exposition {
    /// Families by name.
    pub families: BTreeMap<String, Family>,
}

fn is_name(s: &str, colon: bool) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':'))
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
}

/// Reads `{a="x",b="y"}` from the start of `s`; returns the labels and the rest.
fn parse_labels(s: &str, line: &str) -> (Labels, String) {
    let mut labels = Labels::new();
    let mut rest = s.strip_prefix('{').expect(line);
    if let Some(r) = rest.strip_prefix('}') {
        return (labels, r.to_string());
    }
    loop {
        let (name, r) = rest.split_once("=\"").expect(line);
        assert!(is_name(name, false), "bad label name in {line}");
        let mut value = String::new();
        let mut chars = r.char_indices();
        let end = loop {
            match chars.next().expect(line) {
                (i, '"') => break i,
                (_, '\\') => match chars.next().expect(line).1 {
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    'n' => value.push('\n'),
                    c => panic!("bad escape \\{c} in {line}"),
                },
                (_, '\n') => panic!("raw newline in {line}"),
                (_, c) => value.push(c),
            }
        };
        assert!(
            labels.iter().all(|(n, _)| n != name),
            "duplicate label in {line}"
        );
        labels.push((name.to_string(), value));
        rest = &r[end + 1..];
        if let Some(r) = rest.strip_prefix('}') {
            return (labels, r.to_string());
        }
        rest = rest.strip_prefix(',').expect(line);
    }
}

impl Exposition {
    /// Parses `text`, panicking at the first violation: every sample line is
    /// `name{labels} value` under a family declared by `# HELP` then
    /// `# TYPE` just before its samples; counters end in `_total` and are
    /// not negative; no series twice; each histogram series has buckets with
    /// increasing `le` ending in `+Inf`, cumulative counts, then `_sum` and a
    /// `_count` equal to the `+Inf` bucket.
    pub fn parse(text: &str) -> Exposition {
        let mut out = Exposition::default();
        let mut current: Option<String> = None;
        let mut help: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        assert!(text.ends_with('\n'), "text must end in a newline");
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let (name, doc) = rest.split_once(' ').expect(line);
                assert!(is_name(name, true) && !doc.trim().is_empty(), "{line}");
                assert!(!out.families.contains_key(name), "{name} declared twice");
                help = Some(name.to_string());
                continue;
            }
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').expect(line);
                assert_eq!(help.as_deref(), Some(name), "TYPE without HELP: {line}");
                assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
                if kind == "counter" {
                    assert!(name.ends_with("_total"), "counter {name} lacks _total");
                }
                out.families.insert(
                    name.to_string(),
                    Family {
                        kind: kind.to_string(),
                        samples: vec![],
                    },
                );
                current = Some(name.to_string());
                help = None;
                continue;
            }
            assert!(
                !line.starts_with('#') && !line.is_empty(),
                "stray line {line:?}"
            );
            let name_end = line.find(['{', ' ']).expect(line);
            let name = &line[..name_end];
            assert!(is_name(name, true), "bad name in {line}");
            let (labels, rest) = if line[name_end..].starts_with('{') {
                parse_labels(&line[name_end..], line)
            } else {
                (Labels::new(), line[name_end..].to_string())
            };
            let value = rest.strip_prefix(' ').expect(line);
            assert!(!value.contains(' '), "timestamps are not used: {line}");
            let value: f64 = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                "NaN" => f64::NAN,
                v => v.parse().expect(line),
            };
            let family_name = current.as_deref().expect("sample before any TYPE");
            let family = out.families.get_mut(family_name).expect(line);
            let ok = match family.kind.as_str() {
                "histogram" => ["_bucket", "_sum", "_count"]
                    .iter()
                    .any(|s| name.strip_suffix(s) == Some(family_name)),
                _ => name == family_name,
            };
            assert!(ok, "{line} is not part of family {family_name}");
            if family.kind == "counter" {
                assert!(value >= 0.0, "negative counter {line}");
            }
            let mut key = labels.clone();
            key.sort();
            assert!(seen.insert((name.to_string(), key)), "series twice: {line}");
            family.samples.push((name.to_string(), labels, value));
        }
        for (name, f) in &out.families {
            if f.kind == "histogram" {
                check_histogram(name, f);
            }
        }
        out
    }

    /// The value of the sample `name` with exactly `labels` (any order).
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let mut want: Vec<(String, String)> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        want.sort();
        self.families
            .values()
            .flat_map(|f| &f.samples)
            .find(|(n, l, _)| {
                let mut l = l.clone();
                l.sort();
                n == name && l == want
            })
            .map(|s| s.2)
            .unwrap_or_else(|| panic!("no sample {name}{labels:?}"))
    }
}

/// Buckets cumulative with increasing `le` ending in `+Inf`, then `_sum`
/// and `_count` = the `+Inf` bucket, for every series of the family.
fn check_histogram(name: &str, f: &Family) {
    // Per series (labels without le): (last le, last count, +Inf count, sum seen).
    let mut series: HashMap<Labels, (f64, f64, Option<f64>, bool)> = HashMap::new();
    for (n, labels, value) in &f.samples {
        let mut key: Labels = labels.iter().filter(|(k, _)| k != "le").cloned().collect();
        key.sort();
        let s = series
            .entry(key)
            .or_insert((f64::NEG_INFINITY, 0.0, None, false));
        if n.ends_with("_bucket") {
            let le = labels
                .iter()
                .find(|(k, _)| k == "le")
                .expect("bucket without le");
            let le: f64 = if le.1 == "+Inf" {
                f64::INFINITY
            } else {
                le.1.parse().expect("le")
            };
            assert!(s.2.is_none(), "{name}: bucket after +Inf");
            assert!(le > s.0, "{name}: le not increasing at {le}");
            assert!(*value >= s.1, "{name}: buckets not cumulative at le={le}");
            (s.0, s.1) = (le, *value);
            if le.is_infinite() {
                s.2 = Some(*value);
            }
        } else if n.ends_with("_sum") {
            assert!(s.2.is_some() && !s.3, "{name}: _sum before +Inf or twice");
            s.3 = true;
        } else {
            assert!(s.3, "{name}: _count before _sum");
            assert_eq!(Some(*value), s.2, "{name}: _count differs from +Inf bucket");
            s.3 = false;
            s.2 = Some(f64::NAN); // done: no more samples of this series
        }
    }
    for (labels, s) in series {
        assert!(
            s.2.is_some_and(f64::is_nan),
            "{name}{labels:?}: histogram without _count"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::Exposition;

    #[test]
    fn the_reader_rejects_bad_text() {
        let good = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"q\\\"\\\\\\n\"} 1\n\
                    # HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n";
        let e = Exposition::parse(good);
        assert_eq!(e.value("a_total", &[("x", "q\"\\\n")]), 1.0);
        for bad in [
            "a_total 1\n",                                               // no HELP/TYPE
            "# HELP a_total A.\n# TYPE a_total counter\na_total 1 17\n", // timestamp
            "# HELP a A.\n# TYPE a counter\na 1\n",                      // counter without _total
            "# HELP a A.\n# TYPE a gauge\na{x=\"\\t\"} 1\n",             // bad escape
            "# HELP a A.\n# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n", // series twice
            "# HELP a A.\n# TYPE a gauge\nb 1\n",                        // wrong family
            "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 0\nh_count 1\n",
            "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_sum 0\nh_count 2\n",
            "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 0\nh_count 3\n",
            "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 0\nh_count 1\n",
        ] {
            let r = std::panic::catch_unwind(|| Exposition::parse(bad));
            assert!(r.is_err(), "accepted:\n{bad}");
        }
    }
}
