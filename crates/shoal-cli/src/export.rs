//! `shoal export hfiles`: a table's cells out of Shoal as HBase HFiles, for HBase's own
//! bulk load (`hbase completebulkload DIR TABLE`, i.e. `BulkLoadHFilesTool`): no lock-in.
//!
//! This module owns the export: reading the table's schema and regions, scanning each
//! region with every version the families keep (through the client, as any reader
//! would), writing one HFile per region and family under `DIR/<family>/` with
//! `shoal_hfile::HFileWriter` (so HBase's tool has nothing to split), a progress line and
//! the summary. A client scan sees no delete markers and no cells they hide: the export
//! holds what reads see, as Puts.

use crate::import::inputs::ServerArgs;
use anyhow::{Context, bail};
use shoal_client::proto as pb;
use shoal_client::{Scan, Table};
use shoal_hfile::{Compression, HFileSummary, HFileWriter, HFileWriterOptions};
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `shoal export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    #[command(subcommand)]
    what: ExportWhat,
}

#[derive(Debug, clap::Subcommand)]
enum ExportWhat {
    /// Write a table as HBase HFiles (DIR/<family>/<file>), one file per region and
    /// family, ready for HBase's `completebulkload` (BulkLoadHFilesTool).
    Hfiles(HfilesArgs),
}

/// Arguments of `shoal export hfiles`.
#[derive(Debug, clap::Args)]
pub struct HfilesArgs {
    /// The table to export.
    #[arg(long)]
    table: String,
    /// The directory to write (created; it must be empty if it exists).
    #[arg(long)]
    to: PathBuf,
    /// Block compression of the HFiles: none, gz or snappy (the HBase servers that load
    /// them must have the codec; gz and none need nothing).
    #[arg(long, default_value = "none", value_parser = ["none", "gz", "snappy"])]
    compression: String,
    #[command(flatten)]
    server: ServerArgs,
}

/// Runs `shoal export`.
pub async fn run(args: ExportArgs) -> anyhow::Result<()> {
    match args.what {
        ExportWhat::Hfiles(a) => export_hfiles(a).await,
    }
}

fn codec(name: &str) -> Compression {
    match name {
        "gz" => Compression::Gz,
        "snappy" => Compression::Snappy,
        _ => Compression::None,
    }
}

/// Creates `dir`, or accepts it if it exists and is empty.
fn prepare_dir(dir: &Path) -> anyhow::Result<()> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "{}: the target directory is not empty (export into a new or empty directory)",
                    dir.display()
                );
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", dir.display())),
    }
}

/// Totals of the export.
#[derive(Default)]
struct Totals {
    files: u64,
    cells: u64,
    bytes: u64,
    rows: u64,
}

async fn export_hfiles(args: HfilesArgs) -> anyhow::Result<()> {
    let client = args.server.connect().await?;
    let described = client
        .admin()
        .describe(&args.table)
        .await
        .with_context(|| format!("table {}", args.table))?;
    prepare_dir(&args.to)?;
    let mut regions = described.regions.clone();
    regions.sort_by(|a, b| a.start_row.cmp(&b.start_row));
    let versions = described
        .families
        .iter()
        .map(|f| f.max_versions.unwrap_or(1))
        .max()
        .unwrap_or(1)
        .max(1);
    let families: BTreeMap<Vec<u8>, &pb::FamilySchema> = described
        .families
        .iter()
        .map(|f| (f.name.as_bytes().to_vec(), f))
        .collect();
    eprintln!(
        "exporting table {}: {} regions, {} families, up to {versions} versions per column",
        args.table,
        regions.len(),
        families.len()
    );
    let table = client.table(args.table.clone());
    let started = Instant::now();
    let mut totals = Totals::default();
    let mut progress = Progress::new(regions.len());
    for region in &regions {
        let r = export_region(&table, region, versions, &families, &args)
            .await
            .with_context(|| format!("exporting region {}", region.id))?;
        totals.files += r.files;
        totals.cells += r.cells;
        totals.bytes += r.bytes;
        totals.rows += r.rows;
        progress.region_done(&totals);
    }
    progress.finish();
    eprintln!(
        "exported table {} to {}: {} files, {} rows, {} cells, {} bytes in {:.1} s",
        args.table,
        args.to.display(),
        totals.files,
        totals.rows,
        totals.cells,
        totals.bytes,
        started.elapsed().as_secs_f64()
    );
    eprintln!("to load into HBase, create the table there (same families and splits):");
    eprintln!(
        "  hbase shell> {}",
        hbase_create(&args.table, &described.families, &regions)
    );
    eprintln!(
        "then: hbase completebulkload {} {}",
        args.to.display(),
        args.table
    );
    Ok(())
}

/// The HBase shell command creating a table like this one: its families with their
/// versions and TTL, pre-split at its region boundaries.
fn hbase_create(table: &str, families: &[pb::FamilySchema], regions: &[pb::RegionInfo]) -> String {
    let mut out = format!("create {}", ruby_string(table.as_bytes()));
    for f in families {
        out.push_str(&format!(
            ", {{NAME => {}, VERSIONS => {}",
            ruby_string(f.name.as_bytes()),
            f.max_versions.unwrap_or(1)
        ));
        if let Some(ttl) = f.ttl_seconds.filter(|t| *t > 0) {
            out.push_str(&format!(", TTL => {ttl}"));
        }
        out.push('}');
    }
    let splits: Vec<String> = regions
        .iter()
        .filter(|r| !r.start_row.is_empty())
        .map(|r| ruby_string(&r.start_row))
        .collect();
    if !splits.is_empty() {
        out.push_str(&format!(", SPLITS => [{}]", splits.join(", ")));
    }
    out
}

/// A double-quoted Ruby string: printable ASCII as is, everything else as `\xNN`.
fn ruby_string(b: &[u8]) -> String {
    let mut out = String::from("\"");
    for &c in b {
        match c {
            b'"' | b'\\' | b'#' => out.push_str(&format!("\\{}", c as char)),
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push('"');
    out
}

/// One HFile being written for one family of one region.
struct OpenFile {
    writer: HFileWriter<BufWriter<std::fs::File>>,
    temp: PathBuf,
    path: PathBuf,
}

/// Scans one region and writes its families' files.
async fn export_region(
    table: &Table,
    region: &pb::RegionInfo,
    versions: u32,
    families: &BTreeMap<Vec<u8>, &pb::FamilySchema>,
    args: &HfilesArgs,
) -> anyhow::Result<Totals> {
    let mut scan = Scan::new().versions(versions);
    if !region.start_row.is_empty() {
        scan = scan.start(&region.start_row);
    }
    if !region.end_row.is_empty() {
        scan = scan.stop(&region.end_row);
    }
    let mut scanner = table.scanner(scan);
    let mut open: BTreeMap<Vec<u8>, OpenFile> = BTreeMap::new();
    let mut totals = Totals::default();
    while let Some(mut row) = scanner.next().await? {
        totals.rows += 1;
        // HBase's order within a row: family, qualifier, newest first.
        row.cells.sort_by(|a, b| {
            (&a.family, &a.qualifier)
                .cmp(&(&b.family, &b.qualifier))
                .then(b.timestamp.cmp(&a.timestamp))
        });
        for c in &row.cells {
            let file = match open.get_mut(c.family.as_ref()) {
                Some(f) => f,
                None => {
                    let block_size = families
                        .get(c.family.as_ref())
                        .and_then(|f| f.block_size)
                        .unwrap_or(64 * 1024) as usize;
                    let f = open_file(&args.to, &c.family, block_size, codec(&args.compression))?;
                    open.entry(c.family.to_vec()).or_insert(f)
                }
            };
            file.writer
                .put(&row.row, &c.family, &c.qualifier, c.timestamp, &c.value)
                .with_context(|| format!("writing {}", file.path.display()))?;
        }
    }
    for (_, f) in open {
        let s: HFileSummary = f
            .writer
            .finish()
            .with_context(|| format!("writing {}", f.path.display()))?;
        std::fs::rename(&f.temp, &f.path)
            .with_context(|| format!("renaming {} to {}", f.temp.display(), f.path.display()))?;
        totals.files += 1;
        totals.cells += s.cells;
        totals.bytes += s.bytes;
    }
    Ok(totals)
}

/// Opens `DIR/<family>/.<name>.tmp` for a new HFile, named `<name>` once complete (HBase's
/// bulk load skips names starting with a dot).
fn open_file(
    dir: &Path,
    family: &[u8],
    block_size: usize,
    compression: Compression,
) -> anyhow::Result<OpenFile> {
    let family_name = std::str::from_utf8(family)
        .ok()
        .filter(|f| !f.is_empty() && !f.contains(['/', '\\']) && !f.starts_with('.'))
        .with_context(|| {
            format!("family {family:?} cannot be a directory name (HBase's families are printable)")
        })?;
    let family_dir = dir.join(family_name);
    std::fs::create_dir_all(&family_dir)
        .with_context(|| format!("creating {}", family_dir.display()))?;
    let name = file_name();
    let path = family_dir.join(&name);
    let temp = family_dir.join(format!(".{name}.tmp"));
    let out =
        std::fs::File::create(&temp).with_context(|| format!("creating {}", temp.display()))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let options = HFileWriterOptions {
        block_size: block_size.max(1),
        compression,
        create_time_ms: now,
        bulkload_time_ms: Some(now),
        ..HFileWriterOptions::default()
    };
    let writer = HFileWriter::new(BufWriter::with_capacity(1 << 20, out), options)?;
    Ok(OpenFile { writer, temp, path })
}

/// 32 random hex digits, as HBase names store files.
fn file_name() -> String {
    let state = std::collections::hash_map::RandomState::new();
    let mut a = state.build_hasher();
    a.write_u64(1);
    let mut b = state.build_hasher();
    b.write_u64(2);
    format!("{:016x}{:016x}", a.finish(), b.finish())
}

/// A progress line on stderr: rewritten in place on a terminal, one line per 10 % of
/// the regions otherwise.
struct Progress {
    regions: usize,
    done: usize,
    tty: bool,
    last_tenth: usize,
    started: Instant,
}

impl Progress {
    fn new(regions: usize) -> Progress {
        Progress {
            regions,
            done: 0,
            tty: std::io::stderr().is_terminal(),
            last_tenth: 0,
            started: Instant::now(),
        }
    }

    fn region_done(&mut self, t: &Totals) {
        self.done += 1;
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let line = format!(
            "{}/{} regions, {} cells, {:.1} MiB written ({:.0} cells/s)",
            self.done,
            self.regions,
            t.cells,
            t.bytes as f64 / (1u64 << 20) as f64,
            t.cells as f64 / secs
        );
        if self.tty {
            eprint!("\r{line}   ");
            let _ = std::io::stderr().flush();
        } else {
            let tenth = self.done * 10 / self.regions.max(1);
            if tenth > self.last_tenth {
                self.last_tenth = tenth;
                eprintln!("{line}");
            }
        }
    }

    fn finish(&self) {
        if self.tty {
            eprintln!();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_empty_target_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        prepare_dir(dir.path()).expect("empty is fine");
        let fresh = dir.path().join("new/deeper");
        prepare_dir(&fresh).expect("created");
        assert!(fresh.is_dir());
        std::fs::write(dir.path().join("x"), b"x").expect("write");
        let e = prepare_dir(dir.path()).expect_err("not empty");
        assert!(e.to_string().contains("not empty"), "{e}");
    }

    #[test]
    fn hbase_create_statement() {
        let families = vec![
            pb::FamilySchema {
                name: "a".into(),
                max_versions: Some(3),
                ..Default::default()
            },
            pb::FamilySchema {
                name: "b".into(),
                max_versions: Some(5),
                ttl_seconds: Some(60),
                ..Default::default()
            },
        ];
        let region = |start: &[u8]| pb::RegionInfo {
            start_row: start.to_vec(),
            ..Default::default()
        };
        let regions = vec![region(b""), region(b"h"), region(b"p\x00\"#")];
        assert_eq!(
            hbase_create("t", &families, &regions),
            r#"create "t", {NAME => "a", VERSIONS => 3}, {NAME => "b", VERSIONS => 5, TTL => 60}, SPLITS => ["h", "p\x00\"\#"]"#
        );
    }

    #[test]
    fn file_names_are_hex_and_distinct() {
        let (a, b) = (file_name(), file_name());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
