//! A connection to etcd: key-value calls, compare-and-swap transactions and
//! leases, each bounded by a deadline so that an etcd that is down or
//! unreachable is a clear error, never a hang.

use crate::proto;
use crate::proto::kv_client::KvClient;
use crate::proto::lease_client::LeaseClient;
use std::time::Duration;
use tonic::transport::{Channel, Endpoint};

/// Why an etcd call failed.
#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    /// An endpoint is not a usable URL.
    #[error("etcd endpoint {endpoint:?}: {reason}")]
    BadEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No endpoint answered within the deadline.
    #[error("etcd at {endpoints} did not answer within {after:?}: {reason}")]
    Unreachable {
        /// The endpoints tried, comma-separated.
        endpoints: String,
        /// The deadline.
        after: Duration,
        /// The last error seen.
        reason: String,
    },
    /// etcd answered with an error.
    #[error("etcd {op}: {status}")]
    Call {
        /// The call.
        op: &'static str,
        /// etcd's answer.
        status: Box<tonic::Status>,
    },
    /// A call took longer than the deadline.
    #[error("etcd {op} took longer than {after:?}")]
    Timeout {
        /// The call.
        op: &'static str,
        /// The deadline.
        after: Duration,
    },
    /// etcd refused a lease.
    #[error("etcd refused a lease: {0}")]
    Lease(String),
}

/// A key's value and its revisions.
pub type KeyValue = proto::KeyValue;

/// A client of one etcd cluster. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Etcd {
    kv: KvClient<Channel>,
    pub(crate) lease: LeaseClient<Channel>,
    pub(crate) timeout: Duration,
    endpoints: String,
}

/// The key range of every key starting with `prefix`.
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0] // every key
}

impl Etcd {
    /// Connects to `endpoints` (`http://host:port`, at least one; calls are
    /// spread over them and fail over) and checks that etcd answers, all
    /// within `timeout`, which also bounds every later call.
    pub async fn connect(endpoints: &[String], timeout: Duration) -> Result<Etcd, EtcdError> {
        let shown = endpoints.join(",");
        if endpoints.is_empty() {
            return Err(EtcdError::BadEndpoint {
                endpoint: String::new(),
                reason: "no endpoint given".into(),
            });
        }
        let mut list = Vec::with_capacity(endpoints.len());
        for e in endpoints {
            let endpoint = Endpoint::from_shared(e.clone())
                .map_err(|err| EtcdError::BadEndpoint {
                    endpoint: e.clone(),
                    reason: err.to_string(),
                })?
                .connect_timeout(timeout)
                .timeout(timeout)
                .tcp_nodelay(true);
            list.push(endpoint);
        }
        let channel = Channel::balance_list(list.into_iter());
        let etcd = Etcd {
            kv: KvClient::new(channel.clone()),
            lease: LeaseClient::new(channel),
            timeout,
            endpoints: shown.clone(),
        };
        // One read proves etcd answers (the key need not exist).
        match etcd.get(b"/shoal-connect-check").await {
            Ok(_) => Ok(etcd),
            Err(EtcdError::Call { status, .. }) => Err(EtcdError::Unreachable {
                endpoints: shown,
                after: timeout,
                reason: status.message().to_string(),
            }),
            Err(EtcdError::Timeout { .. }) => Err(EtcdError::Unreachable {
                endpoints: shown,
                after: timeout,
                reason: "no answer".into(),
            }),
            Err(e) => Err(e),
        }
    }

    /// The endpoints, comma-separated.
    pub fn endpoints(&self) -> &str {
        &self.endpoints
    }

    /// Runs one call within the deadline.
    pub(crate) async fn bounded<T>(
        &self,
        op: &'static str,
        call: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T, EtcdError> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(r)) => Ok(r.into_inner()),
            Ok(Err(status)) => Err(EtcdError::Call {
                op,
                status: Box::new(status),
            }),
            Err(_) => Err(EtcdError::Timeout {
                op,
                after: self.timeout,
            }),
        }
    }

    /// The value of `key`, if any.
    pub async fn get(&self, key: &[u8]) -> Result<Option<KeyValue>, EtcdError> {
        let mut kv = self.kv.clone();
        let r = self
            .bounded(
                "range",
                kv.range(proto::RangeRequest {
                    key: key.to_vec(),
                    ..Default::default()
                }),
            )
            .await?;
        Ok(r.kvs.into_iter().next())
    }

    /// Every key starting with `prefix`, in key order, and the store's
    /// revision at the read.
    pub async fn get_prefix(&self, prefix: &[u8]) -> Result<(Vec<KeyValue>, i64), EtcdError> {
        let mut kv = self.kv.clone();
        let r = self
            .bounded(
                "range",
                kv.range(proto::RangeRequest {
                    key: prefix.to_vec(),
                    range_end: prefix_end(prefix),
                    ..Default::default()
                }),
            )
            .await?;
        Ok((r.kvs, r.header.map_or(0, |h| h.revision)))
    }

    /// Sets `key`, attached to `lease` (0: none); returns the new revision.
    pub async fn put(&self, key: &[u8], value: &[u8], lease: i64) -> Result<i64, EtcdError> {
        let mut kv = self.kv.clone();
        let r = self
            .bounded(
                "put",
                kv.put(proto::PutRequest {
                    key: key.to_vec(),
                    value: value.to_vec(),
                    lease,
                    prev_kv: false,
                }),
            )
            .await?;
        Ok(r.header.map_or(0, |h| h.revision))
    }

    /// Deletes `key`; true if it existed.
    pub async fn delete(&self, key: &[u8]) -> Result<bool, EtcdError> {
        let mut kv = self.kv.clone();
        let r = self
            .bounded(
                "delete",
                kv.delete_range(proto::DeleteRangeRequest {
                    key: key.to_vec(),
                    ..Default::default()
                }),
            )
            .await?;
        Ok(r.deleted > 0)
    }

    /// Sets `key` only if its modification revision is `mod_revision`
    /// (0: only if the key does not exist). True if it was set.
    pub async fn compare_and_swap(
        &self,
        key: &[u8],
        mod_revision: i64,
        value: &[u8],
        lease: i64,
    ) -> Result<bool, EtcdError> {
        let put = proto::request_op::Request::RequestPut(proto::PutRequest {
            key: key.to_vec(),
            value: value.to_vec(),
            lease,
            prev_kv: false,
        });
        self.if_mod_revision(key, mod_revision, put).await
    }

    /// Creates `key` (attached to `lease`) unless it exists, in one
    /// transaction that reads the key when it does: true if created, else
    /// false and the key as it is (`None` only if it went in between).
    pub async fn create_or_read(
        &self,
        key: &[u8],
        value: &[u8],
        lease: i64,
    ) -> Result<(bool, Option<KeyValue>), EtcdError> {
        let mut kv = self.kv.clone();
        let r = self
            .bounded(
                "txn",
                kv.txn(proto::TxnRequest {
                    compare: vec![mod_revision_is(key, 0)],
                    success: vec![proto::RequestOp {
                        request: Some(proto::request_op::Request::RequestPut(proto::PutRequest {
                            key: key.to_vec(),
                            value: value.to_vec(),
                            lease,
                            prev_kv: false,
                        })),
                    }],
                    failure: vec![proto::RequestOp {
                        request: Some(proto::request_op::Request::RequestRange(
                            proto::RangeRequest {
                                key: key.to_vec(),
                                ..Default::default()
                            },
                        )),
                    }],
                }),
            )
            .await?;
        if r.succeeded {
            return Ok((true, None));
        }
        let current = r.responses.into_iter().find_map(|op| match op.response {
            Some(proto::response_op::Response::ResponseRange(range)) => {
                range.kvs.into_iter().next()
            }
            _ => None,
        });
        Ok((false, current))
    }

    /// Deletes `key` only if its modification revision is `mod_revision`.
    /// True if it was deleted.
    pub async fn compare_and_delete(
        &self,
        key: &[u8],
        mod_revision: i64,
    ) -> Result<bool, EtcdError> {
        let delete = proto::request_op::Request::RequestDeleteRange(proto::DeleteRangeRequest {
            key: key.to_vec(),
            ..Default::default()
        });
        self.if_mod_revision(key, mod_revision, delete).await
    }

    /// Runs `op` in a transaction only if `key`'s modification revision is
    /// `mod_revision`; true if it ran.
    async fn if_mod_revision(
        &self,
        key: &[u8],
        mod_revision: i64,
        op: proto::request_op::Request,
    ) -> Result<bool, EtcdError> {
        let mut kv = self.kv.clone();
        let r = self
            .bounded(
                "txn",
                kv.txn(proto::TxnRequest {
                    compare: vec![mod_revision_is(key, mod_revision)],
                    success: vec![proto::RequestOp { request: Some(op) }],
                    failure: Vec::new(),
                }),
            )
            .await?;
        Ok(r.succeeded)
    }

    /// Grants a lease of `ttl` (whole seconds, at least 1); returns its id
    /// and the TTL etcd granted, in seconds.
    pub async fn grant(&self, ttl: Duration) -> Result<(i64, i64), EtcdError> {
        let mut lease = self.lease.clone();
        let secs = i64::try_from(ttl.as_secs().max(1)).unwrap_or(i64::MAX);
        let r = self
            .bounded(
                "lease grant",
                lease.lease_grant(proto::LeaseGrantRequest { ttl: secs, id: 0 }),
            )
            .await?;
        if !r.error.is_empty() {
            return Err(EtcdError::Lease(r.error));
        }
        Ok((r.id, r.ttl))
    }

    /// Revokes a lease: its keys are deleted at once.
    pub async fn revoke(&self, id: i64) -> Result<(), EtcdError> {
        let mut lease = self.lease.clone();
        self.bounded(
            "lease revoke",
            lease.lease_revoke(proto::LeaseRevokeRequest { id }),
        )
        .await?;
        Ok(())
    }
}

/// A transaction's condition: `key`'s modification revision is
/// `mod_revision` (0: the key does not exist).
fn mod_revision_is(key: &[u8], mod_revision: i64) -> proto::Compare {
    proto::Compare {
        result: proto::compare::CompareResult::Equal as i32,
        target: proto::compare::CompareTarget::Mod as i32,
        key: key.to_vec(),
        target_union: Some(proto::compare::TargetUnion::ModRevision(mod_revision)),
        range_end: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_ends_cover_exactly_the_prefix() {
        assert_eq!(prefix_end(b"/shoal/a"), b"/shoal/b");
        assert_eq!(prefix_end(b"a\xff"), b"b");
        assert_eq!(prefix_end(b"\xff\xff"), vec![0]);
    }
}
