//! The virtual `hbase:meta`: the rows HBase's client reads to find regions
//! and table states, made on each read from Shoal's catalog and region map
//! (so splits show at once). Per table, row `<table>` holds `table:state`
//! (a raw `TableState`, no magic); per region, row
//! `<table>,<start>,<id>.<encoded>.` holds `info:regioninfo` ("PBUF" +
//! `RegionInfo`), `info:server`, `info:serverstartcode`,
//! `info:seqnumDuringOpen`, `info:sn` and `info:state`.

use super::names;
use crate::catalog::TableRecord;
use crate::host::Access;
use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase as pb;
use shoal_storage::cell::{Cell, CellType};
use shoal_storage::region::RowResult;
use std::collections::HashMap;

/// Where this server says it is.
#[derive(Debug, Clone)]
pub struct ServerIdentity {
    /// Host name clients connect to.
    pub host: String,
    /// Port.
    pub port: u16,
    /// When it started (ms): HBase's start code.
    pub start_code: u64,
}

impl ServerIdentity {
    /// This server: at `advertise` (`host:port`) if set, else at the
    /// address it listens on (a wildcard address announced as loopback).
    pub fn new(advertise: &str, listening: std::net::SocketAddr) -> ServerIdentity {
        let start_code = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_millis() as u64);
        if let Some((host, port)) = advertise.rsplit_once(':')
            && let Ok(port) = port.parse()
        {
            return ServerIdentity {
                host: host.to_string(),
                port,
                start_code,
            };
        }
        let ip = if listening.ip().is_unspecified() {
            std::net::IpAddr::from([127, 0, 0, 1])
        } else {
            listening.ip()
        };
        ServerIdentity {
            host: ip.to_string(),
            port: listening.port(),
            start_code,
        }
    }

    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Another server, at `host:port` (its start code unknown here).
    pub fn parse(address: &str) -> Option<ServerIdentity> {
        let (host, port) = address.rsplit_once(':')?;
        Some(ServerIdentity {
            host: host.to_string(),
            port: port.parse().ok()?,
            start_code: 1,
        })
    }

    /// As HBase's `ServerName`.
    pub fn server_name(&self) -> pb::ServerName {
        pb::ServerName {
            host_name: self.host.clone(),
            port: Some(u32::from(self.port)),
            start_code: Some(self.start_code),
        }
    }
}

/// One region as the client sees it.
#[derive(Debug, Clone)]
pub struct RegionView {
    /// Shoal's table.
    pub table: String,
    /// Shoal's region id.
    pub id: String,
    /// First row (inclusive); empty = open.
    pub start: Bytes,
    /// End row (exclusive); empty = open.
    pub end: Bytes,
    /// HBase's numeric region id.
    pub number: u64,
    /// Full region name.
    pub name: Bytes,
    /// Encoded name.
    pub encoded: String,
    /// Where it is served.
    pub server: Serving,
}

/// Where a region is served, as `hbase:meta` says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Serving {
    /// By this server.
    Here,
    /// By another, at this native-RPC address.
    At(String),
    /// By none now (unassigned, moving, or a server with no native RPC):
    /// its row has no `info:server`, and the client retries.
    Nowhere,
}

impl RegionView {
    /// The view of a Shoal region.
    pub fn new(table: &str, id: &str, start: Bytes, end: Bytes, server: Serving) -> RegionView {
        let number = names::region_number(id);
        let (name, encoded) = names::region_name(table, &start, number);
        RegionView {
            table: table.to_string(),
            id: id.to_string(),
            start,
            end,
            number,
            name,
            encoded,
            server,
        }
    }

    /// As HBase's `RegionInfo`.
    pub fn info(&self) -> pb::RegionInfo {
        pb::RegionInfo {
            region_id: self.number,
            table_name: table_name(&self.table),
            start_key: Some(self.start.clone()),
            end_key: Some(self.end.clone()),
            offline: Some(false),
            split: Some(false),
            replica_id: Some(0),
        }
    }

    /// True if `row` is in this region.
    pub fn holds(&self, row: &[u8]) -> bool {
        row >= &self.start[..] && (self.end.is_empty() || row < &self.end[..])
    }
}

/// HBase's `TableName` of a Shoal table.
pub fn table_name(table: &str) -> pb::TableName {
    let (ns, q) = table
        .split_once(':')
        .unwrap_or((names::DEFAULT_NAMESPACE, table));
    pb::TableName {
        namespace: Bytes::copy_from_slice(ns.as_bytes()),
        qualifier: Bytes::copy_from_slice(q.as_bytes()),
    }
}

/// The `TableSchema` of the virtual `hbase:meta` (`Admin.getDescriptor`,
/// the shell's `describe 'hbase:meta'`): the two families its rows hold,
/// `info` and `table`, one version each (each read is made afresh from the
/// catalog: there are no older versions).
pub fn meta_schema() -> pb::TableSchema {
    let pair = |k: &str, v: &str| pb::BytesBytesPair {
        first: Bytes::copy_from_slice(k.as_bytes()),
        second: Bytes::copy_from_slice(v.as_bytes()),
    };
    let family = |name: &'static str| pb::ColumnFamilySchema {
        name: Bytes::from_static(name.as_bytes()),
        attributes: vec![pair("VERSIONS", "1"), pair("IN_MEMORY", "true")],
        configuration: Vec::new(),
    };
    pb::TableSchema {
        table_name: Some(pb::TableName {
            namespace: Bytes::from_static(b"hbase"),
            qualifier: Bytes::from_static(b"meta"),
        }),
        attributes: vec![pair("IS_META", "true")],
        column_families: vec![family("info"), family("table")],
        configuration: Vec::new(),
    }
}

/// The meta region's `RegionInfo`.
pub fn meta_region_info() -> pb::RegionInfo {
    pb::RegionInfo {
        region_id: 1,
        table_name: pb::TableName {
            namespace: Bytes::from_static(names::SYSTEM_NAMESPACE.as_bytes()),
            qualifier: Bytes::from_static(names::META_QUALIFIER.as_bytes()),
        },
        start_key: Some(Bytes::new()),
        end_key: Some(Bytes::new()),
        offline: Some(false),
        split: Some(false),
        replica_id: Some(0),
    }
}

/// The regions of a table, as its catalog record lists them, each with
/// where it is served now (a disabled table's: here, so that calls get
/// `TableNotEnabledException`).
pub fn regions(access: &Access<'_>, record: &TableRecord) -> Vec<RegionView> {
    let map: HashMap<String, String> = if record.enabled {
        access
            .region_map(&record.name)
            .unwrap_or_default()
            .into_iter()
            .map(|l| (l.region_id, l.hbase))
            .collect()
    } else {
        HashMap::new()
    };
    record
        .regions
        .iter()
        .map(|r| {
            let server = match map.get(&r.id) {
                _ if !record.enabled => Serving::Here,
                Some(h) if h.is_empty() => Serving::Here,
                Some(h) => Serving::At(h.clone()),
                None => Serving::Nowhere,
            };
            RegionView::new(
                &record.name,
                &r.id,
                r.start_row.clone(),
                r.end_row.clone(),
                server,
            )
        })
        .collect()
}

fn cell(row: &Bytes, family: &'static str, qualifier: &'static str, ts: i64, value: Bytes) -> Cell {
    Cell {
        row: row.clone(),
        family: Bytes::from_static(family.as_bytes()),
        qualifier: Bytes::from_static(qualifier.as_bytes()),
        timestamp: ts,
        kind: CellType::Put,
        seq: 0,
        value,
    }
}

/// A table's `table:state` value: a raw `TableState` protobuf.
pub fn table_state(enabled: bool) -> Bytes {
    let state = if enabled {
        pb::table_state::State::Enabled
    } else {
        pb::table_state::State::Disabled
    };
    Bytes::from(
        pb::TableState {
            state: state as i32,
        }
        .encode_to_vec(),
    )
}

/// The meta rows of these tables, in row order.
pub fn rows(access: &Access<'_>, tables: &[TableRecord], me: &ServerIdentity) -> Vec<RowResult> {
    let ts = me.start_code as i64;
    let mut out = Vec::new();
    for t in tables {
        let key = Bytes::copy_from_slice(t.name.as_bytes());
        out.push(RowResult {
            cells: vec![cell(&key, "table", "state", ts, table_state(t.enabled))],
            row: key,
        });
        for r in regions(access, t) {
            let at = match &r.server {
                Serving::Here => Some(me.clone()),
                Serving::At(a) => ServerIdentity::parse(a),
                Serving::Nowhere => None,
            };
            let mut info = b"PBUF".to_vec();
            // Encoding into a Vec cannot fail.
            let _ = r.info().encode(&mut info);
            let key = r.name.clone();
            let state = match (&at, t.enabled) {
                (_, false) => "CLOSED",
                (Some(_), true) => "OPEN",
                (None, true) => "OFFLINE",
            };
            // Qualifiers in byte order, as a stored row would have them.
            let mut cells = vec![cell(&key, "info", "regioninfo", ts, Bytes::from(info))];
            cells.push(cell(
                &key,
                "info",
                "seqnumDuringOpen",
                ts,
                Bytes::copy_from_slice(&1u64.to_be_bytes()),
            ));
            if let Some(at) = &at {
                cells.push(cell(&key, "info", "server", ts, Bytes::from(at.address())));
                cells.push(cell(
                    &key,
                    "info",
                    "serverstartcode",
                    ts,
                    Bytes::copy_from_slice(&at.start_code.to_be_bytes()),
                ));
                let sn = format!("{},{},{}", at.host, at.port, at.start_code);
                cells.push(cell(&key, "info", "sn", ts, Bytes::from(sn)));
            }
            cells.push(cell(
                &key,
                "info",
                "state",
                ts,
                Bytes::from_static(state.as_bytes()),
            ));
            out.push(RowResult { row: key, cells });
        }
    }
    out.sort_by(|a, b| order(&a.row, &b.row));
    out
}

/// HBase's order of meta rows (`MetaCellComparator`): by table name (up
/// to the first comma), then start key (up to the last comma), then the
/// region id — not bytewise: the client's bounds rely on it (a table's
/// regions end before `"<table> ,,"`).
pub fn order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let first = |r: &[u8]| r.iter().position(|c| *c == b',');
    let (la, lb) = (first(a), first(b));
    let o = a[..la.unwrap_or(a.len())].cmp(&b[..lb.unwrap_or(b.len())]);
    if o != Ordering::Equal {
        return o;
    }
    let (la, lb) = match (la, lb) {
        (None, None) => return Ordering::Equal,
        (None, Some(_)) => return Ordering::Less,
        (Some(_), None) => return Ordering::Greater,
        (Some(x), Some(y)) => (x + 1, y + 1),
    };
    let last = |r: &[u8], from: usize| r[from..].iter().rposition(|c| *c == b',').map(|p| p + from);
    let (fa, fb) = (last(a, la), last(b, lb));
    let o = a[la..fa.unwrap_or(a.len())].cmp(&b[lb..fb.unwrap_or(b.len())]);
    if o != Ordering::Equal {
        return o;
    }
    let tail = |r: &'_ [u8], f: Option<usize>| -> Vec<u8> {
        f.map_or(Vec::new(), |f| r[f + 1..].to_vec())
    };
    tail(a, fa).cmp(&tail(b, fb))
}

/// The table a meta row key (or scan bound) belongs to, if it names one.
pub fn table_of_key(key: &[u8]) -> Option<&[u8]> {
    let end = key.iter().position(|b| *b == b',').unwrap_or(key.len());
    (end > 0).then(|| &key[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_meta_descriptor_names_the_families_its_rows_hold() {
        let m = meta_schema();
        let name = m.table_name.unwrap();
        assert_eq!(
            (&name.namespace[..], &name.qualifier[..]),
            (&b"hbase"[..], &b"meta"[..])
        );
        let families: Vec<&[u8]> = m.column_families.iter().map(|f| &f.name[..]).collect();
        assert_eq!(families, [&b"info"[..], &b"table"[..]]);
        assert!(
            m.attributes
                .iter()
                .any(|a| &a.first[..] == b"IS_META" && &a.second[..] == b"true")
        );
    }

    #[test]
    fn region_views() {
        let r = RegionView::new(
            "t",
            "01hzzzzzzzzzzzzzzzzzzzzzzz",
            Bytes::from_static(b"m"),
            Bytes::new(),
            Serving::Here,
        );
        assert!(r.holds(b"m") && r.holds(b"zz") && !r.holds(b"a"));
        assert!(r.name.starts_with(b"t,m,"));
        let info = r.info();
        assert_eq!(info.start_key.as_deref(), Some(&b"m"[..]));
        assert_eq!(table_of_key(b"t,m,1.x."), Some(&b"t"[..]));
        assert_eq!(table_of_key(b"t"), Some(&b"t"[..]));
        assert_eq!(table_of_key(b",x"), None);
        use std::cmp::Ordering::*;
        // A table's regions sort before "<table> ,," (HBase's stop row).
        assert_eq!(order(b"t,,1.x.", b"t ,,"), Less);
        assert_eq!(order(b"t,m,1.x.", b"t,,"), Greater);
        // By start key, then id; a start key holding commas.
        assert_eq!(order(b"t,a,b,5.x.", b"t,a,6.x."), Greater);
        assert_eq!(order(b"t,a,5.x.", b"t,a,99999999999999"), Less);
        assert_eq!(order(b"t", b"t,,"), Less);
        let state = pb::TableState::decode(table_state(false)).unwrap();
        assert_eq!(state.state, pb::table_state::State::Disabled as i32);
    }
}
