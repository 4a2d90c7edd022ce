//! The znodes this registry serves, made on each read from the facts every
//! registry door tells (`crate::hbase_rpc::registry_facts`), so they are
//! never stale. Under `znode_parent` (`/hbase`), as an HBase 2 cluster
//! writes them:
//!
//! - `hbaseid`: `ClusterId`.
//! - `master`: `Master` (the active master's `ServerName`).
//! - `meta-region-server`: `MetaRegionServer` (state `OPEN`).
//! - `running`: `ClusterUp` (the start date).
//! - `rs`: one empty child per live server, named `host,port,startcode`.
//! - `backup-masters`: likewise, the live servers that are not master.
//!
//! Each datum is what HBase's `RecoverableZooKeeper` stores: the metadata
//! prefix (`0xFF`, a 4-byte length, the writer's identifier and an 8-byte
//! salt) then `PBUF` and the protobuf. The znodes above `znode_parent`
//! exist (empty) so a client may walk down to it. Stats say every znode
//! was made at zxid 1 when the server started, version 0: the tree has no
//! history (the facts under it do change, in a cluster, without a zxid
//! moving or a watch firing).

use super::messages::Stat;
use crate::hbase_rpc::ServerIdentity;
use crate::hbase_rpc::registry_facts::{RegistryFacts, server_name_at};
use prost::Message;
use shoal_proto::hbase as pb;

/// HBase's `RegionState.State.OPEN`.
const STATE_OPEN: i32 = 3;
/// The zxid every znode was made at.
pub const ZXID: i64 = 1;

/// HBase's `ZooKeeperProtos.Master`.
#[derive(Clone, PartialEq, prost::Message)]
struct MasterZnode {
    #[prost(message, required, tag = "1")]
    master: pb::ServerName,
    #[prost(uint32, optional, tag = "2")]
    rpc_version: Option<u32>,
    #[prost(uint32, optional, tag = "3")]
    info_port: Option<u32>,
}

/// HBase's `ZooKeeperProtos.MetaRegionServer`.
#[derive(Clone, PartialEq, prost::Message)]
struct MetaRegionServerZnode {
    #[prost(message, required, tag = "1")]
    server: pb::ServerName,
    #[prost(uint32, optional, tag = "2")]
    rpc_version: Option<u32>,
    #[prost(int32, optional, tag = "3")]
    state: Option<i32>,
}

/// HBase's `ZooKeeperProtos.ClusterUp`.
#[derive(Clone, PartialEq, prost::Message)]
struct ClusterUpZnode {
    #[prost(string, required, tag = "1")]
    start_date: String,
}

/// One znode: its data, its children's names, its stat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Znode {
    /// The data (empty for the directories).
    pub data: Vec<u8>,
    /// The children's names, sorted.
    pub children: Vec<String>,
    /// Its metadata.
    pub stat: Stat,
}

/// What the tree is made of at one moment.
#[derive(Debug, Clone)]
pub struct Tree<'a> {
    /// `zookeeper.znode.parent`, e.g. `/hbase`.
    pub parent: &'a str,
    /// The cluster id.
    pub cluster_id: &'a str,
    /// This server's native RPC.
    pub me: &'a ServerIdentity,
    /// Master, meta location, live servers.
    pub facts: RegistryFacts,
    /// When this server started (ms).
    pub started_ms: i64,
}

impl Tree<'_> {
    /// The znode at `path`, or None: no such znode.
    pub fn get(&self, path: &str) -> Option<Znode> {
        if !path.starts_with('/') {
            return None;
        }
        if let Some(children) = self.above_parent(path) {
            return Some(self.node(Vec::new(), children));
        }
        let rest = path.strip_prefix(self.parent)?;
        if rest.is_empty() {
            let mut children: Vec<String> = [
                "backup-masters",
                "hbaseid",
                "meta-region-server",
                "rs",
                "running",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            if self.facts.master.is_some() {
                children.push("master".into());
            }
            children.sort();
            return Some(self.node(Vec::new(), children));
        }
        let name = rest.strip_prefix('/')?;
        let (dir, child) = match name.split_once('/') {
            Some((d, c)) => (d, Some(c)),
            None => (name, None),
        };
        match (dir, child) {
            ("hbaseid", None) => Some(self.node(
                self.datum(&pb::ClusterId {
                    cluster_id: self.cluster_id.to_string(),
                }),
                Vec::new(),
            )),
            ("master", None) => {
                let master = self.facts.master.as_deref()?;
                Some(self.node(
                    self.datum(&MasterZnode {
                        master: server_name_at(self.me, master),
                        rpc_version: Some(0),
                        info_port: Some(0),
                    }),
                    Vec::new(),
                ))
            }
            ("meta-region-server", None) => Some(self.node(
                self.datum(&MetaRegionServerZnode {
                    server: server_name_at(self.me, &self.facts.meta),
                    rpc_version: Some(0),
                    state: Some(STATE_OPEN),
                }),
                Vec::new(),
            )),
            ("running", None) => Some(self.node(
                self.datum(&ClusterUpZnode {
                    start_date: self.started_ms.to_string(),
                }),
                Vec::new(),
            )),
            ("rs", None) => Some(self.node(Vec::new(), self.live())),
            ("backup-masters", None) => Some(self.node(Vec::new(), self.backups())),
            ("rs", Some(c)) if self.live().iter().any(|s| s == c) => {
                Some(self.node(Vec::new(), Vec::new()))
            }
            ("backup-masters", Some(c)) if self.backups().iter().any(|s| s == c) => {
                Some(self.node(Vec::new(), Vec::new()))
            }
            _ => None,
        }
    }

    /// The children of `path` if it is `/` or a znode above the parent.
    fn above_parent(&self, path: &str) -> Option<Vec<String>> {
        let below = if path == "/" {
            self.parent.strip_prefix('/')?
        } else {
            self.parent.strip_prefix(path)?.strip_prefix('/')?
        };
        let next = below.split('/').next().unwrap_or(below);
        Some(vec![next.to_string()])
    }

    fn live(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .facts
            .servers
            .iter()
            .map(|s| self.znode_name(s))
            .collect();
        v.sort();
        v
    }

    fn backups(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .facts
            .backup_masters()
            .map(|s| self.znode_name(s))
            .collect();
        v.sort();
        v
    }

    /// A server as HBase names its znodes: `host,port,startcode`.
    fn znode_name(&self, address: &str) -> String {
        let n = server_name_at(self.me, address);
        format!(
            "{},{},{}",
            n.host_name,
            n.port.unwrap_or(0),
            n.start_code.unwrap_or(0)
        )
    }

    /// `message` as HBase stores it: metadata, `PBUF`, the protobuf.
    fn datum(&self, message: &impl Message) -> Vec<u8> {
        let id = format!("shoal@{}", self.me.address());
        let salt = self.me.start_code.to_be_bytes();
        let id_len = id.len() + salt.len();
        let mut out = Vec::with_capacity(1 + 4 + id_len + 4 + message.encoded_len());
        out.push(0xFF);
        out.extend_from_slice(&(id_len as u32).to_be_bytes());
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(&salt);
        out.extend_from_slice(b"PBUF");
        // Encoding into a Vec cannot fail.
        let _ = message.encode(&mut out);
        out
    }

    fn node(&self, data: Vec<u8>, children: Vec<String>) -> Znode {
        let stat = Stat {
            czxid: ZXID,
            mzxid: ZXID,
            ctime: self.started_ms,
            mtime: self.started_ms,
            version: 0,
            cversion: 0,
            aversion: 0,
            ephemeral_owner: 0,
            data_length: i32::try_from(data.len()).unwrap_or(i32::MAX),
            num_children: i32::try_from(children.len()).unwrap_or(i32::MAX),
            pzxid: ZXID,
        };
        Znode {
            data,
            children,
            stat,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> ServerIdentity {
        ServerIdentity {
            host: "127.0.0.1".into(),
            port: 16020,
            start_code: 1_700_000_000_123,
        }
    }

    fn tree<'a>(me: &'a ServerIdentity, parent: &'a str) -> Tree<'a> {
        Tree {
            parent,
            cluster_id: "c1d2",
            me,
            facts: RegistryFacts {
                master: Some(me.address()),
                servers: vec![me.address(), "10.0.0.2:16020".into()],
                meta: me.address(),
            },
            started_ms: 5,
        }
    }

    /// HBase's `removeMetaData` then `PBUF`: the protobuf.
    fn strip(data: &[u8]) -> &[u8] {
        assert_eq!(data[0], 0xFF);
        let n = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
        let rest = &data[5 + n..];
        assert_eq!(&rest[..4], b"PBUF");
        &rest[4..]
    }

    #[test]
    fn znodes_hold_what_hbase_writes() {
        let me = me();
        let t = tree(&me, "/hbase");
        let id = t.get("/hbase/hbaseid").unwrap();
        assert_eq!(
            pb::ClusterId::decode(strip(&id.data)).unwrap().cluster_id,
            "c1d2"
        );
        assert_eq!(id.stat.data_length as usize, id.data.len());
        let m = t.get("/hbase/master").unwrap();
        let m = MasterZnode::decode(strip(&m.data)).unwrap();
        assert_eq!(m.master.start_code, Some(1_700_000_000_123));
        let meta = t.get("/hbase/meta-region-server").unwrap();
        let meta = MetaRegionServerZnode::decode(strip(&meta.data)).unwrap();
        assert_eq!(
            (meta.server.port, meta.state),
            (Some(16020), Some(STATE_OPEN))
        );
        let rs = t.get("/hbase/rs").unwrap();
        assert_eq!(
            rs.children,
            ["10.0.0.2,16020,1", "127.0.0.1,16020,1700000000123"]
        );
        assert_eq!(rs.stat.num_children, 2);
        assert!(t.get("/hbase/rs/10.0.0.2,16020,1").is_some());
        assert_eq!(
            t.get("/hbase/backup-masters").unwrap().children,
            ["10.0.0.2,16020,1"]
        );
        assert!(
            t.get("/hbase")
                .unwrap()
                .children
                .contains(&"meta-region-server".to_string())
        );
    }

    #[test]
    fn unknown_paths_and_parents() {
        let me = me();
        let t = tree(&me, "/a/hbase");
        assert_eq!(t.get("/").unwrap().children, ["a"]);
        assert_eq!(t.get("/a").unwrap().children, ["hbase"]);
        assert!(t.get("/a/hbase/hbaseid").is_some());
        for missing in [
            "/hbase",
            "/a/hb",
            "/a/hbase/nope",
            "/a/hbase/rs/x,1,2",
            "/a/hbase/hbaseid/x",
            "/a/hbasex",
            "",
            "/a/",
        ] {
            assert!(t.get(missing).is_none(), "{missing}");
        }
        // No master while one is elected: no znode.
        let mut t = tree(&me, "/hbase");
        t.facts.master = None;
        assert!(t.get("/hbase/master").is_none());
        assert!(
            !t.get("/hbase")
                .unwrap()
                .children
                .contains(&"master".to_string())
        );
    }
}
