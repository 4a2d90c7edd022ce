//! Reads and writes of one table.

use crate::builders::{Get, RowMutation, Scan};
use crate::retry::{Backoff, retrying};
use crate::{Client, ClientError};
use shoal_proto::v1 as pb;
use std::collections::VecDeque;

/// A table handle. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Table {
    pub(crate) client: Client,
    pub(crate) name: String,
}

impl Table {
    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one row (`row.cells` is empty when it has nothing visible).
    pub async fn get(&self, get: Get) -> Result<pb::Row, ClientError> {
        let req = pb::GetRequest {
            table: self.name.clone(),
            get: Some(get.spec),
        };
        let data = self.client.data.clone();
        let resp = retrying(&self.client.options, || {
            let (mut data, req) = (data.clone(), req.clone());
            async move { data.get(req).await }
        })
        .await?;
        Ok(resp.into_inner().row.unwrap_or_default())
    }

    /// The newest value of `family:qualifier` in `row`, if any.
    pub async fn get_value(
        &self,
        row: impl AsRef<[u8]>,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
    ) -> Result<Option<Vec<u8>>, ClientError> {
        let r = self
            .get(Get::new(row).column(family.as_ref(), qualifier.as_ref()))
            .await?;
        Ok(r.cells.into_iter().next().map(|c| c.value))
    }

    /// Reads several rows at once, in order.
    pub async fn get_many(&self, gets: Vec<Get>) -> Result<Vec<pb::Row>, ClientError> {
        let req = pb::MultiGetRequest {
            table: self.name.clone(),
            gets: gets.into_iter().map(|g| g.spec).collect(),
        };
        let data = self.client.data.clone();
        let resp = retrying(&self.client.options, || {
            let (mut data, req) = (data.clone(), req.clone());
            async move { data.multi_get(req).await }
        })
        .await?;
        Ok(resp.into_inner().rows)
    }

    /// Applies one row mutation atomically.
    pub async fn mutate(&self, mutation: RowMutation) -> Result<(), ClientError> {
        let req = pb::MutateRequest {
            table: self.name.clone(),
            mutation: Some(mutation.m),
        };
        let data = self.client.data.clone();
        retrying(&self.client.options, || {
            let (mut data, req) = (data.clone(), req.clone());
            async move { data.mutate(req).await }
        })
        .await?;
        Ok(())
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

    /// Applies several row mutations (each atomic on its own); one result
    /// per mutation, in order.
    pub async fn mutate_many(
        &self,
        mutations: Vec<RowMutation>,
    ) -> Result<Vec<Result<(), ClientError>>, ClientError> {
        let req = pb::MultiMutateRequest {
            table: self.name.clone(),
            mutations: mutations.into_iter().map(|m| m.m).collect(),
        };
        let data = self.client.data.clone();
        let resp = retrying(&self.client.options, || {
            let (mut data, req) = (data.clone(), req.clone());
            async move { data.multi_mutate(req).await }
        })
        .await?;
        Ok(resp
            .into_inner()
            .results
            .into_iter()
            .map(|s| {
                if s.code == 0 {
                    Ok(())
                } else {
                    Err(ClientError::Status {
                        code: tonic::Code::from_i32(s.code),
                        message: s.message,
                    })
                }
            })
            .collect())
    }

    /// Adds `amount` to counters; returns the new values.
    pub async fn increment(
        &self,
        row: impl AsRef<[u8]>,
        columns: &[(&[u8], &[u8], i64)],
    ) -> Result<Vec<i64>, ClientError> {
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
        // Not retried: an increment that reached the server but whose answer
        // was lost would be applied twice.
        let mut data = self.client.data.clone();
        let resp = data.increment(req).await.map_err(ClientError::from)?;
        resp.into_inner()
            .row
            .unwrap_or_default()
            .cells
            .iter()
            .map(|c| {
                <[u8; 8]>::try_from(c.value.as_slice())
                    .map(i64::from_be_bytes)
                    .map_err(|_| {
                        ClientError::InvalidArgument("counter value is not 8 bytes".into())
                    })
            })
            .collect()
    }

    /// Appends to values; returns the new values.
    pub async fn append(
        &self,
        row: impl AsRef<[u8]>,
        columns: &[(&[u8], &[u8], &[u8])],
    ) -> Result<Vec<Vec<u8>>, ClientError> {
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
        // Not retried, like increment.
        let mut data = self.client.data.clone();
        let resp = data.append(req).await.map_err(ClientError::from)?;
        Ok(resp
            .into_inner()
            .row
            .unwrap_or_default()
            .cells
            .into_iter()
            .map(|c| c.value)
            .collect())
    }

    /// Applies `mutation` if `family:qualifier`'s current value passes
    /// `op` against `value` ("current OP given"); true if applied.
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
            row: mutation.m.row.clone(),
            family: family.as_ref().to_vec(),
            qualifier: qualifier.as_ref().to_vec(),
            op: op as i32,
            value: value.as_ref().to_vec(),
            mutation: Some(mutation.m),
        };
        let data = self.client.data.clone();
        let resp = retrying(&self.client.options, || {
            let (mut data, req) = (data.clone(), req.clone());
            async move { data.check_and_mutate(req).await }
        })
        .await?;
        Ok(resp.into_inner().processed)
    }

    /// Starts a scan.
    pub fn scan(&self, scan: Scan) -> Scanner {
        let mut req = scan.req;
        req.table = self.name.clone();
        Scanner {
            client: self.client.clone(),
            req,
            stream: None,
            buffered: VecDeque::new(),
            last: None,
            rows: 0,
            skip_pending: 0,
            done: false,
        }
    }

    /// Every row of a scan, collected.
    pub async fn scan_collect(&self, scan: Scan) -> Result<Vec<pb::Row>, ClientError> {
        let mut s = self.scan(scan);
        let mut out = Vec::new();
        while let Some(r) = s.next().await? {
            out.push(r);
        }
        Ok(out)
    }

    /// Number of rows a scan returns (rows are streamed, not kept).
    pub async fn count(&self, scan: Scan) -> Result<u64, ClientError> {
        let mut s = self.scan(scan.batch(0));
        let mut n = 0;
        let mut last: Option<Vec<u8>> = None;
        while let Some(r) = s.next().await? {
            if last.as_deref() != Some(&r.row[..]) {
                n += 1;
                last = Some(r.row);
            }
        }
        Ok(n)
    }
}

/// A running scan: rows in order, fetched in streamed messages. If the
/// stream breaks with a retryable error, the scan reopens after the last
/// row it returned (skipping the chunks of that row already returned).
pub struct Scanner {
    client: Client,
    req: pb::ScanRequest,
    stream: Option<tonic::Streaming<pb::ScanResponse>>,
    buffered: VecDeque<pb::Row>,
    /// Last row returned and how many chunks of it.
    last: Option<(Vec<u8>, usize)>,
    /// Distinct rows returned.
    rows: u64,
    /// Chunks of `last` to skip after a reopen.
    skip_pending: usize,
    done: bool,
}

impl Scanner {
    /// The next row (or row chunk), or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<pb::Row>, ClientError> {
        let mut backoff = Backoff::new(&self.client.options);
        loop {
            if let Some(row) = self.buffered.pop_front() {
                match &mut self.last {
                    Some((r, n)) if *r == row.row => *n += 1,
                    _ => {
                        self.last = Some((row.row.clone(), 1));
                        self.rows += 1;
                    }
                }
                return Ok(Some(row));
            }
            if self.done {
                return Ok(None);
            }
            match self.fetch().await {
                Ok(()) => {}
                Err(e) if e.is_retryable() => {
                    self.stream = None;
                    match backoff.next_delay() {
                        Some(d) => tokio::time::sleep(d).await,
                        None => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Fills `buffered` from the stream (opening or reopening it).
    async fn fetch(&mut self) -> Result<(), ClientError> {
        if self.stream.is_none() {
            let mut req = self.req.clone();
            let mut skip = 0;
            if let Some((row, chunks)) = &self.last {
                // Reopen at the last row returned.
                if req.reverse {
                    let mut stop = row.clone();
                    stop.push(0);
                    req.stop_row = stop;
                } else {
                    req.start_row = row.clone();
                }
                skip = *chunks;
                if req.limit > 0 {
                    req.limit = req.limit.saturating_sub(self.rows) + 1;
                }
            }
            let mut data = self.client.data.clone();
            let stream = data.scan(req).await?.into_inner();
            self.stream = Some(stream);
            self.skip_pending = skip;
        }
        let Some(stream) = self.stream.as_mut() else {
            return Ok(());
        };
        match stream.message().await? {
            Some(msg) => {
                for row in msg.rows {
                    if self.skip_pending > 0
                        && self.last.as_ref().is_some_and(|(r, _)| *r == row.row)
                    {
                        self.skip_pending -= 1;
                        continue;
                    }
                    self.skip_pending = 0;
                    self.buffered.push_back(row);
                }
            }
            None => self.done = true,
        }
        Ok(())
    }

    /// The scan as a `futures::Stream`.
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
