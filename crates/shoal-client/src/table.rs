//! Reads and writes of one table: gets, mutations, counters, appends,
//! check-and-mutate, and scans.

use crate::builders::{Get, RowMutation, Scan};
use crate::retry::Idempotence;
use crate::route::routed;
use crate::scanner::Scanner;
use crate::{Client, ClientError};
use shoal_proto::v1 as pb;

/// A table handle. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Table {
    pub(crate) client: Client,
    pub(crate) name: String,
}

/// Runs one unary Data call for `$row` at its server, with retries.
macro_rules! data_call {
    ($self:ident, $kind:expr, $method:ident, $row:expr, $req:expr) => {{
        let req = $req;
        routed(&$self.client, &$self.name, $row, $kind, |conn| {
            let (mut data, req) = (conn.data, req.clone());
            async move { data.$method(req).await }
        })
        .await
        .map(tonic::Response::into_inner)
    }};
}

/// The server's answer to a Get whose row does not fit one message.
fn is_row_too_large(e: &ClientError) -> bool {
    matches!(e, ClientError::Status { code: tonic::Code::FailedPrecondition, message }
        if message.starts_with(shoal_proto::ROW_TOO_LARGE))
}

impl Table {
    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one row (`row.cells` is empty when it has nothing visible).
    ///
    /// A row too large for one response message is read through a scan
    /// instead, which streams it in pieces.
    ///
    /// The row's bytes (`bytes::Bytes`) are slices of the received message,
    /// not copies: keeping one cell keeps that message's buffer. Copy what
    /// you keep for long (`Bytes::copy_from_slice`).
    pub async fn get(&self, get: Get) -> Result<pb::Row, ClientError> {
        let req = pb::GetRequest {
            table: self.name.clone(),
            get: Some(get.spec.clone()),
        };
        match data_call!(self, Idempotence::Idempotent, get, &get.spec.row, req) {
            Ok(resp) => Ok(resp.row.unwrap_or_default()),
            Err(e) if is_row_too_large(&e) => self.get_by_scan(get.spec).await,
            Err(e) => Err(e),
        }
    }

    /// One row read by a scan of exactly that row.
    async fn get_by_scan(&self, spec: pb::GetSpec) -> Result<pb::Row, ClientError> {
        let mut stop = spec.row.to_vec();
        stop.push(0);
        let req = pb::ScanRequest {
            table: self.name.clone(),
            start_row: spec.row.to_vec(),
            stop_row: stop,
            columns: spec.columns,
            time_range: spec.time_range,
            max_versions: spec.max_versions,
            limit: 1,
            rows_per_message: 1,
            ..Default::default()
        };
        let mut scanner = Scanner::new(self.client.clone(), req);
        let row = scanner.next().await?;
        Ok(row.unwrap_or(pb::Row {
            row: spec.row,
            ..Default::default()
        }))
    }

    /// The newest value of `family:qualifier` in `row`, if any.
    pub async fn get_value(
        &self,
        row: impl AsRef<[u8]>,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
    ) -> Result<Option<Vec<u8>>, ClientError> {
        let r = self.get(Get::new(row).column(family, qualifier)).await?;
        Ok(r.cells.into_iter().next().map(|c| c.value.to_vec()))
    }

    /// Reads several rows at once; one `Row` per `Get`, in order.
    pub async fn get_many(&self, gets: Vec<Get>) -> Result<Vec<pb::Row>, ClientError> {
        let n = gets.len();
        let rows = match self.multi_get_routed(&gets).await {
            Ok(rows) => rows,
            // Together too large for one response: one get each (a get of a
            // row too large on its own goes through a scan).
            Err(e) if is_row_too_large(&e) => {
                let mut rows = Vec::with_capacity(n);
                for g in gets {
                    rows.push(self.get(g).await?);
                }
                rows
            }
            Err(e) => return Err(e),
        };
        if rows.len() != n {
            return Err(ClientError::Protocol(format!(
                "{} rows for {n} gets",
                rows.len()
            )));
        }
        Ok(rows)
    }

    /// MultiGets of `gets`, one per server holding some of their rows; rows
    /// answered "not serving" are sent again once the map is fresh.
    async fn multi_get_routed(&self, gets: &[Get]) -> Result<Vec<pb::Row>, ClientError> {
        let mut rows: Vec<Option<pb::Row>> = vec![None; gets.len()];
        let mut backoff = crate::retry::Backoff::new(&self.client.options);
        loop {
            let pending: Vec<usize> = (0..gets.len()).filter(|&i| rows[i].is_none()).collect();
            if pending.is_empty() {
                return Ok(rows.into_iter().map(Option::unwrap_or_default).collect());
            }
            let mut groups: Vec<(crate::route::Conn, Vec<usize>)> = Vec::new();
            for i in pending {
                let conn = self
                    .client
                    .router
                    .conn_for(&self.name, &gets[i].spec.row, false)
                    .await;
                match groups.iter_mut().find(|(c, _)| c.addr == conn.addr) {
                    Some((_, list)) => list.push(i),
                    None => groups.push((conn, vec![i])),
                }
            }
            let calls = groups.into_iter().map(|(conn, idx)| {
                let req = pb::MultiGetRequest {
                    table: self.name.clone(),
                    gets: idx.iter().map(|&i| gets[i].spec.clone()).collect(),
                };
                let mut data = conn.data;
                async move { (idx, data.multi_get(req).await) }
            });
            let mut failure = None;
            for (idx, result) in futures::future::join_all(calls).await {
                match result {
                    Ok(resp) => {
                        let got = resp.into_inner().rows;
                        if got.len() != idx.len() {
                            return Err(ClientError::Protocol(format!(
                                "{} rows for {} gets",
                                got.len(),
                                idx.len()
                            )));
                        }
                        for (i, row) in idx.into_iter().zip(got) {
                            rows[i] = Some(row);
                        }
                    }
                    Err(status) => {
                        self.client.router.note_failure(&self.name, &status);
                        if !crate::route::retryable(&status, Idempotence::Idempotent) {
                            return Err(status.into());
                        }
                        failure = Some(status);
                    }
                }
            }
            if let Some(status) = failure {
                match backoff.next_delay() {
                    Some(d) => tokio::time::sleep(d).await,
                    None => return Err(status.into()),
                }
            }
        }
    }

    /// Applies one row mutation atomically. With write combining on (the
    /// default), concurrent calls on one client may share an RPC; each row
    /// is still applied atomically on its own and answered on its own.
    pub async fn mutate(&self, mutation: RowMutation) -> Result<(), ClientError> {
        let row = mutation.m.row.clone();
        let m = mutation.m;
        routed(
            &self.client,
            &self.name,
            &row,
            Idempotence::Idempotent,
            |conn| {
                let (m, table) = (m.clone(), self.name.clone());
                async move {
                    match &conn.combiner {
                        Some(combiner) => combiner.mutate(&table, m).await.map_err(to_status),
                        None => {
                            let mut data = conn.data;
                            data.mutate(pb::MutateRequest {
                                table,
                                mutation: Some(m),
                            })
                            .await
                            .map(|_| ())
                        }
                    }
                }
            },
        )
        .await
    }

    /// Puts one value at the server's current time.
    pub async fn put(
        &self,
        row: impl AsRef<[u8]>,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<(), ClientError> {
        self.mutate(RowMutation::new(row).put(family, qualifier, value))
            .await
    }

    /// Deletes every version of one column.
    pub async fn delete_column(
        &self,
        row: impl AsRef<[u8]>,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
    ) -> Result<(), ClientError> {
        self.mutate(RowMutation::new(row).delete_column(family, qualifier, None))
            .await
    }

    /// Deletes a whole family of a row.
    pub async fn delete_family(
        &self,
        row: impl AsRef<[u8]>,
        family: impl AsRef<[u8]>,
    ) -> Result<(), ClientError> {
        self.mutate(RowMutation::new(row).delete_family(family, None))
            .await
    }

    /// Deletes a whole row.
    pub async fn delete_row(&self, row: impl AsRef<[u8]>) -> Result<(), ClientError> {
        self.mutate(RowMutation::new(row).delete_row(None)).await
    }

    /// Applies several row mutations, each atomic on its own; one result per
    /// mutation, in order. Rows refused as retryable (their region was
    /// moving) are sent again until the retry deadline. The outer error is
    /// a failure of the whole call.
    pub async fn mutate_many(
        &self,
        mutations: Vec<RowMutation>,
    ) -> Result<Vec<Result<(), ClientError>>, ClientError> {
        let all: Vec<pb::RowMutation> = mutations.into_iter().map(|m| m.m).collect();
        let mut results: Vec<Option<Result<(), ClientError>>> =
            std::iter::repeat_with(|| None).take(all.len()).collect();
        let mut backoff = crate::retry::Backoff::new(&self.client.options);
        let attempt = self.client.router.attempt_options.clone();
        loop {
            let pending: Vec<usize> = (0..all.len()).filter(|&i| results[i].is_none()).collect();
            if pending.is_empty() {
                break;
            }
            let mut groups: Vec<(crate::route::Conn, Vec<usize>)> = Vec::new();
            for i in pending {
                let conn = self
                    .client
                    .router
                    .conn_for(&self.name, &all[i].row, false)
                    .await;
                match groups.iter_mut().find(|(c, _)| c.addr == conn.addr) {
                    Some((_, list)) => list.push(i),
                    None => groups.push((conn, vec![i])),
                }
            }
            let calls = groups.into_iter().map(|(conn, idx)| {
                let batch: Vec<pb::RowMutation> = idx.iter().map(|&i| all[i].clone()).collect();
                let (attempt, table) = (&attempt, &self.name);
                async move {
                    let r =
                        crate::combine::multi_mutate(&conn.data, attempt, table, batch, None).await;
                    (idx, r)
                }
            });
            let delay = backoff.next_delay();
            let mut again = false;
            for (idx, r) in futures::future::join_all(calls).await {
                let answers: Vec<Result<(), ClientError>> = match r {
                    Ok(a) => a,
                    Err(e) => idx
                        .iter()
                        .map(|_| Err(crate::combine::duplicate(&e)))
                        .collect(),
                };
                for (i, a) in idx.into_iter().zip(answers) {
                    match a {
                        Err(e) if delay.is_some() && retryable_error(&e) => {
                            self.client.router.note_failure(&self.name, &to_status(e));
                            again = true;
                        }
                        other => results[i] = Some(other),
                    }
                }
            }
            if again && let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(ClientError::Protocol("no result".into()))))
            .collect())
    }

    /// Adds `amount` to each `(family, qualifier, amount)` counter of `row`
    /// (a missing counter starts at 0); returns the new values in order.
    pub async fn increment(
        &self,
        row: impl AsRef<[u8]>,
        columns: &[(&[u8], &[u8], i64)],
    ) -> Result<Vec<i64>, ClientError> {
        if columns.is_empty() {
            return Err(ClientError::InvalidArgument(
                "an increment needs at least one column".into(),
            ));
        }
        let req = pb::IncrementRequest {
            table: self.name.clone(),
            row: row.as_ref().to_vec(),
            columns: columns
                .iter()
                .map(|(f, q, a)| pb::ColumnIncrement {
                    family: f.to_vec(),
                    qualifier: q.to_vec(),
                    amount: *a,
                })
                .collect(),
        };
        let cells = data_call!(
            self,
            Idempotence::NotIdempotent,
            increment,
            row.as_ref(),
            req
        )?
        .row
        .unwrap_or_default()
        .cells;
        if cells.len() != columns.len() {
            return Err(ClientError::Protocol(format!(
                "{} counters for {} columns",
                cells.len(),
                columns.len()
            )));
        }
        cells
            .iter()
            .map(|c| {
                counter_value(&c.value).ok_or_else(|| {
                    ClientError::Protocol(format!(
                        "a counter is 8 bytes, the server sent {}",
                        c.value.len()
                    ))
                })
            })
            .collect()
    }

    /// Appends each `(family, qualifier, suffix)` to its column's value in
    /// `row`; returns the new values in order.
    pub async fn append(
        &self,
        row: impl AsRef<[u8]>,
        columns: &[(&[u8], &[u8], &[u8])],
    ) -> Result<Vec<Vec<u8>>, ClientError> {
        if columns.is_empty() {
            return Err(ClientError::InvalidArgument(
                "an append needs at least one column".into(),
            ));
        }
        let req = pb::AppendRequest {
            table: self.name.clone(),
            row: row.as_ref().to_vec(),
            columns: columns
                .iter()
                .map(|(f, q, v)| pb::ColumnAppend {
                    family: f.to_vec(),
                    qualifier: q.to_vec(),
                    value: v.to_vec(),
                })
                .collect(),
        };
        let resp = data_call!(self, Idempotence::NotIdempotent, append, row.as_ref(), req)?;
        Ok(resp
            .row
            .unwrap_or_default()
            .cells
            .into_iter()
            .map(|c| c.value.to_vec())
            .collect())
    }

    /// Applies `mutation` if `family:qualifier` of the mutation's row passes
    /// the check "current `op` `value`" (`Exists` / `Missing` ignore
    /// `value`); returns whether it was applied.
    pub async fn check_and_mutate(
        &self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        op: pb::CompareOp,
        value: impl AsRef<[u8]>,
        mutation: RowMutation,
    ) -> Result<bool, ClientError> {
        let req = pb::CheckAndMutateRequest {
            table: self.name.clone(),
            row: mutation.m.row.to_vec(),
            family: family.as_ref().to_vec(),
            qualifier: qualifier.as_ref().to_vec(),
            op: op as i32,
            value: value.as_ref().to_vec(),
            mutation: Some(mutation.m),
        };
        let row = req.row.clone();
        let resp = data_call!(
            self,
            Idempotence::NotIdempotent,
            check_and_mutate,
            &row,
            req
        )?;
        Ok(resp.processed)
    }

    /// Loads HBase HFiles into the region holding `req.start_row` (the
    /// server reads them from `location`/`path`); the answer says where
    /// that region ends, so a caller whose files span regions sends the
    /// rest from there. Retried like an idempotent call: with a load key a
    /// repeated load is a no-op (`docs/migrate-from-hbase.md`).
    pub async fn bulk_load(
        &self,
        mut req: pb::BulkLoadRequest,
    ) -> Result<pb::BulkLoadResponse, ClientError> {
        req.table = self.name.clone();
        // The region holding the first row; "" is before every row.
        let row = if req.start_row.is_empty() {
            vec![0]
        } else {
            req.start_row.clone()
        };
        let kind = if req.load_key.is_empty() {
            Idempotence::NotIdempotent
        } else {
            Idempotence::Idempotent
        };
        data_call!(self, kind, bulk_load, &row, req)
    }

    /// The rows of a scan as a stream (row chunks when the scan sets
    /// `batch`); a broken stream is resumed (see [`Scanner`]).
    pub fn scan(
        &self,
        scan: Scan,
    ) -> impl futures::Stream<Item = Result<pb::Row, ClientError>> + Send + 'static {
        self.scanner(scan).into_stream()
    }

    /// The rows of a scan, pulled one at a time with [`Scanner::next`].
    pub fn scanner(&self, scan: Scan) -> Scanner {
        let mut req = scan.req;
        req.table = self.name.clone();
        Scanner::new(self.client.clone(), req)
    }

    /// Every row of a scan, collected.
    pub async fn scan_collect(&self, scan: Scan) -> Result<Vec<pb::Row>, ClientError> {
        let mut s = self.scanner(scan);
        let mut out = Vec::new();
        while let Some(r) = s.next().await? {
            out.push(r);
        }
        Ok(out)
    }

    /// The number of rows a scan covers (streamed and counted, not kept).
    pub async fn count(&self, scan: Scan) -> Result<u64, ClientError> {
        let mut s = self.scanner(scan.batch(0));
        let mut n = 0;
        while s.next().await?.is_some() {
            n += 1;
        }
        Ok(n)
    }
}

/// A counter's value (8 bytes, big-endian, as HBase stores counters), or
/// `None` if `bytes` is not 8 bytes long.
pub fn counter_value(bytes: &[u8]) -> Option<i64> {
    <[u8; 8]>::try_from(bytes).ok().map(i64::from_be_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_big_endian_i64() {
        assert_eq!(counter_value(&7i64.to_be_bytes()), Some(7));
        assert_eq!(counter_value(&(-2i64).to_be_bytes()), Some(-2));
        assert_eq!(counter_value(b"abc"), None);
    }
}

/// A client error as the status the router decides on.
pub(crate) fn to_status(e: ClientError) -> tonic::Status {
    match e {
        ClientError::Status { code, message } => tonic::Status::new(code, message),
        ClientError::Transport { code, message } => {
            let mut s = tonic::Status::new(code, message.clone());
            s.set_source(std::sync::Arc::new(ConnectionFailed(message)));
            s
        }
        ClientError::Connect { addr, .. } => {
            tonic::Status::unavailable(format!("cannot connect to {addr}"))
        }
        other => tonic::Status::internal(other.to_string()),
    }
}

/// The local cause of a transport failure, kept across conversions so the
/// router still sees the failure came from the connection.
#[derive(Debug)]
struct ConnectionFailed(String);

impl std::fmt::Display for ConnectionFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConnectionFailed {}

/// True if a per-row failure is worth sending again (possibly elsewhere).
fn retryable_error(e: &ClientError) -> bool {
    match e {
        ClientError::Status { code, message } => crate::route::retryable(
            &tonic::Status::new(*code, message.clone()),
            Idempotence::Idempotent,
        ),
        ClientError::Connect { .. } | ClientError::Transport { .. } => true,
        _ => false,
    }
}
