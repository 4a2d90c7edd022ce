//! `shoal snapshot import URL`: an export into the server's bucket, then
//! named there as a snapshot, ready to clone.
//!
//! This file owns the import's steps: checking the export before anything
//! is written (`export.json` present, every object it lists there with its
//! size, the record's CRC32C and its every file listed), deriving the new
//! snapshot's id and its files' ids (from `export.json` and the name, so
//! that running the same command again finds the objects it already
//! copied: no state is kept anywhere else), copying the files to
//! `snapshots/<id>/files/<region>/<family>/<file-id>.sst` through
//! [`super::copy`] (every source object's CRC32C checked against
//! `export.json` on the way), writing the record to
//! `snapshots/<id>/snapshot.json`, and asking the server to register it
//! (`RegisterSnapshot`).

use super::copy::{Copier, CopyItem, Damaged, crc_of_bytes, remove_local_leftovers};
use super::progress::Progress;
use super::{
    CopyArgs, EXPORT_FORMAT, EXPORT_JSON, ExportManifest, FILES_DIR, SNAPSHOT_JSON,
    ServerBucketArgs, derived_ulid, open_url, store_url,
};
use crate::import::inputs::ServerArgs;
use crate::import::progress::bytes_shown;
use anyhow::{Context, bail};
use bytes::Bytes;
use shoal_server::catalog::CatalogStore;
use shoal_server::snapshots::{SnapshotRecord, validate_snapshot_name};
use shoal_storage::object::Bucket;
use shoal_storage::sst::FileId;
use std::collections::HashMap;

/// Arguments of `shoal snapshot import`.
#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    /// Where the export is: a directory (path or file:///…),
    /// s3://bucket/prefix, gs://bucket/prefix or az://container/prefix.
    url: String,
    /// The snapshot's name on this server (default: its name in the
    /// export).
    #[arg(long)]
    name: Option<String>,
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    bucket: ServerBucketArgs,
    #[command(flatten)]
    copy: CopyArgs,
}

/// An export, checked.
struct Export {
    url: String,
    bucket: Bucket,
    /// `export.json`'s bytes (the new ids derive from them).
    manifest_bytes: Bytes,
    manifest: ExportManifest,
    /// Its `snapshot.json`.
    record: SnapshotRecord,
}

/// Reads and checks the export at `url`: complete, every object there with
/// its size, the record intact and naming only objects the export lists.
/// The files' contents are checked as they are copied.
async fn read_export(url: &str) -> anyhow::Result<Export> {
    // Opening a directory store creates the directory: not for a source.
    if let Some(dir) = url.strip_prefix("file://")
        && !std::path::Path::new(dir).is_dir()
    {
        bail!("{dir}: no such directory");
    }
    let (bucket, _) = open_url(url).await?;
    let manifest_bytes = match bucket.get(EXPORT_JSON).await {
        Ok(b) => b,
        Err(e) if e.is_not_found() => bail!(
            "{url}: no {EXPORT_JSON}: not a complete snapshot export (an export that was \
             interrupted has none until it is run again and finishes)"
        ),
        Err(e) => return Err(e).with_context(|| format!("reading {url}/{EXPORT_JSON}")),
    };
    let manifest: ExportManifest = serde_json::from_slice(&manifest_bytes)
        .with_context(|| format!("{url}/{EXPORT_JSON} is not an export's record"))?;
    if manifest.format != EXPORT_FORMAT {
        bail!(
            "{url}/{EXPORT_JSON}: format {} is not one this shoal reads ({EXPORT_FORMAT}); \
             written by a newer Shoal?",
            manifest.format
        );
    }
    let present: HashMap<String, u64> = bucket
        .list("")
        .await
        .with_context(|| format!("listing {url}"))?
        .into_iter()
        .map(|o| (o.path, o.size))
        .collect();
    for o in &manifest.objects {
        match present.get(&o.path) {
            Some(&size) if size == o.size => {}
            Some(&size) => bail!(
                "{url}: {} is {size} bytes, {EXPORT_JSON} says {}: the export is damaged",
                o.path,
                o.size
            ),
            None => bail!(
                "{url}: {} is missing ({EXPORT_JSON} lists it): the export is incomplete",
                o.path
            ),
        }
    }
    let listed: HashMap<&str, (u64, u32)> = manifest
        .objects
        .iter()
        .map(|o| (o.path.as_str(), (o.size, o.crc32c)))
        .collect();
    let Some(&(_, record_crc)) = listed.get(SNAPSHOT_JSON) else {
        bail!("{url}/{EXPORT_JSON} does not list {SNAPSHOT_JSON}");
    };
    let record_bytes = bucket
        .get(SNAPSHOT_JSON)
        .await
        .with_context(|| format!("reading {url}/{SNAPSHOT_JSON}"))?;
    let actual = crc_of_bytes(&record_bytes);
    if actual != record_crc {
        return Err(Damaged {
            path: SNAPSHOT_JSON.to_string(),
            expected: record_crc,
            actual,
        })
        .with_context(|| format!("{url}: the export is damaged"));
    }
    let record: SnapshotRecord = serde_json::from_slice(&record_bytes)
        .with_context(|| format!("{url}/{SNAPSHOT_JSON} is not a snapshot's record"))?;
    if record.format != shoal_server::snapshots::record::FORMAT {
        bail!(
            "{url}/{SNAPSHOT_JSON}: record format {} is not one this shoal reads; written by \
             a newer Shoal?",
            record.format
        );
    }
    if record.id != manifest.id {
        bail!(
            "{url}: {SNAPSHOT_JSON} is snapshot id {}, {EXPORT_JSON} says {}",
            record.id,
            manifest.id
        );
    }
    for f in record.files() {
        match listed.get(f.path.as_str()) {
            Some(&(size, _)) if size == f.size => {}
            _ => bail!(
                "{url}: {SNAPSHOT_JSON} names file {} ({} bytes), which {EXPORT_JSON} does not \
                 list with that size",
                f.path,
                f.size
            ),
        }
        if f.file_id().is_none() {
            bail!("{url}: {SNAPSHOT_JSON}: file id {:?} is not a ULID", f.id);
        }
    }
    Ok(Export {
        url: url.to_string(),
        bucket,
        manifest_bytes,
        manifest,
        record,
    })
}

/// The new snapshot's record (id, name, every file at its new path with a
/// new id) and the copies that put the files there. Ids derive from the
/// export and the name: the same command plans the same objects.
fn plan(export: &Export, name: &str) -> anyhow::Result<(SnapshotRecord, Vec<CopyItem>)> {
    let old = &export.record;
    let time = u64::try_from(old.created_ms).unwrap_or(0);
    let id = derived_ulid(
        time,
        &[
            b"shoal snapshot import",
            &export.manifest_bytes,
            name.as_bytes(),
        ],
    )
    .to_string()
    .to_ascii_lowercase();
    let crcs: HashMap<&str, u32> = export
        .manifest
        .objects
        .iter()
        .map(|o| (o.path.as_str(), o.crc32c))
        .collect();
    let mut record = old.clone();
    record.id = id.clone();
    record.name = name.to_string();
    let mut placed: HashMap<String, (String, String)> = HashMap::new();
    let mut items = Vec::new();
    for f in record
        .regions
        .iter_mut()
        .flat_map(|r| r.families.values_mut().flatten())
    {
        let (new_id, dst) = match placed.get(&f.path) {
            Some(p) => p.clone(),
            None => {
                // `files/<region>/<family>/<file>.sst` in the export.
                let dir = f
                    .path
                    .strip_prefix(&format!("{FILES_DIR}/"))
                    .and_then(|p| p.rsplit_once('/'))
                    .map(|(dir, _)| dir)
                    .filter(|d| d.split('/').count() == 2)
                    .with_context(|| {
                        format!(
                            "{}: {SNAPSHOT_JSON} names file {}, not one under \
                             {FILES_DIR}/<region>/<family>/",
                            export.url, f.path
                        )
                    })?;
                let old_file = f
                    .file_id()
                    .with_context(|| format!("file id {:?} is not a ULID", f.id))?;
                let new_id = FileId(
                    derived_ulid(
                        ulid::Ulid(old_file.0).timestamp_ms(),
                        &[id.as_bytes(), f.id.as_bytes()],
                    )
                    .0,
                )
                .to_string();
                let dst = format!("snapshots/{id}/{FILES_DIR}/{dir}/{new_id}.sst");
                items.push(CopyItem {
                    src: f.path.clone(),
                    dst: dst.clone(),
                    size: f.size,
                    crc: crcs.get(f.path.as_str()).copied(),
                });
                placed.insert(f.path.clone(), (new_id.clone(), dst.clone()));
                (new_id, dst)
            }
        };
        f.id = new_id;
        f.path = dst;
    }
    Ok((record, items))
}

/// Runs `shoal snapshot import`.
pub(crate) async fn run(args: ImportArgs) -> anyhow::Result<()> {
    let url = store_url(&args.url)?;
    let export = read_export(&url).await?;
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| export.record.name.clone());
    validate_snapshot_name(&name)?;
    let (record, items) = plan(&export, &name)?;
    let id = record.id.clone();
    let bytes: u64 = items.iter().map(|i| i.size).sum();
    eprintln!(
        "export of snapshot {} (table {}): {} regions, {} files, {}",
        export.manifest.snapshot,
        export.manifest.table,
        record.regions.len(),
        items.len(),
        bytes_shown(bytes)
    );

    let (server_bucket, server_root) = args.bucket.open().await?;
    let client = args.server.connect().await?;
    let admin = client.admin();
    let catalog = CatalogStore::open(server_bucket.clone())
        .await
        .context("reading the server's catalog")?;
    if let Some(e) = catalog.current().snapshot(&name) {
        if e.id != id {
            bail!(
                "snapshot {name:?} already exists on the server: import under another --name \
                 (or delete it first)"
            );
        }
        admin.register_snapshot(&id, &name).await?;
        eprintln!("snapshot {name} is imported already (id {id}): nothing to do");
        return Ok(());
    }
    if let Some(e) = catalog.current().snapshots.iter().find(|s| s.id == id) {
        bail!(
            "this export was imported as snapshot {:?} before, which was deleted while a clone \
             still reads it: import it under another --name",
            e.name
        );
    }

    let prefix = format!("snapshots/{id}");
    let present: HashMap<String, u64> = server_bucket
        .list(&prefix)
        .await
        .with_context(|| format!("listing {prefix} in the server's bucket"))?
        .into_iter()
        .map(|o| (o.path, o.size))
        .collect();
    if !present.is_empty() {
        eprintln!("{prefix} holds part of this import already: going on with it");
    }
    let progress = Progress::new("imported", items.len(), bytes);
    progress.start();
    let copier = Copier::new(
        export.bucket.clone(),
        server_bucket.clone(),
        &args.copy.options(),
        progress.clone(),
    );
    if let Err(e) = copier.copy_all(&items, &present).await {
        progress.abandon();
        if e.downcast_ref::<Damaged>().is_some() {
            // The export cannot be imported as it is: what was copied of it
            // goes (nothing names it).
            let paths: Vec<String> = server_bucket
                .list(&prefix)
                .await
                .map(|l| l.into_iter().map(|o| o.path).collect())
                .unwrap_or_default();
            let _ = server_bucket.delete_many(paths).await;
            return Err(e.context(format!(
                "{url}: the export is damaged; nothing was imported"
            )));
        }
        return Err(e.context(format!(
            "importing {url} (run the same command again to go on)"
        )));
    }
    progress.finish();
    if let Some(root) = &server_root {
        remove_local_leftovers(root, items.iter().map(|i| i.dst.as_str()));
    }

    let record_path = format!("{prefix}/{SNAPSHOT_JSON}");
    let data = Bytes::from(serde_json::to_vec_pretty(&record)?);
    server_bucket
        .put(&record_path, data.clone())
        .await
        .with_context(|| format!("writing {record_path}"))?;
    if server_bucket.get(&record_path).await? != data {
        bail!("{record_path} reads back other than it was written");
    }
    let d = admin
        .register_snapshot(&id, &name)
        .await
        .with_context(|| format!("registering snapshot {name} (id {id})"))?;
    eprintln!(
        "imported snapshot {name} (table {}, {} regions, {} files, {}; id {id}); \
         clone it with: clone_snapshot '{name}', 'NEW_TABLE'",
        d.table,
        d.regions,
        items.len(),
        bytes_shown(bytes)
    );
    Ok(())
}
