//! `shoal snapshot export` and `shoal snapshot import`: a snapshot out of
//! one server's bucket into a self-contained directory or bucket prefix,
//! and from there into another server (docs/snapshots-export.md).
//!
//! This module owns the commands' arguments, the export's layout and its
//! completion record `export.json` (what both sides read and write), how
//! the server's bucket is found from its configuration, and the ids an
//! import derives. [`export`] and [`import`] are the two commands;
//! [`copy`] is the machinery they share (parallel, streamed, limited,
//! checked, resumable copies) and [`progress`] its bar.
//!
//! An export's layout, relative to its root:
//!
//! ```text
//! snapshot.json                              the record, file paths relative to the root
//! files/<region-id>/<family>/<file-id>.sst   every file the snapshot holds
//! export.json                                written last: the export is complete
//! ```

mod copy;
mod export;
mod import;
mod progress;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use shoal_server::ServerConfig;
use shoal_storage::object::{BackendConfig, Bucket, ObjectStoreConfig};
use std::path::PathBuf;

/// The format version of `export.json`.
pub(crate) const EXPORT_FORMAT: u32 = 1;
/// The completion record's name at an export's root.
pub(crate) const EXPORT_JSON: &str = "export.json";
/// The snapshot's record at an export's root.
pub(crate) const SNAPSHOT_JSON: &str = "snapshot.json";
/// The directory of an export's files.
pub(crate) const FILES_DIR: &str = "files";

/// Arguments of `shoal snapshot`.
#[derive(Debug, clap::Args)]
pub struct SnapshotArgs {
    #[command(subcommand)]
    what: SnapshotWhat,
}

#[derive(Debug, clap::Subcommand)]
enum SnapshotWhat {
    /// Copy a snapshot and every file it holds out of the server's bucket
    /// into a directory or bucket prefix of its own (read-only on the
    /// server's bucket; the server may keep running).
    Export(export::ExportArgs),
    /// Copy an export into the server's bucket and register it there as a
    /// snapshot, ready to clone.
    Import(import::ImportArgs),
}

/// Runs `shoal snapshot`.
pub async fn run(args: SnapshotArgs) -> anyhow::Result<()> {
    match args.what {
        SnapshotWhat::Export(a) => export::run(a).await,
        SnapshotWhat::Import(a) => import::run(a).await,
    }
}

/// Where the server's bucket is: its configuration, as `shoal serve` reads
/// it.
#[derive(Debug, clap::Args)]
pub(crate) struct ServerBucketArgs {
    /// The server's TOML configuration (its `[object_store]` section and
    /// `server.data_dir` say where its bucket is).
    #[arg(long, short = 'c')]
    config: Option<PathBuf>,
    /// The server's data directory (overrides `server.data_dir`; the default
    /// bucket is its `objects` directory).
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

impl ServerBucketArgs {
    /// Opens the server's bucket, and says where it is if it is a local
    /// directory. A local one must exist already: nothing is created for a
    /// wrong path.
    pub(crate) async fn open(&self) -> anyhow::Result<(Bucket, Option<PathBuf>)> {
        let mut config = match &self.config {
            Some(p) => ServerConfig::from_file(p)?,
            None => ServerConfig::default(),
        };
        if let Some(d) = &self.data_dir {
            config.server.data_dir = d.clone();
        }
        let objects = config.objects_dir();
        let store = config
            .object_store
            .resolve(&objects)
            .map_err(|(key, message)| anyhow::anyhow!("config key `{key}`: {message}"))?;
        if let BackendConfig::Local(local) = &store.backend
            && !local.root.is_dir()
        {
            bail!(
                "{}: no such directory: not a server's bucket (give the server's --config, \
                 and --data-dir if it was started with one)",
                local.root.display()
            );
        }
        let bucket = Bucket::open(&store)
            .await
            .context("opening the server's bucket")?;
        Ok((bucket, local_root(&store)))
    }
}

/// How objects are copied.
#[derive(Debug, clap::Args)]
pub(crate) struct CopyArgs {
    /// Objects copied at once.
    #[arg(long, default_value_t = 8)]
    parallel: usize,
    /// At most this many bytes copied per second, e.g. `50MiB/s`, `200MB/s`
    /// (default: no limit).
    #[arg(long, value_parser = parse_bandwidth)]
    bandwidth: Option<u64>,
}

impl CopyArgs {
    pub(crate) fn options(&self) -> copy::CopyOptions {
        copy::CopyOptions {
            parallel: self.parallel.max(1),
            bandwidth: self.bandwidth,
        }
    }
}

/// `50MiB/s`, `10MB`, `1048576` → bytes per second.
fn parse_bandwidth(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t
        .strip_suffix("/s")
        .or_else(|| t.strip_suffix("ps"))
        .unwrap_or(t);
    let bytes = t
        .parse::<shoal_server::config::ByteSize>()
        .map_err(|e| format!("{e} (e.g. 50MiB/s)"))?
        .0;
    if bytes == 0 {
        return Err("must be more than 0 bytes per second".into());
    }
    Ok(bytes)
}

/// A place to export to or import from as a store URL: URLs as they are,
/// paths as absolute `file://` URLs (a missing directory is fine).
pub(crate) fn store_url(location: &str) -> anyhow::Result<String> {
    if location.contains("://") {
        return Ok(location.trim_end_matches('/').to_string());
    }
    let path = std::path::Path::new(location);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .context("the current directory")?
            .join(path)
    };
    Ok(format!("file://{}", path.display()))
}

/// Opens the bucket at `url` (its settings from the URL and the
/// environment, as `shoal import` does), and says where it is if it is a
/// local directory.
pub(crate) async fn open_url(url: &str) -> anyhow::Result<(Bucket, Option<PathBuf>)> {
    let config = ObjectStoreConfig::from_url(url)?;
    let bucket = Bucket::open(&config)
        .await
        .with_context(|| format!("opening {url}"))?;
    Ok((bucket, local_root(&config)))
}

/// The directory of a local store.
fn local_root(config: &ObjectStoreConfig) -> Option<PathBuf> {
    match &config.backend {
        BackendConfig::Local(l) => Some(l.root.clone()),
        _ => None,
    }
}

/// `export.json`: what an export holds; its presence means it is complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExportManifest {
    /// Format version ([`EXPORT_FORMAT`]).
    pub format: u32,
    /// The snapshot's name on the server it was exported from.
    pub snapshot: String,
    /// Its id there.
    pub id: String,
    /// The table it was taken of.
    pub table: String,
    /// When it was taken (ms since the epoch).
    pub created_ms: i64,
    /// When the export completed (ms since the epoch).
    pub exported_ms: i64,
    /// Every object of the export but this one, by path.
    pub objects: Vec<ExportedObject>,
}

/// One object of an export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExportedObject {
    /// Its path, relative to the export's root.
    pub path: String,
    /// Its size.
    pub size: u64,
    /// The CRC32C (Castagnoli) of its bytes.
    pub crc32c: u32,
}

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// 128-bit FNV-1a of `parts`, each followed by a separator byte: a stable
/// hash (the same in every Shoal version) to derive ids from.
fn fnv1a128(parts: &[&[u8]]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;
    let mut h = OFFSET;
    for part in parts {
        for &b in part.iter().chain(std::iter::once(&0xff)) {
            h ^= u128::from(b);
            h = h.wrapping_mul(PRIME);
        }
    }
    h
}

/// A ULID of time `time_ms` whose random part is derived from `parts`: the
/// same inputs give the same id, so a repeated import finds its own work.
pub(crate) fn derived_ulid(time_ms: u64, parts: &[&[u8]]) -> ulid::Ulid {
    let random = fnv1a128(parts) & ((1u128 << 80) - 1);
    ulid::Ulid::from_parts(time_ms & ((1 << 48) - 1), random)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn bandwidths_and_locations_parse() {
        assert_eq!(parse_bandwidth("50MiB/s"), Ok(50 << 20));
        assert_eq!(parse_bandwidth("10MB"), Ok(10_000_000));
        assert_eq!(parse_bandwidth("512KiBps"), Ok(512 << 10));
        assert_eq!(parse_bandwidth("1048576"), Ok(1 << 20));
        assert!(parse_bandwidth("0").is_err());
        assert!(parse_bandwidth("fast").is_err());
        assert_eq!(store_url("s3://b/p/").unwrap(), "s3://b/p");
        assert_eq!(store_url("/tmp/x").unwrap(), "file:///tmp/x");
        assert!(store_url("rel").unwrap().starts_with("file:///"));
    }

    #[test]
    fn derived_ids_are_stable_and_distinct() {
        let a = derived_ulid(1_700_000_000_000, &[b"x", b"name"]);
        assert_eq!(a, derived_ulid(1_700_000_000_000, &[b"x", b"name"]));
        assert_ne!(a, derived_ulid(1_700_000_000_000, &[b"x", b"other"]));
        assert_ne!(a, derived_ulid(1_700_000_000_000, &[b"xn", b"ame"]));
        assert_eq!(a.timestamp_ms(), 1_700_000_000_000);
        // Pinned: a changed derivation would strand interrupted imports.
        assert_eq!(fnv1a128(&[b"shoal"]), 0x68ab1238c43c64bf6f4fce3efbdf7bbb);
    }
}
