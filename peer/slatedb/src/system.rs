//! What the driver needs from a system under test: insert, read and update one
//! YCSB record, settle the load onto object storage, count object-store requests.

use std::future::Future;

use crate::emulate::Requests;

/// One system under test, shared by the driver's tasks.
pub trait System: Send + Sync + 'static {
    /// Inserts a record with all its fields (field0 ..).
    fn insert(
        &self,
        key: String,
        fields: Vec<Vec<u8>>,
    ) -> impl Future<Output = anyhow::Result<()>> + Send;

    /// Reads every field of a record; returns how many fields it has.
    fn read(&self, key: String) -> impl Future<Output = anyhow::Result<usize>> + Send;

    /// Overwrites field `field` of a record.
    fn update(
        &self,
        key: String,
        field: usize,
        value: Vec<u8>,
    ) -> impl Future<Output = anyhow::Result<()>> + Send;

    /// After the load: writes everything to object storage and compacts; returns
    /// a description of the resulting file layout.
    fn settle(&self) -> impl Future<Output = anyhow::Result<String>> + Send;

    /// Object-store requests so far (monotonic).
    fn requests(&self) -> Requests;

    /// A one-line view of the engine's state (buffers, files, cache), for the log
    /// and the report.
    fn state(&self) -> String;
}
