//! The native RPC's `Scan` call: opening a scanner on a region (its first
//! rows with it), answering the next rows of an open one within the call's
//! limits (rows, bytes, the scan's row limit, the heartbeat interval), and
//! saying, as HBase's region server does, whether the region and the whole
//! scan have more.

use super::client::select;
use super::convert::{self, ResultWriter};
use super::errors::{self, RpcError};
use super::meta;
use super::scanners::{Feed, Lease, Next, ScannerState, Source};
use super::{NativeRpc, Target};
use shoal_proto::hbase as pb;
use shoal_storage::cell::Cell;
use shoal_storage::region::RowResult;
use shoal_storage::region::filter::FilterState;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Default `max_result_size` of a scan call (HBase's client default).
const DEFAULT_MAX_RESULT_BYTES: u64 = 2 << 20;

/// How long a call may still wait for rows: until the heartbeat interval
/// for a client that takes heartbeats (it gets an answer even while a
/// filtered scan finds nothing), otherwise for rows or the region's end.
struct CallClock {
    heartbeats: bool,
    started: Instant,
    heartbeat: Duration,
}

impl CallClock {
    fn left(&self) -> Duration {
        if self.heartbeats {
            self.heartbeat.saturating_sub(self.started.elapsed())
        } else {
            Duration::from_secs(24 * 3600)
        }
    }
}

/// The rows one call takes: each chunk's cells and whether the row goes on
/// in the next chunk; `ended` when the region's end was met taking them.
struct Taken {
    rows: Vec<(Vec<Cell>, bool)>,
    ended: bool,
}

impl NativeRpc {
    /// `Scan`: opens a scanner on a region (and answers its first rows),
    /// answers the next rows of an open one, or closes it.
    pub(super) async fn scan(
        &self,
        req: pb::ScanRequest,
        w: &mut ResultWriter,
    ) -> Result<pb::ScanResponse, RpcError> {
        let wanted = req.number_of_rows.unwrap_or(0) as usize;
        if let Some(id) = req.scanner_id
            && req.close_scanner.unwrap_or(false)
            && wanted == 0
        {
            self.scanners.close(id);
            return Ok(pb::ScanResponse {
                scanner_id: Some(id),
                more_results: Some(false),
                ..Default::default()
            });
        }
        let (id, lease, opened) = self.scanner_for(&req).await?;
        let mut st = lease.lock().await;
        if !opened
            && let Some(seq) = req.next_call_seq
            && let Err(e) = check_call_seq(&mut st, seq, id)
        {
            drop(st);
            self.scanners.close(id);
            return Err(e);
        }
        if let Some(limit) = req.limit_of_rows.filter(|l| *l > 0) {
            st.rows_left = Some(st.rows_left.map_or(limit as u64, |l| l.min(limit as u64)));
        }
        let clock = CallClock {
            heartbeats: req.client_handles_heartbeats.unwrap_or(false),
            started: Instant::now(),
            heartbeat: self.heartbeat,
        };
        let answered = match take_rows(&mut st, wanted, &clock).await {
            Ok(taken) => region_flags(&mut st, &taken, wanted, &clock)
                .await
                .map(|flags| (taken, flags)),
            Err(e) => Err(e),
        };
        drop(st);
        let (taken, (more_in_region, whole_scan_done)) = match answered {
            Ok(a) => a,
            Err(e) => {
                self.scanners.close(id);
                return Err(e.into());
            }
        };
        let mut resp = pb::ScanResponse {
            scanner_id: Some(id),
            ttl: Some(self.scanners.ttl_ms()),
            more_results_in_region: Some(more_in_region),
            more_results: Some(!whole_scan_done),
            heartbeat_message: Some(
                clock.heartbeats && more_in_region && taken.rows.is_empty() && wanted > 0,
            ),
            ..Default::default()
        };
        write_rows(&mut resp, &taken.rows, w);
        if !more_in_region || req.close_scanner.unwrap_or(false) {
            self.scanners.close(id);
        }
        Ok(resp)
    }

    /// The call's scanner: the open one it names, or a new one on the
    /// region it names (true: just opened).
    async fn scanner_for(&self, req: &pb::ScanRequest) -> Result<(u64, Lease, bool), RpcError> {
        if let Some(id) = req.scanner_id {
            return Ok((id, self.scanners.get(id)?, false));
        }
        let region = req
            .region
            .as_ref()
            .ok_or_else(|| RpcError::invalid("a scan open without a region"))?;
        let scan = req
            .scan
            .as_ref()
            .ok_or_else(|| RpcError::invalid("a scan open without a Scan"))?;
        let state = self.open_scan(region, scan).await?;
        let (id, lease) = self.scanners.open(state)?;
        Ok((id, lease, true))
    }

    /// A new scanner's state: the host scan of the region's part of the
    /// client's range, or the meta rows in range.
    async fn open_scan(
        &self,
        region: &pb::RegionSpecifier,
        scan: &pb::Scan,
    ) -> Result<ScannerState, RpcError> {
        let target = self.resolve(region).await?;
        let (low, high) = convert::scan_bounds(scan);
        let max_result_bytes = scan
            .max_result_size
            .filter(|n| *n > 0)
            .unwrap_or(DEFAULT_MAX_RESULT_BYTES);
        let empty = |max_result_bytes| ScannerState {
            source: Source::Rows(VecDeque::new()),
            peeked: None,
            next_seq: 0,
            rows_left: None,
            max_result_bytes,
            ended: false,
            failed_ahead: None,
        };
        match target {
            Target::Meta => {
                let (shoal_scan, filter) = convert::scan(scan, low.clone(), high.clone())?;
                let table = meta::table_of_key(&low)
                    .filter(|t| Some(*t) == meta::table_of_key(&high))
                    .map(<[u8]>::to_vec);
                let tables = self.meta_tables(table.as_deref()).await;
                let mut run = filter.map(|f| FilterState::new(&f, shoal_scan.reverse));
                let mut rows: Vec<RowResult> = meta::rows(&self.access(), &tables, &self.me)
                    .into_iter()
                    .filter(|r| {
                        meta::order(&r.row, &low).is_ge()
                            && (high.is_empty() || meta::order(&r.row, &high).is_lt())
                    })
                    .collect();
                if shoal_scan.reverse {
                    rows.reverse();
                }
                let mut out = VecDeque::new();
                for r in rows {
                    let cells = select(r.cells, &shoal_scan.columns);
                    if cells.is_empty() {
                        continue;
                    }
                    let cells = match run.as_mut() {
                        None => cells,
                        Some(run) => {
                            let mut stop = false;
                            match run.apply_to_row(&r.row, cells, &mut stop) {
                                Some(c) if !c.is_empty() => {
                                    if stop {
                                        out.push_back(RowResult {
                                            row: r.row,
                                            cells: c,
                                        });
                                        break;
                                    }
                                    c
                                }
                                _ if stop => break,
                                _ => continue,
                            }
                        }
                    };
                    out.push_back(RowResult { row: r.row, cells });
                }
                Ok(ScannerState {
                    source: Source::Rows(out),
                    ..empty(max_result_bytes)
                })
            }
            Target::Region(view) => {
                // The Scan is read (and refused as HBase refuses it) even
                // when its range misses the region.
                let (mut shoal_scan, filter) = convert::scan(scan, low.clone(), high.clone())?;
                let Some((low, high)) = convert::clamp(low, high, &view.start, &view.end) else {
                    return Ok(empty(max_result_bytes));
                };
                shoal_scan.start_row = low;
                shoal_scan.stop_row = high;
                let stream = self
                    .access()
                    .scan_filtered(&view.table, shoal_scan, filter)?;
                Ok(ScannerState {
                    source: Source::Stream(Feed::start(stream)),
                    ..empty(max_result_bytes)
                })
            }
        }
    }
}

/// The call's `next_call_seq` must be the one the scanner expects (a
/// retried call would skip or repeat rows): HBase's OutOfOrderScannerNext.
fn check_call_seq(st: &mut ScannerState, seq: u64, id: u64) -> Result<(), RpcError> {
    if seq != st.next_seq {
        return Err(RpcError::fatal(
            errors::OUT_OF_ORDER,
            format!(
                "Expected nextCallSeq: {} But the nextCallSeq got from client: {seq}; request={id}",
                st.next_seq
            ),
        ));
    }
    st.next_seq += 1;
    Ok(())
}

/// Takes row chunks until the call's rows or bytes, the scan's row limit,
/// the region's end or the clock says stop.
async fn take_rows(
    st: &mut ScannerState,
    wanted: usize,
    clock: &CallClock,
) -> Result<Taken, crate::error::ServiceError> {
    let max_bytes = st.max_result_bytes;
    let mut bytes = 0u64;
    let mut rows = Vec::new();
    while rows.len() < wanted && bytes < max_bytes && st.rows_left != Some(0) {
        let chunk = match st.next(clock.left()).await? {
            Next::Row(c) => c,
            Next::End => return Ok(Taken { rows, ended: true }),
            Next::Pending => break,
        };
        // A chunk is partial when the next one is the same row (a row's
        // chunks are queued together).
        let wait = clock.left().max(Duration::from_millis(20));
        let partial = st
            .peek(wait)
            .await?
            .is_some_and(|next| next.row == chunk.row);
        bytes += chunk
            .cells
            .iter()
            .map(|c| (c.row.len() + c.family.len() + c.qualifier.len() + c.value.len() + 24) as u64)
            .sum::<u64>();
        if !partial && let Some(left) = st.rows_left.as_mut() {
            *left = left.saturating_sub(1);
        }
        rows.push((chunk.cells, partial));
    }
    Ok(Taken { rows, ended: false })
}

/// Whether the region has more rows for the client, and whether the whole
/// scan is done, as HBase's region server answers them.
async fn region_flags(
    st: &mut ScannerState,
    taken: &Taken,
    wanted: usize,
    clock: &CallClock,
) -> Result<(bool, bool), crate::error::ServiceError> {
    // A call that asked for no rows (an open) does not wait to know.
    let more_in_region = !taken.ended
        && st.rows_left != Some(0)
        && (wanted == 0
            || match st.peek(clock.left()).await? {
                Some(_) => true,
                None => !st.ended || st.failed_ahead(),
            });
    // HBase reads no row past a call's limits: when only the look ahead
    // found the region ended by a done filter, HBase would not know it yet,
    // and its next call (empty, filter done) ends the whole scan. Answer as
    // HBase: more in the region.
    let more_in_region = more_in_region
        || (!taken.ended
            && st.ended
            && !taken.rows.is_empty()
            && st.rows_left != Some(0)
            && st.filter_done());
    // A filter that is done ends its region's scan: HBase's client goes on
    // with the next region (and a fresh filter), unless the call that found
    // it done answers no row — then HBase's region server ends the whole
    // scan (`isFilterDone() && results.isEmpty()`).
    let filter_ended = (taken.ended || st.ended) && taken.rows.is_empty() && st.filter_done();
    Ok((more_in_region, st.rows_left == Some(0) || filter_ended))
}

/// The call's rows in the answer: in the cell block (counts per result) or
/// in the message, with their partial flags.
fn write_rows(resp: &mut pb::ScanResponse, rows: &[(Vec<Cell>, bool)], w: &mut ResultWriter) {
    for (cells, partial) in rows {
        let r = w.result(cells);
        if w.cell_blocks {
            resp.cells_per_result.push(cells.len() as u32);
        } else {
            resp.results.push(r);
        }
        resp.partial_flag_per_result.push(*partial);
    }
}
