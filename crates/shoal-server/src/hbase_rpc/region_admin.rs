//! `AdminService`, the region server's admin calls as the 2.5/2.6 `Admin`
//! makes them once per region: `FlushRegion`, `CompactRegion` (how
//! `Admin.compact` and `majorCompact` reach the regions) and
//! `GetRegionInfo` (`getCompactionState`). Each acts on the one region
//! named, served here; another answers `NotServingRegionException`.
//! `GetRegionLoad` and `GetServerInfo` are `cluster_status.rs`'s.

use super::errors::{self, RpcError};
use super::{NativeRpc, Target};
use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase as pb;

impl NativeRpc {
    /// The region a call names, which must be a user region.
    pub(super) async fn user_region(
        &self,
        spec: &pb::RegionSpecifier,
    ) -> Result<std::sync::Arc<super::RegionView>, RpcError> {
        match self.resolve(spec).await? {
            Target::Region(v) => Ok(v),
            Target::Meta => Err(RpcError::invalid(
                "hbase:meta is Shoal's catalog: nothing to flush, compact or bulk load",
            )),
        }
    }

    /// One AdminService call: the encoded answer.
    pub(super) async fn region_admin(
        &self,
        method: &str,
        param: Bytes,
    ) -> Result<Vec<u8>, RpcError> {
        let access = self.access();
        Ok(match method {
            "GetRegionInfo" => {
                let r: pb::GetRegionInfoRequest = errors::request(method, param)?;
                let view = self.user_region(&r.region).await?;
                pb::GetRegionInfoResponse {
                    region_info: view.info(),
                    // Compactions finish before the call that asked for
                    // them answers.
                    compaction_state: Some(0),
                    splittable: Some(true),
                    mergeable: Some(false),
                    best_split_row: None,
                }
                .encode_to_vec()
            }
            "FlushRegion" => {
                let r: pb::FlushRegionRequest = errors::request(method, param)?;
                let view = self.user_region(&r.region).await?;
                access.region_work(&view.table, &view.id, None).await?;
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64);
                pb::FlushRegionResponse {
                    last_flush_time: now,
                    flushed: Some(true),
                    wrote_flush_wal_marker: Some(false),
                }
                .encode_to_vec()
            }
            "CompactRegion" => {
                let r: pb::CompactRegionRequest = errors::request(method, param)?;
                let view = self.user_region(&r.region).await?;
                if r.family.as_ref().is_some_and(|f| !f.is_empty()) {
                    return Err(RpcError::invalid(
                        "compacting one column family is not supported: Shoal compacts the region's every family",
                    ));
                }
                let major = r.major.unwrap_or(false);
                access
                    .region_work(&view.table, &view.id, Some(major))
                    .await?;
                pb::CompactRegionResponse {}.encode_to_vec()
            }
            "GetRegionLoad" | "GetServerInfo" => self.region_server_status(method, param)?,
            _ => {
                return Err(RpcError::fatal(
                    errors::UNKNOWN_PROTOCOL,
                    format!(
                        "AdminService.{method} is not served by Shoal (docs/hbase-client.md lists what is)"
                    ),
                ));
            }
        })
    }
}
