//! A running scan: rows pulled from the server's stream, and resumed where
//! they left off when the stream breaks with a retryable error.
//!
//! Resuming: before any row has been returned the scan is simply sent again.
//! After that it reopens past the last row returned — forward scans from
//! the row after it (`row ++ 0x00`), reverse scans from below it (`row` as
//! the exclusive stop) — with the limit reduced by the rows already
//! returned. When the scan splits wide rows into chunks (`batch`), the last
//! row may have been cut mid-way, so the scan reopens *at* that row instead
//! and drops as many of its chunks as were already returned.

use crate::retry::{Backoff, Idempotence};
use crate::{Client, ClientError};
use shoal_proto::v1 as pb;
use std::collections::VecDeque;

/// Rows of a scan in order, fetched in streamed messages. See the module
/// comment for how a broken stream is resumed.
pub struct Scanner {
    client: Client,
    req: pb::ScanRequest,
    stream: Option<tonic::Streaming<pb::ScanResponse>>,
    buffered: VecDeque<pb::Row>,
    /// Pieces of a row larger than one message, joined until its last piece.
    joining: Option<pb::Row>,
    progress: Progress,
    /// Chunks of the last row still to drop after a reopen.
    skip: usize,
    /// Cluster mode: where the server said the scan goes on (the next
    /// region is served elsewhere).
    resume_at: Option<Vec<u8>>,
    done: bool,
}

/// What a scan has returned so far.
#[derive(Debug, Clone, Default, PartialEq)]
struct Progress {
    /// The last row returned and how many chunks of it.
    last: Option<(Vec<u8>, usize)>,
    /// Distinct rows returned.
    rows: u64,
}

impl Progress {
    fn record(&mut self, row: &[u8]) {
        match &mut self.last {
            Some((r, n)) if r == row => *n += 1,
            _ => {
                self.last = Some((row.to_vec(), 1));
                self.rows += 1;
            }
        }
    }
}

/// The request that continues `req` after `progress`, and how many chunks
/// of the last row to drop from its answer; `None` if nothing is left.
fn resume(req: &pb::ScanRequest, progress: &Progress) -> Option<(pb::ScanRequest, usize)> {
    let Some((row, chunks)) = &progress.last else {
        return Some((req.clone(), 0));
    };
    let mut next = req.clone();
    let successor = || {
        let mut s = row.clone();
        s.push(0);
        s
    };
    if req.batch == 0 {
        // Whole rows: go on past the last one.
        if req.limit > 0 {
            if progress.rows >= req.limit {
                return None;
            }
            next.limit = req.limit - progress.rows;
        }
        if req.reverse {
            next.stop_row = row.clone();
        } else {
            next.start_row = successor();
        }
        Some((next, 0))
    } else {
        // Chunks: the last row may be unfinished; read it again, drop what
        // was returned.
        if req.limit > 0 {
            next.limit = req.limit.saturating_sub(progress.rows) + 1;
        }
        if req.reverse {
            next.stop_row = successor();
        } else {
            next.start_row = row.clone();
        }
        Some((next, *chunks))
    }
}

impl Scanner {
    pub(crate) fn new(client: Client, req: pb::ScanRequest) -> Scanner {
        Scanner {
            client,
            req,
            stream: None,
            buffered: VecDeque::new(),
            joining: None,
            progress: Progress::default(),
            skip: 0,
            resume_at: None,
            done: false,
        }
    }

    /// The next row (or row chunk when the scan sets `batch`), or `None` at
    /// the end.
    pub async fn next(&mut self) -> Result<Option<pb::Row>, ClientError> {
        let mut backoff: Option<Backoff> = None;
        loop {
            if let Some(row) = self.buffered.pop_front() {
                self.progress.record(&row.row);
                return Ok(Some(row));
            }
            if self.done {
                return Ok(None);
            }
            if let Err(status) = self.fetch().await {
                self.stream = None;
                // An unfinished row was not returned: the resumed scan reads
                // it again whole.
                self.joining = None;
                self.client.router.note_failure(&self.req.table, &status);
                if let Some(at) = status
                    .metadata()
                    .get(shoal_proto::SCAN_RESUME_HEADER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(unhex)
                {
                    self.resume_at = Some(at);
                }
                if !crate::route::retryable(&status, Idempotence::Idempotent) {
                    self.done = true;
                    return Err(status.into());
                }
                let b = backoff.get_or_insert_with(|| Backoff::new(&self.client.options));
                match b.next_delay() {
                    Some(d) => {
                        tracing::debug!(code = ?status.code(), message = status.message(), delay = ?d, "resuming scan");
                        tokio::time::sleep(d).await;
                    }
                    None => {
                        self.done = true;
                        return Err(status.into());
                    }
                }
            }
        }
    }

    /// Fills `buffered` with the stream's next message, opening (or
    /// reopening) the stream first if needed.
    async fn fetch(&mut self) -> Result<(), tonic::Status> {
        let stream = match &mut self.stream {
            Some(s) => s,
            None => {
                let Some((mut req, mut skip)) = resume(&self.req, &self.progress) else {
                    self.done = true;
                    return Ok(());
                };
                if let Some(at) = self.resume_at.take() {
                    // Everything on the near side of `at` was sent.
                    if req.reverse {
                        if req.stop_row.is_empty() || at < req.stop_row {
                            req.stop_row = at;
                            skip = 0;
                        }
                    } else if at > req.start_row {
                        if !req.stop_row.is_empty() && at >= req.stop_row {
                            self.done = true;
                            return Ok(());
                        }
                        req.start_row = at;
                        skip = 0;
                    }
                }
                // The server of the scan's first row (the row below the
                // stop row for a reverse scan); it answers "not serving" at
                // the end of what it holds, and the scan goes on elsewhere.
                let conn = if req.reverse {
                    self.client
                        .router
                        .conn_for(&req.table, &req.stop_row, true)
                        .await
                } else {
                    self.client
                        .router
                        .conn_for(&req.table, &req.start_row, false)
                        .await
                };
                let mut data = conn.data;
                let stream = data.scan(req).await?.into_inner();
                self.skip = skip;
                self.stream.insert(stream)
            }
        };
        match stream.message().await? {
            Some(msg) => {
                for piece in msg.rows {
                    // Pieces of a row larger than a message: join them.
                    let row = match self.joining.take() {
                        Some(mut head) => {
                            if head.row != piece.row {
                                return Err(tonic::Status::internal(
                                    "malformed scan stream: a row's pieces belong to different rows",
                                ));
                            }
                            head.cells.extend(piece.cells);
                            head.partial = piece.partial;
                            head
                        }
                        None => piece,
                    };
                    if row.partial {
                        self.joining = Some(row);
                        continue;
                    }
                    let repeat = self
                        .progress
                        .last
                        .as_ref()
                        .is_some_and(|(r, _)| *r == row.row);
                    if self.skip > 0 && repeat {
                        self.skip -= 1;
                        continue;
                    }
                    self.skip = 0;
                    self.buffered.push_back(row);
                }
            }
            None => {
                if self.joining.is_some() {
                    return Err(tonic::Status::internal(
                        "malformed scan stream: it ended inside a row",
                    ));
                }
                self.done = true;
                self.stream = None;
            }
        }
        Ok(())
    }

    /// The scan as a [`futures::Stream`]; it ends after the first error.
    pub fn into_stream(self) -> impl futures::Stream<Item = Result<pb::Row, ClientError>> + Send {
        futures::stream::unfold(self, |mut s| async move {
            match s.next().await {
                Ok(Some(row)) => Some((Ok(row), s)),
                Ok(None) => None,
                Err(e) => {
                    s.done = true;
                    s.buffered.clear();
                    Some((Err(e), s))
                }
            }
        })
    }
}

/// Bytes from lowercase hex; `None` if malformed.
fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(row: &str, chunks: usize, rows: u64) -> Progress {
        Progress {
            last: Some((row.as_bytes().to_vec(), chunks)),
            rows,
        }
    }

    #[test]
    fn a_scan_that_returned_nothing_starts_over() {
        let req = pb::ScanRequest {
            start_row: b"a".to_vec(),
            limit: 5,
            ..Default::default()
        };
        assert_eq!(resume(&req, &Progress::default()), Some((req.clone(), 0)));
    }

    #[test]
    fn forward_scans_resume_after_the_last_row() {
        let req = pb::ScanRequest {
            start_row: b"a".to_vec(),
            stop_row: b"z".to_vec(),
            limit: 10,
            ..Default::default()
        };
        let (next, skip) = resume(&req, &progress("k", 1, 4)).unwrap();
        assert_eq!(next.start_row, b"k\x00");
        assert_eq!(next.stop_row, b"z");
        assert_eq!(next.limit, 6);
        assert_eq!(skip, 0);
        assert_eq!(resume(&req, &progress("k", 1, 10)), None, "limit reached");
        let unlimited = pb::ScanRequest::default();
        assert_eq!(resume(&unlimited, &progress("k", 1, 4)).unwrap().0.limit, 0);
    }

    #[test]
    fn reverse_scans_resume_below_the_last_row() {
        let req = pb::ScanRequest {
            start_row: b"a".to_vec(),
            stop_row: b"z".to_vec(),
            reverse: true,
            ..Default::default()
        };
        let (next, skip) = resume(&req, &progress("k", 1, 3)).unwrap();
        assert_eq!(next.start_row, b"a");
        assert_eq!(next.stop_row, b"k");
        assert_eq!(skip, 0);
    }

    #[test]
    fn chunked_scans_reread_the_last_row_and_drop_its_chunks() {
        let req = pb::ScanRequest {
            batch: 2,
            limit: 10,
            ..Default::default()
        };
        let (next, skip) = resume(&req, &progress("k", 3, 4)).unwrap();
        assert_eq!(next.start_row, b"k");
        assert_eq!(next.limit, 7, "the re-read row counts again");
        assert_eq!(skip, 3);
        let rev = pb::ScanRequest {
            reverse: true,
            ..req
        };
        let (next, skip) = resume(&rev, &progress("k", 2, 4)).unwrap();
        assert_eq!(next.stop_row, b"k\x00");
        assert_eq!(skip, 2);
    }

    #[test]
    fn progress_counts_rows_not_chunks() {
        let mut p = Progress::default();
        for r in ["a", "a", "b", "c", "c", "c"] {
            p.record(r.as_bytes());
        }
        assert_eq!(p, progress("c", 3, 3));
    }
}
