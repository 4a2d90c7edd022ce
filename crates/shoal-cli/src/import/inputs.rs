//! What the import and bulk-load commands share: which server and as whom,
//! where HBase's files are (a path or a store URL), and the check of every
//! input HFile (trailer and index, read before anything is created or
//! loaded) with the order a store's files load in.

use anyhow::Context;
use shoal_client::Client;
use shoal_client::proto as pb;
use shoal_import::{HFileFacts, peek};
use shoal_storage::object::{Bucket, ObjectStoreConfig};
use std::collections::HashMap;

/// Which server, and as whom (also `shoal export`'s).
#[derive(Debug, clap::Args)]
pub(crate) struct ServerArgs {
    /// Server gRPC address.
    #[arg(long, env = "SHOAL_ADDR", default_value = "127.0.0.1:7070")]
    addr: String,
    #[command(flatten)]
    credentials: crate::credentials::Credentials,
}

impl ServerArgs {
    pub(crate) async fn connect(&self) -> anyhow::Result<Client> {
        let options = self
            .credentials
            .apply(shoal_client::ClientOptions::default())?;
        Client::connect_with(&self.addr, options)
            .await
            .with_context(|| format!("connecting to {}", self.addr))
    }
}

/// A location as a store URL: paths become absolute `file://` URLs.
pub(crate) fn location_url(location: &str) -> anyhow::Result<String> {
    if location.contains("://") {
        return Ok(location.trim_end_matches('/').to_string());
    }
    let path = std::fs::canonicalize(location)
        .with_context(|| format!("{location}: no such directory"))?;
    Ok(format!("file://{}", path.display()))
}

pub(crate) async fn open(url: &str) -> anyhow::Result<Bucket> {
    let config = ObjectStoreConfig::from_url(url)?;
    Ok(Bucket::open(&config).await?)
}

/// Reads every input's trailer and index before anything is created or
/// loaded: a file that is not a readable HFile stops the import here.
pub(crate) async fn check_inputs(
    bucket: &Bucket,
    paths: Vec<String>,
) -> anyhow::Result<HashMap<String, HFileFacts>> {
    use futures::StreamExt;
    let checked: Vec<anyhow::Result<(String, HFileFacts)>> = futures::stream::iter(paths)
        .map(|path| async move {
            let facts = peek(bucket, &path).await?;
            Ok((path, facts))
        })
        .buffer_unordered(8)
        .collect()
        .await;
    checked.into_iter().collect()
}

/// HBase's order of a store's files: oldest write first (a later file
/// wins at an identical key, as in HBase).
pub(crate) fn by_age(files: &mut [pb::BulkLoadFile], facts: &HashMap<String, HFileFacts>) {
    files.sort_by_key(|f| facts.get(&f.path).and_then(|x| x.max_seq_id).unwrap_or(0));
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
