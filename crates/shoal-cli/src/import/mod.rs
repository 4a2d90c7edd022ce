//! `shoal import hbase-snapshot`: an HBase snapshot into a running Shoal
//! without reading a row through a client.
//!
//! This module owns the command: reading the snapshot's manifest, checking
//! every input, creating the table with HBase's schema and region
//! boundaries, then handing over to [`load`] (one bulk load per region; the
//! server reads and converts the files and commits them atomically per
//! region) and [`verify`]. Resuming after a kill is running the same
//! command again with `--resume`: every load carries a key the region
//! remembers, so what was committed is not loaded twice. [`inputs`] holds
//! what `shoal bulkload` shares: locations, server arguments, the input
//! check.

pub(crate) mod inputs;
mod load;
pub(crate) mod progress;
mod verify;

use anyhow::{Context, bail};
use inputs::{ServerArgs, check_inputs, location_url, open};
use load::load_regions;
use progress::{Progress, bytes_shown};
use shoal_client::Client;
use shoal_client::proto as pb;
use shoal_import::{FamilySettings, HBaseSnapshot};

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

/// Makes the namespace of `table` (`ns:t`) unless it exists, as HBase's
/// snapshot restore into a new cluster would need it.
async fn ensure_namespace(client: &Client, table: &str) -> anyhow::Result<()> {
    let Some((ns, _)) = table.split_once(':') else {
        return Ok(());
    };
    let admin = client.admin();
    if admin.describe_namespace(ns).await.is_ok() {
        return Ok(());
    }
    admin
        .create_namespace(ns, Default::default())
        .await
        .with_context(|| format!("making namespace {ns} for table {table}"))?;
    eprintln!("made namespace {ns}");
    Ok(())
}

/// Runs `shoal import`.
pub async fn run(args: ImportArgs) -> anyhow::Result<()> {
    match args.what {
        ImportWhat::HbaseSnapshot(a) => import_snapshot(a).await,
    }
}

async fn import_snapshot(args: SnapshotArgs) -> anyhow::Result<()> {
    let url = location_url(&args.location)?;
    let bucket = open(&url).await?;
    let snap = HBaseSnapshot::read(&bucket, &args.snapshot).await?;
    let table_name = args.table.clone().unwrap_or_else(|| snap.table.full());
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
    ensure_namespace(&client, &table_name).await?;
    create_or_resume(&client, &table_name, &snap, args.resume).await?;
    let table = client.table(table_name.clone());
    let progress = Progress::new(snap.regions.len(), snap.input_bytes());
    let results =
        load_regions(&table, &snap, &facts, &url, args.parallel.max(1), &progress).await?;
    progress.finish();
    verify::verify(&table, &snap, &results).await?;
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
        keep_deleted_cells: match f.keep_deleted_cells.to_ascii_uppercase().as_str() {
            "TRUE" => pb::KeepDeletedCells::True,
            "TTL" => pb::KeepDeletedCells::Ttl,
            _ => pb::KeepDeletedCells::False,
        } as i32,
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
