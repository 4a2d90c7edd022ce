//! Reads through a move. A server closing a region for a move goes on
//! answering the region's reads — from the region while its closing flush
//! runs, then from the flushed copy, which holds every acknowledged write —
//! until the next owner has opened the region. Before the next owner takes
//! a write it ends those reads: it asks the former owner
//! (`Admin/EndMoveReads`), which stops answering them and then says so; if
//! the former owner does not answer, it waits out the bound the former
//! owner applies by its own clock (`cluster.move_reads`, named in the
//! region's record). Either way no read is answered from the old copy after
//! the new owner acknowledged a write, so reads stay linearizable, and a
//! read-only client sees no gap in a move at all. Writes wait through the
//! move as before.
//!
//! This module owns the ending of the reads on the next owner, and the
//! forms handed rows travel in. The closed copy's slot and lifetime on the
//! former owner, and its answer to the next owner, are the host's
//! (`host/closed_copy.rs`): reads are routed there.

use super::regions::RegionsDriver;
use shoal_cluster::assignment::MoveReads;
use shoal_proto::v1 as pb;
use shoal_storage::cell::{Cell, CellType};
use shoal_storage::region::{HandedRow, RowBundle};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// Most bytes of cached rows a region's former owner hands over when its
/// reads end, the rows read since the clock last passed first (about the
/// rows of a 16 MiB region of 1 KB rows). Less is not cheaper for a
/// rolling restart: with 2 MiB the moved regions' row caches took 5 s to
/// warm, and the windows after each restart fell to 55–75 % of steady
/// (once row caches serve most reads, a miss costs several hits' CPU).
/// Both sides do the work as move work (`Host::spawn_move_work`), not on
/// the runtime that serves reads.
pub(crate) const HANDED_ROWS_MAX_BYTES: u64 = 16 << 20;
/// How long a next owner waits for the former owner's cached rows.
const ROWS_WAIT: Duration = Duration::from_secs(1);

/// Why asking a former owner to end its reads did not succeed.
enum Asked {
    /// No answer (yet): ask again, or wait out the bound.
    Retry(String),
    /// It serves the region as open: the record and it disagree.
    Refused(String),
}

impl RegionsDriver {
    /// How long a close for a move keeps answering reads (zero: off).
    pub(crate) fn move_reads_bound(&self) -> Duration {
        self.host
            .config()
            .cluster
            .as_ref()
            .map_or(Duration::ZERO, |c| c.move_reads)
    }

    /// On region `id`'s next owner, after it opened the region and before
    /// the region takes a write: ends the reads its former owner still
    /// answers (`reads`, from a record read at or after `since`) by asking
    /// it, or else by waiting out its bound. Err only when the former owner
    /// says it serves the region as open. Returns the rows the former owner
    /// handed over (none when it did not answer).
    pub(crate) async fn end_reads_at(
        &self,
        id: &str,
        reads: &MoveReads,
        since: Instant,
    ) -> Result<RowBundle, String> {
        let state = &self.state;
        let bound = Duration::from_millis(reads.bound_ms);
        // The former owner's bound began before it wrote the record, so
        // before `since`: past this it answers none by its own clock (the
        // margin is for clock rates, as the lease's).
        let deadline = since + bound + bound / 10 + Duration::from_millis(50);
        // The former owner's cached rows, while its copy still answers the
        // region's reads: the gap between its last read and the first here
        // does not carry them. One try, bounded; a move goes on without.
        let rows = if reads.server == state.name {
            self.host
                .closed_copy_rows(id, HANDED_ROWS_MAX_BYTES)
                .await
                .unwrap_or_default()
        } else {
            let by = (Instant::now() + ROWS_WAIT).min(deadline);
            self.ask_end_move_reads(id, &reads.server, by, HANDED_ROWS_MAX_BYTES)
                .await
                .unwrap_or_default()
        };
        let last = loop {
            let asked = if reads.server == state.name {
                self.host
                    .end_closed_copy(id)
                    .map(|()| RowBundle::default())
                    .map_err(|e| Asked::Retry(e.to_string()))
            } else {
                self.ask_end_move_reads(id, &reads.server, deadline, 0)
                    .await
            };
            match asked {
                Ok(_) => {
                    state.move_reads_ended.fetch_add(1, Relaxed);
                    return Ok(rows);
                }
                Err(Asked::Refused(why)) => {
                    return Err(format!(
                        "its former owner {} refused to end its reads: {why}",
                        reads.server
                    ));
                }
                Err(Asked::Retry(why)) => {
                    if Instant::now() + Duration::from_millis(20) >= deadline {
                        break why;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        tokio::time::sleep_until(deadline.into()).await;
        state.move_reads_waited.fetch_add(1, Relaxed);
        tracing::info!(region = %id, former_owner = %reads.server, bound_ms = reads.bound_ms, reason = %last, "waited out the former owner's reads (it did not answer)");
        Ok(RowBundle::default())
    }

    /// One `EndMoveReads` call to `server`, bounded by `deadline`: with
    /// `rows` > 0 it only fetches up to that many bytes of the closed
    /// copy's cached rows (the copy goes on answering reads); with 0 it
    /// ends the copy's reads.
    async fn ask_end_move_reads(
        &self,
        id: &str,
        server: &str,
        deadline: Instant,
        rows: u64,
    ) -> Result<RowBundle, Asked> {
        let (host, state) = (&self.host, &self.state);
        let addr = state
            .directory()
            .servers
            .iter()
            .find(|s| s.name == server)
            .map(|s| s.addr.clone())
            .ok_or_else(|| Asked::Retry(format!("{server} is not a live member")))?;
        let budget = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_secs(1));
        let call = async {
            let channel = crate::security::peer::connect(host.config(), &addr, budget)
                .await
                .map_err(Asked::Retry)?;
            let admin = shoal_proto::v1::admin_client::AdminClient::new(channel);
            let mut admin = admin.max_decoding_message_size(
                (HANDED_ROWS_MAX_BYTES as usize) + crate::config::limits::MAX_MESSAGE_BYTES / 16,
            );
            let request = tonic::Request::new(shoal_proto::v1::EndMoveReadsRequest {
                region: id.to_owned(),
                server: state.name.clone(),
                max_row_bytes: rows,
                keep_reads: rows > 0,
                packed: rows > 0,
                bundle: rows > 0,
            });
            match admin
                .end_move_reads(crate::security::peer::authorize(host.security(), request))
                .await
            {
                Ok(answer) => {
                    let answer = answer.into_inner();
                    if !answer.row_bundle.is_empty()
                        || answer.packed_rows.is_empty() && answer.rows.is_empty()
                    {
                        // Checked when taken, on a blocking thread.
                        return Ok(RowBundle::from_bytes(answer.row_bundle));
                    }
                    // A former owner of an earlier version: its rows in the
                    // per-cell form, decoded off the runtime.
                    host.spawn_move_work(move || {
                        let rows = if answer.packed_rows.is_empty() {
                            from_wire(answer.rows)
                        } else {
                            unpack(answer.packed_rows)
                        };
                        RowBundle::from_rows(&rows)
                    })
                    .await
                    .map_err(|e| Asked::Retry(format!("unpacking rows: {e}")))
                }
                Err(s) if s.code() == tonic::Code::FailedPrecondition => {
                    Err(Asked::Refused(s.message().to_owned()))
                }
                Err(s) => Err(Asked::Retry(s.message().to_owned())),
            }
        };
        tokio::time::timeout(budget, call)
            .await
            .unwrap_or_else(|_| Err(Asked::Retry(format!("no answer from {server} in time"))))
    }
}

/// Handed rows as the `EndMoveReads` answer carries them: as many as fit
/// `max_bytes` encoded (a row cache charges less than the wire takes for
/// rows of many small cells).
pub(crate) fn to_wire(rows: Vec<HandedRow>, max_bytes: u64) -> Vec<pb::HandedRow> {
    let mut total = 0u64;
    rows.into_iter()
        .map(|h| pb::HandedRow {
            row: h.row,
            from: h.from,
            cells: h
                .cells
                .into_iter()
                .map(|c| pb::HandedCell {
                    family: c.family,
                    qualifier: c.qualifier,
                    timestamp: c.timestamp,
                    seq: c.seq,
                    kind: u32::from(c.kind.code()),
                    value: c.value,
                })
                .collect(),
        })
        .take_while(|h| {
            total += prost::Message::encoded_len(h) as u64 + 8;
            total <= max_bytes
        })
        .collect()
}

/// Handed rows as one encoded `HandedRows` (the answer's `packed_rows`):
/// to be built on a blocking thread.
pub(crate) fn pack(rows: Vec<HandedRow>, max_bytes: u64) -> bytes::Bytes {
    let rows = pb::HandedRows {
        rows: to_wire(rows, max_bytes),
    };
    bytes::Bytes::from(prost::Message::encode_to_vec(&rows))
}

/// The rows of an answer's `packed_rows`; rows that do not decode hand
/// nothing over (a move goes on without them).
fn unpack(packed: bytes::Bytes) -> Vec<HandedRow> {
    match <pb::HandedRows as prost::Message>::decode(packed) {
        Ok(rows) => from_wire(rows.rows),
        Err(e) => {
            tracing::warn!(error = %e, "a former owner's packed rows did not decode; none taken");
            Vec::new()
        }
    }
}

/// Handed rows from an `EndMoveReads` answer; a row with a cell of an
/// unknown type is dropped whole (the region checks the rest).
fn from_wire(rows: Vec<pb::HandedRow>) -> Vec<HandedRow> {
    rows.into_iter()
        .filter_map(|h| {
            let cells = h
                .cells
                .into_iter()
                .map(|c| {
                    let kind = u8::try_from(c.kind)
                        .ok()
                        .and_then(|k| CellType::from_code(k).ok())?;
                    Some(Cell {
                        row: h.row.clone(),
                        family: c.family,
                        qualifier: c.qualifier,
                        timestamp: c.timestamp,
                        kind,
                        seq: c.seq,
                        value: c.value,
                    })
                })
                .collect::<Option<Vec<Cell>>>()?;
            Some(HandedRow {
                row: h.row,
                from: h.from,
                cells,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{ClusterState, Directory, ServerView};
    use crate::config::ServerConfig;
    use crate::host::Host;
    use std::sync::Arc;

    async fn host(dir: &std::path::Path) -> (RegionsDriver, Arc<ClusterState>) {
        let state = Arc::new(ClusterState::new("me".into()));
        state.set_directory(Directory {
            servers: vec![ServerView {
                // Nothing listens on port 1: every call is refused.
                name: "old".into(),
                addr: "127.0.0.1:1".into(),
                hbase: String::new(),
                regions: 0,
            }],
            ..Directory::default()
        });
        let mut config = ServerConfig::default();
        config.server.data_dir = dir.to_path_buf();
        config.cluster = Some(crate::config::ClusterSection::default());
        let host = Host::open_cluster(config, state.clone(), "wal/me/run1")
            .await
            .expect("host");
        (RegionsDriver::new(host, state.clone(), None), state)
    }

    #[test]
    fn rows_of_every_version_come_back_as_handed_and_garbage_hands_nothing_over() {
        let row = |k: &str, n: usize| HandedRow {
            row: bytes::Bytes::from(k.to_owned()),
            from: 7,
            cells: (0..n)
                .map(|i| Cell {
                    row: bytes::Bytes::from(k.to_owned()),
                    family: bytes::Bytes::from_static(b"cf"),
                    qualifier: bytes::Bytes::from(format!("q{i}")),
                    timestamp: 100 + i as i64,
                    kind: CellType::Put,
                    seq: 9,
                    value: bytes::Bytes::from(vec![b'v'; 50]),
                })
                .collect(),
        };
        let rows: Vec<HandedRow> = (0..20).map(|k| row(&format!("row{k:02}"), 3)).collect();
        let back = unpack(pack(rows.clone(), u64::MAX));
        assert_eq!(back.len(), 20);
        for (a, b) in rows.iter().zip(&back) {
            assert_eq!((&a.row, a.from), (&b.row, b.from));
            assert_eq!(a.cells, b.cells);
        }
        // The byte bound holds as for unpacked answers.
        let some = unpack(pack(rows.clone(), 1_000));
        assert!(!some.is_empty() && some.len() < 20, "{}", some.len());
        assert!(unpack(bytes::Bytes::from_static(b"\xff\xff\xff garbage")).is_empty());
        // Between versions: a bundle answered to an older next owner, or
        // rows from an older former owner, are the same rows as a bundle.
        let bundle = RowBundle::from_rows(&rows);
        let sent = bundle.to_rows().expect("rows");
        assert_eq!(sent, rows);
        assert_eq!(
            RowBundle::from_rows(&unpack(pack(sent.clone(), u64::MAX))),
            bundle
        );
        assert_eq!(
            RowBundle::from_rows(&from_wire(to_wire(sent, u64::MAX))),
            bundle
        );
    }

    #[tokio::test]
    async fn a_former_owner_that_does_not_answer_costs_its_bound_and_no_less() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (driver, state) = host(dir.path()).await;
        for server in ["old", "gone"] {
            let reads = MoveReads {
                server: server.into(),
                bound_ms: 200,
            };
            let since = Instant::now();
            driver
                .end_reads_at("r1", &reads, since)
                .await
                .expect("waited out");
            // Never before the former owner's own bound has passed.
            assert!(since.elapsed() >= Duration::from_millis(200), "{server}");
        }
        assert_eq!(state.move_reads_waited.load(Relaxed), 2);
        assert_eq!(state.move_reads_ended.load(Relaxed), 0);
        // Reads kept by this server itself (the region came back): ended
        // here at once.
        let reads = MoveReads {
            server: "me".into(),
            bound_ms: 60_000,
        };
        driver
            .end_reads_at("r1", &reads, Instant::now())
            .await
            .expect("ended");
        assert_eq!(state.move_reads_ended.load(Relaxed), 1);
        // A region with no closed copy here has no reads to end.
        assert!(
            driver
                .host
                .end_move_reads("r1", "next", 1 << 20, false)
                .await
                .expect("none to end")
                .is_empty()
        );
    }
}
