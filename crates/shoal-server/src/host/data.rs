//! Data operations: route each row to its region and call it. A call that
//! meets a region in motion (a split or close in progress, or a routing
//! table one step behind) waits briefly and tries again, so splits are
//! invisible to clients; after [`MOVE_DEADLINE`] it answers UNAVAILABLE.

use super::{Host, LiveTable, Slot};
use crate::error::ServiceError;
use bytes::Bytes;
use shoal_storage::region::filter::Filter;
use shoal_storage::region::{
    Changed, CheckAndMutate, Condition, Get, Nonce, Region, RegionError, RegionScanner, RowChange,
    RowChanges, RowMutation, RowResult, Scan,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a call waits for a moving region before giving up.
pub const MOVE_DEADLINE: Duration = Duration::from_secs(10);

impl Host {
    /// The enabled live table `name`.
    fn enabled_table(&self, name: &str) -> Result<Arc<LiveTable>, ServiceError> {
        if self.is_stopping() {
            return Err(ServiceError::Overloaded(
                "the server is shutting down".into(),
            ));
        }
        let table = self.table(name)?;
        if !table.record.enabled {
            return Err(ServiceError::TableDisabled(name.to_string()));
        }
        Ok(table)
    }

    /// The region serving `row` of `table` now, for a read or a write.
    fn route(&self, table: &str, row: &[u8], read: bool) -> Result<Region, ServiceError> {
        if row.is_empty() {
            return Err(ServiceError::InvalidArgument("row key is empty".into()));
        }
        let t = self.enabled_table(table)?;
        self.check_lease()?;
        match t.slot_for(row) {
            Some((_, Slot::Open(r))) => Ok(r.clone()),
            Some((
                _,
                Slot::Closing {
                    region,
                    reads_until,
                },
            )) if read && super::closing_reads(reads_until) => {
                self.count_move_read();
                Ok(region.clone())
            }
            Some((record, Slot::Elsewhere)) => Err(self.not_serving(table, &record.id)),
            Some((record, Slot::Closing { .. })) => Err(ServiceError::Unavailable(format!(
                "region {} of table {table} is being moved",
                record.id
            ))),
            Some((record, Slot::Moving)) => Err(ServiceError::Unavailable(format!(
                "region {} of table {table} is being split or moved",
                record.id
            ))),
            None => Err(ServiceError::Unavailable(format!(
                "table {table} has no region for this row yet"
            ))),
        }
    }

    /// Runs `call` (a read if `read`) on the region of `row`, retrying while
    /// the region moves.
    pub(super) async fn with_region<T, F, Fut>(
        &self,
        table: &str,
        row: &[u8],
        read: bool,
        call: F,
    ) -> Result<T, ServiceError>
    where
        F: Fn(Region) -> Fut,
        Fut: std::future::Future<Output = Result<T, RegionError>>,
    {
        let start = Instant::now();
        let mut wait = Duration::from_millis(2);
        let mut caught_up = false;
        loop {
            // The lease this call runs under: it is acknowledged only if that
            // same lease is still held when the work is done (not merely a
            // lease: a server that lost its lease mid-call and rejoined holds
            // a new one, but the region may have been replayed elsewhere
            // meanwhile, without this call's write).
            let routed = self
                .lease_now()
                .and_then(|lease| self.route(table, row, read).map(|region| (region, lease)));
            let result = match routed {
                Ok((region, lease)) => call(region.clone())
                    .await
                    .map_err(|e| {
                        // Cluster mode: another server fenced the region's
                        // manifest, so it owns it now; stop serving it here.
                        if self.inner.cluster.is_some() && matches!(e, RegionError::Fenced { .. }) {
                            tracing::warn!(
                                region = region.id(),
                                "region fenced by a newer owner; no longer served here"
                            );
                            self.set_slot(region.id(), Slot::Elsewhere);
                        }
                        self.region_error(table, e)
                    })
                    // Answered only while the lease is held: a server cut off
                    // from etcd may have lost the region to another.
                    .and_then(|v| self.check_lease_since(lease).map(|()| v)),
                Err(e) => Err(e),
            };
            match result {
                Err(e) if e.is_retryable() && start.elapsed() < MOVE_DEADLINE => {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_millis(100));
                }
                Err(ServiceError::NoSuchTable(_)) if !caught_up && self.catalog_may_lag() => {
                    caught_up = true;
                    self.catch_up_catalog().await;
                }
                other => return other,
            }
        }
    }

    /// Cluster mode: a table this server does not know may be one the
    /// master made a moment ago (a client routed here by a region map
    /// newer than this server's catalog); the caller catches up once
    /// before answering that it does not exist.
    fn catalog_may_lag(&self) -> bool {
        self.inner.cluster.is_some()
    }

    /// Names the table in errors that only know the region.
    fn region_error(&self, table: &str, e: RegionError) -> ServiceError {
        match e {
            RegionError::NoSuchFamily { family, .. } => ServiceError::NoSuchFamily {
                table: table.to_string(),
                family,
            },
            other => ServiceError::Region(other),
        }
    }

    /// Reads several rows, answering them in order.
    pub async fn multi_get(
        &self,
        table: &str,
        gets: Vec<Get>,
    ) -> Result<Vec<RowResult>, ServiceError> {
        self.config().limits.check_batch(gets.len(), "gets")?;
        futures::future::join_all(gets.into_iter().map(|g| self.get(table, g)))
            .await
            .into_iter()
            .collect()
    }

    /// Reads one row.
    pub async fn get(&self, table: &str, get: Get) -> Result<RowResult, ServiceError> {
        if self.config().server.noop {
            return Ok(RowResult {
                row: get.row,
                cells: Vec::new(),
            });
        }
        let get = Arc::new(get);
        self.with_region(table, &get.row.clone(), true, |r| {
            let get = get.clone();
            async move { r.get(&get).await }
        })
        .await
    }

    /// Applies one row mutation atomically.
    pub async fn mutate(&self, table: &str, mutation: RowMutation) -> Result<(), ServiceError> {
        self.config().limits.check_mutation(&mutation)?;
        if self.config().server.noop {
            return Ok(());
        }
        let row = mutation.row.clone();
        let mutation = Arc::new(mutation);
        self.with_region(table, &row, false, |r| {
            let m = mutation.clone();
            async move { r.mutate((*m).clone()).await }
        })
        .await
    }

    /// Applies several row mutations, each atomic on its own, and answers
    /// each in order. The rows of one region go through its mini-batch path
    /// together (one WAL append, one wait for visibility); a row whose region
    /// moved meanwhile is retried on its own, as [`Host::mutate`] would.
    pub async fn mutate_many(
        &self,
        table: &str,
        mutations: Vec<RowMutation>,
    ) -> Result<Vec<Result<(), ServiceError>>, ServiceError> {
        let limits = &self.config().limits;
        limits.check_batch(mutations.len(), "mutations")?;
        let mut results: Vec<Option<Result<(), ServiceError>>> = mutations
            .iter()
            .map(|m| limits.check_mutation(m).err().map(Err))
            .collect();
        if self.config().server.noop {
            return Ok(results.into_iter().map(|r| r.unwrap_or(Ok(()))).collect());
        }
        if self.catalog_may_lag() && self.table(table).is_err() {
            self.catch_up_catalog().await;
        }
        // The lease the batches run under (see `with_region`).
        let lease = self.lease_now()?;
        // Rows grouped by region, in list order within each group.
        let mut groups: Vec<(Region, Vec<usize>)> = Vec::new();
        let mut group_of: std::collections::HashMap<String, usize> = Default::default();
        for (i, m) in mutations.iter().enumerate() {
            if results[i].is_some() {
                continue;
            }
            match self.route(table, &m.row, false) {
                Ok(region) => match group_of.get(region.id()) {
                    Some(&g) => groups[g].1.push(i),
                    None => {
                        group_of.insert(region.id().to_string(), groups.len());
                        groups.push((region, vec![i]));
                    }
                },
                Err(e) if e.is_retryable() => {}
                Err(e) => results[i] = Some(Err(e)),
            }
        }
        let batches = groups.into_iter().map(|(region, rows)| {
            let batch: Vec<RowMutation> = rows.iter().map(|&i| mutations[i].clone()).collect();
            async move { (rows, region.mutate_batch(batch).await) }
        });
        for (rows, answers) in futures::future::join_all(batches).await {
            for (i, answer) in rows.into_iter().zip(answers) {
                results[i] = Some(answer.map_err(|e| self.region_error(table, e)));
            }
        }
        // Acknowledged only while the same lease is held (cluster mode).
        self.check_lease_since(lease)?;
        // Rows not routed yet, or whose region moved: one by one, with retries.
        let retries = results.iter().enumerate().filter_map(|(i, r)| match r {
            None => Some(i),
            Some(Err(e)) if e.is_retryable() => Some(i),
            Some(_) => None,
        });
        let retries: Vec<usize> = retries.collect();
        let retried = futures::future::join_all(
            retries
                .iter()
                .map(|&i| self.mutate(table, mutations[i].clone())),
        )
        .await;
        for (i, r) in retries.into_iter().zip(retried) {
            results[i] = Some(r);
        }
        Ok(results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(ServiceError::Unavailable("mutation was not applied".into()))
                })
            })
            .collect())
    }

    /// Adds to counters; returns the new values and the cells written. A
    /// `nonce` (HBase's client marks each increment and append with one)
    /// makes a retry of an increment the region applied lately answer the
    /// current cells instead of adding again.
    pub async fn increment(
        &self,
        table: &str,
        row: Bytes,
        columns: Vec<(Bytes, Bytes, i64)>,
        nonce: Option<Nonce>,
    ) -> Result<Changed<i64>, ServiceError> {
        if columns.is_empty() {
            return Err(ServiceError::InvalidArgument(
                "columns: an increment needs at least one column".into(),
            ));
        }
        self.config()
            .limits
            .check_columns(columns.iter().map(|(_, q, _)| (&q[..], 8)), "increment")?;
        let columns = Arc::new(columns);
        self.with_region(table, &row.clone(), false, |r| {
            let (row, columns) = (row.clone(), columns.clone());
            async move { r.increment_nonced(row, &columns, nonce).await }
        })
        .await
    }

    /// Appends to values; returns the new values and the cells written
    /// (`nonce` as for [`Host::increment`]).
    pub async fn append(
        &self,
        table: &str,
        row: Bytes,
        columns: Vec<(Bytes, Bytes, Bytes)>,
        nonce: Option<Nonce>,
    ) -> Result<Changed<Bytes>, ServiceError> {
        if columns.is_empty() {
            return Err(ServiceError::InvalidArgument(
                "columns: an append needs at least one column".into(),
            ));
        }
        self.config()
            .limits
            .check_columns(columns.iter().map(|(_, q, v)| (&q[..], v.len())), "append")?;
        let columns = Arc::new(columns);
        self.with_region(table, &row.clone(), false, |r| {
            let (row, columns) = (row.clone(), columns.clone());
            async move { r.append_nonced(row, &columns, nonce).await }
        })
        .await
    }

    /// One row's changes with increments or appends among them, applied
    /// together, guarded by `condition` when given (HBase's RowMutations
    /// holding counters): the cells the counters wrote, or None when the
    /// check failed (`nonce` as for [`Host::increment`]).
    pub async fn mutate_changes(
        &self,
        table: &str,
        changes: RowChanges,
        condition: Option<Condition>,
        nonce: Option<Nonce>,
    ) -> Result<Option<Vec<shoal_storage::cell::Cell>>, ServiceError> {
        let limits = &self.config().limits;
        let ops = changes.changes.iter().filter_map(|c| match c {
            RowChange::Op(op) => Some(op.clone()),
            _ => None,
        });
        limits.check_mutation(&RowMutation {
            row: changes.row.clone(),
            ops: ops.collect(),
        })?;
        for change in &changes.changes {
            match change {
                RowChange::Op(_) => {}
                RowChange::Increment(cols) => {
                    limits.check_columns(cols.iter().map(|(_, q, _)| (&q[..], 8)), "increment")?
                }
                RowChange::Append(cols) => limits
                    .check_columns(cols.iter().map(|(_, q, v)| (&q[..], v.len())), "append")?,
            }
        }
        if let Some(c) = &condition {
            limits.check_columns(std::iter::once((&c.qualifier[..], c.value.len())), "check")?;
        }
        let row = changes.row.clone();
        let (changes, condition) = (Arc::new(changes), Arc::new(condition));
        self.with_region(table, &row, false, |r| {
            let (changes, condition) = (changes.clone(), condition.clone());
            async move {
                r.mutate_changes(&changes, condition.as_ref().as_ref(), nonce)
                    .await
            }
        })
        .await
    }

    /// An increment applied if `condition` passes (HBase's checkAndMutate
    /// with an Increment): what it answers, or None when the check failed
    /// (`nonce` as for [`Host::increment`]).
    pub async fn check_and_increment(
        &self,
        table: &str,
        condition: Condition,
        row: Bytes,
        columns: Vec<(Bytes, Bytes, i64)>,
        nonce: Option<Nonce>,
    ) -> Result<Option<Changed<i64>>, ServiceError> {
        if columns.is_empty() {
            return Err(ServiceError::InvalidArgument(
                "columns: an increment needs at least one column".into(),
            ));
        }
        let limits = &self.config().limits;
        limits.check_columns(columns.iter().map(|(_, q, _)| (&q[..], 8)), "increment")?;
        limits.check_columns(
            std::iter::once((&condition.qualifier[..], condition.value.len())),
            "check",
        )?;
        let (condition, columns) = (Arc::new(condition), Arc::new(columns));
        self.with_region(table, &row.clone(), false, |r| {
            let (row, condition, columns) = (row.clone(), condition.clone(), columns.clone());
            async move {
                r.check_and_increment(&condition, row, &columns, nonce)
                    .await
            }
        })
        .await
    }

    /// An append applied if `condition` passes: what it answers, or None
    /// when the check failed (`nonce` as for [`Host::increment`]).
    pub async fn check_and_append(
        &self,
        table: &str,
        condition: Condition,
        row: Bytes,
        columns: Vec<(Bytes, Bytes, Bytes)>,
        nonce: Option<Nonce>,
    ) -> Result<Option<Changed<Bytes>>, ServiceError> {
        if columns.is_empty() {
            return Err(ServiceError::InvalidArgument(
                "columns: an append needs at least one column".into(),
            ));
        }
        let limits = &self.config().limits;
        limits.check_columns(columns.iter().map(|(_, q, v)| (&q[..], v.len())), "append")?;
        limits.check_columns(
            std::iter::once((&condition.qualifier[..], condition.value.len())),
            "check",
        )?;
        let (condition, columns) = (Arc::new(condition), Arc::new(columns));
        self.with_region(table, &row.clone(), false, |r| {
            let (row, condition, columns) = (row.clone(), condition.clone(), columns.clone());
            async move { r.check_and_append(&condition, row, &columns, nonce).await }
        })
        .await
    }

    /// Applies a mutation if a check passes; true if it was applied.
    pub async fn check_and_mutate(
        &self,
        table: &str,
        check: CheckAndMutate,
    ) -> Result<bool, ServiceError> {
        let limits = &self.config().limits;
        limits.check_mutation(&check.mutation)?;
        limits.check_columns(
            std::iter::once((&check.qualifier[..], check.value.len())),
            "check",
        )?;
        let row = check.mutation.row.clone();
        let check = Arc::new(check);
        self.with_region(table, &row, false, |r| {
            let c = check.clone();
            async move { r.check_and_mutate((*c).clone()).await }
        })
        .await
    }

    /// Starts a scan over `table`.
    pub fn scan(&self, table: &str, scan: Scan) -> Result<ScanStream, ServiceError> {
        self.scan_filtered(table, scan, None)
    }

    /// Starts a scan over `table` whose rows pass `filter` (evaluated in
    /// each region scan with a fresh state, as HBase runs a scan's filter
    /// per region).
    pub fn scan_filtered(
        &self,
        table: &str,
        scan: Scan,
        filter: Option<Arc<Filter>>,
    ) -> Result<ScanStream, ServiceError> {
        let t = self.enabled_table(table)?;
        // An empty range (a start at or after the stop) answers no rows, as
        // HBase's region scanner does; it is not an error.
        let empty = !scan.stop_row.is_empty() && scan.start_row >= scan.stop_row;
        for family in scan.columns.families.keys() {
            if !t
                .record
                .families
                .iter()
                .any(|f| f.name.as_bytes() == &family[..])
            {
                return Err(ServiceError::NoSuchFamily {
                    table: table.to_string(),
                    family: String::from_utf8_lossy(family).into_owned(),
                });
            }
        }
        let lease = self.lease_now()?;
        Ok(ScanStream {
            host: self.clone(),
            lease,
            table: table.to_string(),
            scan,
            current: None,
            edge: None,
            last: None,
            reopen: false,
            skip: 0,
            rows: 0,
            done: empty,
            filter,
            filter_done: false,
        })
    }
}

/// A scan across a table's regions, one region at a time, in key order
/// (descending for reverse scans: rows of `[start_row, stop_row)` from the
/// top). Each region is read at its own read point. When a region moves
/// mid-scan (a split), the scan reopens at the last row it returned, in
/// whichever region holds it now, and skips the chunks of that row it has
/// already returned.
pub struct ScanStream {
    host: Host,
    /// The lease the scan runs under (cluster mode): its rows are answered
    /// only while that lease is held.
    lease: Option<u64>,
    table: String,
    scan: Scan,
    /// The open region scan and its region's (start, end) rows.
    current: Option<(RegionScanner, Bytes, Bytes)>,
    /// Region boundary the next region scan starts from (forward: at this
    /// row; reverse: below it).
    edge: Option<Bytes>,
    /// The last row returned and how many of its chunks were returned.
    last: Option<(Bytes, usize)>,
    /// The region moved: the next region scan restarts at `last`.
    reopen: bool,
    /// Chunks of `last` still to skip after a reopen.
    skip: usize,
    /// Distinct rows returned.
    rows: usize,
    done: bool,
    /// Run in each region scan with a fresh state, as HBase runs a scan's
    /// filter per region: a filter that is done (a page full, past a
    /// prefix) ends its region's part and the scan goes on in the next.
    filter: Option<Arc<Filter>>,
    /// The last region's scan ended because its filter was done, at a row
    /// it did not answer.
    filter_done: bool,
}

impl ScanStream {
    /// True if the last region scanned ended because its filter was done
    /// at a row it did not answer (HBase's `isFilterDone` found by reading
    /// on: a native-RPC call that then answers no row ends the whole scan,
    /// as HBase's region server answers).
    pub fn filter_done(&self) -> bool {
        self.filter_done
    }

    /// The next row (or row chunk), or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<RowResult>, ServiceError> {
        let start = Instant::now();
        let mut wait = Duration::from_millis(2);
        loop {
            match self.try_next().await {
                Err(e) if e.is_retryable() && start.elapsed() < MOVE_DEADLINE => {
                    self.current = None;
                    self.reopen = true;
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_millis(100));
                }
                other => return other,
            }
        }
    }

    async fn try_next(&mut self) -> Result<Option<RowResult>, ServiceError> {
        loop {
            if self.done {
                return Ok(None);
            }
            if self.current.is_none() {
                let limit_reached = self.scan.limit > 0 && self.rows >= self.scan.limit;
                if limit_reached && !self.reopen {
                    self.done = true;
                    return Ok(None);
                }
                self.open_region()?;
            }
            let Some((scanner, region_start, region_end)) = self.current.as_mut() else {
                return Ok(None);
            };
            let Some(chunk) = scanner.next().await.map_err(ServiceError::Region)? else {
                // This region is done: go on to the next one if the scan
                // reaches past its edge.
                self.filter_done = scanner.filter_done_past_rows();
                let (start, end) = (region_start.clone(), region_end.clone());
                self.current = None;
                self.skip = 0;
                if self.scan.reverse {
                    if start.is_empty() || start <= self.scan.start_row {
                        self.done = true;
                    } else {
                        self.edge = Some(start);
                    }
                } else if end.is_empty()
                    || (!self.scan.stop_row.is_empty() && end >= self.scan.stop_row)
                {
                    self.done = true;
                } else {
                    self.edge = Some(end);
                }
                continue;
            };
            match &mut self.last {
                Some((row, chunks)) if *row == chunk.row => {
                    if self.skip > 0 {
                        self.skip -= 1;
                        continue;
                    }
                    *chunks += 1;
                }
                _ => {
                    self.skip = 0;
                    self.last = Some((chunk.row.clone(), 1));
                    self.rows += 1;
                }
            }
            self.host.check_lease_since(self.lease)?;
            return Ok(Some(chunk));
        }
    }

    /// Opens a scanner on the region where the scan goes on.
    fn open_region(&mut self) -> Result<(), ServiceError> {
        let table = self.host.enabled_table(&self.table)?;
        let mut scan = self.scan.clone();
        let mut limit_bonus = 0;
        if self.reopen
            && let Some((row, chunks)) = &self.last
        {
            // Restart at the last row returned (its chunks are skipped).
            if scan.reverse {
                scan.stop_row = row_successor(row);
            } else {
                scan.start_row = row.clone();
            }
            self.skip = *chunks;
            limit_bonus = 1;
        } else if let Some(edge) = &self.edge {
            if scan.reverse {
                scan.stop_row = edge.clone();
            } else {
                scan.start_row = edge.clone();
            }
        }
        self.reopen = false;
        if scan.limit > 0 {
            scan.limit = scan.limit.saturating_sub(self.rows) + limit_bonus;
        }
        let slot = if scan.reverse {
            if scan.stop_row.is_empty() {
                table.regions.values().next_back()
            } else {
                table
                    .regions
                    .range::<[u8], _>((
                        std::ops::Bound::Unbounded,
                        std::ops::Bound::Excluded(&scan.stop_row[..]),
                    ))
                    .next_back()
                    .map(|(_, s)| s)
            }
        } else {
            table.slot_for(&scan.start_row)
        };
        let Some((record, slot)) = slot else {
            self.done = true;
            return Ok(());
        };
        if matches!(slot, Slot::Elsewhere) {
            // Cluster mode: the client goes on at the owner, from here.
            let mut e = self.host.not_serving(&self.table, &record.id);
            if let ServiceError::NotServing { resume_at, .. } = &mut e {
                *resume_at = Some(if scan.reverse {
                    scan.stop_row.clone()
                } else {
                    scan.start_row.clone()
                });
            }
            return Err(e);
        }
        let region = match slot {
            Slot::Open(region) => region,
            Slot::Closing {
                region,
                reads_until,
            } if super::closing_reads(reads_until) => region,
            _ => {
                return Err(ServiceError::Unavailable(format!(
                    "region {} of table {} is being split or moved",
                    record.id, self.table
                )));
            }
        };
        let scanner = region
            .scanner(scan)
            .map_err(ServiceError::Region)?
            .with_filter(self.filter.clone());
        self.current = Some((scanner, record.start_row.clone(), record.end_row.clone()));
        Ok(())
    }

    /// Distinct rows returned so far.
    pub fn rows(&self) -> usize {
        self.rows
    }
}

/// The smallest row after `row`.
pub(crate) fn row_successor(row: &[u8]) -> Bytes {
    let mut v = Vec::with_capacity(row.len() + 1);
    v.extend_from_slice(row);
    v.push(0);
    Bytes::from(v)
}
