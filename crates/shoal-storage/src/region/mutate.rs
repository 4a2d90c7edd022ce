//! The write path: row lock → sequence number → WAL (group commit) → memstore
//! → read point → acknowledgement; and HBase's read-modify-write operations
//! (increment, append, check-and-mutate), which hold the row lock across their
//! read and their write.
//!
//! The WAL entry of a mutation is its final cells (with sequence number and
//! resolved timestamps), so replaying it is idempotent: an increment is logged
//! as the put of its result, never as "+1".

use super::nonces::Nonce;
use super::ops::{
    CheckAndMutate, Columns, CompareOp, Condition, Get, RowChange, RowChanges, RowMutation, RowOp,
    TimeRange,
};
use super::{Region, RegionError};
use crate::cell::{Cell, CellError, CellType, decode_cell, encode_cell};
use crate::write_stages::Stage;
use bytes::Bytes;
use std::time::Instant;

/// A WAL payload of cells alone.
const PAYLOAD_VERSION: u8 = 1;
/// A WAL payload of a nonced increment or append: the nonce and the time
/// it was applied, then the cells (see `docs/wal.md`, "Payloads").
const PAYLOAD_VERSION_NONCED: u8 = 2;
/// Nonce group, nonce and time, after the version byte.
const NONCE_HEADER_LEN: usize = 24;

/// Encodes a mutation's cells as a WAL payload: a version byte, then the cells.
pub fn encode_payload(cells: &[Cell]) -> Result<Bytes, CellError> {
    encode_entry(None, cells)
}

/// Encodes a WAL payload: the cells, and the nonce of the increment or
/// append they are the result of, with the time it was applied (ms), if
/// it had one.
pub fn encode_entry(marked: Option<(Nonce, i64)>, cells: &[Cell]) -> Result<Bytes, CellError> {
    let mut out = Vec::with_capacity(
        1 + NONCE_HEADER_LEN
            + cells
                .iter()
                .map(crate::cell::encoded_cell_len)
                .sum::<usize>(),
    );
    match marked {
        None => out.push(PAYLOAD_VERSION),
        Some((nonce, at_ms)) => {
            out.push(PAYLOAD_VERSION_NONCED);
            out.extend_from_slice(&nonce.group.to_be_bytes());
            out.extend_from_slice(&nonce.nonce.to_be_bytes());
            out.extend_from_slice(&at_ms.to_be_bytes());
        }
    }
    for c in cells {
        encode_cell(c, &mut out)?;
    }
    Ok(Bytes::from(out))
}

/// Decodes a WAL payload written by [`encode_payload`] or [`encode_entry`]
/// (the cells only).
pub fn decode_payload(payload: &Bytes) -> Result<Vec<Cell>, CellError> {
    decode_entry(payload).map(|(_, cells)| cells)
}

/// Decodes a WAL payload: its nonce and time, if it has one, and its cells.
#[allow(clippy::type_complexity)]
pub fn decode_entry(payload: &Bytes) -> Result<(Option<(Nonce, i64)>, Vec<Cell>), CellError> {
    let (marked, start) = match payload.first() {
        Some(&PAYLOAD_VERSION) => (None, 1),
        Some(&PAYLOAD_VERSION_NONCED) => {
            let header =
                payload
                    .get(1..1 + NONCE_HEADER_LEN)
                    .ok_or_else(|| CellError::Malformed {
                        what: "cell",
                        reason: format!(
                            "WAL payload of {} bytes, shorter than its nonce",
                            payload.len()
                        ),
                    })?;
            let word = |i: usize| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&header[i * 8..i * 8 + 8]);
                b
            };
            let (group, nonce) = (u64::from_be_bytes(word(0)), u64::from_be_bytes(word(1)));
            let at_ms = i64::from_be_bytes(word(2));
            (
                Nonce::new(group, nonce).map(|n| (n, at_ms)),
                1 + NONCE_HEADER_LEN,
            )
        }
        Some(v) => {
            return Err(CellError::Malformed {
                what: "cell",
                reason: format!("WAL payload version {v}"),
            });
        }
        None => {
            return Err(CellError::Malformed {
                what: "cell",
                reason: "empty WAL payload".into(),
            });
        }
    };
    let mut cells = Vec::new();
    let mut rest = payload.slice(start..);
    while !rest.is_empty() {
        let (cell, used) = decode_cell(&rest)?;
        cells.push(cell);
        rest = rest.slice(used..);
    }
    Ok((marked, cells))
}

/// What an increment or append answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed<V> {
    /// Each column's new value, in the order the columns were given (a
    /// repeat: each column's current value; a missing column, or for an
    /// increment one that is not an 8-byte counter, as 0 or empty).
    pub values: Vec<V>,
    /// The cells written, as stored (their timestamps are the new
    /// versions'), one per column, in key order. A repeat: the columns'
    /// newest cells now (a column deleted since is missing).
    pub cells: Vec<Cell>,
    /// The nonce named an increment or append the region already applied
    /// (the client retried it): nothing was written this time.
    pub repeated: bool,
}

/// `i64::MAX` is HBase's LATEST_TIMESTAMP: a change stamped with it is
/// treated as unstamped ("now", or "the newest version" for a version delete).
pub(super) fn latest_means_now(op: RowOp, now: i64) -> RowOp {
    let latest = |t: Option<i64>| t.filter(|&t| t != i64::MAX);
    match op {
        RowOp::Put {
            family,
            qualifier,
            timestamp,
            value,
        } => RowOp::Put {
            family,
            qualifier,
            timestamp: latest(timestamp),
            value,
        },
        RowOp::DeleteVersion {
            family,
            qualifier,
            timestamp,
        } => RowOp::DeleteVersion {
            family,
            qualifier,
            timestamp: latest(timestamp),
        },
        RowOp::DeleteColumn {
            family,
            qualifier,
            timestamp,
        } => RowOp::DeleteColumn {
            family,
            qualifier,
            timestamp: latest(timestamp),
        },
        RowOp::DeleteFamily { family, timestamp } => RowOp::DeleteFamily {
            family,
            timestamp: latest(timestamp),
        },
        RowOp::DeleteFamilyVersion { family, timestamp } => RowOp::DeleteFamilyVersion {
            family,
            timestamp: latest(Some(timestamp)).unwrap_or(now),
        },
        RowOp::DeleteRow { timestamp } => RowOp::DeleteRow {
            timestamp: latest(timestamp),
        },
    }
}

/// The timestamp of an increment's or append's result, as HBase stamps it:
/// now, or one past the version it read if that is later (a client-chosen
/// future timestamp, or a second change in the same millisecond), so the
/// version read stays readable beneath the new one. Capped below
/// LATEST_TIMESTAMP.
fn next_timestamp(now: i64, previous: i64) -> i64 {
    now.max(previous.saturating_add(1)).min(i64::MAX - 1)
}

/// How far ahead of the clock an increment's or append's stamp may lift
/// the region's stamp floor: a burst of changes to one cell within a
/// millisecond runs ahead by one per change; a client's far-future
/// timestamp must not drag every later write along.
const STAMP_FLOOR_LEAD_MS: i64 = 1_000;

impl Region {
    /// "Now" for a server-stamped write: the clock, or a little more after a
    /// burst of increments or appends ran their stamps ahead of it (HBase
    /// stamps those one past the version read). Without the floor a put
    /// right after such a burst would be stamped below it and hidden;
    /// against HBase a client cannot tell, since no write it sends lands in
    /// the same millisecond as the one before.
    pub(super) fn stamp_now(&self) -> i64 {
        let clock = self.inner.env.clock.now_ms();
        clock.max(
            self.inner
                .stamp_floor
                .load(std::sync::atomic::Ordering::Acquire),
        )
    }

    /// Raises the stamp floor to `ts` when an increment or append stamped
    /// slightly ahead of the clock.
    fn lift_stamp_floor(&self, ts: i64) {
        let clock = self.inner.env.clock.now_ms();
        if ts > clock && ts - clock <= STAMP_FLOOR_LEAD_MS {
            self.inner
                .stamp_floor
                .fetch_max(ts, std::sync::atomic::Ordering::AcqRel);
        }
    }

    pub(super) fn invalid(&self, reason: impl Into<String>) -> RegionError {
        RegionError::InvalidArgument {
            region: self.id().to_string(),
            reason: reason.into(),
        }
    }

    pub(super) fn check_row(&self, row: &[u8]) -> Result<(), RegionError> {
        if row.is_empty() {
            return Err(self.invalid("row key is empty"));
        }
        if !self.inner.config.contains_row(row) {
            return Err(RegionError::RowOutOfRange {
                region: self.id().to_string(),
                row: String::from_utf8_lossy(row).into_owned(),
            });
        }
        Ok(())
    }

    /// Applies a row mutation (Put, Delete or RowMutations) atomically.
    pub async fn mutate(&self, mutation: RowMutation) -> Result<(), RegionError> {
        let stages = &self.inner.env.memstore.stats().stages;
        let started = Instant::now();
        let _gate = self.write_gate().await?;
        let gated = stages.since(Stage::Gate, started);
        self.check_row(&mutation.row)?;
        let _lock = self.inner.row_locks.lock(&mutation.row).await;
        stages.since(Stage::RowLocks, gated);
        self.apply_locked(&mutation).await.map(|_| ())
    }

    /// Resolves `ops` into cells and writes them. The caller holds the row lock.
    async fn apply_locked(&self, mutation: &RowMutation) -> Result<u64, RegionError> {
        self.apply_marked(mutation, None).await
    }

    /// [`Region::apply_locked`], logging `marked` (a nonce and the time it
    /// was applied) in the WAL entry.
    async fn apply_marked(
        &self,
        mutation: &RowMutation,
        marked: Option<(Nonce, i64)>,
    ) -> Result<u64, RegionError> {
        self.apply_marked_at(mutation, marked, self.stamp_now())
            .await
    }

    /// [`Region::apply_marked`] with the changes' "now" given (every
    /// server-stamped change of one atomic batch is stamped alike, as
    /// HBase's batch stamps them).
    async fn apply_marked_at(
        &self,
        mutation: &RowMutation,
        marked: Option<(Nonce, i64)>,
        now: i64,
    ) -> Result<u64, RegionError> {
        if mutation.ops.is_empty() {
            return Err(self.invalid("a mutation needs at least one change"));
        }
        // Resolve "delete the newest version" timestamps before taking a sequence
        // number (they read the row; the row lock keeps the answer stable).
        let mut specs = Vec::with_capacity(mutation.ops.len());
        for op in &mutation.ops {
            let op = &latest_means_now(op.clone(), now);
            let spec = match op {
                RowOp::DeleteVersion {
                    family,
                    qualifier,
                    timestamp: None,
                } => {
                    let newest = self
                        .newest_timestamp(&mutation.row, family, qualifier)
                        .await?;
                    RowOp::DeleteVersion {
                        family: family.clone(),
                        qualifier: qualifier.clone(),
                        timestamp: Some(newest.unwrap_or(now)),
                    }
                }
                other => other.clone(),
            };
            specs.push(spec);
        }
        let stages = &self.inner.env.memstore.stats().stages;
        let seq = self.inner.mvcc.begin();
        let result = self
            .write_cells(&mutation.row, &specs, seq, now, marked)
            .await;
        self.inner.mvcc.complete(seq);
        result?;
        let inserted = Instant::now();
        self.inner.mvcc.wait_visible(seq).await;
        stages.since(Stage::ReadPoint, inserted);
        self.note_edit(now);
        self.maybe_compact_in_memory();
        self.maybe_schedule_flush();
        Ok(seq)
    }

    async fn write_cells(
        &self,
        row: &Bytes,
        ops: &[RowOp],
        seq: u64,
        now: i64,
        marked: Option<(Nonce, i64)>,
    ) -> Result<(), RegionError> {
        let (cells, payload) = self.prepare_marked(row, ops, seq, now, marked)?;
        let queued = Instant::now();
        let logged = self.inner.env.wal.append(self.id(), seq, payload).await;
        let stages = &self.inner.env.memstore.stats().stages;
        stages.since(Stage::Wal, queued);
        logged.map_err(|source| RegionError::Wal {
            region: self.id().to_string(),
            source,
        })?;
        self.insert_cells(&cells)
    }

    /// A mutation's final cells (resolved timestamps, one per key, validated)
    /// and its WAL payload. Nothing is written.
    pub(super) fn prepare_cells(
        &self,
        row: &Bytes,
        ops: &[RowOp],
        seq: u64,
        now: i64,
    ) -> Result<(Vec<Cell>, Bytes), RegionError> {
        self.prepare_marked(row, ops, seq, now, None)
    }

    /// [`Region::prepare_cells`], with a nonce in the WAL payload.
    fn prepare_marked(
        &self,
        row: &Bytes,
        ops: &[RowOp],
        seq: u64,
        now: i64,
        marked: Option<(Nonce, i64)>,
    ) -> Result<(Vec<Cell>, Bytes), RegionError> {
        let mut cells = Vec::with_capacity(ops.len());
        let mut push =
            |family: &Bytes, qualifier: &Bytes, ts: i64, kind: CellType, value: &Bytes| {
                cells.push(Cell {
                    row: row.clone(),
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    timestamp: ts,
                    kind,
                    seq,
                    value: value.clone(),
                });
            };
        let none = Bytes::new();
        for op in ops {
            match op {
                RowOp::Put {
                    family,
                    qualifier,
                    timestamp,
                    value,
                } => {
                    self.store(family)?;
                    push(
                        family,
                        qualifier,
                        timestamp.unwrap_or(now),
                        CellType::Put,
                        value,
                    );
                }
                RowOp::DeleteVersion {
                    family,
                    qualifier,
                    timestamp,
                } => {
                    self.store(family)?;
                    push(
                        family,
                        qualifier,
                        timestamp.unwrap_or(now),
                        CellType::Delete,
                        &none,
                    );
                }
                RowOp::DeleteColumn {
                    family,
                    qualifier,
                    timestamp,
                } => {
                    self.store(family)?;
                    push(
                        family,
                        qualifier,
                        timestamp.unwrap_or(now),
                        CellType::DeleteColumn,
                        &none,
                    );
                }
                RowOp::DeleteFamily { family, timestamp } => {
                    self.store(family)?;
                    push(
                        family,
                        &none,
                        timestamp.unwrap_or(now),
                        CellType::DeleteFamily,
                        &none,
                    );
                }
                RowOp::DeleteFamilyVersion { family, timestamp } => {
                    self.store(family)?;
                    push(
                        family,
                        &none,
                        *timestamp,
                        CellType::DeleteFamilyVersion,
                        &none,
                    );
                }
                RowOp::DeleteRow { timestamp } => {
                    for family in self.inner.stores.keys() {
                        push(
                            family,
                            &none,
                            timestamp.unwrap_or(now),
                            CellType::DeleteFamily,
                            &none,
                        );
                    }
                }
            }
        }
        let unique = last_of_each_key(cells);
        let cell_err = |source| RegionError::Cell {
            region: self.id().to_string(),
            source,
        };
        for c in &unique {
            c.validate().map_err(cell_err)?;
        }
        let payload = encode_entry(marked, &unique).map_err(cell_err)?;
        Ok((unique, payload))
    }

    /// Inserts logged cells into their memstores.
    pub(super) fn insert_cells(&self, cells: &[Cell]) -> Result<(), RegionError> {
        if let Some(rows) = &self.inner.rows {
            // Before the cells can become visible (see `row_cache.rs`).
            let mut last: Option<&Bytes> = None;
            for c in cells {
                if last != Some(&c.row) {
                    rows.note_write(&c.row, c.seq);
                    last = Some(&c.row);
                }
            }
        }
        for c in cells {
            // Validated by `prepare_cells`, so the insert cannot fail; the WAL
            // already holds the entry, so failing here would lose nothing on
            // restart anyway.
            self.store(&c.family)?
                .memstore
                .insert(c)
                .map_err(|source| RegionError::Cell {
                    region: self.id().to_string(),
                    source,
                })?;
        }
        Ok(())
    }

    /// Newest visible timestamp of a column, reading with the latest state.
    async fn newest_timestamp(
        &self,
        row: &Bytes,
        family: &Bytes,
        qualifier: &Bytes,
    ) -> Result<Option<i64>, RegionError> {
        let current = self.read_column(row, family, qualifier).await?;
        Ok(current.map(|c| c.timestamp))
    }

    /// The newest visible version of one column (the caller holds the row lock,
    /// so every earlier write to the row is applied and durable).
    async fn read_column(
        &self,
        row: &Bytes,
        family: &Bytes,
        qualifier: &Bytes,
    ) -> Result<Option<Cell>, RegionError> {
        let columns = super::ops::Columns::all().column(family.clone(), qualifier.clone());
        self.read_first(row, columns, TimeRange::ALL, None).await
    }

    /// The first cell a read of `row` answers (newest versions of
    /// `columns` in `time_range`, through `filter`), at the latest state.
    async fn read_first(
        &self,
        row: &Bytes,
        columns: Columns,
        time_range: TimeRange,
        filter: Option<std::sync::Arc<super::filter::Filter>>,
    ) -> Result<Option<Cell>, RegionError> {
        let get = Get {
            columns,
            time_range,
            filter,
            ..Get::new(row.clone())
        };
        let result = self.get_at(&get, u64::MAX, None).await?;
        Ok(result.cells.into_iter().next())
    }

    /// Adds `delta` to each 8-byte big-endian counter column (a missing column
    /// counts as 0) and returns the new values, atomically for the row.
    pub async fn increment(
        &self,
        row: impl Into<Bytes>,
        columns: &[(Bytes, Bytes, i64)],
    ) -> Result<Vec<i64>, RegionError> {
        Ok(self.increment_nonced(row, columns, None).await?.values)
    }

    /// [`Region::increment`] marked with a client's `nonce`: if the region
    /// applied an operation with the same nonce lately (the client retries
    /// one whose answer it lost), nothing is written and the columns'
    /// current cells are answered, as HBase answers (see `nonces.rs`).
    /// Answers the cells written, with their stored timestamps.
    pub async fn increment_nonced(
        &self,
        row: impl Into<Bytes>,
        columns: &[(Bytes, Bytes, i64)],
        nonce: Option<Nonce>,
    ) -> Result<Changed<i64>, RegionError> {
        let row: Bytes = row.into();
        let _gate = self.write_gate().await?;
        self.check_row(&row)?;
        let _lock = self.inner.row_locks.lock(&row).await;
        self.increment_locked(&row, columns, nonce).await
    }

    /// [`Region::increment_nonced`] under the row lock the caller holds.
    async fn increment_locked(
        &self,
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        nonce: Option<Nonce>,
    ) -> Result<Changed<i64>, RegionError> {
        if columns.is_empty() {
            return Err(self.invalid("increment needs at least one column"));
        }
        for (family, _, _) in columns {
            self.store(family)?;
        }
        if let Some(cells) = self.repeated(row, columns, nonce).await? {
            let values = columns
                .iter()
                .map(|(f, q, _)| {
                    find(&cells, f, q)
                        .and_then(|c| <[u8; 8]>::try_from(&c.value[..]).ok())
                        .map_or(0, i64::from_be_bytes)
                })
                .collect();
            return Ok(Changed {
                values,
                cells,
                repeated: true,
            });
        }
        let now = self.stamp_now();
        let mut mutation = RowMutation::new(row.clone());
        let values = self
            .reckon_increment(row, columns, now, &mut mutation)
            .await?;
        let cells = self.apply_nonced(&mutation, nonce).await?;
        Ok(Changed {
            values,
            cells,
            repeated: false,
        })
    }

    /// Adds to `mutation` the puts of an increment of `columns` of `row` as
    /// it stands (stamped from `now`, HBase's way); returns the new values.
    /// The caller holds the row lock.
    async fn reckon_increment(
        &self,
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        now: i64,
        mutation: &mut RowMutation,
    ) -> Result<Vec<i64>, RegionError> {
        let mut values = Vec::with_capacity(columns.len());
        for (family, qualifier, delta) in columns {
            self.store(family)?;
            let current = self.read_column(row, family, qualifier).await?;
            let (old, ts) = match &current {
                None => (0i64, now),
                Some(c) => {
                    let bytes: [u8; 8] = c.value[..].try_into().map_err(|_| {
                        self.invalid(format!(
                            "column {}:{} holds {} bytes, not an 8-byte counter",
                            String::from_utf8_lossy(family),
                            String::from_utf8_lossy(qualifier),
                            c.value.len()
                        ))
                    })?;
                    (i64::from_be_bytes(bytes), next_timestamp(now, c.timestamp))
                }
            };
            self.lift_stamp_floor(ts);
            let new = old
                .checked_add(*delta)
                .ok_or_else(|| self.invalid("counter overflow"))?;
            values.push(new);
            mutation.ops.push(RowOp::Put {
                family: family.clone(),
                qualifier: qualifier.clone(),
                timestamp: Some(ts),
                value: Bytes::copy_from_slice(&new.to_be_bytes()),
            });
        }
        Ok(values)
    }

    /// Appends bytes to each column's current value (a missing column is empty)
    /// and returns the new values, atomically for the row.
    pub async fn append(
        &self,
        row: impl Into<Bytes>,
        columns: &[(Bytes, Bytes, Bytes)],
    ) -> Result<Vec<Bytes>, RegionError> {
        Ok(self.append_nonced(row, columns, None).await?.values)
    }

    /// [`Region::append`] marked with a client's `nonce`, as
    /// [`Region::increment_nonced`].
    pub async fn append_nonced(
        &self,
        row: impl Into<Bytes>,
        columns: &[(Bytes, Bytes, Bytes)],
        nonce: Option<Nonce>,
    ) -> Result<Changed<Bytes>, RegionError> {
        let row: Bytes = row.into();
        let _gate = self.write_gate().await?;
        self.check_row(&row)?;
        let _lock = self.inner.row_locks.lock(&row).await;
        self.append_locked(&row, columns, nonce).await
    }

    /// [`Region::append_nonced`] under the row lock the caller holds.
    async fn append_locked(
        &self,
        row: &Bytes,
        columns: &[(Bytes, Bytes, Bytes)],
        nonce: Option<Nonce>,
    ) -> Result<Changed<Bytes>, RegionError> {
        if columns.is_empty() {
            return Err(self.invalid("append needs at least one column"));
        }
        for (family, _, _) in columns {
            self.store(family)?;
        }
        if let Some(cells) = self.repeated(row, columns, nonce).await? {
            let values = columns
                .iter()
                .map(|(f, q, _)| find(&cells, f, q).map_or_else(Bytes::new, |c| c.value.clone()))
                .collect();
            return Ok(Changed {
                values,
                cells,
                repeated: true,
            });
        }
        let now = self.stamp_now();
        let mut mutation = RowMutation::new(row.clone());
        let values = self.reckon_append(row, columns, now, &mut mutation).await?;
        let cells = self.apply_nonced(&mutation, nonce).await?;
        Ok(Changed {
            values,
            cells,
            repeated: false,
        })
    }

    /// Adds to `mutation` the puts of an append to `columns` of `row` as it
    /// stands (stamped from `now`); returns the new values. The caller
    /// holds the row lock.
    async fn reckon_append(
        &self,
        row: &Bytes,
        columns: &[(Bytes, Bytes, Bytes)],
        now: i64,
        mutation: &mut RowMutation,
    ) -> Result<Vec<Bytes>, RegionError> {
        let mut values = Vec::with_capacity(columns.len());
        for (family, qualifier, suffix) in columns {
            self.store(family)?;
            let current = self.read_column(row, family, qualifier).await?;
            let (mut value, ts) = match current {
                None => (Vec::new(), now),
                Some(c) => (c.value.to_vec(), next_timestamp(now, c.timestamp)),
            };
            self.lift_stamp_floor(ts);
            value.extend_from_slice(suffix);
            let value = Bytes::from(value);
            values.push(value.clone());
            mutation.ops.push(RowOp::Put {
                family: family.clone(),
                qualifier: qualifier.clone(),
                timestamp: Some(ts),
                value,
            });
        }
        Ok(values)
    }

    /// For an operation marked with `nonce` that the region applied
    /// lately: the current cells of its columns (HBase answers a repeated
    /// increment or append with a Get of them). None: apply it. The caller
    /// holds the row lock, so the operation a repeat races with has
    /// finished (and been remembered) before this looks.
    async fn repeated<V>(
        &self,
        row: &Bytes,
        columns: &[(Bytes, Bytes, V)],
        nonce: Option<Nonce>,
    ) -> Result<Option<Vec<Cell>>, RegionError> {
        let Some(nonce) = nonce else {
            return Ok(None);
        };
        if !self.inner.nonces.seen(nonce, self.inner.env.clock.now_ms()) {
            return Ok(None);
        }
        let mut wanted = Columns::all();
        for (family, qualifier, _) in columns {
            wanted = wanted.column(family.clone(), qualifier.clone());
        }
        let get = Get {
            per_family: Default::default(),
            row: row.clone(),
            columns: wanted,
            time_range: TimeRange::ALL,
            max_versions: 1,
            filter: None,
        };
        tracing::debug!(region = %self.id(), group = nonce.group, nonce = nonce.nonce, "a repeated increment or append answered without being applied");
        Ok(Some(self.get_at(&get, u64::MAX, None).await?.cells))
    }

    /// Writes an increment's or append's result (puts with resolved
    /// timestamps), logging `nonce` with it and remembering it once the
    /// write is durable. Returns the cells written, in key order.
    async fn apply_nonced(
        &self,
        mutation: &RowMutation,
        nonce: Option<Nonce>,
    ) -> Result<Vec<Cell>, RegionError> {
        let at = self.inner.env.clock.now_ms();
        let marked = nonce.map(|n| (n, at));
        let seq = self.apply_marked(mutation, marked).await?;
        if let Some(n) = nonce {
            self.inner.nonces.record(n, at);
        }
        let cells = mutation
            .ops
            .iter()
            .filter_map(|op| written_put(&mutation.row, op, seq))
            .collect();
        Ok(last_of_each_key(cells))
    }

    /// Takes over the nonces `other` remembers (a split's parent, closed
    /// now), with their times: a retry of an increment or append the
    /// parent applied is refused by the child that holds its row.
    pub fn adopt_nonces(&self, other: &Region) {
        for (nonce, at) in other.inner.nonces.entries() {
            self.inner.nonces.record(nonce, at);
        }
    }

    /// How many increment and append nonces the region remembers.
    pub fn nonces_remembered(&self) -> usize {
        self.inner.nonces.len()
    }

    /// Compares a column's current value and, if the check passes, applies the
    /// mutation — atomically for the row. Returns whether it was applied.
    pub async fn check_and_mutate(&self, check: CheckAndMutate) -> Result<bool, RegionError> {
        let _gate = self.write_gate().await?;
        let row = check.mutation.row.clone();
        self.check_row(&row)?;
        let _lock = self.inner.row_locks.lock(&row).await;
        let Some(checked_ts) = self.check_locked(&row, &check.condition()).await? else {
            return Ok(false);
        };
        // As HBase: unstamped puts are stamped no earlier than the checked
        // version, so a write the check let through is never hidden behind
        // it.
        let now = self.stamp_now();
        let mut mutation = check.mutation;
        if checked_ts > now {
            for op in &mut mutation.ops {
                if let RowOp::Put { timestamp, .. } = op
                    && timestamp.is_none_or(|t| t == i64::MAX)
                {
                    *timestamp = Some(checked_ts);
                }
            }
        }
        self.apply_locked(&mutation).await?;
        Ok(true)
    }

    /// An increment applied if `condition` passes, atomically for the row
    /// (HBase's checkAndMutate with an Increment): what it answers, or None
    /// when the check failed. As in HBase the check comes first, then the
    /// nonce: a retry whose check passes again is answered without being
    /// applied twice.
    pub async fn check_and_increment(
        &self,
        condition: &Condition,
        row: impl Into<Bytes>,
        columns: &[(Bytes, Bytes, i64)],
        nonce: Option<Nonce>,
    ) -> Result<Option<Changed<i64>>, RegionError> {
        let row: Bytes = row.into();
        let _gate = self.write_gate().await?;
        self.check_row(&row)?;
        let _lock = self.inner.row_locks.lock(&row).await;
        if self.check_locked(&row, condition).await?.is_none() {
            return Ok(None);
        }
        self.increment_locked(&row, columns, nonce).await.map(Some)
    }

    /// An append applied if `condition` passes, atomically for the row: what
    /// it answers, or None when the check failed (nonces as
    /// [`Region::check_and_increment`]).
    pub async fn check_and_append(
        &self,
        condition: &Condition,
        row: impl Into<Bytes>,
        columns: &[(Bytes, Bytes, Bytes)],
        nonce: Option<Nonce>,
    ) -> Result<Option<Changed<Bytes>>, RegionError> {
        let row: Bytes = row.into();
        let _gate = self.write_gate().await?;
        self.check_row(&row)?;
        let _lock = self.inner.row_locks.lock(&row).await;
        if self.check_locked(&row, condition).await?.is_none() {
            return Ok(None);
        }
        self.append_locked(&row, columns, nonce).await.map(Some)
    }

    /// One row's changes with counters among them, applied together
    /// (HBase's RowMutations holding Increments or Appends, in `mutateRow`,
    /// a batch, or a checkAndMutate), guarded by `condition` when given.
    /// Every increment and append reads the row as it was before the
    /// changes, as HBase's atomic batch does. Returns the cells the
    /// increments and appends wrote (each one's in key order, in the order
    /// of the changes: HBase's merged result), or None when the check
    /// failed. `nonce` marks the whole: a retry of changes the region
    /// applied lately answers the counters' current cells.
    pub async fn mutate_changes(
        &self,
        changes: &RowChanges,
        condition: Option<&Condition>,
        nonce: Option<Nonce>,
    ) -> Result<Option<Vec<Cell>>, RegionError> {
        if changes.changes.is_empty() {
            return Err(self.invalid("a mutation needs at least one change"));
        }
        let row = &changes.row;
        let _gate = self.write_gate().await?;
        self.check_row(row)?;
        let _lock = self.inner.row_locks.lock(row).await;
        let checked_ts = match condition {
            Some(c) => match self.check_locked(row, c).await? {
                Some(ts) => ts,
                None => return Ok(None),
            },
            None => i64::MIN,
        };
        let counted: Vec<(Bytes, Bytes, ())> = changes
            .changes
            .iter()
            .flat_map(|c| match c {
                RowChange::Op(_) => Vec::new(),
                RowChange::Increment(cols) => cols
                    .iter()
                    .map(|(f, q, _)| (f.clone(), q.clone(), ()))
                    .collect(),
                RowChange::Append(cols) => cols
                    .iter()
                    .map(|(f, q, _)| (f.clone(), q.clone(), ()))
                    .collect(),
            })
            .collect();
        if !counted.is_empty()
            && let Some(cells) = self.repeated(row, &counted, nonce).await?
        {
            return Ok(Some(cells));
        }
        let now = self.stamp_now();
        let mut mutation = RowMutation::new(row.clone());
        // Per counter change: the range of its puts in `mutation.ops`.
        let mut counters = Vec::new();
        for change in &changes.changes {
            let start = mutation.ops.len();
            match change {
                RowChange::Op(op) => {
                    let mut op = op.clone();
                    // As check_and_mutate: never stamped below the checked
                    // version.
                    if let RowOp::Put { timestamp, .. } = &mut op
                        && checked_ts > now
                        && timestamp.is_none_or(|t| t == i64::MAX)
                    {
                        *timestamp = Some(checked_ts);
                    }
                    mutation.ops.push(op);
                    continue;
                }
                RowChange::Increment(cols) => {
                    if cols.is_empty() {
                        return Err(self.invalid("increment needs at least one column"));
                    }
                    self.reckon_increment(row, cols, now, &mut mutation).await?;
                }
                RowChange::Append(cols) => {
                    if cols.is_empty() {
                        return Err(self.invalid("append needs at least one column"));
                    }
                    self.reckon_append(row, cols, now, &mut mutation).await?;
                }
            }
            counters.push(start..mutation.ops.len());
        }
        let at = self.inner.env.clock.now_ms();
        let marked = nonce.filter(|_| !counters.is_empty()).map(|n| (n, at));
        let seq = self.apply_marked_at(&mutation, marked, now).await?;
        if let Some((n, at)) = marked {
            self.inner.nonces.record(n, at);
        }
        let mut answer = Vec::new();
        for range in counters {
            let cells = mutation.ops[range]
                .iter()
                .filter_map(|op| written_put(&mutation.row, op, seq))
                .collect();
            answer.extend(last_of_each_key(cells));
        }
        Ok(Some(answer))
    }

    /// Evaluates `condition` on `row` under the row lock the caller holds:
    /// None if it fails, else the checked version's timestamp (`i64::MIN`
    /// when the column is missing).
    async fn check_locked(
        &self,
        row: &Bytes,
        condition: &Condition,
    ) -> Result<Option<i64>, RegionError> {
        if let Some(filter) = &condition.filter {
            // HBase: the row read through the filter passes when it answers
            // a cell; the checked version is the first one.
            let first = self
                .read_first(
                    row,
                    Columns::all(),
                    condition.time_range,
                    Some(filter.clone()),
                )
                .await?;
            return Ok(first.map(|c| c.timestamp));
        }
        self.store(&condition.family)?;
        let columns = Columns::all().column(condition.family.clone(), condition.qualifier.clone());
        let current = self
            .read_first(row, columns, condition.time_range, None)
            .await?;
        if condition.op == CompareOp::NoOp && current.is_some() && !condition.value.is_empty() {
            // HBase fails here too ("Unknown Compare op NO_OP").
            return Err(RegionError::CompareNoOp {
                region: self.id().to_string(),
                what: "a check of an existing cell with an operand",
            });
        }
        let passes = condition
            .op
            .passes(current.as_ref().map(|c| &c.value[..]), &condition.value);
        Ok(passes.then(|| current.map_or(i64::MIN, |c| c.timestamp)))
    }

    /// Starts a background flush if the memstores passed the flush size.
    pub(super) fn maybe_schedule_flush(&self) {
        if self.memstore_size() >= self.inner.config.flush_size {
            self.request_flush();
        }
    }
}

/// The cell a put with a resolved timestamp wrote at `seq` (None for
/// anything else).
fn written_put(row: &Bytes, op: &RowOp, seq: u64) -> Option<Cell> {
    match op {
        RowOp::Put {
            family,
            qualifier,
            timestamp: Some(ts),
            value,
        } => Some(Cell {
            row: row.clone(),
            family: family.clone(),
            qualifier: qualifier.clone(),
            timestamp: *ts,
            kind: CellType::Put,
            seq,
            value: value.clone(),
        }),
        _ => None,
    }
}

/// The cell of column `family:qualifier` among `cells`.
fn find<'a>(cells: &'a [Cell], family: &[u8], qualifier: &[u8]) -> Option<&'a Cell> {
    cells
        .iter()
        .find(|c| c.family == family && c.qualifier == qualifier)
}

/// Identical keys within one mutation (same column, timestamp and type
/// twice): the later change wins, as it would have had it been applied
/// second. O(n log n): a stable sort by key keeps equal keys in the order
/// given, and the last of each run is kept. The result is in key order.
fn last_of_each_key(mut cells: Vec<Cell>) -> Vec<Cell> {
    if cells.len() < 2 {
        return cells;
    }
    cells.sort_by(crate::cell::compare_cells);
    let mut unique: Vec<Cell> = Vec::with_capacity(cells.len());
    for c in cells {
        match unique.last_mut() {
            Some(prev) if prev.key() == c.key() => *prev = c,
            _ => unique.push(c),
        }
    }
    unique
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trips_and_rejects_garbage() {
        let cells = vec![
            Cell::put("r", "f", "q", 5, 9, "v"),
            Cell::delete("r", "f", "", 5, CellType::DeleteFamily, 9),
        ];
        let p = encode_payload(&cells).unwrap();
        assert_eq!(decode_payload(&p).unwrap(), cells);
        assert!(decode_payload(&Bytes::from_static(&[2, 0])).is_err());
        assert!(decode_payload(&Bytes::new()).is_err());
        assert!(decode_payload(&p.slice(..p.len() - 1)).is_err());
    }

    #[test]
    fn a_nonced_payload_carries_its_nonce_and_the_old_version_still_reads() {
        let cells = vec![Cell::put("r", "f", "q", 5, 9, "v")];
        let nonce = Nonce::new(u64::MAX, 0x1234_5678_9abc_def0).unwrap();
        let p = encode_entry(Some((nonce, 1_700_000_000_123)), &cells).unwrap();
        assert_eq!(p[0], PAYLOAD_VERSION_NONCED);
        assert_eq!(
            decode_entry(&p).unwrap(),
            (Some((nonce, 1_700_000_000_123)), cells.clone())
        );
        assert_eq!(decode_payload(&p).unwrap(), cells);
        // Without a nonce: version 1, byte for byte as before.
        let old = encode_payload(&cells).unwrap();
        assert_eq!(old[0], PAYLOAD_VERSION);
        assert_eq!(encode_entry(None, &cells).unwrap(), old);
        assert_eq!(decode_entry(&old).unwrap(), (None, cells));
        // A nonced payload cut inside its header is refused.
        assert!(decode_entry(&p.slice(..20)).is_err());
    }

    #[test]
    fn the_last_change_to_a_key_wins_and_distinct_keys_all_stay() {
        let cells = vec![
            Cell::put("r", "f", "b", 5, 9, "first"),
            Cell::put("r", "f", "a", 5, 9, "x"),
            Cell::put("r", "f", "b", 5, 9, "second"),
            Cell::put("r", "f", "b", 6, 9, "newer"),
            Cell::delete("r", "f", "b", 5, CellType::DeleteColumn, 9),
            Cell::put("r", "f", "b", 5, 9, "third"),
        ];
        let unique = last_of_each_key(cells);
        let got: Vec<(&[u8], i64, CellType, &[u8])> = unique
            .iter()
            .map(|c| (&c.qualifier[..], c.timestamp, c.kind, &c.value[..]))
            .collect();
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(got.contains(&(&b"b"[..], 5, CellType::Put, &b"third"[..])));
        assert!(got.contains(&(&b"b"[..], 6, CellType::Put, &b"newer"[..])));
        assert!(got.contains(&(&b"a"[..], 5, CellType::Put, &b"x"[..])));
        assert!(got.iter().any(|c| c.2 == CellType::DeleteColumn));
    }

    #[test]
    fn a_hundred_thousand_changes_to_one_column_collapse_to_one() {
        let cells: Vec<Cell> = (0..100_000)
            .map(|i| Cell::put("r", "f", "q", 1, 9, format!("{i}")))
            .collect();
        let unique = last_of_each_key(cells);
        assert_eq!(unique.len(), 1);
        assert_eq!(&unique[0].value[..], b"99999");
    }
}
