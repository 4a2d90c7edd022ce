//! `shoal snapshot export NAME --to URL`: a snapshot and every file it
//! holds out of the server's bucket, laid out self-contained at URL.
//!
//! This file owns the export's steps: finding the snapshot in the server's
//! catalog (read from its bucket; nothing there is written), planning the
//! target's objects (each file once, at `files/<region>/<family>/<id>.sst`,
//! and the record with its paths rewritten to those), checking the target
//! (empty, or an interrupted export of the same snapshot to resume, or a
//! complete one), writing `snapshot.json` first, the files through
//! [`super::copy`], and `export.json` last.

use super::copy::{Copier, CopyItem, crc_of_bytes, remove_local_leftovers};
use super::progress::Progress;
use super::{
    CopyArgs, EXPORT_FORMAT, EXPORT_JSON, ExportManifest, ExportedObject, FILES_DIR, SNAPSHOT_JSON,
    ServerBucketArgs, now_ms, open_url, store_url,
};
use crate::import::progress::bytes_shown;
use anyhow::{Context, bail};
use bytes::Bytes;
use shoal_server::catalog::CatalogStore;
use shoal_server::snapshots::SnapshotRecord;
use shoal_storage::object::Bucket;
use std::collections::{BTreeSet, HashMap};

/// Arguments of `shoal snapshot export`.
#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    /// The snapshot to export.
    name: String,
    /// Where to: a directory (path or file:///…), s3://bucket/prefix,
    /// gs://bucket/prefix or az://container/prefix. It must be empty, or
    /// hold an interrupted export of the same snapshot (which this one then
    /// finishes).
    #[arg(long)]
    to: String,
    #[command(flatten)]
    server: ServerBucketArgs,
    #[command(flatten)]
    copy: CopyArgs,
}

/// What the export writes.
struct Plan {
    /// The record as the export holds it.
    record: SnapshotRecord,
    /// Its bytes (`snapshot.json`).
    record_bytes: Bytes,
    /// The files, each once.
    items: Vec<CopyItem>,
}

/// The record with every file at `files/<region>/<family>/<id>.sst` of the
/// export, and the copies that put them there. A file that more than one
/// region reads (a split parent's) is copied once, under the first.
fn plan(source: &SnapshotRecord) -> anyhow::Result<Plan> {
    let mut record = source.clone();
    let mut placed: HashMap<String, String> = HashMap::new();
    let mut items = Vec::new();
    for region in &mut record.regions {
        for (family, files) in &mut region.families {
            for f in files {
                let dst = match placed.get(&f.id) {
                    Some(dst) => dst.clone(),
                    None => {
                        let dst = format!("{FILES_DIR}/{}/{family}/{}.sst", region.id, f.id);
                        placed.insert(f.id.clone(), dst.clone());
                        items.push(CopyItem {
                            src: f.path.clone(),
                            dst: dst.clone(),
                            size: f.size,
                            crc: None,
                        });
                        dst
                    }
                };
                f.path = dst;
            }
        }
    }
    let record_bytes = Bytes::from(serde_json::to_vec_pretty(&record)?);
    Ok(Plan {
        record,
        record_bytes,
        items,
    })
}

/// What the target holds now.
enum Target {
    /// Nothing: a new export.
    Empty,
    /// An interrupted export of this snapshot.
    Partial,
    /// A complete export of this snapshot.
    Complete(ExportManifest),
}

/// Runs `shoal snapshot export`.
pub(crate) async fn run(args: ExportArgs) -> anyhow::Result<()> {
    let (source, _) = args.server.open().await?;
    let catalog = CatalogStore::open(source.clone())
        .await
        .context("reading the server's catalog")?;
    let Some(entry) = catalog.current().snapshot(&args.name).cloned() else {
        let names: Vec<&str> = catalog
            .current()
            .snapshots
            .iter()
            .filter(|s| !s.deleted)
            .map(|s| s.name.as_str())
            .collect();
        bail!(
            "no snapshot {:?} on the server whose bucket is {} ({})",
            args.name,
            source.location(),
            if names.is_empty() {
                "it has none".to_string()
            } else {
                format!("it has: {}", names.join(", "))
            }
        );
    };
    let record = SnapshotRecord::read(&source, &entry.id, &args.name).await?;
    let plan = plan(&record)?;
    let url = store_url(&args.to)?;
    let (target, target_root) = open_url(&url).await?;
    let present: HashMap<String, u64> = target
        .list("")
        .await
        .with_context(|| format!("listing {url}"))?
        .into_iter()
        .map(|o| (o.path, o.size))
        .collect();
    let bytes: u64 = plan.items.iter().map(|i| i.size).sum();
    eprintln!(
        "snapshot {} of table {}: {} regions, {} files, {}",
        record.name,
        record.table.name,
        record.regions.len(),
        plan.items.len(),
        bytes_shown(bytes)
    );
    match check_target(&target, &url, &present, &plan).await? {
        Target::Complete(m) => {
            eprintln!(
                "{url} holds a complete export of snapshot {} already ({} objects): nothing to do",
                m.snapshot,
                m.objects.len() + 1
            );
            return Ok(());
        }
        Target::Partial => eprintln!("{url} holds part of this export: going on with it"),
        Target::Empty => {}
    }
    // The record first: it says which snapshot the objects that follow
    // belong to, so that a re-run knows it may resume. This is the first
    // write: a target that cannot be written fails here, with nothing in it.
    target
        .put(SNAPSHOT_JSON, plan.record_bytes.clone())
        .await
        .with_context(|| format!("cannot write to {url}"))?;
    let back = target
        .get(SNAPSHOT_JSON)
        .await
        .with_context(|| format!("reading back {SNAPSHOT_JSON} from {url}"))?;
    if back != plan.record_bytes {
        bail!("{url}: {SNAPSHOT_JSON} reads back other than it was written");
    }

    let progress = Progress::new("exported", plan.items.len(), bytes);
    progress.start();
    let copier = Copier::new(
        source.clone(),
        target.clone(),
        &args.copy.options(),
        progress.clone(),
    );
    let copied = match copier.copy_all(&plan.items, &present).await {
        Ok(c) => c,
        Err(e) => {
            progress.abandon();
            return Err(e.context(format!(
                "exporting snapshot {} to {url} (run the same command again to go on)",
                record.name
            )));
        }
    };
    progress.finish();
    if let Some(root) = &target_root {
        remove_local_leftovers(root, plan.items.iter().map(|i| i.dst.as_str()));
    }

    let mut objects = vec![ExportedObject {
        path: SNAPSHOT_JSON.to_string(),
        size: plan.record_bytes.len() as u64,
        crc32c: crc_of_bytes(&plan.record_bytes),
    }];
    objects.extend(copied.into_iter().map(|c| ExportedObject {
        path: c.dst,
        size: c.size,
        crc32c: c.crc,
    }));
    objects.sort_by(|a, b| a.path.cmp(&b.path));
    let manifest = ExportManifest {
        format: EXPORT_FORMAT,
        snapshot: record.name.clone(),
        id: record.id.clone(),
        table: record.table.name.clone(),
        created_ms: record.created_ms,
        exported_ms: now_ms(),
        objects,
    };
    let data = Bytes::from(serde_json::to_vec_pretty(&manifest)?);
    target
        .put(EXPORT_JSON, data.clone())
        .await
        .with_context(|| format!("writing {EXPORT_JSON} to {url}"))?;
    if target.get(EXPORT_JSON).await? != data {
        bail!("{url}: {EXPORT_JSON} reads back other than it was written");
    }
    eprintln!(
        "exported snapshot {} (table {}, {} regions, {} files, {}) to {url}",
        record.name,
        record.table.name,
        plan.record.regions.len(),
        plan.items.len(),
        bytes_shown(bytes)
    );
    Ok(())
}

/// What the target holds: nothing, or an export of this snapshot (whole
/// or in part). Anything else is refused before a byte is written.
async fn check_target(
    target: &Bucket,
    url: &str,
    present: &HashMap<String, u64>,
    plan: &Plan,
) -> anyhow::Result<Target> {
    if present.is_empty() {
        return Ok(Target::Empty);
    }
    let not_empty = |why: String| {
        anyhow::anyhow!(
            "{url} is not empty ({why}): export into a new or empty directory or prefix \
             (an interrupted export of the same snapshot there is finished instead)"
        )
    };
    let id = &plan.record.id;
    if present.contains_key(EXPORT_JSON) {
        let data = target.get(EXPORT_JSON).await?;
        return match serde_json::from_slice::<ExportManifest>(&data) {
            Ok(m) if &m.id == id => {
                for o in &m.objects {
                    if present.get(&o.path) != Some(&o.size) {
                        return Err(not_empty(format!(
                            "a complete export of this snapshot whose {} is missing or of \
                             another size",
                            o.path
                        )));
                    }
                }
                Ok(Target::Complete(m))
            }
            Ok(m) => Err(not_empty(format!(
                "it holds an export of snapshot {} (id {})",
                m.snapshot, m.id
            ))),
            Err(_) => Err(not_empty(format!(
                "it holds an {EXPORT_JSON} of another kind"
            ))),
        };
    }
    if !present.contains_key(SNAPSHOT_JSON) {
        let first = present.keys().min().cloned().unwrap_or_default();
        return Err(not_empty(format!("it holds {first}")));
    }
    let data = target.get(SNAPSHOT_JSON).await?;
    match serde_json::from_slice::<SnapshotRecord>(&data) {
        Ok(r) if &r.id == id => {}
        Ok(r) => {
            return Err(not_empty(format!(
                "it holds part of an export of snapshot {} (id {})",
                r.name, r.id
            )));
        }
        Err(_) => {
            return Err(not_empty(format!(
                "it holds a {SNAPSHOT_JSON} that is not a snapshot's record"
            )));
        }
    }
    let expected: BTreeSet<&str> = plan.items.iter().map(|i| i.dst.as_str()).collect();
    if let Some(other) = present
        .keys()
        .filter(|p| p.as_str() != SNAPSHOT_JSON && !expected.contains(p.as_str()))
        .min()
    {
        return Err(not_empty(format!(
            "part of an export of this snapshot, and {other}, which is not"
        )));
    }
    Ok(Target::Partial)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use shoal_server::snapshots::{FileRecord, SnapshotRegion};
    use std::collections::BTreeMap;

    fn file(id: &str, path: &str) -> FileRecord {
        FileRecord {
            id: id.into(),
            path: path.into(),
            size: 10,
            cells: 1,
            max_seq: 1,
            min_timestamp: 0,
            max_timestamp: 0,
            first_row: Bytes::new(),
            last_row: Bytes::new(),
        }
    }

    #[test]
    fn every_file_once_under_files_and_the_record_points_there() {
        let parent = file(
            "01J0000000000000000000000A",
            "data/0a/t/p/cf/01J0000000000000000000000A.sst",
        );
        let region = |id: &str, own: FileRecord| SnapshotRegion {
            id: id.into(),
            start_row: Bytes::new(),
            end_row: Bytes::new(),
            read_point: 1,
            families: BTreeMap::from([("cf".to_string(), vec![parent.clone(), own])]),
        };
        let record = SnapshotRecord {
            format: 1,
            name: "s".into(),
            id: "id".into(),
            created_ms: 0,
            table: shoal_server::catalog::TableRecord {
                name: "t".into(),
                id: "t".into(),
                enabled: true,
                families: vec![],
                regions: vec![],
                split_parents: vec![],
                holds: vec![],
                reset_ms: 0,
            },
            regions: vec![
                region(
                    "r1",
                    file(
                        "01J0000000000000000000000B",
                        "data/0a/t/r1/cf/01J0000000000000000000000B.sst",
                    ),
                ),
                region(
                    "r2",
                    file(
                        "01J0000000000000000000000C",
                        "snapshots/id/files/r2/cf/01J0000000000000000000000C.sst",
                    ),
                ),
            ],
            pause_micros: 0,
        };
        let p = plan(&record).unwrap();
        let dsts: Vec<&str> = p.items.iter().map(|i| i.dst.as_str()).collect();
        assert_eq!(
            dsts,
            [
                "files/r1/cf/01J0000000000000000000000A.sst",
                "files/r1/cf/01J0000000000000000000000B.sst",
                "files/r2/cf/01J0000000000000000000000C.sst"
            ]
        );
        let paths: Vec<&str> = p.record.files().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "files/r1/cf/01J0000000000000000000000A.sst",
                "files/r1/cf/01J0000000000000000000000B.sst",
                "files/r1/cf/01J0000000000000000000000A.sst",
                "files/r2/cf/01J0000000000000000000000C.sst"
            ]
        );
    }
}
