//! Registering a snapshot whose objects someone else put in the bucket:
//! `shoal snapshot import` (docs/snapshots-export.md) copies an export's
//! files to `snapshots/<id>/files/…` and its record to
//! `snapshots/<id>/snapshot.json`, then asks the server to name it.
//!
//! This file owns that last step: the record is read and checked (its id
//! and name are the ones asked for, every file it names lies under the
//! snapshot's own prefix and is in the bucket with the recorded size), then
//! its files are held and the catalog entry is committed exactly as a
//! snapshot just taken is ([`Host::name_snapshot`] in `snapshot_take.rs`).
//! From then on it is a snapshot like any other: cloned, restored, deleted
//! (its objects go with it, as a taken snapshot's own files do).
//!
//! Registering the same id under the same name again answers as the first
//! time did (a retried request, or an import run twice). Nothing here
//! writes to the bucket: a record that fails the checks is left where it is
//! (an abandoned import's prefix is garbage for a later sweep).

use super::Host;
use super::snapshot_take::SnapshotInfo;
use crate::error::ServiceError;
use crate::snapshots::record::{SnapshotRecord, snapshot_dir};
use crate::snapshots::validate_snapshot_name;
use futures::StreamExt;

/// HEADs in flight while the files are checked.
const CHECKS_IN_FLIGHT: usize = 16;

/// Err unless `id` is a snapshot id as the server makes them (a ULID in
/// lower case): it becomes an object prefix.
fn validate_snapshot_id(id: &str) -> Result<(), ServiceError> {
    let canonical = ulid::Ulid::from_string(id)
        .ok()
        .map(|u| u.to_string().to_ascii_lowercase());
    if canonical.as_deref() != Some(id) {
        return Err(ServiceError::InvalidArgument(format!(
            "snapshot id {}: not a ULID in lower case",
            crate::error::shown(id)
        )));
    }
    Ok(())
}

impl Host {
    /// Names snapshot `id` (record and files already in the bucket under
    /// `snapshots/<id>/`) `name`. See the module documentation.
    pub async fn register_snapshot(
        &self,
        id: &str,
        name: &str,
    ) -> Result<SnapshotInfo, ServiceError> {
        validate_snapshot_name(name)?;
        validate_snapshot_id(id)?;
        self.require_master()?;
        let _one = self.inner.snapshot_lock.lock().await;
        let bucket = &self.inner.env.bucket;
        let already = {
            let catalog = self.inner.catalog.lock().await;
            match catalog.current().snapshot(name) {
                Some(e) if e.id == id => true,
                Some(_) => return Err(ServiceError::SnapshotExists(name.to_string())),
                None => false,
            }
        };
        let record = SnapshotRecord::read(bucket, id, name).await?;
        let info = info_of(&record);
        if already {
            return Ok(info);
        }
        if record.name != name {
            return Err(ServiceError::FailedPrecondition(format!(
                "the record at {} names snapshot {}, not {}",
                crate::snapshots::record::record_path(id),
                crate::error::shown(&record.name),
                crate::error::shown(name)
            )));
        }
        self.check_files(&record).await?;
        self.name_snapshot(&record).await?;
        tracing::info!(
            snapshot = name,
            id,
            table = %record.table.name,
            regions = info.regions,
            files = info.files,
            bytes = info.bytes,
            "snapshot registered"
        );
        Ok(info)
    }

    /// Every file `record` names lies under its own prefix and is in the
    /// bucket with the recorded size.
    async fn check_files(&self, record: &SnapshotRecord) -> Result<(), ServiceError> {
        let own = format!("{}/", snapshot_dir(&record.id));
        let bad = |what: String| {
            ServiceError::FailedPrecondition(format!(
                "snapshot {}: {what}",
                crate::error::shown(&record.name)
            ))
        };
        let outside = |path: &str| {
            !path.starts_with(&own)
                || path
                    .split('/')
                    .any(|s| s.is_empty() || s == "." || s == "..")
        };
        if let Some(f) = record.files().find(|f| outside(&f.path)) {
            return Err(bad(format!(
                "file {} is not under {own}: a registered snapshot owns its files",
                f.path
            )));
        }
        // Owned paths: the checks run as one future that must be Send.
        let files: Vec<(String, u64)> = record.files().map(|f| (f.path.clone(), f.size)).collect();
        let mut checks = futures::stream::iter(files)
            .map(|(path, size)| {
                let bucket = self.inner.env.bucket.clone();
                async move {
                    let head = bucket.head(&path).await;
                    (path, size, head)
                }
            })
            .buffer_unordered(CHECKS_IN_FLIGHT);
        while let Some((path, size, head)) = checks.next().await {
            match head {
                Ok(o) if o.size == size => {}
                Ok(o) => {
                    return Err(bad(format!(
                        "file {path} is {} bytes in the bucket, the record says {size}",
                        o.size
                    )));
                }
                Err(e) if e.is_not_found() => {
                    return Err(bad(format!("file {path} is not in the bucket")));
                }
                Err(e) => {
                    return Err(ServiceError::Unavailable(format!(
                        "checking file {path}: {e}"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// What `record` holds, as a snapshot just taken reports it (it wrote
/// nothing here).
fn info_of(record: &SnapshotRecord) -> SnapshotInfo {
    SnapshotInfo {
        name: record.name.clone(),
        table: record.table.name.clone(),
        created_ms: record.created_ms,
        regions: record.regions.len(),
        files: record.files().count(),
        bytes: record.bytes(),
        written_bytes: 0,
        pause_micros: record.pause_micros,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::catalog::FamilyPatch;
    use crate::config::ServerConfig;
    use crate::snapshots::record::{files_dir, record_path};
    use bytes::Bytes;
    use shoal_storage::region::{Get, RowMutation};

    #[test]
    fn ids_are_lower_case_ulids() {
        let id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        assert!(validate_snapshot_id(&id).is_ok());
        for bad in [
            "",
            "../x",
            "01ARZ3NDEKTSV4RRFFQ69G5FAV",
            "01arz3ndektsv4rrffq69g5fav/x",
        ] {
            assert!(validate_snapshot_id(bad).is_err(), "{bad}");
        }
    }

    /// A copy of snapshot `name` under a new id, as an import writes it:
    /// every file under `snapshots/<new>/files/`, the record last.
    async fn copy_in(host: &Host, name: &str, new_name: &str) -> SnapshotRecord {
        let bucket = &host.inner.env.bucket;
        let mut record = host.describe_snapshot(name).await.unwrap();
        let id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        record.id = id.clone();
        record.name = new_name.to_string();
        for region in &mut record.regions {
            let dir = files_dir(&id, &region.id);
            for (family, files) in &mut region.families {
                for f in files {
                    let data = bucket.get(&f.path).await.unwrap();
                    f.path = format!("{dir}/{family}/{}.sst", f.id);
                    bucket.put(&f.path, data).await.unwrap();
                }
            }
        }
        bucket
            .put(
                &record_path(&id),
                Bytes::from(serde_json::to_vec(&record).unwrap()),
            )
            .await
            .unwrap();
        record
    }

    #[tokio::test]
    async fn a_copied_in_snapshot_registers_once_checked_and_clones() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ServerConfig::default();
        config.server.data_dir = dir.path().to_path_buf();
        let host = Host::open(config).await.unwrap();
        let cf = FamilyPatch {
            name: "cf".into(),
            ..Default::default()
        };
        host.create_table("t", vec![cf], vec![Bytes::from_static(b"m")])
            .await
            .unwrap();
        for row in ["a", "k", "p", "z"] {
            host.mutate("t", RowMutation::new(row).put("cf", "q", row.to_string()))
                .await
                .unwrap();
        }
        host.flush_table("t").await.unwrap();
        host.mutate("t", RowMutation::new("b").put("cf", "q", "memstore"))
            .await
            .unwrap();
        host.take_snapshot("t", "s").await.unwrap();
        let bucket = host.inner.env.bucket.clone();
        let record = copy_in(&host, "s", "imported").await;
        let id = record.id.clone();

        let err = |r: Result<SnapshotInfo, ServiceError>| r.unwrap_err().to_string();
        // The name must be the record's, and free.
        let e = err(host.register_snapshot(&id, "other").await);
        assert!(e.contains("names snapshot \"imported\""), "{e}");
        let e = err(host.register_snapshot(&id, "s").await);
        assert!(e.contains("already exists"), "{e}");
        let e = err(host.register_snapshot("../../data", "imported").await);
        assert!(e.contains("not a ULID"), "{e}");
        // Every file must be there, with its size.
        let victim = record.files().next().unwrap().path.clone();
        let data = bucket.get(&victim).await.unwrap();
        bucket.delete(&victim).await.unwrap();
        let e = err(host.register_snapshot(&id, "imported").await);
        assert!(
            e.contains(&victim) && e.contains("not in the bucket"),
            "{e}"
        );
        bucket.put(&victim, data.slice(1..)).await.unwrap();
        let e = err(host.register_snapshot(&id, "imported").await);
        assert!(e.contains(&victim) && e.contains("bytes"), "{e}");
        bucket.put(&victim, data).await.unwrap();
        assert_eq!(host.list_snapshots().await.len(), 1, "nothing named yet");

        // A record naming files outside its own prefix is refused.
        let mut outside = host.describe_snapshot("s").await.unwrap();
        outside.id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        outside.name = "outside".into();
        outside.write(&bucket).await.unwrap();
        let e = err(host.register_snapshot(&outside.id, "outside").await);
        assert!(e.contains("owns its files"), "{e}");
        let mut climbing = record.clone();
        climbing.id = ulid::Ulid::new().to_string().to_ascii_lowercase();
        climbing.name = "climbing".into();
        let own = format!("{}/files/../../../data", snapshot_dir(&climbing.id));
        climbing.regions[0].families.values_mut().for_each(|files| {
            files
                .iter_mut()
                .for_each(|f| f.path = format!("{own}/{}", f.id))
        });
        climbing.write(&bucket).await.unwrap();
        let e = err(host.register_snapshot(&climbing.id, "climbing").await);
        assert!(e.contains("owns its files"), "{e}");

        let info = host.register_snapshot(&id, "imported").await.unwrap();
        assert_eq!((info.table.as_str(), info.regions), ("t", 2));
        // Again: the same answer, nothing changed.
        assert_eq!(host.register_snapshot(&id, "imported").await.unwrap(), info);
        assert_eq!(host.list_snapshots().await.len(), 2);
        assert!(host.inner.snapshot_holds.held().contains(&id));

        // It is a snapshot like any other: clone it, read the cut.
        host.clone_snapshot("imported", "c").await.unwrap();
        for (row, want) in [("a", "a"), ("b", "memstore"), ("z", "z")] {
            let got = host.get("c", Get::new(row)).await.unwrap();
            assert_eq!(
                got.value(b"cf", b"q").map(|v| &v[..]),
                Some(want.as_bytes())
            );
        }
        // Deleted while the clone reads it, it is hidden but its id is
        // taken: registering it again is refused and leaves its holds be.
        host.delete_snapshot("imported").await.unwrap();
        let e = err(host.register_snapshot(&id, "imported").await);
        assert!(e.contains("already named") && e.contains("deleted"), "{e}");
        assert!(host.inner.snapshot_holds.held().contains(&id));
        let got = host.get("c", Get::new("b")).await.unwrap();
        assert_eq!(
            got.value(b"cf", b"q").map(|v| &v[..]),
            Some(&b"memstore"[..])
        );
    }
}
