//! The Prometheus text exposition format (0.0.4) of a [`StatusView`]. Every
//! family has `# HELP` and `# TYPE` (also when it has no samples yet);
//! counters end in `_total`; histograms have cumulative `_bucket{le=…}` lines
//! ending in `+Inf`, then `_sum` and `_count`. Only figures the server really
//! has are exported: no cache families when the cache is off, no `tier="l2"`
//! samples without an L2. Names are listed in `docs/metrics.md`.

use super::connections::{CloseReason, ConnectionMetricsSnapshot, Listener};
use super::requests::LATENCY_BOUNDS_US;
use crate::metrics::status::{StatusView, WritePathView};
use shoal_storage::cache::{CacheMetricsSnapshot, PoolSnapshot};
use shoal_storage::object::LatencySnapshot;
use std::fmt::Write as _;

/// Escapes a label value (backslash, double quote, newline).
pub fn escape_label(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes HELP text (backslash, newline).
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// The text being built.
struct Out(String);

impl Out {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {}", escape_help(help));
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
                let _ = write!(self.0, "{k}=\"{}\"", escape_label(v));
            }
            self.0.push('}');
        }
        if value.is_nan() {
            self.0.push_str(" NaN\n");
        } else if value.is_infinite() {
            self.0
                .push_str(if value > 0.0 { " +Inf\n" } else { " -Inf\n" });
        } else {
            let _ = writeln!(self.0, " {value}");
        }
    }

    /// A family with a single unlabelled sample.
    fn single(&mut self, name: &str, kind: &str, help: &str, value: f64) {
        self.family(name, kind, help);
        self.sample(name, &[], value);
    }

    /// A histogram series from per-bucket counts and inclusive upper bounds;
    /// `bounds.len() + 1 == counts.len()` (the last count is +Inf).
    fn histogram(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        bounds: &[f64],
        counts: &[u64],
        sum: f64,
    ) {
        let bucket = format!("{name}_bucket");
        let mut cum = 0u64;
        for (i, c) in counts.iter().enumerate() {
            cum += c;
            let le = if i + 1 == counts.len() {
                "+Inf".to_string()
            } else if let Some(b) = bounds.get(i) {
                b.to_string()
            } else {
                continue; // more counts than bounds: they fold into +Inf
            };
            let mut l = labels.to_vec();
            l.push(("le", &le));
            self.sample(&bucket, &l, cum as f64);
        }
        self.sample(&format!("{name}_sum"), labels, sum);
        self.sample(&format!("{name}_count"), labels, cum as f64);
    }
}

/// Inclusive upper bounds of the WAL's log2 histograms over integers
/// (bucket 0 = 0, bucket i = [2^(i-1), 2^i) = ≤ 2^i - 1), divided by `scale`.
fn wal_bounds(buckets: usize, scale: f64) -> Vec<f64> {
    (0..buckets.saturating_sub(1))
        .map(|i| ((1u64 << i) - 1) as f64 / scale)
        .collect()
}

/// Renders every metric of `view`.
pub fn render(view: &StatusView) -> String {
    let mut o = Out(String::with_capacity(24 << 10));
    requests(&mut o, view);
    if let Some(c) = &view.cache {
        cache(&mut o, c);
    }
    object_store(&mut o, view);
    wal(&mut o, view);
    regions(&mut o, view);
    snapshots(&mut o, &view.snapshots);
    if let Some(c) = &view.cluster {
        cluster(&mut o, c);
    }
    o.0
}

fn snapshots(o: &mut Out, s: &crate::snapshots::HoldSummary) {
    for (name, help, value) in [
        (
            "shoal_snapshots",
            "Snapshots in the catalog (deleted ones a clone still reads included).",
            s.snapshots,
        ),
        (
            "shoal_snapshot_files",
            "Distinct files the snapshots hold.",
            s.files,
        ),
        (
            "shoal_snapshot_bytes",
            "Bytes of the files the snapshots hold.",
            s.bytes,
        ),
        (
            "shoal_snapshot_only_files",
            "Files kept only for snapshots: no region open on this server reads them.",
            s.only_files,
        ),
        (
            "shoal_snapshot_only_bytes",
            "Bytes kept only for snapshots (the cost of keeping them).",
            s.only_bytes,
        ),
        (
            "shoal_pitr_window_files",
            "Files kept only for the point-in-time window's base snapshots.",
            s.window_only_files,
        ),
        (
            "shoal_pitr_window_bytes",
            "Bytes kept only for the point-in-time window's base snapshots.",
            s.window_only_bytes,
        ),
    ] {
        o.single(name, "gauge", help, value as f64);
    }
}

fn cluster(o: &mut Out, c: &crate::metrics::status::ClusterView) {
    for (name, kind, help, value) in [
        (
            "shoal_cluster_failovers_total",
            "counter",
            "Regions this server opened after their owner died (replaying its WAL).",
            c.failovers.0 as f64,
        ),
        (
            "shoal_cluster_failover_open_seconds_total",
            "counter",
            "Time those opens took.",
            c.failovers.1 as f64 / 1e3,
        ),
        (
            "shoal_cluster_moves_total",
            "counter",
            "Regions this server closed (flushed) for a move or a drain.",
            c.moves_out.0 as f64,
        ),
        (
            "shoal_cluster_move_close_seconds_total",
            "counter",
            "Time those closes took.",
            c.moves_out.1 as f64 / 1e3,
        ),
        (
            "shoal_cluster_move_reads_total",
            "counter",
            "Reads answered by regions closed here for a move, before their next owner opened them.",
            c.move_reads.0 as f64,
        ),
        (
            "shoal_cluster_move_reads_ended_total",
            "counter",
            "Regions opened here whose former owner stopped answering their reads when asked.",
            c.move_reads.1 as f64,
        ),
        (
            "shoal_cluster_move_reads_waited_total",
            "counter",
            "Regions opened here that waited out their former owner's bound on reads (it did not answer).",
            c.move_reads.2 as f64,
        ),
        (
            "shoal_cluster_handed_rows_total",
            "counter",
            "Rows taken into the row cache here from the row caches of regions' former owners as the regions moved here.",
            c.handed_rows as f64,
        ),
        (
            "shoal_cluster_lease_losses_total",
            "counter",
            "Times this server lost its lease and gave its regions up.",
            c.lease_losses as f64,
        ),
        (
            "shoal_cluster_lease_held",
            "gauge",
            "1 while this server holds its cluster lease.",
            if c.lease_held { 1.0 } else { 0.0 },
        ),
        (
            "shoal_cluster_is_master",
            "gauge",
            "1 while this server is master.",
            if c.is_master { 1.0 } else { 0.0 },
        ),
        (
            "shoal_cluster_servers",
            "gauge",
            "Live servers in the cluster.",
            c.servers.len() as f64,
        ),
        (
            "shoal_cluster_peer_calls_total",
            "counter",
            "Block reads asked of another server's L2 (calls, each for one or more blocks).",
            c.peer_calls.calls as f64,
        ),
        (
            "shoal_cluster_peer_call_failures_total",
            "counter",
            "Peer block reads that failed or missed cluster.peer_read_timeout.",
            c.peer_calls.failures as f64,
        ),
        (
            "shoal_cluster_peer_call_seconds_total",
            "counter",
            "Time spent in peer block reads.",
            c.peer_calls.micros as f64 / 1e6,
        ),
        (
            "shoal_cluster_peer_hinted_regions",
            "gauge",
            "Regions whose former owner is asked for blocks now (within cluster.peer_window of their move).",
            c.peer_calls.hinted_regions as f64,
        ),
    ] {
        o.single(name, kind, help, value);
    }
}

/// Renders the connection figures of the listeners (kept apart from the
/// [`StatusView`]: they belong to the listeners, not to the host).
pub fn render_connections(c: &ConnectionMetricsSnapshot) -> String {
    let mut o = Out(String::with_capacity(2 << 10));
    o.family(
        "shoal_connections_open",
        "gauge",
        "Client connections open now, by listener.",
    );
    for on in Listener::ALL {
        o.sample(
            "shoal_connections_open",
            &[("listener", on.as_str())],
            c.open(on) as f64,
        );
    }
    o.family(
        "shoal_connections_accepted_total",
        "counter",
        "Connections accepted, by listener (also those refused at the cap).",
    );
    for on in Listener::ALL {
        o.sample(
            "shoal_connections_accepted_total",
            &[("listener", on.as_str())],
            c.accepted(on) as f64,
        );
    }
    o.family(
        "shoal_connections_closed_total",
        "counter",
        "Connections closed, by listener and reason (handshake, idle, keepalive, limit, shutdown, client).",
    );
    for on in Listener::ALL {
        for why in CloseReason::ALL {
            o.sample(
                "shoal_connections_closed_total",
                &[("listener", on.as_str()), ("reason", why.as_str())],
                c.closed(on, why) as f64,
            );
        }
    }
    o.single(
        "shoal_connections_max",
        "gauge",
        "Open connections allowed across both listeners (server.max_connections, fitted to the open-files limit).",
        c.max_connections as f64,
    );
    o.0
}

fn requests(o: &mut Out, v: &StatusView) {
    let ops = &v.requests.ops;
    o.family(
        "shoal_requests_total",
        "counter",
        "Client calls completed, by operation.",
    );
    for (op, f) in ops {
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
    for (op, f) in ops {
        let name = "shoal_request_errors_total";
        o.sample(name, &[("op", op.as_str())], f.errors as f64);
    }
    o.family(
        "shoal_request_duration_seconds",
        "histogram",
        "Latency of client calls (a scan: the whole stream), by operation.",
    );
    let bounds: Vec<f64> = LATENCY_BOUNDS_US.iter().map(|&b| b as f64 / 1e6).collect();
    for (op, f) in ops {
        let name = "shoal_request_duration_seconds";
        let sum = f.sum_us as f64 / 1e6;
        o.histogram(name, &[("op", op.as_str())], &bounds, &f.buckets, sum);
    }
    o.single(
        "shoal_scan_rows_total",
        "counter",
        "Rows (or row chunks) returned by scans.",
        v.requests.scan_rows as f64,
    );
    o.single(
        "shoal_scans_open",
        "gauge",
        "Scans streaming now; each holds a read point and pins its files.",
        v.requests.scans_open as f64,
    );
    o.family(
        "shoal_scans_closed_early_total",
        "counter",
        "Scans ended before their last row: lease (the client took no message within limits.scan_lease) or cancelled (the client went away).",
    );
    let r = &v.requests;
    for (reason, n) in [
        ("lease", r.scans_lease_expired),
        ("cancelled", r.scans_cancelled),
    ] {
        o.sample(
            "shoal_scans_closed_early_total",
            &[("reason", reason)],
            n as f64,
        );
    }
    o.single(
        "shoal_request_bytes_in_flight",
        "gauge",
        "Bytes of request messages the server holds now (limits.request_bytes_in_flight bounds it).",
        r.bytes_in_flight as f64,
    );
    o.single(
        "shoal_requests_refused_total",
        "counter",
        "Requests refused with RESOURCE_EXHAUSTED because limits.request_bytes_in_flight was reached.",
        r.refused_bytes_in_flight as f64,
    );
}

/// Reads one figure of an L1 pool.
type PoolField = fn(&PoolSnapshot) -> u64;

/// A family with one sample per tier: (name, kind, help, L1 value, L2 value).
type TierFamily<'a> = (&'a str, &'a str, &'a str, Option<u64>, Option<u64>);

/// The block cache's families: lookups, hit ratio, per-tier figures, the
/// L2's recovery, then the counters of what misses cost and of prefetch.
fn cache(o: &mut Out, c: &CacheMetricsSnapshot) {
    cache_lookups(o, c);
    cache_hit_ratio(o, c);
    cache_tiers(o, c);
    cache_recovery(o, c);
    cache_counters(o, c);
}

/// The L1 pools, each with its `pool` label.
fn l1_pools(c: &CacheMetricsSnapshot) -> [(&'static str, &PoolSnapshot); 4] {
    [
        ("data", &c.data),
        ("in_memory", &c.in_memory),
        ("meta", &c.meta),
        ("rows", &c.rows),
    ]
}

/// One figure of the L1, summed over its pools.
fn l1_total(c: &CacheMetricsSnapshot, field: PoolField) -> u64 {
    l1_pools(c).iter().map(|(_, p)| field(p)).sum()
}

/// Hits / lookups (0 before any lookup).
fn hit_ratio(hits: u64, misses: u64) -> f64 {
    if hits + misses == 0 {
        0.0
    } else {
        hits as f64 / (hits + misses) as f64
    }
}

/// `shoal_cache_hits_total` and `shoal_cache_misses_total`: L1 in total
/// and per pool, then L2.
fn cache_lookups(o: &mut Out, c: &CacheMetricsSnapshot) {
    let lookups: [(&str, &str, PoolField, u64); 2] = [
        (
            "shoal_cache_hits_total",
            "Block cache hits by tier (L1 also by pool).",
            |p| p.hits,
            c.l2_hits,
        ),
        (
            "shoal_cache_misses_total",
            "Block cache misses by tier (L1 also by pool).",
            |p| p.misses,
            c.l2_misses,
        ),
    ];
    for (name, help, field, l2_value) in lookups {
        o.family(name, "counter", help);
        o.sample(name, &[("tier", "l1")], l1_total(c, field) as f64);
        for (pool, p) in &l1_pools(c) {
            o.sample(name, &[("tier", "l1"), ("pool", pool)], field(p) as f64);
        }
        if c.l2.is_some() {
            o.sample(name, &[("tier", "l2")], l2_value as f64);
        }
    }
}

/// `shoal_cache_hit_ratio`, by tier.
fn cache_hit_ratio(o: &mut Out, c: &CacheMetricsSnapshot) {
    let name = "shoal_cache_hit_ratio";
    o.family(
        name,
        "gauge",
        "Hits / lookups since start, by tier (0 before any lookup).",
    );
    o.sample(
        name,
        &[("tier", "l1")],
        hit_ratio(l1_total(c, |p| p.hits), l1_total(c, |p| p.misses)),
    );
    if c.l2.is_some() {
        o.sample(name, &[("tier", "l2")], hit_ratio(c.l2_hits, c.l2_misses));
    }
}

/// The families with one sample per tier: inserts, evictions, dropped
/// inserts, corrupt entries, bytes, free bytes, entries, index bytes
/// (each tier's sample only where the tier has the figure).
fn cache_tiers(o: &mut Out, c: &CacheMetricsSnapshot) {
    let l1 = |f: PoolField| l1_total(c, f);
    let l2 = c.l2.as_ref();
    let tiers: [TierFamily<'_>; 8] = [
        (
            "shoal_cache_inserts_total",
            "counter",
            "Blocks inserted, by tier.",
            Some(l1(|p| p.inserts)),
            l2.map(|m| m.inserts),
        ),
        (
            "shoal_cache_evictions_total",
            "counter",
            "Blocks evicted to make room, by tier.",
            Some(l1(|p| p.evictions)),
            l2.map(|m| m.evicted),
        ),
        (
            "shoal_cache_dropped_inserts_total",
            "counter",
            "Inserts not cached: L1 entries larger than a shard, L2 inserts beyond the writer's queue.",
            Some(l1(|p| p.rejected)),
            l2.map(|m| m.dropped),
        ),
        (
            "shoal_cache_corrupt_total",
            "counter",
            "L2 entries that failed their checksum (served as misses).",
            None,
            l2.map(|_| c.l2_corrupt),
        ),
        (
            "shoal_cache_bytes",
            "gauge",
            "Bytes held, by tier.",
            Some(l1(|p| p.bytes_used)),
            l2.map(|m| m.bytes_used),
        ),
        (
            "shoal_cache_free_bytes",
            "gauge",
            "Budget not in use, by tier.",
            Some(l1(|p| p.bytes_free)),
            l2.map(|m| m.bytes_free),
        ),
        (
            "shoal_cache_entries",
            "gauge",
            "Blocks held, by tier.",
            Some(l1(|p| p.entries)),
            l2.map(|m| m.entries),
        ),
        (
            "shoal_cache_index_bytes",
            "gauge",
            "Memory of the L2 index.",
            None,
            l2.map(|m| m.index_bytes),
        ),
    ];
    for (name, kind, help, l1_value, l2_value) in tiers {
        o.family(name, kind, help);
        for (tier, value) in [("l1", l1_value), ("l2", l2_value)] {
            if let Some(v) = value {
                o.sample(name, &[("tier", tier)], v as f64);
            }
        }
    }
}

/// `shoal_cache_recovery_seconds` (no sample without an L2).
fn cache_recovery(o: &mut Out, c: &CacheMetricsSnapshot) {
    let name = "shoal_cache_recovery_seconds";
    o.family(
        name,
        "gauge",
        "Time the L2 index took to rebuild at start (0 while it runs).",
    );
    if let Some(m) = &c.l2 {
        o.sample(name, &[], m.recovery_micros as f64 / 1e6);
    }
}

/// The cache's single counters: object-store reads on misses, shared
/// misses, blocks read from and served to peers, and prefetch progress.
fn cache_counters(o: &mut Out, c: &CacheMetricsSnapshot) {
    for (name, help, value) in [
        (
            "shoal_cache_object_store_gets_total",
            "Object-store GETs caused by cache misses.",
            c.object_store_gets,
        ),
        (
            "shoal_cache_object_store_bytes_total",
            "Bytes read from the object store on cache misses.",
            c.object_store_bytes,
        ),
        (
            "shoal_cache_shared_misses_total",
            "Misses that joined another caller's fetch (single-flight).",
            c.shared_misses,
        ),
        (
            "shoal_cache_peer_hits_total",
            "Blocks read from another server's L2 instead of the object store (cluster mode).",
            c.peer.hits,
        ),
        (
            "shoal_cache_peer_bytes_total",
            "Bytes of blocks read from another server's L2.",
            c.peer.bytes,
        ),
        (
            "shoal_cache_peer_misses_total",
            "Blocks asked of a peer that it did not hold.",
            c.peer.misses,
        ),
        (
            "shoal_cache_peer_corrupt_total",
            "Blocks a peer returned that failed their checksum (read from the object store instead).",
            c.peer.corrupt,
        ),
        (
            "shoal_cache_peer_fallbacks_total",
            "Blocks read from the object store because their peer failed or missed its deadline.",
            c.peer.fallbacks,
        ),
        (
            "shoal_cache_peer_served_blocks_total",
            "Blocks this server's L2 handed to other servers.",
            c.peer.served,
        ),
        (
            "shoal_cache_peer_served_bytes_total",
            "Bytes of blocks this server's L2 handed to other servers.",
            c.peer.served_bytes,
        ),
        (
            "shoal_prefetch_target_bytes_total",
            "Bytes prefetch-on-open set out to warm.",
            c.prefetch_bytes_total,
        ),
        (
            "shoal_prefetch_done_bytes_total",
            "Bytes prefetch-on-open warmed or found already cached.",
            c.prefetch_bytes_done,
        ),
    ] {
        o.single(name, "counter", help, value as f64);
    }
}

fn object_store(o: &mut Out, v: &StatusView) {
    type Field = fn(&shoal_storage::object::OpSnapshot) -> u64;
    let counters: [(&str, &str, Field); 4] = [
        (
            "shoal_object_store_requests_total",
            "Object-store request attempts, by operation.",
            |s| s.requests,
        ),
        (
            "shoal_object_store_errors_total",
            "Object-store attempts that failed, by operation.",
            |s| s.errors,
        ),
        (
            "shoal_object_store_retries_total",
            "Object-store attempts that retried a transient failure, by operation.",
            |s| s.retries,
        ),
        (
            "shoal_object_store_bytes_total",
            "Payload bytes moved by successful object-store requests, by operation.",
            |s| s.bytes,
        ),
    ];
    for (name, help, field) in counters {
        o.family(name, "counter", help);
        for (op, s) in v.object_store.iter() {
            o.sample(name, &[("op", op.as_str())], field(s) as f64);
        }
    }
    let name = "shoal_object_store_request_duration_seconds";
    o.family(
        name,
        "histogram",
        "Object-store attempt latency, by operation.",
    );
    for (op, s) in v.object_store.iter() {
        let bounds: Vec<f64> = (0..s.latency.buckets.len())
            .map_while(LatencySnapshot::bucket_upper_bound_us)
            .map(|us| us as f64 / 1e6)
            .collect();
        let sum = s.latency.sum_us as f64 / 1e6;
        o.histogram(
            name,
            &[("op", op.as_str())],
            &bounds,
            &s.latency.buckets,
            sum,
        );
    }
}

fn wal(o: &mut Out, v: &StatusView) {
    let w = &v.wal;
    o.single(
        "shoal_wal_appends_total",
        "counter",
        "WAL entries acknowledged durable.",
        w.appends as f64,
    );
    o.single(
        "shoal_wal_failed_appends_total",
        "counter",
        "WAL appends answered with an error.",
        w.failed_appends as f64,
    );
    o.single(
        "shoal_wal_bytes_total",
        "counter",
        "WAL record bytes made durable.",
        w.bytes as f64,
    );
    o.single(
        "shoal_wal_syncs_total",
        "counter",
        "WAL group commits (one write+fdatasync or one PUT each).",
        w.syncs as f64,
    );
    let name = "shoal_wal_batch_entries";
    o.family(name, "histogram", "Entries per WAL group commit.");
    let h = &w.batch_entries_histogram;
    let sum = w.batch_entries_sum as f64;
    o.histogram(name, &[], &wal_bounds(h.len(), 1.0), h, sum);
    let name = "shoal_wal_sync_duration_seconds";
    o.family(name, "histogram", "Latency of WAL group commits.");
    let h = &w.sync_micros_histogram;
    let sum = w.sync_micros_sum as f64 / 1e6;
    o.histogram(name, &[], &wal_bounds(h.len(), 1e6), h, sum);
    o.single(
        "shoal_wal_sync_max_seconds",
        "gauge",
        "Slowest WAL group commit since start.",
        w.sync_micros_max as f64 / 1e6,
    );
    o.single(
        "shoal_wal_segments",
        "gauge",
        "WAL segments that exist now.",
        w.segments_live as f64,
    );
    o.single(
        "shoal_wal_live_bytes",
        "gauge",
        "Record bytes in the live WAL segments: what a replay after a crash reads.",
        w.live_bytes as f64,
    );
    o.single(
        "shoal_wal_release_flushes_total",
        "counter",
        "Region flushes started because the WAL held more than wal.max_unflushed.",
        w.release_flushes as f64,
    );
    o.single(
        "shoal_wal_segments_recycled_total",
        "counter",
        "WAL segments made from a retired segment's file instead of a zero-filled one.",
        w.segments_recycled as f64,
    );
    o.single(
        "shoal_wal_history_objects",
        "gauge",
        "WAL segment objects kept only for the history window (flushed, not yet aged out).",
        w.history_objects as f64,
    );
    o.single(
        "shoal_wal_history_bytes",
        "gauge",
        "Bytes of the WAL segment objects kept only for the history window.",
        w.history_bytes as f64,
    );
}

/// The regions' and the process's families: totals, the write path and
/// its stages, the per-region gauges and block sources, uptime and CPU.
fn regions(o: &mut Out, v: &StatusView) {
    region_totals(o, v);
    write_path(o, &v.write);
    write_stages(o, &v.write);
    per_region(o, v);
    region_blocks(o, v);
    process(o, v);
}

/// Memstore bytes, flushes, compactions and splits done, tables and open
/// regions.
fn region_totals(o: &mut Out, v: &StatusView) {
    for (name, kind, help, value) in [
        (
            "shoal_memstore_bytes",
            "gauge",
            "Bytes in all memstores.",
            v.memstore_bytes,
        ),
        (
            "shoal_flushes_total",
            "counter",
            "Memstore flushes completed.",
            v.flushes,
        ),
        (
            "shoal_compactions_total",
            "counter",
            "Compactions completed.",
            v.compactions,
        ),
        (
            "shoal_splits_total",
            "counter",
            "Region splits completed.",
            v.splits,
        ),
        ("shoal_tables", "gauge", "Tables.", v.tables.len() as u64),
        (
            "shoal_regions",
            "gauge",
            "Open regions.",
            v.tables.iter().map(|t| t.regions.len() as u64).sum(),
        ),
    ] {
        o.single(name, kind, help, value as f64);
    }
}

/// The write path's single figures: memstore limits and flat bytes,
/// writes blocked on memstore memory, flushes by cause and their cost,
/// and in-memory compaction.
fn write_path(o: &mut Out, w: &WritePathView) {
    for (name, kind, help, value) in [
        (
            "shoal_memstore_limit_bytes",
            "gauge",
            "Total memstore bytes at which writes wait.",
            w.memstore_limit as f64,
        ),
        (
            "shoal_memstore_flush_watermark_bytes",
            "gauge",
            "Memstore bytes above which the largest regions flush.",
            w.flush_watermark as f64,
        ),
        (
            "shoal_memstore_flat_bytes",
            "gauge",
            "Memstore bytes in flat (in-memory compacted) segments.",
            w.flat_bytes as f64,
        ),
        (
            "shoal_write_blocked_total",
            "counter",
            "Writes that waited for memstore memory.",
            w.blocked_writes as f64,
        ),
        (
            "shoal_write_blocked_seconds_total",
            "counter",
            "Time writes waited for memstore memory.",
            w.blocked_seconds,
        ),
        (
            "shoal_write_block_timeouts_total",
            "counter",
            "Writes that failed after waiting the block timeout.",
            w.block_timeouts as f64,
        ),
        (
            "shoal_flushes_pressure_total",
            "counter",
            "Flushes started by global memstore pressure.",
            w.pressure_flushes as f64,
        ),
        (
            "shoal_flushes_periodic_total",
            "counter",
            "Flushes started because a memstore was old.",
            w.periodic_flushes as f64,
        ),
        (
            "shoal_flush_seconds_total",
            "counter",
            "Time spent in flushes.",
            w.flush_seconds,
        ),
        (
            "shoal_flush_bytes_total",
            "counter",
            "Bytes of files written by flushes.",
            w.flush_bytes as f64,
        ),
        (
            "shoal_memstore_flattens_total",
            "counter",
            "Skiplist segments flattened by in-memory compaction.",
            w.imc_flattens as f64,
        ),
        (
            "shoal_memstore_merges_total",
            "counter",
            "Merges of flat memstore segments.",
            w.imc_merges as f64,
        ),
        (
            "shoal_memstore_cells_dropped_total",
            "counter",
            "Cells dropped by eager in-memory compaction.",
            w.imc_cells_dropped as f64,
        ),
    ] {
        o.single(name, kind, help, value);
    }
}

/// `shoal_write_stage_duration_seconds`: one histogram per stage of the
/// write path.
fn write_stages(o: &mut Out, w: &WritePathView) {
    let name = "shoal_write_stage_duration_seconds";
    o.family(
        name,
        "histogram",
        "Time puts and deletes spent per stage of the write path.",
    );
    for s in &w.stages {
        let h = &s.histogram;
        let sum = s.sum_micros as f64 / 1e6;
        let labels = [("stage", s.stage.as_str())];
        o.histogram(name, &labels, &wal_bounds(h.len(), 1e6), h, sum);
    }
}

/// The per-region gauges: size, cache ratio, prefetch progress (a region
/// without the figure has no sample).
fn per_region(o: &mut Out, v: &StatusView) {
    type Field = fn(&crate::metrics::status::RegionView) -> Option<f64>;
    let per_region: [(&str, &str, Field); 3] = [
        (
            "shoal_region_size_bytes",
            "Bytes of a region's files and memstore.",
            |r| Some(r.size_bytes as f64),
        ),
        (
            "shoal_region_cache_ratio",
            "Fraction of a region's data blocks held in the block cache.",
            |r| r.cache_ratio,
        ),
        (
            "shoal_region_prefetch_bytes_done",
            "Prefetch-on-open progress of a region: bytes warmed.",
            |r| r.prefetch.map(|p| p.0 as f64),
        ),
    ];
    for (name, help, field) in per_region {
        o.family(name, "gauge", help);
        for t in &v.tables {
            for r in &t.regions {
                if let Some(value) = field(r) {
                    o.sample(name, &[("table", &t.name), ("region", &r.id)], value);
                }
            }
        }
    }
}

/// `shoal_region_blocks_total`: each region's data blocks by kind (read,
/// prefetch) and the tier that supplied them.
fn region_blocks(o: &mut Out, v: &StatusView) {
    o.family(
        "shoal_region_blocks_total",
        "counter",
        "Data blocks of a region read (kind=read) or copied by a prefetch (kind=prefetch) on this server, by the tier that supplied them (l1, l2, peer, object_store).",
    );
    for t in &v.tables {
        for r in &t.regions {
            if let Some(s) = r.block_sources {
                for (kind, source, n) in [
                    ("read", "l1", s.l1),
                    ("read", "l2", s.l2),
                    ("read", "peer", s.peer),
                    ("read", "object_store", s.object_store),
                    ("prefetch", "peer", s.prefetch_peer),
                    ("prefetch", "object_store", s.prefetch_object_store),
                ] {
                    o.sample(
                        "shoal_region_blocks_total",
                        &[
                            ("table", &t.name),
                            ("region", &r.id),
                            ("kind", kind),
                            ("source", source),
                        ],
                        n as f64,
                    );
                }
            }
        }
    }
}

/// The process's uptime and CPU time (in total and in the kernel).
fn process(o: &mut Out, v: &StatusView) {
    o.single(
        "shoal_uptime_seconds",
        "gauge",
        "Seconds since the server started.",
        v.uptime.as_secs_f64(),
    );
    o.single(
        "process_cpu_seconds_total",
        "counter",
        "User and system CPU time the server process has used.",
        v.cpu.total().as_secs_f64(),
    );
    o.single(
        "shoal_process_cpu_system_seconds_total",
        "counter",
        "The part of process_cpu_seconds_total spent in the kernel (syscalls).",
        v.cpu.system.as_secs_f64(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::test_support::{Exposition, view};

    /// Names in the first column of the table in docs/metrics.md.
    fn documented() -> Vec<&'static str> {
        include_str!("../../../../docs/metrics.md")
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect()
    }

    #[test]
    fn output_is_valid_exposition_with_and_without_cache() {
        let conns = crate::metrics::ConnectionMetrics::default();
        conns.accepted(Listener::Grpc);
        conns.accepted(Listener::Grpc);
        conns.closed(Listener::Grpc, CloseReason::Idle);
        conns.set_max_connections(77);
        // What `/metrics` serves: the view, then the listeners' figures.
        let text = render(&view(true)) + &render_connections(&conns.snapshot());
        let with = Exposition::parse(&text);
        let docs = documented();
        assert!(docs.len() > 40, "{docs:?}");
        for n in &docs {
            assert!(
                with.families.contains_key(*n),
                "{n} documented, not rendered"
            );
        }
        for n in with.families.keys() {
            assert!(docs.contains(&n.as_str()), "{n} rendered, not documented");
        }
        assert_eq!(with.value("shoal_requests_total", &[("op", "get")]), 1.0);
        assert_eq!(
            with.value("shoal_request_errors_total", &[("op", "scan")]),
            1.0
        );
        assert_eq!(with.value("shoal_cache_hits_total", &[("tier", "l2")]), 7.0);
        assert_eq!(
            with.value(
                "shoal_cache_hits_total",
                &[("tier", "l1"), ("pool", "meta")]
            ),
            4.0
        );
        assert_eq!(with.value("shoal_cache_hit_ratio", &[("tier", "l1")]), 0.5);
        let get_le_250us = [("op", "get"), ("le", "0.00025")];
        assert_eq!(
            with.value("shoal_request_duration_seconds_bucket", &get_le_250us),
            1.0
        );
        let region = [("table", "t\"1\\\n"), ("region", "r1")];
        assert_eq!(with.value("shoal_region_cache_ratio", &region), 0.5);
        let peer = [&region[..], &[("kind", "read"), ("source", "peer")]].concat();
        assert_eq!(with.value("shoal_region_blocks_total", &peer), 3.0);
        assert_eq!(
            with.value("shoal_wal_batch_entries_bucket", &[("le", "1")]),
            1.0
        );
        assert_eq!(
            with.value("shoal_wal_batch_entries_bucket", &[("le", "3")]),
            3.0
        );
        assert_eq!(with.value("shoal_wal_batch_entries_count", &[]), 4.0);
        let grpc = [("listener", "grpc")];
        assert_eq!(with.value("shoal_connections_open", &grpc), 1.0);
        assert_eq!(with.value("shoal_connections_accepted_total", &grpc), 2.0);
        let idle = [("listener", "grpc"), ("reason", "idle")];
        assert_eq!(with.value("shoal_connections_closed_total", &idle), 1.0);
        let limit = [("listener", "http"), ("reason", "limit")];
        assert_eq!(with.value("shoal_connections_closed_total", &limit), 0.0);
        assert_eq!(with.value("shoal_connections_max", &[]), 77.0);
        let get_le_2us = [("op", "get"), ("le", "0.000002")];
        let os = "shoal_object_store_request_duration_seconds_bucket";
        assert_eq!(with.value(os, &get_le_2us), 2.0);

        let without = Exposition::parse(&render(&view(false)));
        for n in without.families.keys() {
            let cache_family = n.starts_with("shoal_cache_") || n.starts_with("shoal_prefetch_");
            assert!(!cache_family, "{n} without a cache");
        }
        assert!(without.families.contains_key("shoal_wal_syncs_total"));

        let mut no_l2 = view(true);
        if let Some(c) = &mut no_l2.cache {
            c.l2 = None;
        }
        let no_l2 = render(&no_l2);
        Exposition::parse(&no_l2);
        assert!(
            !no_l2.contains("tier=\"l2\""),
            "no L2 samples without an L2"
        );
    }
}
