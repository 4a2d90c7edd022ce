//! On the master: a snapshot's cut across the servers that own a table's
//! regions, as two phases.
//!
//! 1. Pause: every owner (this server through the host, others over gRPC)
//!    pauses its regions of the table and holds them, all at once.
//! 2. Once every owner holds its pauses: each captures its regions, lets
//!    their writes go, writes the memstore cells at the cut, and answers
//!    its part of the record.
//!
//! All pauses overlap (no capture starts before every pause is held), so
//! the captures are one consistent cut: a write acknowledged before any
//! write in the cut began was acknowledged before its own region paused.
//! Writers wait for one round trip to every owner and back. A failure in
//! phase 1 releases every pause held; an owner that dies before phase 2
//! fails the snapshot (nothing is registered); a pause the master never
//! comes back for ends by itself after `HOLD`.

use super::ClusterState;
use crate::error::ServiceError;
use crate::host::{Host, LiveTable};
use crate::snapshots::record::SnapshotRegion;
use shoal_proto::v1 as pb;
use std::collections::BTreeMap;
use std::time::Duration;

/// The longest an owner holds a pause for the master's capture.
const HOLD: Duration = Duration::from_secs(5);

/// How long a call to an owner may take.
const CALL_DEADLINE: Duration = Duration::from_secs(15);

type Part = crate::host::SnapshotCutPart;

impl ClusterState {
    /// The cut of snapshot `id` of `table` (see the module doc).
    pub(crate) async fn snapshot_cut(
        &self,
        host: &Host,
        table: &LiveTable,
        id: &str,
    ) -> Result<Part, ServiceError> {
        let here = host.address().to_string();
        let locations = self.locations(&here, table);
        let mut by_server: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (record, _) in table.regions.values() {
            let Some(l) = locations.iter().find(|l| l.region_id == record.id) else {
                return Err(ServiceError::Unavailable(format!(
                    "region {} of table {} has no owner now",
                    record.id,
                    crate::error::shown(&table.record.name)
                )));
            };
            by_server
                .entry(l.server.clone())
                .or_default()
                .push(record.id.clone());
        }
        let name = &table.record.name;
        let paused = futures::future::join_all(
            by_server
                .iter()
                .map(|(server, ids)| self.pause_on(host, &here, server, id, name, ids)),
        )
        .await;
        if let Some(Err(e)) = paused.iter().find(|r| r.is_err()) {
            let e = ServiceError::Unavailable(format!("pausing the table's writes: {e}"));
            futures::future::join_all(
                by_server
                    .keys()
                    .map(|server| self.release_on(host, &here, server, id)),
            )
            .await;
            return Err(e);
        }
        let parts = futures::future::join_all(
            by_server
                .keys()
                .map(|server| self.capture_on(host, &here, server, id)),
        )
        .await;
        let mut cut = Part::default();
        for part in parts {
            let part = part?;
            cut.regions.extend(part.regions);
            cut.written += part.written;
            cut.pause = cut.pause.max(part.pause);
        }
        Ok(cut)
    }

    async fn admin(
        &self,
        host: &Host,
        server: &str,
    ) -> Result<pb::admin_client::AdminClient<tonic::transport::Channel>, ServiceError> {
        let channel = crate::security::peer::connect(host.config(), server, CALL_DEADLINE)
            .await
            .map_err(|e| ServiceError::Unavailable(format!("server {server}: {e}")))?;
        Ok(pb::admin_client::AdminClient::new(channel))
    }

    fn request<T>(host: &Host, message: T) -> tonic::Request<T> {
        let mut req =
            crate::security::peer::authorize(host.security(), tonic::Request::new(message));
        req.set_timeout(CALL_DEADLINE);
        req
    }

    async fn pause_on(
        &self,
        host: &Host,
        here: &str,
        server: &str,
        id: &str,
        table: &str,
        ids: &[String],
    ) -> Result<(), ServiceError> {
        if server == here {
            return host.hold_snapshot_pause(id, table, ids, HOLD).await;
        }
        let msg = pb::SnapshotPauseRequest {
            id: id.to_string(),
            table: table.to_string(),
            regions: ids.to_vec(),
            hold_ms: HOLD.as_millis() as u64,
        };
        self.admin(host, server)
            .await?
            .snapshot_pause(Self::request(host, msg))
            .await
            .map_err(|s| ServiceError::Unavailable(format!("server {server}: {}", s.message())))?;
        Ok(())
    }

    async fn capture_on(
        &self,
        host: &Host,
        here: &str,
        server: &str,
        id: &str,
    ) -> Result<Part, ServiceError> {
        if server == here {
            return host.capture_snapshot_pause(id).await;
        }
        let msg = pb::SnapshotPartRequest { id: id.to_string() };
        let r = self
            .admin(host, server)
            .await?
            .snapshot_capture(Self::request(host, msg))
            .await
            .map_err(|s| ServiceError::Unavailable(format!("server {server}: {}", s.message())))?
            .into_inner();
        let regions: Vec<SnapshotRegion> =
            serde_json::from_slice(&r.regions_json).map_err(|e| {
                ServiceError::Unavailable(format!(
                    "server {server} answered a bad snapshot part: {e}"
                ))
            })?;
        Ok(Part {
            regions,
            written: r.written_bytes,
            pause: Duration::from_micros(r.pause_micros),
        })
    }

    async fn release_on(&self, host: &Host, here: &str, server: &str, id: &str) {
        if server == here {
            host.release_snapshot_pause(id);
            return;
        }
        let msg = pb::SnapshotPartRequest { id: id.to_string() };
        if let Ok(mut admin) = self.admin(host, server).await
            && let Err(s) = admin.snapshot_release(Self::request(host, msg)).await
        {
            tracing::warn!(server, snapshot_id = id, error = %s.message(), "releasing a snapshot's pause failed; it ends by itself");
        }
    }
}
