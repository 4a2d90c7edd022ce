//! A snapshot's cut on this server: pause the writes of regions open here,
//! capture them, let the writes go, write the memstore cells at the cut.
//!
//! On a single server the cut is all here (`snapshot_take.rs` pauses and
//! captures at once). In a cluster the master holds every owner's pauses
//! at the same time: each server pauses its regions of the table and
//! keeps the pauses under the snapshot's id ([`Host::hold_snapshot_pause`])
//! until the master, once every server paused, asks it to capture and let
//! go ([`Host::capture_snapshot_pause`]). A pause the master never comes
//! back for ends by itself after its hold (writers wait at most that
//! long; the snapshot then fails at its capture).

use super::{Host, Slot};
use crate::catalog::RegionRecord;
use crate::error::ServiceError;
use crate::snapshots::record::{FileRecord, SnapshotRegion, families_of, files_dir};
use shoal_storage::region::{Region, RegionCapture, WritePause};
use std::time::{Duration, Instant};

/// The longest a cut waits for the writes in flight to drain.
const PAUSE_WAIT: Duration = Duration::from_secs(10);

/// A cut that had to write at least this much memstore has the regions it
/// wrote for flush afterwards, so the next snapshot shares those cells as
/// files instead of writing them again (`shoal bench scenario snapshots`:
/// a snapshot every second under writers rewrote everything since the last
/// flush every time, 81 MB per snapshot at the median).
const FLUSH_AFTER_WRITING: u64 = 8 << 20;

/// Regions of one table whose writes are paused here.
#[derive(Debug)]
pub(crate) struct Paused {
    regions: Vec<(RegionRecord, WritePause)>,
    /// When the first region paused.
    since: Instant,
}

/// This server's part of a cut: its regions as the snapshot records them.
#[derive(Debug, Default)]
pub(crate) struct CutPart {
    pub(crate) regions: Vec<SnapshotRegion>,
    /// Bytes written (memstore cells at the cut).
    pub(crate) written: u64,
    /// How long writes here waited.
    pub(crate) pause: Duration,
}

impl Paused {
    /// Captures every paused region and lets the writes go. Returns the
    /// captures and how long the writes waited.
    fn capture(self) -> (Vec<(RegionRecord, Region, RegionCapture)>, Duration) {
        let captures: Vec<_> = self
            .regions
            .iter()
            .map(|(record, p)| (record.clone(), p.region().clone(), p.capture()))
            .collect();
        let pause = self.since.elapsed();
        drop(self.regions);
        (captures, pause)
    }
}

impl Host {
    /// Pauses the writes of table `table`'s regions open here — those in
    /// `ids`, or all of them (then every region of the table must be open
    /// here). Each waits for its writes in flight (at most `PAUSE_WAIT`
    /// in all).
    pub(crate) async fn pause_regions(
        &self,
        table: &str,
        ids: Option<&[String]>,
    ) -> Result<Paused, ServiceError> {
        let live = self.table(table)?;
        let mut regions: Vec<(RegionRecord, Region)> = Vec::new();
        for (record, slot) in live.regions.values() {
            if ids.is_some_and(|ids| !ids.contains(&record.id)) {
                continue;
            }
            match slot {
                Slot::Open(r) => regions.push((record.clone(), r.clone())),
                _ => {
                    return Err(ServiceError::Unavailable(format!(
                        "region {} of table {} is moving",
                        record.id,
                        crate::error::shown(table)
                    )));
                }
            }
        }
        if let Some(ids) = ids
            && let Some(missing) = ids
                .iter()
                .find(|id| !regions.iter().any(|(r, _)| &r.id == *id))
        {
            return Err(ServiceError::Unavailable(format!(
                "region {missing} of table {} is not served here",
                crate::error::shown(table)
            )));
        }
        let mut paused = Vec::with_capacity(regions.len());
        let mut since = None;
        let acquire = async {
            for (record, r) in regions {
                let p = r.pause_writes().await?;
                since.get_or_insert_with(Instant::now);
                paused.push((record, p));
            }
            Ok::<_, shoal_storage::region::RegionError>(())
        };
        match tokio::time::timeout(PAUSE_WAIT, acquire).await {
            Err(_) => Err(ServiceError::Unavailable(format!(
                "the writes in flight to table {} did not finish within {PAUSE_WAIT:?}",
                crate::error::shown(table)
            ))),
            Ok(Err(e)) => Err(ServiceError::Region(e)),
            Ok(Ok(())) => Ok(Paused {
                regions: paused,
                since: since.unwrap_or_else(Instant::now),
            }),
        }
    }

    /// Captures `paused`, lets its writes go, and writes the memstore cells
    /// at the cut under snapshot `id`'s files.
    pub(crate) async fn capture_paused(
        &self,
        id: &str,
        paused: Paused,
    ) -> Result<CutPart, ServiceError> {
        let (captures, pause) = paused.capture();
        let mut part = CutPart {
            pause,
            ..CutPart::default()
        };
        let mut wrote_for: Vec<Region> = Vec::new();
        for (record, region, capture) in captures {
            let dumped = region
                .write_captured_memstore(&capture, &files_dir(id, &record.id))
                .await
                .map_err(ServiceError::Region)?;
            if !dumped.is_empty() {
                wrote_for.push(region.clone());
            }
            let mut families = families_of(&capture.stores);
            for (family, file) in dumped {
                part.written += file.size;
                families
                    .entry(family)
                    .or_default()
                    .push(FileRecord::of(&file));
            }
            part.regions.push(SnapshotRegion {
                id: record.id.clone(),
                start_row: capture.start_row.clone(),
                end_row: capture.end_row.clone(),
                read_point: capture.read_point,
                families,
            });
            // The capture's pins go with it: the record now names the
            // files, and the snapshot's holds keep them once committed
            // (well within the GC grace, which keeps them meanwhile).
        }
        if part.written >= FLUSH_AFTER_WRITING {
            flush_in_background(wrote_for);
        }
        Ok(part)
    }

    /// Cluster mode, on a region's owner: pauses `ids` (regions of `table`
    /// open here) for snapshot `id` and keeps them paused until
    /// [`Host::capture_snapshot_pause`] or `hold` has passed.
    pub(crate) async fn hold_snapshot_pause(
        &self,
        id: &str,
        table: &str,
        ids: &[String],
        hold: Duration,
    ) -> Result<(), ServiceError> {
        let paused = self.pause_regions(table, Some(ids)).await?;
        self.inner
            .snapshot_pauses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_string(), paused);
        let host = self.clone();
        let id = id.to_string();
        tokio::spawn(async move {
            tokio::time::sleep(hold).await;
            if host.take_snapshot_pause(&id).is_some() {
                tracing::warn!(snapshot_id = %id, hold_ms = hold.as_millis() as u64, "a snapshot's pause was not captured in time; writes go on and the snapshot fails");
            }
        });
        Ok(())
    }

    fn take_snapshot_pause(&self, id: &str) -> Option<Paused> {
        self.inner
            .snapshot_pauses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id)
    }

    /// Cluster mode: captures and lets go the pause held for snapshot `id`.
    pub(crate) async fn capture_snapshot_pause(&self, id: &str) -> Result<CutPart, ServiceError> {
        let paused = self.take_snapshot_pause(id).ok_or_else(|| {
            ServiceError::Unavailable(format!(
                "the pause of snapshot {id} is not held here (it ran out, or this server restarted)"
            ))
        })?;
        self.capture_paused(id, paused).await
    }

    /// Cluster mode: lets go the pause held for snapshot `id` (a failed
    /// cut), if any.
    pub(crate) fn release_snapshot_pause(&self, id: &str) {
        drop(self.take_snapshot_pause(id));
    }
}

/// Flushes `regions`, one after another, off the caller's path (a failure
/// is logged: the region flushes later for its usual reasons).
fn flush_in_background(regions: Vec<Region>) {
    tokio::spawn(async move {
        for r in regions {
            if let Err(e) = r.flush().await {
                tracing::info!(region = %r.id(), error = %e, "flush after a snapshot skipped");
            }
        }
    });
}
