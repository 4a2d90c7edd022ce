//! `shoal import hbase-snapshot` and `shoal bulkload`: HBase's files into
//! a running Shoal without reading a row through a client.
//!
//! This module owns the orchestration: reading the snapshot's manifest (or
//! listing a bulk-load directory), creating the table with HBase's schema
//! and region boundaries, sending each region its files as one bulk load
//! (the server reads and converts them and commits them atomically per
//! region), a progress line, and the closing verification. Resuming after a
//! kill is running the same command again with `--resume`: every load
//! carries a key the region remembers, so what was committed is not
//! loaded twice.

use anyhow::{Context, bail};
use shoal_client::proto as pb;
use shoal_client::{Client, Table};
use shoal_import::{FamilySettings, HBaseSnapshot, HFileFacts, SnapshotRegion, peek};
use shoal_storage::object::{Bucket, ObjectStoreConfig};
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Arguments of `shoal import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    what: ImportWhat,
}

#[derive(Debug, clap::Subcommand)]
enum ImportWhat {
    /// Import an HBase snapshot: its schema, region boundaries and HFiles.
    HbaseSnapshot(SnapshotArgs),
}

/// Arguments of `shoal import hbase-snapshot`.
#[derive(Debug, clap::Args)]
pub struct SnapshotArgs {
    /// Where HBase's files are: its root directory (a path or file:///…)
    /// or an ExportSnapshot target (s3://bucket/prefix, gs://…, az://…).
    location: String,
    /// The snapshot's name.
    snapshot: String,
    /// The Shoal table to create (default: the snapshot's table name).
    #[arg(long)]
    table: Option<String>,
    /// Go on with an interrupted import into the existing table.
    #[arg(long)]
    resume: bool,
    /// Regions loaded at once.
    #[arg(long, default_value_t = 2)]
    parallel: usize,
    #[command(flatten)]
    server: ServerArgs,
}

/// Arguments of `shoal bulkload`.
#[derive(Debug, clap::Args)]
pub struct BulkloadArgs {
    /// A directory of HFiles as HBase's HFileOutputFormat2 writes it: one
    /// subdirectory per column family (a path, file:///…, s3://…).
    dir: String,
    /// The table to load into (it must exist, with those families).
    table: String,
    #[command(flatten)]
    server: ServerArgs,
}

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

/// Runs `shoal import`.
pub async fn run(args: ImportArgs) -> anyhow::Result<()> {
    match args.what {
        ImportWhat::HbaseSnapshot(a) => import_snapshot(a).await,
    }
}

/// A location as a store URL: paths become absolute `file://` URLs.
fn location_url(location: &str) -> anyhow::Result<String> {
    if location.contains("://") {
        return Ok(location.trim_end_matches('/').to_string());
    }
    let path = std::fs::canonicalize(location)
        .with_context(|| format!("{location}: no such directory"))?;
    Ok(format!("file://{}", path.display()))
}

async fn open(url: &str) -> anyhow::Result<Bucket> {
    let config = ObjectStoreConfig::from_url(url)?;
    Ok(Bucket::open(&config).await?)
}

async fn import_snapshot(args: SnapshotArgs) -> anyhow::Result<()> {
    let url = location_url(&args.location)?;
    let bucket = open(&url).await?;
    let snap = HBaseSnapshot::read(&bucket, &args.snapshot).await?;
    let table_name = args.table.clone().unwrap_or_else(|| {
        if snap.table.namespace == "default" {
            snap.table.qualifier.clone()
        } else {
            format!("{}_{}", snap.table.namespace, snap.table.qualifier)
        }
    });
    let files: usize = snap.regions.iter().map(|r| r.files.len()).sum();
    eprintln!(
        "snapshot {} of table {}: {} regions, {} families, {} store files, {} of HFiles",
        snap.name,
        snap.table.full(),
        snap.regions.len(),
        snap.families.len(),
        files,
        bytes_shown(snap.input_bytes())
    );
    for f in &snap.families {
        for note in family_notes(f) {
            eprintln!("note: family {}: {note}", f.name);
        }
    }
    let paths: Vec<String> = snap
        .regions
        .iter()
        .flat_map(|r| r.files.iter().map(|f| f.path.clone()))
        .collect();
    let facts = check_inputs(&bucket, paths).await?;
    let client = args.server.connect().await?;
    create_or_resume(&client, &table_name, &snap, args.resume).await?;
    let table = client.table(table_name.clone());
    let progress = Progress::new(snap.regions.len(), snap.input_bytes());
    let results =
        load_regions(&table, &snap, &facts, &url, args.parallel.max(1), &progress).await?;
    progress.finish();
    verify(&table, &snap, &results).await?;
    eprintln!("imported snapshot {} into table {table_name}", snap.name);
    Ok(())
}

/// What HBase's family settings become here, when not the same.
fn family_notes(f: &FamilySettings) -> Vec<String> {
    let mut notes = Vec::new();
    if compression(&f.compression) != pb::Compression::None
        && !matches!(f.compression.as_str(), "LZ4" | "ZSTD")
    {
        let ours = match compression(&f.compression) {
            pb::Compression::Zstd => "ZSTD",
            _ => "LZ4",
        };
        notes.push(format!("compression {} is stored as {ours}", f.compression));
    }
    if f.keep_deleted_cells != "FALSE" {
        notes.push(format!(
            "KEEP_DELETED_CELLS={} is not kept (docs/hbase-client.md)",
            f.keep_deleted_cells
        ));
    }
    notes
}

fn compression(hbase: &str) -> pb::Compression {
    match hbase {
        "NONE" => pb::Compression::None,
        "ZSTD" | "GZ" | "BZIP2" | "BROTLI" => pb::Compression::Zstd,
        _ => pb::Compression::Lz4,
    }
}

/// HBase's family settings as Shoal's.
fn family_schema(f: &FamilySettings) -> pb::FamilySchema {
    let bloom = match f.bloom.as_str() {
        "NONE" => pb::BloomType::None,
        "ROWCOL" => pb::BloomType::Rowcol,
        _ => pb::BloomType::Row,
    };
    pb::FamilySchema {
        name: f.name.clone(),
        max_versions: Some(f.max_versions),
        min_versions: Some(f.min_versions),
        ttl_seconds: Some(f.ttl_seconds),
        block_size: Some(f.block_size),
        compression: compression(&f.compression) as i32,
        bloom: bloom as i32,
        in_memory: Some(f.in_memory),
        ..pb::FamilySchema::default()
    }
}

/// Creates the table with the snapshot's families and boundaries, or with
/// `--resume` checks the existing one has them.
async fn create_or_resume(
    client: &Client,
    name: &str,
    snap: &HBaseSnapshot,
    resume: bool,
) -> anyhow::Result<()> {
    let admin = client.admin();
    let families: Vec<pb::FamilySchema> = snap.families.iter().map(family_schema).collect();
    if admin.exists(name).await? {
        if !resume {
            bail!(
                "table {name} exists; if it is an interrupted import of this snapshot, run \
                 the same command with --resume (or drop the table to start over)"
            );
        }
        let described = admin.describe(name).await?;
        for f in &snap.families {
            if !described.families.iter().any(|d| d.name == f.name) {
                bail!(
                    "table {name} has no family {}: not an import of this snapshot",
                    f.name
                );
            }
        }
        eprintln!("resuming the import into table {name}");
        return Ok(());
    }
    let splits: Vec<Vec<u8>> = snap.split_keys().iter().map(|k| k.to_vec()).collect();
    admin.create_table(name, families, splits).await?;
    eprintln!("created table {name} with {} regions", snap.regions.len());
    Ok(())
}

/// What loading one snapshot region did.
#[derive(Debug, Default, Clone)]
struct RegionResult {
    cells: u64,
    duplicates: u64,
    tagged: u64,
    already: bool,
}

/// Reads every input's trailer and index before anything is created or
/// loaded: a file that is not a readable HFile stops the import here.
async fn check_inputs(
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
fn by_age(files: &mut [pb::BulkLoadFile], facts: &HashMap<String, HFileFacts>) {
    files.sort_by_key(|f| facts.get(&f.path).and_then(|x| x.max_seq_id).unwrap_or(0));
}

async fn load_regions(
    table: &Table,
    snap: &HBaseSnapshot,
    facts: &HashMap<String, HFileFacts>,
    url: &str,
    parallel: usize,
    progress: &Progress,
) -> anyhow::Result<Vec<RegionResult>> {
    use futures::StreamExt;
    let results = futures::stream::iter(snap.regions.iter().map(|region| async move {
        let r = load_region(table, &snap.name, region, facts, url).await;
        progress.region_done(region.files.iter().map(|f| f.size).sum());
        r
    }))
    .buffered(parallel)
    .collect::<Vec<_>>()
    .await;
    results.into_iter().collect()
}

/// Sends one snapshot region's files; goes on past a region end when the
/// table's regions are narrower (a split during the import).
async fn load_region(
    table: &Table,
    snapshot: &str,
    region: &SnapshotRegion,
    facts: &HashMap<String, HFileFacts>,
    url: &str,
) -> anyhow::Result<RegionResult> {
    let mut result = RegionResult::default();
    if region.files.is_empty() {
        return Ok(result);
    }
    let mut files: Vec<pb::BulkLoadFile> = region
        .files
        .iter()
        .map(|f| pb::BulkLoadFile {
            family: f.family.clone(),
            location: url.to_string(),
            path: f.path.clone(),
        })
        .collect();
    by_age(&mut files, facts);
    let mut start = region.start.to_vec();
    loop {
        let key = format!(
            "hbase-snapshot:{snapshot}:{}:{}",
            region.encoded,
            hex(&start)
        );
        let answer = table
            .bulk_load(pb::BulkLoadRequest {
                table: String::new(),
                start_row: start.clone(),
                end_row: region.end.to_vec(),
                files: files.clone(),
                load_key: key,
            })
            .await
            .with_context(|| format!("loading region {}", region.encoded))?;
        result.cells += answer.cells;
        result.duplicates += answer.duplicates;
        result.tagged += answer.tagged_cells;
        result.already |= answer.already_loaded;
        let end = answer.region_end;
        if end.is_empty() || (!region.end.is_empty() && end[..] >= region.end[..]) {
            return Ok(result);
        }
        start = end;
    }
}

/// Reads every row back (all versions) and prints what was loaded.
async fn verify(
    table: &Table,
    snap: &HBaseSnapshot,
    results: &[RegionResult],
) -> anyhow::Result<()> {
    use futures::TryStreamExt;
    let max_versions = snap
        .families
        .iter()
        .map(|f| f.max_versions)
        .max()
        .unwrap_or(1);
    eprintln!(
        "{:<34} {:>12} {:>12} {:>10}",
        "region (start row)", "cells loaded", "cells read", "rows read"
    );
    let (mut loaded, mut visible) = (0u64, 0u64);
    for (region, r) in snap.regions.iter().zip(results) {
        let mut scan = shoal_client::Scan::new().versions(max_versions);
        if !region.start.is_empty() {
            scan = scan.start(&region.start);
        }
        if !region.end.is_empty() {
            scan = scan.stop(&region.end);
        }
        let rows: Vec<shoal_client::proto::Row> = table.scan(scan).try_collect().await?;
        let cells: u64 = rows.iter().map(|r| r.cells.len() as u64).sum();
        let shown = if r.already {
            "(earlier)".to_string()
        } else {
            r.cells.to_string()
        };
        eprintln!(
            "{:<34} {:>12} {:>12} {:>10}",
            truncate(&String::from_utf8_lossy(&region.start), 34),
            shown,
            cells,
            rows.len()
        );
        loaded += r.cells;
        visible += cells;
    }
    let tagged: u64 = results.iter().map(|r| r.tagged).sum();
    eprintln!(
        "{loaded} cells loaded (delete markers and versions included); {visible} cells visible \
         to reads (deletes, TTLs and version limits applied)"
    );
    if tagged > 0 {
        eprintln!("note: {tagged} cells carried HBase tags, which Shoal does not keep");
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn bytes_shown(n: u64) -> String {
    const MIB: f64 = (1u64 << 20) as f64;
    if n >= 1 << 30 {
        format!("{:.2} GiB", n as f64 / MIB / 1024.0)
    } else {
        format!("{:.1} MiB", n as f64 / MIB)
    }
}

/// A progress line on stderr (rewritten in place on a terminal, one line
/// per 10 % otherwise).
struct Progress {
    regions: usize,
    bytes: u64,
    done_regions: AtomicU64,
    done_bytes: AtomicU64,
    started: Instant,
    tty: bool,
    last_tenth: AtomicU64,
}

impl Progress {
    fn new(regions: usize, bytes: u64) -> Arc<Progress> {
        Arc::new(Progress {
            regions,
            bytes,
            done_regions: AtomicU64::new(0),
            done_bytes: AtomicU64::new(0),
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            last_tenth: AtomicU64::new(0),
        })
    }

    fn region_done(&self, bytes: u64) {
        let regions = self.done_regions.fetch_add(1, Ordering::Relaxed) + 1;
        let done = self.done_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let line = format!(
            "{regions}/{} regions, {} of {} ({:.1} MiB/s)",
            self.regions,
            bytes_shown(done),
            bytes_shown(self.bytes),
            done as f64 / secs / (1u64 << 20) as f64
        );
        if self.tty {
            eprint!("\r{line}   ");
            let _ = std::io::stderr().flush();
        } else {
            let tenth = regions * 10 / (self.regions.max(1) as u64);
            if self.last_tenth.fetch_max(tenth, Ordering::Relaxed) < tenth {
                eprintln!("{line}");
            }
        }
    }

    fn finish(&self) {
        if self.tty {
            eprintln!();
        }
        eprintln!(
            "loaded {} regions in {:.1} s",
            self.regions,
            self.started.elapsed().as_secs_f64()
        );
    }
}

/// Runs `shoal bulkload DIR TABLE`: every HFile under DIR/<family>/ into
/// the table; each region takes, in one commit, the cells of the files
/// whose rows reach it (read from each file's index first).
pub async fn bulkload(args: BulkloadArgs) -> anyhow::Result<()> {
    let url = location_url(&args.dir)?;
    let bucket = open(&url).await?;
    let mut files: Vec<pb::BulkLoadFile> = Vec::new();
    for o in bucket.list("").await? {
        let Some((family, name)) = o.path.split_once('/') else {
            continue;
        };
        if name.contains('/') || name.starts_with('.') || name.starts_with('_') {
            continue;
        }
        files.push(pb::BulkLoadFile {
            family: family.to_string(),
            location: url.clone(),
            path: o.path.clone(),
        });
    }
    if files.is_empty() {
        bail!("{url}: no HFiles under <family>/ directories");
    }
    let facts = check_inputs(&bucket, files.iter().map(|f| f.path.clone()).collect()).await?;
    for f in &files {
        let family = &facts[&f.path].family;
        if !family.is_empty() && family[..] != *f.family.as_bytes() {
            bail!(
                "{}: holds family {:?} but lies in directory {:?}",
                f.path,
                String::from_utf8_lossy(family),
                f.family
            );
        }
    }
    by_age(&mut files, &facts);
    let client = args.server.connect().await?;
    let table = client.table(args.table.clone());
    let regions = client.admin().describe(&args.table).await?.regions;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let (mut loads, mut cells) = (0u64, 0u64);
    for region in &regions {
        let mine: Vec<pb::BulkLoadFile> = files
            .iter()
            .filter(|f| facts[&f.path].overlaps(&region.start_row, &region.end_row))
            .cloned()
            .collect();
        if mine.is_empty() {
            continue;
        }
        let mut start = region.start_row.to_vec();
        loop {
            let answer = table
                .bulk_load(pb::BulkLoadRequest {
                    table: String::new(),
                    start_row: start.clone(),
                    end_row: region.end_row.to_vec(),
                    files: mine.clone(),
                    load_key: format!("bulkload:{url}:{stamp}:{}", hex(&start)),
                })
                .await?;
            loads += 1;
            cells += answer.cells;
            let end = answer.region_end;
            if end.is_empty() || (!region.end_row.is_empty() && end[..] >= region.end_row[..]) {
                break;
            }
            start = end;
        }
    }
    eprintln!(
        "loaded {} files into {loads} regions of {}: {cells} cells",
        files.len(),
        args.table
    );
    Ok(())
}
