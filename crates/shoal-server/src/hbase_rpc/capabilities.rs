//! What the master says it can do, for the `MasterService` calls tools ask
//! before they act: `getSecurityCapabilities` (the shell's
//! `list_security_capabilities`, and its check before `grant`, `revoke`
//! and `user_permission`) and the region normalizer's switch
//! (`IsNormalizerEnabled`, `SetNormalizerRunning`).
//!
//! Invariants: the answers are what Shoal does, never what HBase's defaults
//! would be. The native RPC takes SIMPLE authentication only and serves no
//! `AccessControlService` (Shoal's grants are made through its own shell
//! and gRPC), so the capabilities are SIMPLE_AUTHENTICATION alone: `hbase
//! shell` then refuses `grant` as HBase without its AccessController does.
//! The normalizer's switch is remembered by this server (on at start, as
//! HBase's; in cluster mode the master's, lost when another server becomes
//! master) and, as in HBase, acts only on tables whose descriptor sets
//! `NORMALIZATION_ENABLED`: Shoal's never do (it splits regions by size
//! and never merges them), so it finds nothing to do.

use super::NativeRpc;
use super::errors::{self, RpcError};
use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase as pb;
use std::sync::atomic::Ordering;

/// The capabilities Shoal's native RPC has, as HBase numbers them.
fn security_capabilities() -> Vec<i32> {
    use pb::security_capabilities_response::Capability;
    vec![Capability::SimpleAuthentication as i32]
}

impl NativeRpc {
    /// One of this module's MasterService calls: the encoded answer.
    pub(super) fn capabilities_call(
        &self,
        method: &str,
        param: Bytes,
    ) -> Result<Vec<u8>, RpcError> {
        Ok(match method {
            "getSecurityCapabilities" => {
                let _: pb::SecurityCapabilitiesRequest = errors::request(method, param)?;
                pb::SecurityCapabilitiesResponse {
                    capabilities: security_capabilities(),
                }
                .encode_to_vec()
            }
            "IsNormalizerEnabled" => {
                let _: pb::IsNormalizerEnabledRequest = errors::request(method, param)?;
                pb::IsNormalizerEnabledResponse {
                    enabled: self.normalizer_on.load(Ordering::Relaxed),
                }
                .encode_to_vec()
            }
            "SetNormalizerRunning" => {
                let r: pb::SetNormalizerRunningRequest = errors::request(method, param)?;
                pb::SetNormalizerRunningResponse {
                    prev_normalizer_value: Some(self.normalizer_on.swap(r.on, Ordering::Relaxed)),
                }
                .encode_to_vec()
            }
            _ => {
                return Err(RpcError::invalid(format!(
                    "{method}: not a capability call"
                )));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_simple_authentication_is_offered() {
        assert_eq!(security_capabilities(), [0]);
    }
}
