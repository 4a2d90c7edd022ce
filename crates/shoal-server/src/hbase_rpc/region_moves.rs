//! `MasterService.MoveRegion`: `Admin.move(encodedRegionName[, server])`,
//! the shell's `move`. As HBase's master does (`HMaster.move`): a region
//! not known is an `UnknownRegionException`; a destination not given, or
//! not a live server, lets the master choose another server, and with no
//! other server the call answers without moving anything; a move to the
//! server the region is on already is skipped. On a single node every
//! region stays where it is (there is nowhere else); in cluster mode the
//! region moves through the cluster role (`Host::move_region`), which
//! waits until it serves at its new place.

use super::errors::{self, RpcError};
use super::meta::Serving;
use super::{NativeRpc, Target};
use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase as pb;

/// `org.apache.hadoop.hbase.UnknownRegionException`: what HBase's master
/// answers for a region it does not know.
pub const UNKNOWN_REGION: &str = "org.apache.hadoop.hbase.UnknownRegionException";

/// HBase's `UnknownRegionException` for the region `name`. Its text reads
/// as HBase's stack trace does (`<class>: <name>` on the first line), which
/// `hbase shell` prints after `ERROR:`.
fn unknown_region(name: &[u8]) -> RpcError {
    RpcError::fatal(
        UNKNOWN_REGION,
        format!("{UNKNOWN_REGION}: {}", String::from_utf8_lossy(name)),
    )
}

/// The native-RPC address (`host:port`) a `ServerName` names.
fn address(server: &pb::ServerName) -> Option<String> {
    Some(format!("{}:{}", server.host_name, server.port?))
}

impl NativeRpc {
    /// `MoveRegion`: the encoded (empty) answer once the region is where
    /// it is asked to be, or where HBase would leave it.
    pub(super) async fn move_region_call(&self, param: Bytes) -> Result<Vec<u8>, RpcError> {
        let r: pb::MoveRegionRequest = errors::request("MoveRegion", param)?;
        let view = match self.resolve(&r.region).await {
            Ok(Target::Region(v)) => v,
            Ok(Target::Meta) => {
                return Err(RpcError::invalid(
                    "hbase:meta is Shoal's catalog, served by every server: it is not moved",
                ));
            }
            Err(_) => return Err(unknown_region(&r.region.value)),
        };
        let here = self.me.address();
        let current = match &view.server {
            Serving::Here => Some(here.clone()),
            Serving::At(a) => Some(a.clone()),
            Serving::Nowhere => None,
        };
        let wanted = r.dest_server_name.as_ref().and_then(address);
        if wanted.is_some() && wanted == current {
            return Ok(pb::MoveRegionResponse {}.encode_to_vec());
        }
        let members = self.host.cluster_servers();
        // A single server (or a cluster of one): nowhere else to go.
        if members.len() <= 1 {
            return Ok(pb::MoveRegionResponse {}.encode_to_vec());
        }
        // The member at the wanted native address, by its cluster name;
        // none (not given, not live): the cluster chooses, as HBase's
        // master does.
        let to = wanted
            .and_then(|w| {
                members
                    .iter()
                    .find(|m| self.host.native_address_of(&m.addr).as_deref() == Some(&w))
            })
            .map(|m| m.addr.clone())
            .unwrap_or_default();
        self.access().move_region(&view.id, &to).await?;
        Ok(pb::MoveRegionResponse {}.encode_to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_name_is_its_native_address() {
        let sn = pb::ServerName {
            host_name: "127.0.0.1".into(),
            port: Some(16020),
            start_code: Some(17),
        };
        assert_eq!(address(&sn).as_deref(), Some("127.0.0.1:16020"));
        let no_port = pb::ServerName { port: None, ..sn };
        assert_eq!(address(&no_port), None);
    }

    #[test]
    fn an_unknown_region_reads_as_hbase_names_it() {
        let e = unknown_region(b"0123abcd");
        assert_eq!(e.class, UNKNOWN_REGION);
        assert_eq!(
            e.message,
            "org.apache.hadoop.hbase.UnknownRegionException: 0123abcd"
        );
        assert!(e.do_not_retry);
    }
}
