//! Serving one streamed scan over gRPC: rows from the host's [`ScanStream`]
//! packed into messages, with the scan's lifetime bounded.
//!
//! - **Messages** hold at most `per_message` rows and close once their cells
//!   (row key, family, qualifier, value and a little framing each) reach
//!   `limits.scan_message_bytes`. A row larger than that is sent in pieces,
//!   every piece but the last flagged `partial`; clients join them. A single
//!   cell larger than the cap travels alone (the limits keep every accepted
//!   cell within one 64 MiB message).
//! - **Lease**: a client that takes no message for `limits.scan_lease` loses
//!   the scan: its read point and file pins are released at once and the
//!   client, should it read again, gets ABORTED after what was already queued.
//! - **Cancellation**: a client that goes away (stream reset, connection
//!   closed) stops the scan at once, also while it skips rows that match
//!   nothing (the region scan yields to the runtime as it goes).

use crate::host::{Host, ScanStream};
use crate::metrics::RequestOp;
use shoal_proto::v1 as pb;
use shoal_storage::region::RowResult;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tonic::Status;

/// Bytes a cell costs in a message beyond its key and value (tags, lengths,
/// timestamp).
const CELL_FRAMING: usize = 16;

/// The scan's response stream: the channel's messages, then an ABORTED
/// status if the server ended the scan without finishing it.
pub struct ScanBody {
    rx: tokio::sync::mpsc::Receiver<Result<pb::ScanResponse, Status>>,
    finished: Arc<AtomicBool>,
    lease: Duration,
    ended: bool,
}

impl futures::Stream for ScanBody {
    type Item = Result<pb::ScanResponse, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(item)) => Poll::Ready(Some(item)),
            Poll::Ready(None) => {
                self.ended = true;
                if self.finished.load(Ordering::Acquire) {
                    Poll::Ready(None)
                } else {
                    // The task ended without finishing: its lease expired
                    // (the usual case) or it stopped abnormally.
                    Poll::Ready(Some(Err(Status::aborted(format!(
                        "the server closed this scan before its end (its client took no \
                         message for {:?}, limits.scan_lease, or the server stopped it); \
                         scan again from the last row read",
                        self.lease
                    )))))
                }
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Starts serving `stream`: a task reads ahead at most two messages beyond
/// what the client has taken.
pub(crate) fn serve(host: Host, mut stream: ScanStream, per_message: usize) -> ScanBody {
    let start = Instant::now();
    let limits = &host.config().limits;
    let lease = limits.scan_lease;
    let mut packer = Packer::new(per_message, limits.scan_message_bytes.0 as usize);
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<pb::ScanResponse, Status>>(2);
    let finished = Arc::new(AtomicBool::new(false));
    let done = finished.clone();
    tokio::spawn(async move {
        let _open = host.requests().scan_opened();
        let mut ready = Vec::new();
        let end = 'scan: loop {
            let next = tokio::select! {
                biased;
                _ = tx.closed() => break 'scan End::Cancelled,
                next = stream.next() => next,
            };
            let last = match next {
                Ok(Some(row)) => {
                    packer.push(row, &mut ready);
                    false
                }
                Ok(None) => {
                    ready.extend(packer.finish());
                    true
                }
                Err(e) => {
                    if matches!(e, crate::error::ServiceError::NotServing { .. }) {
                        // Cluster mode: the scan reached a region served
                        // elsewhere, at a row boundary. What it read so far
                        // goes out first; the client goes on at the owner.
                        ready.extend(packer.finish());
                        for msg in ready.drain(..) {
                            match tokio::time::timeout(lease, tx.send(Ok(msg))).await {
                                Ok(Ok(())) => {}
                                Ok(Err(_)) => break 'scan End::Cancelled,
                                Err(_) => break 'scan End::LeaseExpired,
                            }
                        }
                    }
                    ready.clear();
                    // Sent only if the client is still there and reading.
                    let _ = tokio::time::timeout(lease, tx.send(Err(e.to_status()))).await;
                    done.store(true, Ordering::Release);
                    break 'scan End::Failed;
                }
            };
            for msg in ready.drain(..) {
                match tokio::time::timeout(lease, tx.send(Ok(msg))).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => break 'scan End::Cancelled,
                    Err(_) => break 'scan End::LeaseExpired,
                }
            }
            if last {
                done.store(true, Ordering::Release);
                break End::Finished;
            }
        };
        let requests = host.requests();
        requests.record_scan_rows(stream.rows() as u64);
        match end {
            End::Cancelled => requests.record_scan_cancelled(),
            End::LeaseExpired => {
                tracing::debug!(?lease, "scan lease expired; releasing its read point");
                requests.record_scan_lease_expired();
            }
            End::Finished | End::Failed => {}
        }
        requests.record(
            RequestOp::Scan,
            start.elapsed(),
            matches!(end, End::Finished),
        );
        // `stream` (read point, file pins) and `tx` drop here.
    });
    ScanBody {
        rx,
        finished,
        lease,
        ended: false,
    }
}

/// How a scan task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Finished,
    Failed,
    Cancelled,
    LeaseExpired,
}

/// Packs rows into messages of bounded rows and bytes, splitting rows that do
/// not fit one message into `partial` pieces.
struct Packer {
    max_rows: usize,
    max_bytes: usize,
    rows: Vec<pb::Row>,
    bytes: usize,
}

impl Packer {
    fn new(max_rows: usize, max_bytes: usize) -> Packer {
        Packer {
            max_rows: max_rows.max(1),
            max_bytes: max_bytes.max(1),
            rows: Vec::new(),
            bytes: 0,
        }
    }

    /// Adds `row`; messages that became full are appended to `out`.
    fn push(&mut self, row: RowResult, out: &mut Vec<pb::ScanResponse>) {
        let key = row.row;
        let mut piece = pb::Row {
            row: key.clone(),
            cells: Vec::new(),
            partial: false,
        };
        self.bytes += key.len();
        for c in row.cells {
            let size =
                c.family.len() + c.qualifier.len() + c.value.len() + key.len() + CELL_FRAMING;
            if self.bytes + size > self.max_bytes
                && (!piece.cells.is_empty() || !self.rows.is_empty())
            {
                if !piece.cells.is_empty() {
                    let next = pb::Row {
                        row: key.clone(),
                        cells: Vec::new(),
                        partial: false,
                    };
                    let mut full = std::mem::replace(&mut piece, next);
                    full.partial = true;
                    self.rows.push(full);
                }
                out.push(self.take());
                self.bytes = key.len();
            }
            self.bytes += size;
            piece.cells.push(pb::Cell {
                family: c.family,
                qualifier: c.qualifier,
                timestamp: c.timestamp,
                value: c.value,
            });
        }
        self.rows.push(piece);
        if self.rows.len() >= self.max_rows || self.bytes >= self.max_bytes {
            out.push(self.take());
        }
    }

    /// The last, partly filled message, if any.
    fn finish(&mut self) -> Option<pb::ScanResponse> {
        (!self.rows.is_empty()).then(|| self.take())
    }

    fn take(&mut self) -> pb::ScanResponse {
        self.bytes = 0;
        pb::ScanResponse {
            rows: std::mem::take(&mut self.rows),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_storage::cell::Cell;

    fn row(key: &str, values: &[usize]) -> RowResult {
        RowResult {
            row: bytes::Bytes::copy_from_slice(key.as_bytes()),
            cells: values
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    Cell::put(
                        key.to_string(),
                        "f",
                        format!("q{i:04}"),
                        1,
                        1,
                        vec![b'v'; n],
                    )
                })
                .collect(),
        }
    }

    /// Joins partial pieces back into rows: what a client does.
    fn join(messages: &[pb::ScanResponse]) -> Vec<(Vec<u8>, usize)> {
        let mut rows: Vec<(Vec<u8>, usize)> = Vec::new();
        let mut open = false;
        for m in messages {
            for r in &m.rows {
                match rows.last_mut() {
                    Some(last) if open => {
                        assert_eq!(last.0, r.row, "a piece of another row");
                        last.1 += r.cells.len();
                    }
                    _ => rows.push((r.row.to_vec(), r.cells.len())),
                }
                open = r.partial;
            }
        }
        assert!(!open, "the stream ended inside a row");
        rows
    }

    fn message_bytes(m: &pb::ScanResponse) -> usize {
        m.rows
            .iter()
            .map(|r| {
                r.row.len()
                    + r.cells
                        .iter()
                        .map(|c| {
                            c.family.len() + c.qualifier.len() + c.value.len() + r.row.len() + 16
                        })
                        .sum::<usize>()
            })
            .sum()
    }

    #[test]
    fn small_rows_fill_messages_by_count() {
        let mut p = Packer::new(3, 1 << 20);
        let mut out = Vec::new();
        for i in 0..7 {
            p.push(row(&format!("r{i}"), &[10, 10]), &mut out);
        }
        out.extend(p.finish());
        let counts: Vec<usize> = out.iter().map(|m| m.rows.len()).collect();
        assert_eq!(counts, [3, 3, 1]);
        assert!(out.iter().flat_map(|m| &m.rows).all(|r| !r.partial));
    }

    #[test]
    fn a_large_row_after_a_small_one_is_split_and_every_message_stays_under_the_cap() {
        let cap = 64 << 10;
        let mut p = Packer::new(100, cap);
        let mut out = Vec::new();
        p.push(row("a", &[1 << 10]), &mut out);
        p.push(row("b", &[4 << 10; 63]), &mut out);
        p.push(row("c", &[10]), &mut out);
        out.extend(p.finish());
        for m in &out {
            assert!(message_bytes(m) <= cap, "{} > {cap}", message_bytes(m));
        }
        assert!(out.len() >= 4, "{} messages", out.len());
        assert_eq!(
            join(&out),
            [(b"a".to_vec(), 1), (b"b".to_vec(), 63), (b"c".to_vec(), 1)]
        );
    }

    #[test]
    fn a_cell_larger_than_the_cap_travels_alone() {
        let mut p = Packer::new(100, 1000);
        let mut out = Vec::new();
        p.push(row("a", &[10]), &mut out);
        p.push(row("b", &[10, 5000, 10]), &mut out);
        out.extend(p.finish());
        assert!(out.iter().any(|m| m.rows.len() == 1
            && m.rows[0].cells.len() == 1
            && m.rows[0].cells[0].value.len() == 5000));
        assert_eq!(join(&out), [(b"a".to_vec(), 1), (b"b".to_vec(), 3)]);
    }
}
