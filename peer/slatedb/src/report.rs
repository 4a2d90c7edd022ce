//! The results: per system and workload throughput, read and update latency
//! percentiles and object-store requests; the ratios Shoal/SlateDB; written as
//! JSON and as a markdown table.

use serde::Serialize;
use shoal_bench::measure::OpReport;

use crate::driver::Phase;
use crate::emulate::Requests;

/// Latency percentiles of one operation, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    pub operations: u64,
    pub errors: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
}

impl Latency {
    fn from(r: &OpReport) -> Latency {
        let ms = |us: u64| us as f64 / 1000.0;
        Latency {
            operations: r.operations,
            errors: r.errors,
            mean_ms: r.average_us / 1000.0,
            p50_ms: ms(r.p50_us),
            p99_ms: ms(r.p99_us),
            p999_ms: ms(r.p999_us),
        }
    }
}

/// One measured phase.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseResult {
    pub seconds: f64,
    pub ops_per_sec: f64,
    pub read: Option<Latency>,
    pub update: Option<Latency>,
    pub insert: Option<Latency>,
    pub object_store: Requests,
    pub first_error: Option<String>,
    /// The engine's state after the phase.
    pub state_after: String,
}

impl PhaseResult {
    pub fn from(phase: &Phase, state_after: String) -> PhaseResult {
        let reports = phase.measurements.reports();
        let get = |name: &str| reports.get(name).map(Latency::from);
        PhaseResult {
            seconds: phase.elapsed.as_secs_f64(),
            ops_per_sec: phase.ops_per_sec(),
            read: get("READ"),
            update: get("UPDATE"),
            insert: get("INSERT"),
            object_store: phase.requests,
            first_error: phase.first_error.clone(),
            state_after,
        }
    }
}

/// Everything measured for one system.
#[derive(Debug, Clone, Serialize)]
pub struct SystemResult {
    /// e.g. "Shoal", "SlateDB (await_durable=true)".
    pub label: String,
    /// How writes are acknowledged.
    pub durability: String,
    pub load: PhaseResult,
    /// The file layout after the load was flushed and compacted.
    pub layout: String,
    pub workload_a: PhaseResult,
    pub workload_c: PhaseResult,
}

/// Shoal / SlateDB for one workload against one SlateDB configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    pub workload: String,
    pub versus: String,
    pub throughput: f64,
    pub read_p99: Option<f64>,
    pub update_p99: Option<f64>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub slatedb_version: String,
    pub object_store_version: String,
    pub conditions: serde_json::Value,
    pub systems: Vec<SystemResult>,
    pub ratios: Vec<Ratio>,
}

impl Report {
    /// Computes the ratios of the first system (Shoal) to each other one.
    pub fn ratios(systems: &[SystemResult]) -> Vec<Ratio> {
        let Some((shoal, peers)) = systems.split_first() else {
            return Vec::new();
        };
        let div = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let p99 = |l: &Option<Latency>| l.as_ref().map(|l| l.p99_ms);
        let mut out = Vec::new();
        for peer in peers {
            for (name, s, p) in [
                ("A", &shoal.workload_a, &peer.workload_a),
                ("C", &shoal.workload_c, &peer.workload_c),
            ] {
                out.push(Ratio {
                    workload: name.into(),
                    versus: peer.label.clone(),
                    throughput: s.ops_per_sec / p.ops_per_sec.max(1e-9),
                    read_p99: div(p99(&s.read), p99(&p.read)),
                    update_p99: div(p99(&s.update), p99(&p.update)),
                });
            }
        }
        out
    }

    /// The markdown tables.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        md.push_str(&format!(
            "Shoal vs SlateDB {} (object_store {}), YCSB in-process\n\n",
            self.slatedb_version, self.object_store_version
        ));
        md.push_str("| system | phase | ops/s | read p50 / p99 / p99.9 ms | update (insert) p50 / p99 / p99.9 ms | GETs | PUTs | other req. | errors |\n");
        md.push_str("|---|---|---:|---|---|---:|---:|---:|---:|\n");
        for s in &self.systems {
            for (name, p) in [
                ("load", &s.load),
                ("A", &s.workload_a),
                ("C", &s.workload_c),
            ] {
                let errors: u64 = [&p.read, &p.update, &p.insert]
                    .iter()
                    .filter_map(|l| l.as_ref().map(|l| l.errors))
                    .sum();
                let write = p.update.as_ref().or(p.insert.as_ref());
                md.push_str(&format!(
                    "| {} | {name} | {:.0} | {} | {} | {} | {} | {} | {errors} |\n",
                    s.label,
                    p.ops_per_sec,
                    percentiles(p.read.as_ref()),
                    percentiles(write),
                    p.object_store.gets,
                    p.object_store.puts,
                    p.object_store.other,
                ));
            }
        }
        md.push_str(
            "\n| workload | Shoal / … | throughput ratio | read p99 ratio | update p99 ratio |\n",
        );
        md.push_str("|---|---|---:|---:|---:|\n");
        let opt = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.2}"));
        for r in &self.ratios {
            md.push_str(&format!(
                "| {} | {} | {:.2} | {} | {} |\n",
                r.workload,
                r.versus,
                r.throughput,
                opt(r.read_p99),
                opt(r.update_p99)
            ));
        }
        md.push_str("\nLayout after the load:\n\n");
        for s in &self.systems {
            md.push_str(&format!(
                "- {}: {}. Writes: {}.\n",
                s.label, s.layout, s.durability
            ));
        }
        md
    }
}

fn percentiles(l: Option<&Latency>) -> String {
    match l {
        Some(l) => format!("{:.2} / {:.2} / {:.2}", l.p50_ms, l.p99_ms, l.p999_ms),
        None => "–".to_string(),
    }
}
