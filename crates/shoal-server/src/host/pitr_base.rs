//! The point-in-time window's base snapshots: what a table is restored
//! from before the WAL's history is replayed up to the instant asked for.
//!
//! With `[snapshots] point_in_time_window` on, the master takes a snapshot
//! of every enabled table every `point_in_time_base_every` (and at once
//! after a truncate or a restore), named `@pitr.<table id>.<ms>` and hidden
//! from every listing. A base is let go once a newer base of its table is
//! itself older than the window (the newer one then covers the window's
//! start); a dropped table's bases go once the newest is older than the
//! window. Bases are ordinary snapshots otherwise: zero-copy, held from GC
//! by the same rule, so what the window costs in files is what only they
//! hold (`shoal_pitr_window_bytes`).

use super::Host;
use super::snapshot_take::now_ms;
use crate::catalog::{Catalog, SnapshotEntry};
use crate::config::PointInTime;
use crate::snapshots::record::{base_name, parse_base_name};
use std::collections::BTreeMap;

/// The bases in `catalog`, by the table id they were taken of, oldest first.
pub(crate) fn bases_by_table(catalog: &Catalog) -> BTreeMap<String, Vec<SnapshotEntry>> {
    let mut out: BTreeMap<String, Vec<SnapshotEntry>> = BTreeMap::new();
    for entry in catalog.snapshots.iter().filter(|s| s.base && !s.deleted) {
        if let Some((table_id, _)) = parse_base_name(&entry.name) {
            out.entry(table_id.to_string())
                .or_default()
                .push(entry.clone());
        }
    }
    for list in out.values_mut() {
        list.sort_by_key(|e| e.created_ms);
    }
    out
}

/// Names of the bases the window no longer needs at `now`.
fn bases_to_let_go(catalog: &Catalog, pit: &PointInTime, now: i64) -> Vec<String> {
    let window_start = now - pit.window.as_millis() as i64;
    let mut out = Vec::new();
    for (table_id, bases) in bases_by_table(catalog) {
        let live = catalog.tables.iter().any(|t| t.id == table_id);
        for (i, base) in bases.iter().enumerate() {
            let covered_by_newer = bases[i + 1..]
                .iter()
                .any(|newer| newer.created_ms <= window_start);
            let table_gone_long_ago = !live
                && bases
                    .last()
                    .is_some_and(|newest| newest.created_ms < window_start);
            if covered_by_newer || table_gone_long_ago {
                out.push(base.name.clone());
            }
        }
    }
    out
}

/// Tables (name, id) due a base at `now`: enabled, and with no base yet,
/// none since their data was last replaced, or none for `base_every`.
fn tables_due(catalog: &Catalog, pit: &PointInTime, now: i64) -> Vec<(String, String)> {
    let bases = bases_by_table(catalog);
    let every = pit.base_every.as_millis() as i64;
    catalog
        .tables
        .iter()
        .filter(|t| t.enabled)
        .filter(|t| {
            let newest = bases
                .get(&t.id)
                .and_then(|b| b.last())
                .map(|b| b.created_ms);
            newest.is_none_or(|ms| ms < t.reset_ms || now - ms >= every)
        })
        .map(|t| (t.name.clone(), t.id.clone()))
        .collect()
}

impl Host {
    /// The point-in-time settings, if the window is on.
    pub(crate) fn point_in_time(&self) -> Option<PointInTime> {
        self.inner.config.snapshots.point_in_time()
    }

    /// Takes the bases that are due and lets go of those the window no
    /// longer needs. Run by the master's periodic checks.
    pub async fn pitr_housekeeping(&self) {
        let Some(pit) = self.point_in_time() else {
            return;
        };
        if self.require_master().is_err() {
            return;
        }
        let catalog = self.inner.catalog.lock().await.current().clone();
        let now = now_ms();
        for (table, table_id) in tables_due(&catalog, &pit, now) {
            let name = base_name(&table_id, now_ms());
            match self.take_snapshot_named(&table, &name).await {
                Ok(info) => tracing::debug!(
                    table = %table,
                    written_bytes = info.written_bytes,
                    "point-in-time base taken"
                ),
                Err(e) => tracing::warn!(
                    table = %table,
                    error = %e,
                    "taking a point-in-time base failed; retried at the next check"
                ),
            }
        }
        for name in bases_to_let_go(&catalog, &pit, now) {
            if let Err(e) = self.delete_snapshot(&name).await {
                tracing::warn!(snapshot = %name, error = %e, "letting go of a point-in-time base failed; retried later");
            }
        }
        self.prune_catalog_history(&pit).await;
    }

    /// Deletes catalog versions older than the window's history, once an
    /// hour.
    async fn prune_catalog_history(&self, pit: &PointInTime) {
        {
            let mut last = self
                .inner
                .catalog_prune
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(3600)) {
                return;
            }
            *last = Some(std::time::Instant::now());
        }
        match crate::catalog::history::prune_history(
            &self.inner.env.bucket,
            Some(pit.history()),
            std::time::SystemTime::now(),
        )
        .await
        {
            Ok(0) => {}
            Ok(n) => tracing::info!(versions = n, "old catalog versions pruned"),
            Err(e) => tracing::warn!(error = %e, "pruning old catalog versions failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::TableRecord;
    use std::time::Duration;

    fn base(table_id: &str, ms: i64) -> SnapshotEntry {
        SnapshotEntry {
            name: base_name(table_id, ms),
            id: format!("{table_id}{ms}"),
            table: "t".into(),
            created_ms: ms,
            deleted: false,
            base: true,
        }
    }

    fn table(id: &str, enabled: bool, reset_ms: i64) -> TableRecord {
        TableRecord {
            name: format!("name-{id}"),
            id: id.into(),
            enabled,
            families: vec![],
            regions: vec![],
            split_parents: vec![],
            holds: vec![],
            reset_ms,
        }
    }

    #[test]
    fn bases_are_taken_when_due_and_let_go_when_a_newer_one_covers_the_window() {
        let pit = PointInTime {
            window: Duration::from_secs(100),
            base_every: Duration::from_secs(10),
        };
        let now = 1_000_000;
        let catalog = Catalog {
            tables: vec![
                table("a", true, 0),
                table("b", true, 0),
                table("c", false, 0),
                table("d", true, now - 1_000),
            ],
            snapshots: vec![
                // a: 150 s, 120 s, 90 s and 5 s ago, window 100 s: the
                // 120 s one serves [now-100, now-90), so only the 150 s
                // one goes.
                base("a", now - 150_000),
                base("a", now - 120_000),
                base("a", now - 90_000),
                base("a", now - 5_000),
                // b: last base 20 s ago: due.
                base("b", now - 20_000),
                // d: its base predates its truncate: due.
                base("d", now - 2_000),
                // gone: a dropped table; its newest base is older than the window.
                base("gone", now - 200_000),
                base("gone", now - 150_000),
                // dropped recently: kept.
                base("recent", now - 50_000),
            ],
            ..Catalog::default()
        };
        let due: Vec<String> = tables_due(&catalog, &pit, now)
            .into_iter()
            .map(|(_, id)| id)
            .collect();
        assert_eq!(due, vec!["b".to_string(), "d".to_string()]);
        let mut gone = bases_to_let_go(&catalog, &pit, now);
        gone.sort();
        let mut want = vec![
            base_name("a", now - 150_000),
            base_name("gone", now - 200_000),
            base_name("gone", now - 150_000),
        ];
        want.sort();
        assert_eq!(gone, want);
    }
}
