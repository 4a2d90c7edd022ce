//! HBase shell arguments turned into client requests: family hashes,
//! `create` and `alter` requests, `get` and `scan` options, `deleteall`.

use super::args::{Args, split_column};
use super::commands::CommandError;
use super::value::Value;
use shoal_client::proto::{AlterTableRequest, CreateTableRequest, KeepDeletedCells};
use shoal_client::{
    BloomType, Compression, FamilySchema, Get, InMemoryCompaction, RowMutation, Scan,
};

type Result<T> = std::result::Result<T, CommandError>;

fn usage(message: impl Into<String>) -> CommandError {
    CommandError::Usage(message.into())
}

/// `n` as a positive `u32` (VERSIONS, LIMIT …).
fn positive(key: &str, n: i64) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| usage(format!("{key} must be a positive integer, got {n}")))
}

fn time_range(key: &str, v: &Value) -> Result<(i64, i64)> {
    match v {
        Value::Array(r) => match r.as_slice() {
            [Value::Int(a), Value::Int(b)] => Ok((*a, *b)),
            _ => Err(usage(format!("{key} must be [min, max] in milliseconds"))),
        },
        _ => Err(usage(format!("{key} must be [min, max] in milliseconds"))),
    }
}

fn bool_of(key: &str, v: &Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => match other.as_text().map(|t| t.to_ascii_lowercase()).as_deref() {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            _ => Err(usage(format!("{key} must be true or false"))),
        },
    }
}

/// A non-negative integer written as a number or a string (`'65536'`).
fn non_negative(key: &str, v: &Value) -> Result<u64> {
    let n = match v {
        Value::Int(n) => Some(*n),
        Value::Str(_) => v.as_text().and_then(|t| t.trim().parse::<i64>().ok()),
        _ => None,
    };
    n.and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| usage(format!("{key} must be a non-negative integer")))
}

fn u32_of(key: &str, v: &Value) -> Result<u32> {
    u32::try_from(non_negative(key, v)?).map_err(|_| usage(format!("{key} is too large")))
}

/// The family settings `{NAME => 'cf', VERSIONS => 3, …}` accepts.
const FAMILY_KEYS: &str = "NAME, VERSIONS, MIN_VERSIONS, TTL, BLOCKSIZE, COMPRESSION, BLOOMFILTER, IN_MEMORY, BLOCKCACHE, PREFETCH_BLOCKS_ON_OPEN, CACHE_SCANS, IN_MEMORY_COMPACTION, KEEP_DELETED_CELLS";

/// A family's settings from `{NAME => 'cf', VERSIONS => 3, …}`; settings
/// not given stay unset (defaults on create, unchanged on alter).
pub fn family_from_hash(h: &[(String, Value)]) -> Result<FamilySchema> {
    let mut f = FamilySchema::default();
    for (k, v) in h {
        match k.as_str() {
            "NAME" => f.name = v.as_text().ok_or_else(|| usage("NAME must be a string"))?,
            "VERSIONS" => f.max_versions = Some(u32_of(k, v)?),
            "MIN_VERSIONS" => f.min_versions = Some(u32_of(k, v)?),
            "TTL" => {
                f.ttl_seconds = Some(match v.as_text().as_deref() {
                    Some("FOREVER") => 0,
                    _ => non_negative(k, v)?,
                })
            }
            "BLOCKSIZE" => f.block_size = Some(u32_of(k, v)?),
            "COMPRESSION" => {
                f.compression = match v.as_text().map(|t| t.to_ascii_uppercase()).as_deref() {
                    Some("NONE") => Compression::None,
                    Some("LZ4") => Compression::Lz4,
                    Some("ZSTD") => Compression::Zstd,
                    _ => return Err(usage("COMPRESSION must be 'NONE', 'LZ4' or 'ZSTD'")),
                } as i32
            }
            "BLOOMFILTER" => {
                f.bloom = match v.as_text().map(|t| t.to_ascii_uppercase()).as_deref() {
                    Some("NONE") => BloomType::None,
                    Some("ROW") => BloomType::Row,
                    Some("ROWCOL") => BloomType::Rowcol,
                    _ => return Err(usage("BLOOMFILTER must be 'NONE', 'ROW' or 'ROWCOL'")),
                } as i32
            }
            "IN_MEMORY" => f.in_memory = Some(bool_of(k, v)?),
            "BLOCKCACHE" => f.cache_data_on_read = Some(bool_of(k, v)?),
            "PREFETCH_BLOCKS_ON_OPEN" => f.prefetch_on_open = Some(bool_of(k, v)?),
            "CACHE_SCANS" => f.cache_scans = Some(bool_of(k, v)?),
            "IN_MEMORY_COMPACTION" => {
                f.in_memory_compaction =
                    match v.as_text().map(|t| t.to_ascii_uppercase()).as_deref() {
                        Some("NONE") => InMemoryCompaction::None,
                        Some("BASIC") => InMemoryCompaction::Basic,
                        Some("EAGER") => InMemoryCompaction::Eager,
                        _ => {
                            return Err(usage(
                                "IN_MEMORY_COMPACTION must be 'NONE', 'BASIC' or 'EAGER'",
                            ));
                        }
                    } as i32
            }
            "KEEP_DELETED_CELLS" => {
                let text = v.as_text().map(|t| t.to_ascii_uppercase());
                f.keep_deleted_cells = match text.as_deref() {
                    Some("FALSE") => KeepDeletedCells::False,
                    Some("TRUE") => KeepDeletedCells::True,
                    Some("TTL") => KeepDeletedCells::Ttl,
                    _ => match bool_of(k, v) {
                        Ok(true) => KeepDeletedCells::True,
                        Ok(false) => KeepDeletedCells::False,
                        Err(_) => {
                            return Err(usage(
                                "KEEP_DELETED_CELLS must be 'FALSE', 'TRUE' or 'TTL'",
                            ));
                        }
                    },
                } as i32
            }
            other => {
                return Err(usage(format!(
                    "unknown family setting {other}; known: {FAMILY_KEYS}"
                )));
            }
        }
    }
    if f.name.is_empty() {
        return Err(usage("a family hash needs NAME"));
    }
    Ok(f)
}

/// `create 't1', 'cf1', {NAME => 'cf2', …}, SPLITS => ['g', 'n']`.
pub fn create_request(a: &Args) -> Result<CreateTableRequest> {
    if a.values.len() < 2 {
        return Err(a.usage());
    }
    let mut req = CreateTableRequest {
        name: a.text(0)?,
        ..Default::default()
    };
    for v in &a.values[1..] {
        match v {
            Value::Str(_) => req.families.push(FamilySchema {
                name: v.as_text().unwrap_or_default(),
                ..Default::default()
            }),
            Value::Hash(h) if h.iter().any(|(k, _)| k == "NAME") => {
                req.families.push(family_from_hash(h)?)
            }
            Value::Hash(h) => {
                for (k, v) in h {
                    match (k.as_str(), v) {
                        ("SPLITS", Value::Array(keys)) => {
                            for key in keys {
                                let key = key
                                    .as_bytes()
                                    .ok_or_else(|| usage("SPLITS must be an array of strings"))?;
                                req.split_keys.push(key.to_vec());
                            }
                        }
                        _ => {
                            return Err(usage(format!(
                                "create: unknown option {k}; a family hash needs NAME, the table option is SPLITS => ['row', …]"
                            )));
                        }
                    }
                }
            }
            other => {
                return Err(usage(format!(
                    "create: a family is a name or a hash with NAME, not {}",
                    other.kind()
                )));
            }
        }
    }
    if req.families.is_empty() {
        return Err(usage("create: a table needs at least one column family"));
    }
    Ok(req)
}

/// `alter 't1', {NAME => 'cf', VERSIONS => 5}` (add or change),
/// `alter 't1', 'delete' => 'cf'` or `alter 't1', NAME => 'cf', METHOD => 'delete'`.
pub fn alter_request(a: &Args) -> Result<AlterTableRequest> {
    if a.values.len() < 2 {
        return Err(a.usage());
    }
    let mut req = AlterTableRequest {
        name: a.text(0)?,
        ..Default::default()
    };
    for v in &a.values[1..] {
        match v {
            Value::Hash(h) => {
                let find = |key: &str| h.iter().find(|(k, _)| k == key).map(|(_, v)| v);
                let method = find("METHOD").and_then(Value::as_text);
                if let Some(fam) = find("delete") {
                    req.delete_families
                        .push(fam.as_text().ok_or_else(|| a.usage())?);
                } else if method.as_deref() == Some("delete") {
                    let fam = find("NAME")
                        .and_then(Value::as_text)
                        .ok_or_else(|| usage("alter: METHOD => 'delete' needs NAME"))?;
                    req.delete_families.push(fam);
                } else if let Some(m) = method {
                    return Err(usage(format!(
                        "alter: METHOD => '{m}' is not supported; only 'delete'"
                    )));
                } else {
                    req.upsert_families.push(family_from_hash(h)?);
                }
            }
            Value::Str(_) => req.upsert_families.push(FamilySchema {
                name: v.as_text().unwrap_or_default(),
                ..Default::default()
            }),
            _ => return Err(a.usage()),
        }
    }
    Ok(req)
}

/// A column spec: family, and qualifier unless the whole family.
type ColumnSpec = (Vec<u8>, Option<Vec<u8>>);

/// `cf` or `cf:q`.
fn column_spec(spec: &Value) -> Result<ColumnSpec> {
    let bytes = match spec {
        Value::Str(b) => b.clone(),
        Value::Word(w) => w.as_bytes().to_vec(),
        other => {
            return Err(usage(format!(
                "a column is 'family' or 'family:qualifier', not {}",
                other.kind()
            )));
        }
    };
    match split_column(&bytes) {
        ([], _) => Err(usage(format!(
            "{:?} has an empty family",
            String::from_utf8_lossy(&bytes)
        ))),
        (f, q) => Ok((f.to_vec(), q.map(<[u8]>::to_vec))),
    }
}

/// One column spec or an array of them.
fn column_specs(v: &Value) -> Result<Vec<ColumnSpec>> {
    match v {
        Value::Array(items) => items.iter().map(column_spec).collect(),
        one => Ok(vec![column_spec(one)?]),
    }
}

/// `get 't1', 'row' [, 'cf:q' | 'cf' | {COLUMN => …, VERSIONS => n, TIMERANGE => [a, b], TIMESTAMP => t}]`.
pub fn get_from_args(a: &Args) -> Result<Get> {
    a.count(2, 3)?;
    let mut get = Get::new(a.bytes(1)?);
    let add = |get: Get, cols: Vec<ColumnSpec>| {
        cols.into_iter().fold(get, |g, (f, q)| match q {
            Some(q) => g.column(f, q),
            None => g.family(f),
        })
    };
    match a.get(2) {
        None => {}
        Some(v @ (Value::Str(_) | Value::Array(_))) => get = add(get, column_specs(v)?),
        Some(Value::Hash(h)) => {
            for (k, v) in h {
                get = match (k.as_str(), v) {
                    ("COLUMN" | "COLUMNS", v) => add(get, column_specs(v)?),
                    ("VERSIONS", Value::Int(n)) => get.versions(positive(k, *n)?),
                    ("TIMERANGE", v) => {
                        let (min, max) = time_range(k, v)?;
                        get.time_range(min, max)
                    }
                    ("TIMESTAMP", Value::Int(ts)) => get.timestamp(*ts),
                    _ => {
                        return Err(usage(format!(
                            "get: unknown or malformed option {k}; known: COLUMN, VERSIONS, TIMERANGE, TIMESTAMP"
                        )));
                    }
                };
            }
        }
        Some(_) => return Err(a.usage()),
    }
    Ok(get)
}

fn successor(row: &[u8]) -> Vec<u8> {
    let mut v = row.to_vec();
    v.push(0);
    v
}

/// A scan from HBase shell options. With REVERSED, STARTROW is the high end
/// (inclusive) and STOPROW the low end (exclusive), as in HBase;
/// ROWPREFIXFILTER replaces both.
pub fn scan_from_hash(h: &[(String, Value)]) -> Result<Scan> {
    let mut scan = Scan::new();
    let (mut start, mut stop, mut prefix) = (None, None, None);
    let mut reversed = false;
    let row = |k: &str, v: &Value| {
        v.as_bytes()
            .map(<[u8]>::to_vec)
            .ok_or_else(|| usage(format!("{k} must be a string")))
    };
    for (k, v) in h {
        scan = match (k.as_str(), v) {
            ("STARTROW", v) => {
                start = Some(row(k, v)?);
                scan
            }
            ("STOPROW" | "ENDROW", v) => {
                stop = Some(row(k, v)?);
                scan
            }
            ("ROWPREFIXFILTER", v) => {
                prefix = Some(row(k, v)?);
                scan
            }
            ("LIMIT", Value::Int(n)) => scan.limit(u64::from(positive(k, *n)?)),
            ("BATCH", Value::Int(n)) => scan.batch(positive(k, *n)?),
            ("VERSIONS", Value::Int(n)) => scan.versions(positive(k, *n)?),
            ("REVERSED", v) => {
                reversed = bool_of(k, v)?;
                scan
            }
            ("CACHE_BLOCKS", v) => {
                if bool_of(k, v)? {
                    scan
                } else {
                    scan.skip_cache()
                }
            }
            ("TIMERANGE", v) => {
                let (a, b) = time_range(k, v)?;
                scan.time_range(a, b)
            }
            ("TIMESTAMP", Value::Int(ts)) => scan.time_range(*ts, ts.saturating_add(1)),
            ("FILTER", v) => {
                let text = v
                    .as_bytes()
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .ok_or_else(|| {
                        usage("FILTER must be a string in HBase's filter language, e.g. \"PrefixFilter('a')\"")
                    })?;
                scan.filter(text)
            }
            ("COLUMNS" | "COLUMN", v) => {
                column_specs(v)?
                    .into_iter()
                    .fold(scan, |s, (f, q)| match q {
                        Some(q) => s.column(f, q),
                        None => s.family(f),
                    })
            }
            _ => {
                return Err(usage(format!(
                    "scan: unknown or malformed option {k}; known: STARTROW, STOPROW, ROWPREFIXFILTER, FILTER, LIMIT, BATCH, VERSIONS, REVERSED, CACHE_BLOCKS, TIMERANGE, TIMESTAMP, COLUMNS"
                )));
            }
        };
    }
    if let Some(p) = prefix {
        scan = scan.prefix(p);
    } else if reversed {
        if let Some(s) = start {
            scan = scan.stop(successor(&s));
        }
        if let Some(s) = stop {
            scan = scan.start(successor(&s));
        }
    } else {
        if let Some(s) = start {
            scan = scan.start(s);
        }
        if let Some(s) = stop {
            scan = scan.stop(s);
        }
    }
    Ok(if reversed { scan.reverse() } else { scan })
}

/// `deleteall 't1', 'row' [, 'cf' | 'cf:q'] [, timestamp]`.
pub fn deleteall_mutation(a: &Args) -> Result<RowMutation> {
    a.count(2, 4)?;
    let m = RowMutation::new(a.bytes(1)?);
    let (spec, ts) = match (a.get(2), a.get(3)) {
        (None, _) => (None, None),
        (Some(Value::Int(t)), None) => (None, Some(*t)),
        (Some(Value::Str(_)), _) => (Some(column_spec(&a.values[2])?), a.opt_int(3)?),
        _ => return Err(a.usage()),
    };
    Ok(match spec {
        None => m.delete_row(ts),
        Some((f, Some(q))) => m.delete_column(f, q, ts),
        Some((f, None)) => m.delete_family(f, ts),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parser::parse;
    use shoal_client::proto as pb;

    /// Runs `f` on the arguments of `line`.
    fn with_args<T>(line: &str, f: impl Fn(&Args) -> T) -> T {
        let cmd = parse(line).unwrap().remove(0);
        f(&Args {
            name: "x",
            values: &cmd.args,
        })
    }

    fn hash(line: &str) -> Vec<(String, Value)> {
        with_args(line, |a| match &a.values[0] {
            Value::Hash(h) => h.clone(),
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn family_hashes_convert() {
        let f = family_from_hash(&hash(
            "x {NAME => 'cf', VERSIONS => 3, MIN_VERSIONS => 1, TTL => 86400, IN_MEMORY => true, COMPRESSION => 'zstd', BLOOMFILTER => 'ROWCOL', BLOCKSIZE => '8192', BLOCKCACHE => 'false'}",
        ))
        .unwrap();
        assert_eq!(f.name, "cf");
        assert_eq!(f.max_versions, Some(3));
        assert_eq!(f.min_versions, Some(1));
        assert_eq!(f.ttl_seconds, Some(86400));
        assert_eq!(f.in_memory, Some(true));
        assert_eq!(f.compression, Compression::Zstd as i32);
        assert_eq!(f.bloom, BloomType::Rowcol as i32);
        assert_eq!(f.block_size, Some(8192));
        assert_eq!(f.cache_data_on_read, Some(false));
        assert_eq!(f.prefetch_on_open, None, "unset stays unset");
        let forever = family_from_hash(&hash("x {NAME => 'a', TTL => FOREVER}")).unwrap();
        assert_eq!(forever.ttl_seconds, Some(0));
        let err = |line: &str| family_from_hash(&hash(line)).unwrap_err().to_string();
        assert!(err("x {VERSIONS => 3}").contains("needs NAME"));
        assert!(err("x {NAME => 'a', COLOR => 'red'}").contains("COLOR"));
        assert!(err("x {NAME => 'a', VERSIONS => -1}").contains("VERSIONS"));
        assert!(err("x {NAME => 'a', VERSIONS => 5000000000}").contains("too large"));
        assert!(err("x {NAME => 'a', COMPRESSION => 'GZ'}").contains("COMPRESSION"));
        assert!(err("x {NAME => 'a', IN_MEMORY => 3}").contains("true or false"));
    }

    #[test]
    fn create_hashes_become_a_create_request() {
        let req = with_args(
            "create 't1', 'cf1', {NAME => 'cf2', VERSIONS => 3}, SPLITS => ['g', \"n\\x00\"]",
            create_request,
        )
        .unwrap();
        assert_eq!(
            req,
            pb::CreateTableRequest {
                name: "t1".into(),
                families: vec![
                    FamilySchema {
                        name: "cf1".into(),
                        ..Default::default()
                    },
                    FamilySchema {
                        name: "cf2".into(),
                        max_versions: Some(3),
                        ..Default::default()
                    },
                ],
                split_keys: vec![b"g".to_vec(), b"n\x00".to_vec()],
            }
        );
        let req = with_args(
            "create 't1', {NAME=>'cf1', VERSIONS=>3, TTL=>86400, IN_MEMORY=>true, BLOCKSIZE=>65536, COMPRESSION=>'ZSTD', BLOOMFILTER=>'ROWCOL', MIN_VERSIONS=>1}, {SPLITS => ['g','n']}",
            create_request,
        )
        .unwrap();
        assert_eq!(req.families.len(), 1);
        assert_eq!(req.families[0].block_size, Some(65536));
        assert_eq!(req.split_keys.len(), 2);
        let err = |line: &str| with_args(line, create_request).unwrap_err().to_string();
        assert!(err("create 't1'").contains("Usage"));
        assert!(err("create 't1', SPLITS => ['a']").contains("at least one column family"));
        assert!(err("create 't1', 'cf', SPLITS => [1]").contains("array of strings"));
        assert!(err("create 't1', 'cf', NUMREGIONS => 4").contains("NUMREGIONS"));
        assert!(err("create 't1', 5").contains("not an integer"));
    }

    #[test]
    fn alter_adds_changes_and_deletes() {
        let req = with_args("alter 't1', {NAME => 'cf1', VERSIONS => 5}", alter_request).unwrap();
        assert_eq!(req.name, "t1");
        assert_eq!(req.upsert_families[0].max_versions, Some(5));
        let req = with_args("alter 't1', 'delete' => 'cf1'", alter_request).unwrap();
        assert_eq!(req.delete_families, vec!["cf1".to_string()]);
        let req = with_args(
            "alter 't1', NAME => 'cf1', METHOD => 'delete'",
            alter_request,
        )
        .unwrap();
        assert_eq!(req.delete_families, vec!["cf1".to_string()]);
        assert!(req.upsert_families.is_empty());
        let req = with_args(
            "alter 't1', 'new', {NAME => 'old', METHOD => 'delete'}",
            alter_request,
        )
        .unwrap();
        assert_eq!(req.upsert_families[0].name, "new");
        assert_eq!(req.delete_families, vec!["old".to_string()]);
        assert!(
            with_args(
                "alter 't1', METHOD => 'table_att', MAX_FILESIZE => 1",
                alter_request
            )
            .is_err()
        );
        assert!(with_args("alter 't1'", alter_request).is_err());
    }

    #[test]
    fn get_options() {
        let g = with_args("get 't', 'r'", get_from_args)
            .unwrap()
            .into_proto();
        assert_eq!(g.row, &b"r"[..]);
        assert!(g.columns.is_empty());
        let g = with_args("get 't', 'r', 'cf:q'", get_from_args)
            .unwrap()
            .into_proto();
        assert_eq!(g.columns[0].family, b"cf");
        assert_eq!(g.columns[0].qualifiers, vec![b"q".to_vec()]);
        let g = with_args(
            "get 't', 'r', {COLUMN => ['cf:a', 'cf:b', 'meta'], VERSIONS => 3, TIMERANGE => [10, 20]}",
            get_from_args,
        )
        .unwrap()
        .into_proto();
        assert_eq!(g.columns.len(), 2);
        assert_eq!(g.columns[0].qualifiers.len(), 2);
        assert!(g.columns[1].qualifiers.is_empty());
        assert_eq!(g.max_versions, 3);
        assert_eq!(g.time_range, Some(pb::TimeRange { min: 10, max: 20 }));
        let g = with_args("get 't', 'r', {TIMESTAMP => 5}", get_from_args)
            .unwrap()
            .into_proto();
        assert_eq!(g.time_range, Some(pb::TimeRange { min: 5, max: 6 }));
        let err = |line: &str| with_args(line, get_from_args).unwrap_err().to_string();
        assert!(err("get 't', 'r', ':q'").contains("empty family"));
        assert!(err("get 't', 'r', {VERSIONS => 0}").contains("positive"));
        assert!(err("get 't', 'r', {TIMERANGE => [1]}").contains("[min, max]"));
        assert!(err("get 't', 'r', {FILTER => 'x'}").contains("FILTER"));
        assert!(err("get 't'").contains("Usage"));
    }

    #[test]
    fn scans_follow_hbase_including_reversed_bounds() {
        let s = scan_from_hash(&hash(
            "x {STARTROW => 'b', STOPROW => 'y', LIMIT => 5, COLUMNS => ['cf:q', 'meta'], VERSIONS => 2, BATCH => 10, CACHE_BLOCKS => false}",
        ))
        .unwrap()
        .into_proto();
        assert_eq!(
            (s.start_row.as_slice(), s.stop_row.as_slice(), s.limit),
            (&b"b"[..], &b"y"[..], 5)
        );
        assert_eq!((s.max_versions, s.batch, s.skip_cache), (2, 10, true));
        assert_eq!(s.columns.len(), 2);
        let s = scan_from_hash(&hash(
            "x {STARTROW => 'y', STOPROW => 'b', REVERSED => true}",
        ))
        .unwrap()
        .into_proto();
        assert!(s.reverse);
        assert_eq!(s.start_row, b"b\x00");
        assert_eq!(s.stop_row, b"y\x00");
        let s = scan_from_hash(&hash("x {ROWPREFIXFILTER => 'p', STARTROW => 'a'}"))
            .unwrap()
            .into_proto();
        assert_eq!((s.start_row, s.stop_row), (b"p".to_vec(), b"q".to_vec()));
        let s = scan_from_hash(&hash("x {COLUMNS => 'cf'}"))
            .unwrap()
            .into_proto();
        assert_eq!(s.columns[0].family, b"cf");
        assert!(scan_from_hash(&hash("x {LIMIT => 0}")).is_err());
        assert!(scan_from_hash(&hash("x {STARTROW => 5}")).is_err());
        // FILTER is a string in HBase's filter language (the server parses it).
        let s = scan_from_hash(&hash("x {FILTER => \"PrefixFilter('a')\"}"))
            .unwrap()
            .into_proto();
        assert_eq!(s.filter, "PrefixFilter('a')");
        assert!(
            scan_from_hash(&hash("x {FILTER => 5}"))
                .unwrap_err()
                .to_string()
                .contains("FILTER")
        );
        assert!(
            scan_from_hash(&hash("x {NOPE => 'x'}"))
                .unwrap_err()
                .to_string()
                .contains("FILTER"),
            "the known options are listed"
        );
    }

    #[test]
    fn deleteall_targets_row_family_or_column() {
        let kinds = |line: &str| -> (i32, Vec<u8>, Vec<u8>, Option<i64>) {
            let m = with_args(line, deleteall_mutation).unwrap().into_proto();
            match &m.mutations[0].kind {
                Some(pb::mutation::Kind::Delete(d)) => {
                    (d.kind, d.family.clone(), d.qualifier.clone(), d.timestamp)
                }
                other => panic!("{other:?}"),
            }
        };
        use pb::DeleteKind as K;
        assert_eq!(
            kinds("deleteall 't', 'r'"),
            (K::Row as i32, vec![], vec![], None)
        );
        assert_eq!(
            kinds("deleteall 't', 'r', 7"),
            (K::Row as i32, vec![], vec![], Some(7))
        );
        assert_eq!(
            kinds("deleteall 't', 'r', 'cf'"),
            (K::Family as i32, b"cf".to_vec(), vec![], None)
        );
        assert_eq!(
            kinds("deleteall 't', 'r', 'cf:q', 9"),
            (K::Column as i32, b"cf".to_vec(), b"q".to_vec(), Some(9))
        );
        assert!(with_args("deleteall 't', 'r', 'cf', 'x'", deleteall_mutation).is_err());
    }
}
