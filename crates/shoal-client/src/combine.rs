//! Write combining: concurrent [`Table::mutate`](crate::Table::mutate) calls
//! on one client share MultiMutate RPCs.
//!
//! An RPC costs far more CPU than applying the row it carries: HTTP/2
//! framing, protobuf, a task per request on each side and a socket write
//! each way. Profiled on a 2-core server with its load generator beside it,
//! the gRPC stacks took about 85 % of a single put's CPU and the region's
//! write path under 10 %. So the client keeps at most
//! [`ClientOptions::max_write_rpcs`] write RPCs outstanding per connection. A
//! mutation that finds a free slot leaves at once, alone, as a plain Mutate
//! (no timer: an idle client adds no latency). Mutations that arrive while
//! every slot is busy queue up and leave together in the next RPC, as WAL
//! entries share a group commit. Batches therefore grow exactly when load
//! does, and a backlog is worked off with less CPU per row than it took to
//! build — the opposite of what one RPC per row does near saturation.
//! TiKV's client batches its commands over one stream for the same reason.
//!
//! Each row stays atomic on its own and gets its own answer: the status the
//! server gave that row. Rows refused as retryable are retried alone, as in
//! [`Table::mutate_many`](crate::Table::mutate_many). A call holds its slot
//! for its first attempt only, so rows waiting to retry (their region is
//! moving) never hold back writes to other regions.

use crate::data_stub::DataStub;
use crate::retry::{Backoff, Idempotence, retrying, should_retry};
use crate::{ClientError, ClientOptions};
use shoal_proto::v1 as pb;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

/// One queued mutation.
struct Queued {
    table: String,
    mutation: pb::RowMutation,
    /// Encoded size, for the batch's byte limit.
    bytes: usize,
    done: oneshot::Sender<Result<(), ClientError>>,
}

/// The sending side of a connection's combiner (the task ends when every
/// clone is dropped).
#[derive(Clone)]
pub(crate) struct Combiner {
    tx: mpsc::UnboundedSender<Queued>,
}

impl std::fmt::Debug for Combiner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Combiner").finish_non_exhaustive()
    }
}

impl Combiner {
    /// Starts the combining task on the current runtime. It holds the data
    /// client, not a [`crate::Client`], so dropping the last client ends it.
    pub(crate) fn start(data: DataStub, options: ClientOptions) -> Combiner {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(rx, data, options));
        Combiner { tx }
    }

    /// Applies `mutation` to `table`, possibly in one RPC with others.
    pub(crate) async fn mutate(
        &self,
        table: &str,
        mutation: pb::RowMutation,
    ) -> Result<(), ClientError> {
        let (done, answer) = oneshot::channel();
        let bytes = prost::Message::encoded_len(&mutation);
        let queued = Queued {
            table: table.to_string(),
            mutation,
            bytes,
            done,
        };
        if self.tx.send(queued).is_err() {
            return Err(gone());
        }
        answer.await.unwrap_or_else(|_| Err(gone()))
    }
}

fn gone() -> ClientError {
    ClientError::Protocol("the client's write combiner stopped".into())
}

/// Takes the first queued mutation, waits for a free RPC slot, then takes
/// whatever else queued meanwhile (up to the batch limits) and sends it.
async fn run(mut rx: mpsc::UnboundedReceiver<Queued>, data: DataStub, options: ClientOptions) {
    let slots = Arc::new(Semaphore::new(options.max_write_rpcs.max(1)));
    let max_rows = options.max_combined_rows.max(1);
    let max_bytes = options.max_combined_bytes.max(1);
    let mut carry: Option<Queued> = None;
    loop {
        let first = match carry.take() {
            Some(q) => q,
            None => match rx.recv().await {
                Some(q) => q,
                None => return,
            },
        };
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let mut bytes = first.bytes;
        let mut batch = vec![first];
        while batch.len() < max_rows {
            match rx.try_recv() {
                Ok(q) if bytes + q.bytes <= max_bytes => {
                    bytes += q.bytes;
                    batch.push(q);
                }
                Ok(q) => {
                    // Too big to join: it leads the next batch.
                    carry = Some(q);
                    break;
                }
                Err(_) => break,
            }
        }
        // One call per table (almost always one), sharing the slot.
        let slot = Arc::new(permit);
        let mut by_table: Vec<(String, Vec<Queued>)> = Vec::new();
        for q in batch {
            match by_table.iter_mut().find(|(t, _)| *t == q.table) {
                Some((_, rows)) => rows.push(q),
                None => by_table.push((q.table.clone(), vec![q])),
            }
        }
        for (table, rows) in by_table {
            tokio::spawn(send(
                data.clone(),
                options.clone(),
                table,
                rows,
                slot.clone(),
            ));
        }
    }
}

/// Sends one batch and answers each mutation in it. The slot is held for
/// the first attempt only: a batch waiting to retry (its region is moving)
/// must not keep writes to other regions from going out.
async fn send(
    data: DataStub,
    options: ClientOptions,
    table: String,
    mut batch: Vec<Queued>,
    slot: Arc<OwnedSemaphorePermit>,
) {
    if batch.len() == 1 {
        let Some(q) = batch.pop() else { return };
        let req = pb::MutateRequest {
            table,
            mutation: Some(q.mutation),
        };
        let mut slot = Some(slot);
        let result = retrying(&options, Idempotence::Idempotent, || {
            let (mut data, req, slot) = (data.clone(), req.clone(), slot.take());
            async move {
                let r = data.mutate(req).await;
                drop(slot);
                r
            }
        })
        .await
        .map(|_| ());
        let _ = q.done.send(result);
        return;
    }
    let (mutations, dones): (Vec<_>, Vec<_>) =
        batch.into_iter().map(|q| (q.mutation, q.done)).unzip();
    match multi_mutate(&data, &options, &table, mutations, Some(slot)).await {
        Ok(results) => {
            for (done, r) in dones.into_iter().zip(results) {
                let _ = done.send(r);
            }
        }
        Err(e) => {
            for done in dones {
                let _ = done.send(Err(duplicate(&e)));
            }
        }
    }
}

/// Applies several row mutations in MultiMutate calls; one result per
/// mutation, in order. Rows refused as retryable are sent again until the
/// retry deadline. The outer error is a failure of the whole call. `slot`,
/// if any, is released once the first attempt is answered.
pub(crate) async fn multi_mutate(
    data: &DataStub,
    options: &ClientOptions,
    table: &str,
    all: Vec<pb::RowMutation>,
    mut slot: Option<Arc<OwnedSemaphorePermit>>,
) -> Result<Vec<Result<(), ClientError>>, ClientError> {
    let mut results: Vec<Option<Result<(), ClientError>>> =
        std::iter::repeat_with(|| None).take(all.len()).collect();
    let mut pending: Vec<usize> = (0..all.len()).collect();
    let mut backoff = Backoff::new(options);
    while !pending.is_empty() {
        let req = pb::MultiMutateRequest {
            table: table.to_string(),
            mutations: pending.iter().map(|&i| all[i].clone()).collect(),
        };
        let statuses = retrying(options, Idempotence::Idempotent, || {
            let (mut data, req, slot) = (data.clone(), req.clone(), slot.take());
            async move {
                let r = data.multi_mutate(req).await;
                drop(slot);
                r
            }
        })
        .await?
        .into_inner()
        .results;
        if statuses.len() != pending.len() {
            return Err(ClientError::Protocol(format!(
                "{} results for {} mutations",
                statuses.len(),
                pending.len()
            )));
        }
        let delay = backoff.next_delay();
        let mut again = Vec::new();
        for (i, s) in pending.into_iter().zip(statuses) {
            let status = tonic::Status::new(tonic::Code::from_i32(s.code), s.message);
            let retry = should_retry(&status, Idempotence::Idempotent);
            if s.code == 0 {
                results[i] = Some(Ok(()));
            } else if retry && delay.is_some() {
                again.push(i);
            } else {
                results[i] = Some(Err(status.into()));
            }
        }
        pending = again;
        if let (false, Some(d)) = (pending.is_empty(), delay) {
            tokio::time::sleep(d).await;
        }
    }
    Ok(results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(ClientError::Protocol("no result".into()))))
        .collect())
}

/// The same failure for another row of a failed batch (a connection error
/// is not `Clone`; it becomes UNAVAILABLE with its message).
pub(crate) fn duplicate(e: &ClientError) -> ClientError {
    match e {
        ClientError::Status { code, message } => ClientError::Status {
            code: *code,
            message: message.clone(),
        },
        ClientError::Transport { code, message } => ClientError::Transport {
            code: *code,
            message: message.clone(),
        },
        ClientError::InvalidArgument(m) => ClientError::InvalidArgument(m.clone()),
        ClientError::Protocol(m) => ClientError::Protocol(m.clone()),
        ClientError::Connect { .. } => ClientError::Status {
            code: tonic::Code::Unavailable,
            message: e.to_string(),
        },
    }
}
