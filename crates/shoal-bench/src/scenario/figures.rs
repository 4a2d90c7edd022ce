//! The server's own figures during a scenario, read from its Prometheus text
//! (`/metrics`): scraped over HTTP from a server elsewhere, or rendered in
//! process from an embedded one. One parser for both, so a run against a
//! remote server reports exactly what an embedded run does.

use super::ScenarioError;
use std::collections::HashMap;

/// Cumulative histogram buckets: (upper bound, count at or below it), in
/// bound order; the last bound may be infinite.
pub type Buckets = Vec<(f64, u64)>;

/// Counters and histograms a scenario compares before and after its run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Memstore flushes.
    pub flushes: u64,
    /// Compactions.
    pub compactions: u64,
    /// WAL group commits.
    pub wal_syncs: u64,
    /// Entries over all group commits.
    pub wal_batch_entries_sum: f64,
    /// Group-commit latency, seconds.
    pub wal_sync_seconds: Buckets,
    /// Slowest group commit since the server started, seconds.
    pub wal_sync_max_seconds: f64,
    /// Time spent flushing, seconds.
    pub flush_seconds: f64,
    /// Skiplist segments flattened.
    pub imc_flattens: u64,
    /// Flat segment merges.
    pub imc_merges: u64,
    /// Writes that waited for memstore memory.
    pub blocked_writes: u64,
    /// Latency of Mutate and MultiMutate calls together, seconds.
    pub put_seconds: Buckets,
    /// Mutate and MultiMutate calls answered with an error.
    pub put_errors: u64,
    /// Time per stage of the server's write path (`gate`, `row_locks`,
    /// `wal`, `read_point`), seconds; empty from a server without them.
    pub write_stage_seconds: std::collections::BTreeMap<String, Buckets>,
}

/// Reads the figures out of Prometheus text. Missing series read as zero (a
/// server that never flushed may not export every family yet); a sample that
/// does not parse is an error.
pub fn parse(text: &str) -> Result<Figures, ScenarioError> {
    let mut single: HashMap<&str, f64> = HashMap::new();
    let mut wal_sync: Vec<(f64, u64)> = Vec::new();
    let mut put: HashMap<String, u64> = HashMap::new();
    let mut put_errors = 0u64;
    let mut stages: std::collections::BTreeMap<String, Buckets> = Default::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').ok_or_else(|| bad(line, "no value"))?;
        let value: f64 = value.parse().map_err(|_| bad(line, "value"))?;
        let (name, labels) = match series.split_once('{') {
            Some((n, rest)) => (n, rest.trim_end_matches('}')),
            None => (series, ""),
        };
        let label = |key: &str| {
            labels.split(',').find_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                (k == key).then(|| v.trim_matches('"'))
            })
        };
        let is_put = matches!(label("op"), Some("mutate" | "multi_mutate"));
        match name {
            "shoal_wal_sync_duration_seconds_bucket" => {
                let le = label("le").ok_or_else(|| bad(line, "le"))?;
                wal_sync.push((parse_le(le).ok_or_else(|| bad(line, "le"))?, value as u64));
            }
            "shoal_request_duration_seconds_bucket" if is_put => {
                let le = label("le").ok_or_else(|| bad(line, "le"))?;
                *put.entry(le.to_string()).or_default() += value as u64;
            }
            "shoal_request_errors_total" if is_put => put_errors += value as u64,
            "shoal_write_stage_duration_seconds_bucket" => {
                let stage = label("stage").ok_or_else(|| bad(line, "stage"))?;
                let le = label("le").ok_or_else(|| bad(line, "le"))?;
                let bound = parse_le(le).ok_or_else(|| bad(line, "le"))?;
                stages
                    .entry(stage.to_string())
                    .or_default()
                    .push((bound, value as u64));
            }
            _ => {
                if labels.is_empty() {
                    single.insert(name, value);
                }
            }
        }
    }
    let mut put_seconds = Vec::with_capacity(put.len());
    for (le, count) in put {
        let bound = parse_le(&le).ok_or_else(|| bad(&le, "le"))?;
        put_seconds.push((bound, count));
    }
    put_seconds.sort_by(|a, b| a.0.total_cmp(&b.0));
    wal_sync.sort_by(|a, b| a.0.total_cmp(&b.0));
    for b in stages.values_mut() {
        b.sort_by(|x, y| x.0.total_cmp(&y.0));
    }
    let get = |name: &str| single.get(name).copied().unwrap_or(0.0);
    Ok(Figures {
        flushes: get("shoal_flushes_total") as u64,
        compactions: get("shoal_compactions_total") as u64,
        wal_syncs: get("shoal_wal_syncs_total") as u64,
        wal_batch_entries_sum: get("shoal_wal_batch_entries_sum"),
        wal_sync_seconds: wal_sync,
        wal_sync_max_seconds: get("shoal_wal_sync_max_seconds"),
        flush_seconds: get("shoal_flush_seconds_total"),
        imc_flattens: get("shoal_memstore_flattens_total") as u64,
        imc_merges: get("shoal_memstore_merges_total") as u64,
        blocked_writes: get("shoal_write_blocked_total") as u64,
        put_seconds,
        put_errors,
        write_stage_seconds: stages,
    })
}

fn parse_le(le: &str) -> Option<f64> {
    if le == "+Inf" {
        Some(f64::INFINITY)
    } else {
        le.parse().ok()
    }
}

fn bad(line: &str, what: &str) -> ScenarioError {
    ScenarioError::Server(format!("unreadable metrics line ({what}): {line}"))
}

/// The `q` quantile of what `after` counted beyond `before` (same bounds),
/// as the upper bound of its bucket in microseconds (0 if nothing was
/// counted; `u64::MAX` past the last finite bound).
pub fn quantile_us(before: &Buckets, after: &Buckets, q: f64) -> u64 {
    let count_before = |bound: f64| {
        before
            .iter()
            .find(|(b, _)| *b == bound)
            .map_or(0, |(_, c)| *c)
    };
    let deltas: Vec<(f64, u64)> = after
        .iter()
        .map(|&(b, c)| (b, c.saturating_sub(count_before(b))))
        .collect();
    let Some(&(_, total)) = deltas.last() else {
        return 0;
    };
    if total == 0 {
        return 0;
    }
    let want = (total as f64 * q).ceil() as u64;
    for (bound, cumulative) in deltas {
        if cumulative >= want {
            return if bound.is_finite() {
                (bound * 1e6).round() as u64
            } else {
                u64::MAX
            };
        }
    }
    u64::MAX
}

/// Where the figures come from.
#[derive(Clone)]
pub enum FigureSource {
    /// An embedded server's host, rendered in process.
    Embedded(shoal_server::Host),
    /// A server elsewhere: its `/metrics` URL.
    Remote {
        /// HTTP client.
        http: reqwest::Client,
        /// `http://host:port/metrics`.
        url: String,
    },
}

impl FigureSource {
    /// A remote server's figures from its HTTP address (`host:port`).
    pub fn remote(http_addr: &str) -> FigureSource {
        FigureSource::Remote {
            http: reqwest::Client::new(),
            url: format!("http://{http_addr}/metrics"),
        }
    }

    /// Flushes so far: the figure a run polls every 50 ms, so an embedded
    /// server is asked for it alone rather than rendering every metric.
    pub async fn flushes(&self) -> Result<u64, ScenarioError> {
        match self {
            FigureSource::Embedded(host) => Ok(host.status().flushes),
            FigureSource::Remote { .. } => Ok(self.read().await?.flushes),
        }
    }

    /// The figures now.
    pub async fn read(&self) -> Result<Figures, ScenarioError> {
        match self {
            FigureSource::Embedded(host) => {
                parse(&shoal_server::metrics::prometheus::render(&host.status()))
            }
            FigureSource::Remote { http, url } => {
                let fail = |e: reqwest::Error| {
                    ScenarioError::Server(format!("reading the server's metrics at {url}: {e}"))
                };
                let text = http
                    .get(url)
                    .send()
                    .await
                    .and_then(|r| r.error_for_status())
                    .map_err(fail)?
                    .text()
                    .await
                    .map_err(fail)?;
                parse(&text)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_count_only_what_happened_between_two_readings() {
        let before = vec![(0.001, 10), (0.01, 10), (f64::INFINITY, 10)];
        let after = vec![(0.001, 10), (0.01, 1_010), (f64::INFINITY, 1_011)];
        assert_eq!(quantile_us(&before, &after, 0.5), 10_000);
        assert_eq!(quantile_us(&before, &after, 0.999), 10_000);
        assert_eq!(quantile_us(&before, &after, 1.0), u64::MAX);
        assert_eq!(quantile_us(&after, &after, 0.99), 0);
        assert_eq!(quantile_us(&Vec::new(), &Vec::new(), 0.99), 0);
    }

    #[test]
    fn write_stages_are_read_per_stage_in_bound_order() {
        let text = "\
shoal_write_stage_duration_seconds_bucket{stage=\"wal\",le=\"0.001023\"} 7
shoal_write_stage_duration_seconds_bucket{stage=\"wal\",le=\"0.000511\"} 5
shoal_write_stage_duration_seconds_bucket{stage=\"wal\",le=\"+Inf\"} 8
shoal_write_stage_duration_seconds_bucket{stage=\"read_point\",le=\"+Inf\"} 2
shoal_write_stage_duration_seconds_sum{stage=\"wal\"} 0.01
";
        let f = parse(text).unwrap();
        assert_eq!(
            f.write_stage_seconds["wal"],
            vec![(0.000511, 5), (0.001023, 7), (f64::INFINITY, 8)]
        );
        assert_eq!(
            f.write_stage_seconds["read_point"],
            vec![(f64::INFINITY, 2)]
        );
        let none = Buckets::new();
        assert_eq!(quantile_us(&none, &f.write_stage_seconds["wal"], 0.5), 511);
    }

    #[test]
    fn a_broken_metrics_line_is_an_error_not_a_zero() {
        let e = parse("shoal_flushes_total twelve\n").unwrap_err();
        assert!(e.to_string().contains("shoal_flushes_total"), "{e}");
        let f = parse("# HELP x\nshoal_flushes_total 12\nshoal_compactions_total 3\n").unwrap();
        assert_eq!((f.flushes, f.compactions), (12, 3));
    }
}
