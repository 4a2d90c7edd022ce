//! `/api/status`: the key figures of a [`StatusView`] as JSON, for scripts.
//! Sizes are bytes, times seconds, ratios 0..=1 (`null` when unknown).

use super::format::{ratio, to_string_binary};
use crate::metrics::Point;
use crate::metrics::status::StatusView;
use serde_json::{Value, json};

/// The JSON document served at `/api/status`.
pub fn status_json(v: &StatusView, latest: Option<&Point>) -> Value {
    let tables: Vec<Value> = v
        .tables
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "enabled": t.enabled,
                "families": t.families,
                "regions": t.regions.len(),
            })
        })
        .collect();
    let regions: Vec<Value> = v
        .tables
        .iter()
        .flat_map(|t| {
            t.regions.iter().map(move |r| {
                json!({
                    "table": t.name,
                    "id": r.id,
                    "start_row": to_string_binary(&r.start_row),
                    "end_row": to_string_binary(&r.end_row),
                    "size_bytes": r.size_bytes,
                    "memstore_bytes": r.memstore_bytes,
                    "files": r.files,
                    "cache_ratio": r.cache_ratio,
                    "block_sources": r.block_sources,
                    "has_references": r.has_references,
                    "prefetch_bytes_done": r.prefetch.map(|p| p.0),
                    "prefetch_bytes_total": r.prefetch.map(|p| p.1),
                })
            })
        })
        .collect();
    let cache = v.cache.as_ref().map(|c| {
        let pools = [&c.data, &c.in_memory, &c.meta, &c.rows];
        let hits: u64 = pools.iter().map(|p| p.hits).sum();
        let misses: u64 = pools.iter().map(|p| p.misses).sum();
        json!({
            "l1_hits": hits,
            "l1_misses": misses,
            "l1_hit_ratio": ratio(hits, misses),
            "l1_bytes": pools.iter().map(|p| p.bytes_used).sum::<u64>(),
            "l2_hits": c.l2_hits,
            "l2_misses": c.l2_misses,
            "l2_hit_ratio": ratio(c.l2_hits, c.l2_misses),
            "l2_bytes": c.l2.as_ref().map(|l2| l2.bytes_used),
            "object_store_gets": c.object_store_gets,
        })
    });
    json!({
        "version": v.version,
        "uptime_seconds": v.uptime.as_secs_f64(),
        "data_location": v.data_location,
        "tables": tables,
        "regions": regions,
        "requests_total": v.requests.total_requests(),
        "memstore_bytes": v.memstore_bytes,
        "object_store_requests_total": v.object_store.total_requests(),
        "flushes": v.flushes,
        "compactions": v.compactions,
        "splits": v.splits,
        "cache": cache,
        "last_interval": latest.map(|p| json!({
            "ops_per_sec": p.ops_per_sec,
            "l1_hit_ratio": p.l1_hit_ratio,
            "l2_hit_ratio": p.l2_hit_ratio,
            "object_gets_per_sec": p.object_gets_per_sec,
        })),
    })
}
