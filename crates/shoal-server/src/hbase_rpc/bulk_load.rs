//! HBase's bulk load as `BulkLoadHFilesTool` (`completebulkload`) drives
//! it: `PrepareBulkLoad` (a bulk token), `BulkLoadHFile` (a group of
//! HFiles into one region) and `CleanupBulkLoad`.
//!
//! Shoal reads the HFiles where they are (the host's bulk load; nothing is
//! moved or staged), so the bulk token names the load, not a staging
//! directory, and cleanup has nothing to delete. A group is loaded as
//! HBase loads it: all of it into the region named, in one commit, each
//! file with a fresh sequence number (later writes win), or — when a file
//! reaches outside that region (it split since the tool grouped its files)
//! — none of it, answering `loaded=false` so the tool regroups and splits
//! the files again. A region name this server does not know answers
//! `NotServingRegionException` (the tool looks the region up again).
//!
//! HBase has no idempotency key for `BulkLoadHFile`; Shoal keys each load
//! by the bulk token, region and family paths, so a call the client
//! retries (its answer lost) loads nothing twice.

use super::NativeRpc;
use super::errors::{self, RpcError};
use crate::host::{BulkLoad, LoadInput};
use bytes::Bytes;
use prost::Message;
use shoal_import::RowRange;
use shoal_proto::hbase as pb;

/// Bulk tokens Shoal hands out start with this.
const TOKEN_PREFIX: &str = "shoal-bulkload:";

impl NativeRpc {
    /// One bulk-load call of `ClientService`: the encoded answer.
    pub(super) async fn bulk_load_call(
        &self,
        method: &str,
        param: Bytes,
    ) -> Result<Vec<u8>, RpcError> {
        Ok(match method {
            "PrepareBulkLoad" => {
                let r: pb::PrepareBulkLoadRequest = errors::request(method, param)?;
                self.prepare_bulk_load(r).await?.encode_to_vec()
            }
            "BulkLoadHFile" => {
                let r: pb::BulkLoadHFileRequest = errors::request(method, param)?;
                self.bulk_load_hfile(r).await?.encode_to_vec()
            }
            "CleanupBulkLoad" => {
                let r: pb::CleanupBulkLoadRequest = errors::request(method, param)?;
                if let Some(spec) = &r.region {
                    self.user_region(spec).await?;
                }
                // Nothing was staged: nothing to delete.
                pb::CleanupBulkLoadResponse {}.encode_to_vec()
            }
            _ => {
                return Err(RpcError::invalid(format!(
                    "ClientService.{method} is not a bulk-load call"
                )));
            }
        })
    }

    /// `PrepareBulkLoad`: a token naming the load (the table must exist).
    async fn prepare_bulk_load(
        &self,
        r: pb::PrepareBulkLoadRequest,
    ) -> Result<pb::PrepareBulkLoadResponse, RpcError> {
        let table = match &r.region {
            Some(spec) => self.user_region(spec).await?.table.clone(),
            None => match super::names::table_ref(&r.table_name.namespace, &r.table_name.qualifier)
            {
                super::names::TableRef::Table(t) => t,
                _ => {
                    return Err(RpcError::invalid(
                        "a bulk load goes into a user table, not hbase:meta",
                    ));
                }
            },
        };
        self.access().describe_table(&table).await?;
        let id: u128 = rand::random();
        Ok(pb::PrepareBulkLoadResponse {
            bulk_token: format!("{TOKEN_PREFIX}{table}:{id:032x}"),
        })
    }

    /// `BulkLoadHFile`: the group into the region named, whole or not at all.
    async fn bulk_load_hfile(
        &self,
        r: pb::BulkLoadHFileRequest,
    ) -> Result<pb::BulkLoadHFileResponse, RpcError> {
        // A load replicated back to the cluster it came from (HBase's rule).
        if r.cluster_ids.iter().any(|c| c == self.cluster_id()) {
            return Ok(pb::BulkLoadHFileResponse { loaded: true });
        }
        let view = self.user_region(&r.region).await?;
        let mut files = Vec::with_capacity(r.family_path.len());
        for fp in &r.family_path {
            let (location, path) = store_path(&fp.path)?;
            files.push(LoadInput {
                family: fp.family.clone(),
                location,
                path,
            });
        }
        let load_key = r
            .bulk_token
            .as_deref()
            .filter(|t| !t.is_empty())
            .map(|token| load_key(token, &view.encoded, &r.family_path));
        let load = BulkLoad {
            range: RowRange {
                start: view.start.clone(),
                end: view.end.clone(),
            },
            files,
            load_key,
            whole_files: true,
        };
        let outcome = self.access().bulk_load(&view.table, load).await?;
        if let Some(why) = outcome.refused {
            tracing::info!(
                table = %view.table,
                region = %view.encoded,
                "bulk load refused, the client regroups its files: {why}"
            );
            return Ok(pb::BulkLoadHFileResponse { loaded: false });
        }
        Ok(pb::BulkLoadHFileResponse { loaded: true })
    }
}

/// The store URL and path under it of a Hadoop path string: `file:/a/b`,
/// `file:///a/b` or `/a/b` (a file on the server's machine), or
/// `s3a://bucket/a/b`, `s3://…`, `gs://…` (read with the server's
/// credentials). Other file systems (`hdfs://`, …) are refused.
fn store_path(hadoop: &str) -> Result<(String, String), RpcError> {
    let (scheme, rest) = match hadoop.split_once(':') {
        Some((s, rest)) if !s.contains('/') => (s, rest),
        _ => ("file", hadoop),
    };
    let refuse = |why: &str| {
        RpcError::invalid(format!(
            "bulk load path {hadoop:?}: {why}; Shoal reads file:, s3a:, s3: and gs: paths \
             (docs/hbase-client.md, Bulk load)"
        ))
    };
    let (base, full) = match scheme {
        "file" => {
            // file:/a, file:///a, file://localhost/a.
            let local = match rest.strip_prefix("//") {
                None => rest,
                Some(after) => match after.find('/') {
                    Some(0) => after,
                    Some(i) if &after[..i] == "localhost" => &after[i..],
                    _ => return Err(refuse("a file on another machine")),
                },
            };
            if !local.starts_with('/') {
                return Err(refuse("not an absolute path"));
            }
            ("file://".to_string(), local.to_string())
        }
        "s3a" | "s3" | "gs" => {
            let Some(after) = rest.strip_prefix("//") else {
                return Err(refuse("no bucket"));
            };
            let (bucket, key) = after.split_once('/').unwrap_or((after, ""));
            if bucket.is_empty() || key.is_empty() {
                return Err(refuse("no bucket or no object"));
            }
            (format!("{scheme}://{bucket}"), format!("/{key}"))
        }
        _ => return Err(refuse(&format!("the {scheme}: file system is not served"))),
    };
    let Some((dir, name)) = full.rsplit_once('/') else {
        return Err(refuse("no file name"));
    };
    if name.is_empty() {
        return Err(refuse("no file name"));
    }
    let location = if dir.is_empty() && scheme == "file" {
        "file:///".to_string()
    } else {
        format!("{base}{dir}")
    };
    Ok((location, name.to_string()))
}

/// The load key of one group: a retry of the same call (same token,
/// region and files) is a no-op; anything else loads.
fn load_key(
    token: &str,
    region: &str,
    paths: &[pb::bulk_load_h_file_request::FamilyPath],
) -> String {
    use md5::{Digest, Md5};
    let mut h = Md5::new();
    h.update(token.as_bytes());
    h.update(b"\0");
    h.update(region.as_bytes());
    for p in paths {
        h.update(b"\0");
        h.update(&p.family);
        h.update(b"\0");
        h.update(p.path.as_bytes());
    }
    let d = h.finalize();
    let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
    format!("hbase-bulkload-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(p: &str) -> (String, String) {
        store_path(p).unwrap_or_else(|e| panic!("{p}: {}", e.message))
    }

    #[test]
    fn hadoop_paths_become_store_urls() {
        let want = ("file:///tmp/x/f".to_string(), "0a1b".to_string());
        assert_eq!(ok("file:/tmp/x/f/0a1b"), want);
        assert_eq!(ok("file:///tmp/x/f/0a1b"), want);
        assert_eq!(ok("file://localhost/tmp/x/f/0a1b"), want);
        assert_eq!(ok("/tmp/x/f/0a1b"), want);
        assert_eq!(
            ok("file:/0a1b"),
            ("file:///".to_string(), "0a1b".to_string())
        );
        assert_eq!(
            ok("s3a://bkt/load/f/0a1b"),
            ("s3a://bkt/load/f".to_string(), "0a1b".to_string())
        );
        assert_eq!(
            ok("gs://bkt/0a1b"),
            ("gs://bkt".to_string(), "0a1b".to_string())
        );
        for bad in [
            "hdfs://nn:8020/x/f/0a1b",
            "file://otherhost/x/f/0a1b",
            "file:relative/0a1b",
            "s3a://bkt",
            "file:/tmp/x/",
            "wasb://c@a/x",
        ] {
            let e = store_path(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad} accepted"));
            assert!(e.do_not_retry, "{bad}");
            assert!(e.message.contains(bad), "{}", e.message);
        }
    }

    #[test]
    fn load_keys_name_the_group() {
        let fp = |p: &str| pb::bulk_load_h_file_request::FamilyPath {
            family: Bytes::from_static(b"f"),
            path: p.to_string(),
        };
        let a = load_key("t1", "r1", &[fp("file:/a")]);
        assert_eq!(a, load_key("t1", "r1", &[fp("file:/a")]));
        assert_ne!(a, load_key("t2", "r1", &[fp("file:/a")]));
        assert_ne!(a, load_key("t1", "r2", &[fp("file:/a")]));
        assert_ne!(a, load_key("t1", "r1", &[fp("file:/b")]));
    }
}
