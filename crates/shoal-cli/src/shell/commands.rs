//! The shell's commands: argument checking, the client call, and output.

use super::format::{cell_line, human_bytes, to_string_binary, two_columns};
use super::parse::{Command, Value};
use shoal_client::{
    Admin, BloomType, Client, CompareOp, Compression, FamilySchema, Get, RowMutation, Scan,
    TableState,
};
use std::fmt::Write as _;

/// A command's failure, printed as `ERROR: …`.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Wrong arguments: the message carries the usage.
    #[error("{0}")]
    Usage(String),
    /// The server refused or failed.
    #[error("{0}")]
    Client(#[from] shoal_client::ClientError),
}

type Result<T> = std::result::Result<T, CommandError>;

fn usage(cmd: &str, text: &str) -> CommandError {
    CommandError::Usage(format!("wrong arguments for '{cmd}'. Usage: {text}"))
}

/// Usage lines of every command, for `help` and errors.
pub const USAGE: &[(&str, &str)] = &[
    (
        "create",
        "create 't1', 'cf1', {NAME => 'cf2', VERSIONS => 3}, SPLITS => ['g', 'n']",
    ),
    ("put", "put 't1', 'row', 'cf:q', 'value' [, timestamp]"),
    (
        "get",
        "get 't1', 'row' [, 'cf:q' | 'cf' | {COLUMN => ['cf:q'], VERSIONS => 3, TIMERANGE => [min, max]}]",
    ),
    (
        "scan",
        "scan 't1' [, {STARTROW => 'a', STOPROW => 'z', LIMIT => 10, COLUMNS => ['cf'], VERSIONS => 2, REVERSED => true, ROWPREFIXFILTER => 'p', BATCH => n, CACHE_BLOCKS => false}]",
    ),
    ("delete", "delete 't1', 'row', 'cf:q' [, timestamp]"),
    (
        "deleteall",
        "deleteall 't1', 'row' [, 'cf' | 'cf:q'] [, timestamp]",
    ),
    ("incr", "incr 't1', 'row', 'cf:q' [, amount]"),
    ("get_counter", "get_counter 't1', 'row', 'cf:q'"),
    ("append", "append 't1', 'row', 'cf:q', 'value'"),
    (
        "check_and_put",
        "check_and_put 't1', 'row', 'cf:q', 'expected', 'cf:q2', 'value'",
    ),
    ("count", "count 't1' [, {STARTROW => 'a', STOPROW => 'z'}]"),
    ("list", "list"),
    ("describe", "describe 't1'   (alias: desc)"),
    (
        "alter",
        "alter 't1', {NAME => 'cf', VERSIONS => 5}  |  alter 't1', 'delete' => 'cf'  |  alter 't1', NAME => 'cf', METHOD => 'delete'",
    ),
    ("disable", "disable 't1'"),
    ("enable", "enable 't1'"),
    ("is_enabled", "is_enabled 't1'"),
    ("is_disabled", "is_disabled 't1'"),
    ("exists", "exists 't1'"),
    ("drop", "drop 't1'   (disable it first)"),
    ("truncate", "truncate 't1'"),
    ("flush", "flush 't1'"),
    ("compact", "compact 't1'"),
    ("major_compact", "major_compact 't1'"),
    ("split", "split 't1' [, 'row']"),
    ("status", "status"),
    ("help", "help [ 'command' ]"),
    ("exit", "exit   (alias: quit)"),
];

fn usage_of(cmd: &str) -> &'static str {
    USAGE
        .iter()
        .find(|(n, _)| *n == cmd)
        .map(|(_, u)| *u)
        .unwrap_or("")
}

/// Runs one command; returns what it prints on stdout.
pub async fn run(client: &Client, cmd: &Command) -> Result<String> {
    let name = if cmd.name == "desc" {
        "describe"
    } else {
        cmd.name.as_str()
    };
    let a = &cmd.args;
    let admin = client.admin();
    let bad = || usage(name, usage_of(name));
    let text = |i: usize| a.get(i).and_then(Value::as_text).ok_or_else(bad);
    let bytes = |i: usize| {
        a.get(i)
            .and_then(|v| v.as_bytes().map(<[u8]>::to_vec))
            .ok_or_else(bad)
    };
    let n_args = |min: usize, max: usize| {
        if a.len() < min || a.len() > max {
            Err(bad())
        } else {
            Ok(())
        }
    };
    match name {
        "create" => {
            if a.len() < 2 {
                return Err(bad());
            }
            let table = text(0)?;
            let mut families = Vec::new();
            let mut splits = Vec::new();
            for v in &a[1..] {
                match v {
                    Value::Str(_) => families.push(Admin::family(&v.as_text().unwrap_or_default())),
                    Value::Hash(h) if h.iter().any(|(k, _)| k == "NAME") => {
                        families.push(family_from_hash(h)?)
                    }
                    Value::Hash(h) => {
                        for (k, v) in h {
                            match (k.as_str(), v) {
                                ("SPLITS", Value::Array(keys)) => {
                                    for key in keys {
                                        splits.push(
                                            key.as_bytes().map(<[u8]>::to_vec).ok_or_else(
                                                || {
                                                    CommandError::Usage(
                                                        "SPLITS must be an array of strings".into(),
                                                    )
                                                },
                                            )?,
                                        );
                                    }
                                }
                                _ => {
                                    return Err(CommandError::Usage(format!(
                                        "unknown create option {k}; a family hash needs NAME, table options are SPLITS"
                                    )));
                                }
                            }
                        }
                    }
                    other => {
                        return Err(CommandError::Usage(format!(
                            "create: a family is a name or a hash with NAME, not {}",
                            other.kind()
                        )));
                    }
                }
            }
            let d = admin.create_table(&table, families, splits).await?;
            Ok(format!(
                "Created table {} with {} region(s)\n",
                d.name,
                d.regions.len()
            ))
        }
        "put" => {
            n_args(4, 5)?;
            let (f, q) = column(&text(2)?)?;
            let mut m = RowMutation::new(bytes(1)?);
            m = match a.get(4) {
                Some(Value::Int(ts)) => m.put_at(f, q, *ts, bytes(3)?),
                Some(_) => return Err(bad()),
                None => m.put(f, q, bytes(3)?),
            };
            client.table(text(0)?).mutate(m).await?;
            Ok(String::new())
        }
        "get" => {
            n_args(2, 3)?;
            let mut get = Get::new(bytes(1)?);
            match a.get(2) {
                None => {}
                Some(Value::Str(_)) => get = add_get_column(get, &text(2)?)?,
                Some(Value::Hash(h)) => {
                    for (k, v) in h {
                        get = match (k.as_str(), v) {
                            ("COLUMN" | "COLUMNS", Value::Array(cols)) => {
                                let mut g = get;
                                for c in cols {
                                    g = add_get_column(g, &c.as_text().ok_or_else(bad)?)?;
                                }
                                g
                            }
                            ("COLUMN" | "COLUMNS", c) => {
                                add_get_column(get, &c.as_text().ok_or_else(bad)?)?
                            }
                            ("VERSIONS", Value::Int(n)) => get.versions(positive(k, *n)?),
                            ("TIMERANGE", Value::Array(r)) => {
                                let (min, max) = time_range(r)?;
                                get.time_range(min, max)
                            }
                            ("TIMESTAMP", Value::Int(ts)) => {
                                get.time_range(*ts, ts.saturating_add(1))
                            }
                            _ => {
                                return Err(CommandError::Usage(format!(
                                    "get: unknown or malformed option {k}"
                                )));
                            }
                        };
                    }
                }
                Some(_) => return Err(bad()),
            }
            let row = client.table(text(0)?).get(get).await?;
            let mut out = String::new();
            let _ = writeln!(out, "{}", two_columns("COLUMN", "CELL"));
            for c in &row.cells {
                let col = format!(
                    "{}:{}",
                    to_string_binary(&c.family),
                    to_string_binary(&c.qualifier)
                );
                let cell = format!(
                    "timestamp={}, value={}",
                    c.timestamp,
                    to_string_binary(&c.value)
                );
                let _ = writeln!(out, "{}", two_columns(&col, &cell));
            }
            let _ = writeln!(out, "{} row(s)", usize::from(!row.cells.is_empty()));
            Ok(out)
        }
        "scan" | "count" => {
            n_args(1, 2)?;
            let scan = match a.get(1) {
                None => Scan::new(),
                Some(Value::Hash(h)) => scan_from_hash(h)?,
                Some(_) => return Err(bad()),
            };
            let table = client.table(text(0)?);
            if name == "count" {
                let n = table.count(scan).await?;
                return Ok(format!("{n} row(s)\n"));
            }
            let mut s = table.scan(scan);
            let mut out = String::new();
            let _ = writeln!(out, "{}", two_columns("ROW", "COLUMN+CELL"));
            let mut rows = 0;
            let mut last: Option<Vec<u8>> = None;
            while let Some(row) = s.next().await? {
                if last.as_deref() != Some(&row.row[..]) {
                    rows += 1;
                    last = Some(row.row.clone());
                }
                for c in &row.cells {
                    let _ = writeln!(
                        out,
                        "{}",
                        two_columns(&to_string_binary(&row.row), &cell_line(c))
                    );
                }
            }
            let _ = writeln!(out, "{rows} row(s)");
            Ok(out)
        }
        "delete" => {
            n_args(3, 4)?;
            let (f, q) = column(&text(2)?)?;
            let ts = opt_int(a.get(3)).ok_or_else(bad)?;
            client
                .table(text(0)?)
                .mutate(RowMutation::new(bytes(1)?).delete_column(f, q, ts))
                .await?;
            Ok(String::new())
        }
        "deleteall" => {
            n_args(2, 4)?;
            let row = bytes(1)?;
            let (spec, ts) = match (a.get(2), a.get(3)) {
                (None, _) => (None, None),
                (Some(Value::Int(t)), None) => (None, Some(*t)),
                (Some(Value::Str(_)), t) => (Some(text(2)?), opt_int(t).ok_or_else(bad)?),
                _ => return Err(bad()),
            };
            let m = match spec {
                None => RowMutation::new(row).delete_row(ts),
                Some(s) => match s.split_once(':') {
                    Some((f, q)) => RowMutation::new(row).delete_column(f, q, ts),
                    None => RowMutation::new(row).delete_family(s, ts),
                },
            };
            client.table(text(0)?).mutate(m).await?;
            Ok(String::new())
        }
        "incr" | "get_counter" => {
            n_args(3, if name == "incr" { 4 } else { 3 })?;
            let (f, q) = column(&text(2)?)?;
            let by = match a.get(3) {
                None => i64::from(name == "incr"),
                Some(Value::Int(n)) => *n,
                Some(_) => return Err(bad()),
            };
            let v = if name == "get_counter" {
                let row = client
                    .table(text(0)?)
                    .get(Get::new(bytes(1)?).column(f.as_bytes(), q.as_bytes()))
                    .await?;
                match row.cells.first() {
                    None => return Ok("COUNTER VALUE = 0 (no such counter)\n".into()),
                    Some(c) => <[u8; 8]>::try_from(c.value.as_slice())
                        .map(i64::from_be_bytes)
                        .map_err(|_| {
                            CommandError::Usage(format!(
                                "{f}:{q} is not a counter (its value is not 8 bytes)"
                            ))
                        })?,
                }
            } else {
                let vals = client
                    .table(text(0)?)
                    .increment(bytes(1)?, &[(f.as_bytes(), q.as_bytes(), by)])
                    .await?;
                vals.first().copied().unwrap_or(0)
            };
            Ok(format!("COUNTER VALUE = {v}\n"))
        }
        "append" => {
            n_args(4, 4)?;
            let (f, q) = column(&text(2)?)?;
            let v = bytes(3)?;
            let vals = client
                .table(text(0)?)
                .append(bytes(1)?, &[(f.as_bytes(), q.as_bytes(), &v)])
                .await?;
            let cur = vals
                .first()
                .map(|v| to_string_binary(v))
                .unwrap_or_default();
            Ok(format!("CURRENT VALUE = {cur}\n"))
        }
        "check_and_put" => {
            n_args(6, 6)?;
            let (cf, cq) = column(&text(2)?)?;
            let (pf, pq) = column(&text(4)?)?;
            let m = RowMutation::new(bytes(1)?).put(pf, pq, bytes(5)?);
            let done = client
                .table(text(0)?)
                .check_and_mutate(cf, cq, CompareOp::Equal, bytes(3)?, m)
                .await?;
            Ok(format!("{done}\n"))
        }
        "list" => {
            n_args(0, 0)?;
            let tables = admin.list().await?;
            let mut out = String::from("TABLE\n");
            for t in &tables {
                let _ = writeln!(out, "{}", t.name);
            }
            let _ = writeln!(out, "{} row(s)", tables.len());
            Ok(out)
        }
        "describe" => {
            n_args(1, 1)?;
            let d = admin.describe(&text(0)?).await?;
            let state = if d.state == TableState::Disabled as i32 {
                "DISABLED"
            } else {
                "ENABLED"
            };
            let mut out = format!("Table {} is {state}\nCOLUMN FAMILIES DESCRIPTION\n", d.name);
            for f in &d.families {
                let _ = writeln!(out, "{}", describe_family(f));
            }
            let _ = writeln!(out, "REGIONS");
            for r in &d.regions {
                let _ = writeln!(
                    out,
                    " {} [{}, {}) size={} memstore={} files={} cache={:.0}%{}",
                    r.id,
                    to_string_binary(&r.start_row),
                    to_string_binary(&r.end_row),
                    human_bytes(r.size_bytes),
                    human_bytes(r.memstore_bytes),
                    r.files,
                    r.cache_ratio * 100.0,
                    if r.has_references {
                        " (reading its split parent's files)"
                    } else {
                        ""
                    }
                );
            }
            let _ = writeln!(out, "{} row(s)", d.families.len());
            Ok(out)
        }
        "alter" => {
            if a.len() < 2 {
                return Err(bad());
            }
            let table = text(0)?;
            let mut upsert = Vec::new();
            let mut delete = Vec::new();
            for v in &a[1..] {
                match v {
                    Value::Hash(h) => {
                        let method = h
                            .iter()
                            .find(|(k, _)| k == "METHOD")
                            .and_then(|(_, v)| v.as_text());
                        if let Some((_, fam)) = h.iter().find(|(k, _)| k == "delete") {
                            delete.push(fam.as_text().ok_or_else(bad)?);
                        } else if method.as_deref() == Some("delete") {
                            let fam = h
                                .iter()
                                .find(|(k, _)| k == "NAME")
                                .and_then(|(_, v)| v.as_text())
                                .ok_or_else(bad)?;
                            delete.push(fam);
                        } else {
                            let h: Vec<(String, Value)> =
                                h.iter().filter(|(k, _)| k != "METHOD").cloned().collect();
                            upsert.push(family_from_hash(&h)?);
                        }
                    }
                    Value::Str(_) => upsert.push(Admin::family(&v.as_text().unwrap_or_default())),
                    _ => return Err(bad()),
                }
            }
            admin.alter(&table, upsert, delete).await?;
            Ok(format!("Table {table} altered\n"))
        }
        "disable" | "enable" | "drop" | "truncate" | "flush" | "compact" | "major_compact" => {
            n_args(1, 1)?;
            let t = text(0)?;
            let msg = match name {
                "disable" => admin.disable(&t).await?,
                "enable" => admin.enable(&t).await?,
                "drop" => admin.drop_table(&t).await?,
                "truncate" => admin.truncate(&t).await?,
                "flush" => admin.flush(&t).await?,
                "compact" => admin.compact(&t, false).await?,
                _ => admin.compact(&t, true).await?,
            };
            Ok(format!("{msg}\n"))
        }
        "is_enabled" | "is_disabled" | "exists" => {
            n_args(1, 1)?;
            let t = text(0)?;
            if name == "exists" {
                let e = admin.exists(&t).await?;
                return Ok(format!(
                    "Table {t} {} exist\n{e}\n",
                    if e { "does" } else { "does not" }
                ));
            }
            let d = admin.describe(&t).await?;
            let enabled = d.state != TableState::Disabled as i32;
            Ok(format!(
                "{}\n",
                if name == "is_enabled" {
                    enabled
                } else {
                    !enabled
                }
            ))
        }
        "split" => {
            n_args(1, 2)?;
            let row = match a.get(1) {
                None => None,
                Some(_) => Some(bytes(1)?),
            };
            let regions = admin.split(&text(0)?, row).await?;
            let mut out = String::new();
            for r in &regions {
                let _ = writeln!(
                    out,
                    " {} [{}, {})",
                    r.id,
                    to_string_binary(&r.start_row),
                    to_string_binary(&r.end_row)
                );
            }
            let _ = writeln!(out, "{} new region(s)", regions.len());
            Ok(out)
        }
        "status" => {
            n_args(0, 1)?;
            let s = admin.status().await?;
            Ok(format!(
                "shoal {} up {}s, data at {}\n{} table(s), {} region(s), store {}, memstore {}\n\
                 cache: L1 {} (hit ratio {:.1}%), L2 {} (hit ratio {:.1}%), object-store GETs {}\nrequests served: {}\n",
                s.version,
                s.uptime_seconds,
                s.data_location,
                s.tables,
                s.regions,
                human_bytes(s.store_bytes),
                human_bytes(s.memstore_bytes),
                human_bytes(s.l1_bytes),
                s.l1_hit_ratio * 100.0,
                human_bytes(s.l2_bytes),
                s.l2_hit_ratio * 100.0,
                s.object_store_gets,
                s.requests
            ))
        }
        "help" => Ok(super::help::help(
            a.first().and_then(Value::as_text).as_deref(),
        )),
        other => Err(CommandError::Usage(format!(
            "Unknown command '{other}'. Try 'help'."
        ))),
    }
}

fn positive(key: &str, n: i64) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| CommandError::Usage(format!("{key} must be a positive integer, got {n}")))
}

fn opt_int(v: Option<&Value>) -> Option<Option<i64>> {
    match v {
        None => Some(None),
        Some(Value::Int(n)) => Some(Some(*n)),
        Some(_) => None,
    }
}

fn time_range(r: &[Value]) -> Result<(i64, i64)> {
    match r {
        [Value::Int(a), Value::Int(b)] => Ok((*a, *b)),
        _ => Err(CommandError::Usage(
            "TIMERANGE must be [min, max] in milliseconds".into(),
        )),
    }
}

/// `cf:q` → (cf, q); the qualifier may be empty, the family may not.
pub fn column(spec: &str) -> Result<(String, String)> {
    match spec.split_once(':') {
        Some((f, q)) if !f.is_empty() => Ok((f.to_string(), q.to_string())),
        _ => Err(CommandError::Usage(format!(
            "{spec:?} is not a column; write 'family:qualifier'"
        ))),
    }
}

fn add_get_column(get: Get, spec: &str) -> Result<Get> {
    Ok(match spec.split_once(':') {
        Some((f, q)) if !f.is_empty() => get.column(f, q),
        Some(_) => return Err(CommandError::Usage(format!("{spec:?} has an empty family"))),
        None => get.family(spec),
    })
}

fn successor(row: &[u8]) -> Vec<u8> {
    let mut v = row.to_vec();
    v.push(0);
    v
}

/// A scan from HBase shell options. With REVERSED, STARTROW is the high
/// end (inclusive) and STOPROW the low end (exclusive), as in HBase.
pub fn scan_from_hash(h: &[(String, Value)]) -> Result<Scan> {
    let mut scan = Scan::new();
    let mut start: Option<Vec<u8>> = None;
    let mut stop: Option<Vec<u8>> = None;
    let mut reversed = false;
    let row = |k: &str, v: &Value| {
        v.as_bytes()
            .map(<[u8]>::to_vec)
            .ok_or_else(|| CommandError::Usage(format!("{k} must be a string")))
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
            ("ROWPREFIXFILTER", v) => scan.prefix(row(k, v)?),
            ("LIMIT", Value::Int(n)) => scan.limit(u64::from(positive(k, *n)?)),
            ("BATCH", Value::Int(n)) => scan.batch(positive(k, *n)?),
            ("VERSIONS", Value::Int(n)) => scan.versions(positive(k, *n)?),
            ("REVERSED", Value::Bool(b)) => {
                reversed = *b;
                scan
            }
            ("CACHE_BLOCKS", Value::Bool(false)) => scan.skip_cache(),
            ("CACHE_BLOCKS", Value::Bool(true)) => scan,
            ("TIMERANGE", Value::Array(r)) => {
                let (a, b) = time_range(r)?;
                scan.time_range(a, b)
            }
            ("COLUMNS" | "COLUMN", Value::Array(cols)) => {
                let mut s = scan;
                for c in cols {
                    s = add_scan_column(
                        s,
                        &c.as_text()
                            .ok_or_else(|| CommandError::Usage("COLUMNS must be strings".into()))?,
                    )?;
                }
                s
            }
            ("COLUMNS" | "COLUMN", c) => add_scan_column(
                scan,
                &c.as_text()
                    .ok_or_else(|| CommandError::Usage("COLUMNS must be strings".into()))?,
            )?,
            _ => {
                return Err(CommandError::Usage(format!(
                    "scan: unknown or malformed option {k} (see 'help \"scan\"')"
                )));
            }
        };
    }
    if reversed {
        scan = scan.reverse();
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
    Ok(scan)
}

fn add_scan_column(scan: Scan, spec: &str) -> Result<Scan> {
    Ok(match spec.split_once(':') {
        Some((f, q)) if !f.is_empty() => scan.column(f, q),
        Some(_) => return Err(CommandError::Usage(format!("{spec:?} has an empty family"))),
        None => scan.family(spec),
    })
}

fn bool_of(k: &str, v: &Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => match other.as_text().map(|t| t.to_ascii_lowercase()).as_deref() {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            _ => Err(CommandError::Usage(format!("{k} must be true or false"))),
        },
    }
}

/// A family's settings from `{NAME => 'cf', VERSIONS => 3, …}`.
pub fn family_from_hash(h: &[(String, Value)]) -> Result<FamilySchema> {
    let mut f = FamilySchema::default();
    let int = |k: &str, v: &Value| match v {
        Value::Int(n) if *n >= 0 => Ok(*n),
        Value::Str(_) => v
            .as_text()
            .and_then(|t| t.parse::<i64>().ok())
            .filter(|n| *n >= 0)
            .ok_or_else(|| CommandError::Usage(format!("{k} must be a non-negative integer"))),
        _ => Err(CommandError::Usage(format!(
            "{k} must be a non-negative integer"
        ))),
    };
    let u32_of = |k: &str, v: &Value| {
        int(k, v).and_then(|n| {
            u32::try_from(n).map_err(|_| CommandError::Usage(format!("{k} is too large")))
        })
    };
    for (k, v) in h {
        match k.as_str() {
            "NAME" => {
                f.name = v
                    .as_text()
                    .ok_or_else(|| CommandError::Usage("NAME must be a string".into()))?
            }
            "VERSIONS" => f.max_versions = Some(u32_of(k, v)?),
            "MIN_VERSIONS" => f.min_versions = Some(u32_of(k, v)?),
            "TTL" => {
                f.ttl_seconds = Some(match v.as_text().as_deref() {
                    Some("FOREVER") => 0,
                    _ => int(k, v)? as u64,
                })
            }
            "BLOCKSIZE" => f.block_size = Some(u32_of(k, v)?),
            "COMPRESSION" => {
                f.compression = match v.as_text().map(|t| t.to_ascii_uppercase()).as_deref() {
                    Some("NONE") => Compression::None,
                    Some("LZ4") => Compression::Lz4,
                    Some("ZSTD") => Compression::Zstd,
                    _ => {
                        return Err(CommandError::Usage(
                            "COMPRESSION must be 'NONE', 'LZ4' or 'ZSTD'".into(),
                        ));
                    }
                } as i32
            }
            "BLOOMFILTER" => {
                f.bloom = match v.as_text().map(|t| t.to_ascii_uppercase()).as_deref() {
                    Some("NONE") => BloomType::None,
                    Some("ROW") => BloomType::Row,
                    Some("ROWCOL") => BloomType::Rowcol,
                    _ => {
                        return Err(CommandError::Usage(
                            "BLOOMFILTER must be 'NONE', 'ROW' or 'ROWCOL'".into(),
                        ));
                    }
                } as i32
            }
            "IN_MEMORY" => f.in_memory = Some(bool_of(k, v)?),
            "BLOCKCACHE" => f.cache_data_on_read = Some(bool_of(k, v)?),
            "PREFETCH_BLOCKS_ON_OPEN" => f.prefetch_on_open = Some(bool_of(k, v)?),
            "CACHE_SCANS" => f.cache_scans = Some(bool_of(k, v)?),
            other => {
                return Err(CommandError::Usage(format!(
                    "unknown family setting {other}; known: NAME, VERSIONS, MIN_VERSIONS, TTL, BLOCKSIZE, COMPRESSION, BLOOMFILTER, IN_MEMORY, BLOCKCACHE, PREFETCH_BLOCKS_ON_OPEN, CACHE_SCANS"
                )));
            }
        }
    }
    if f.name.is_empty() {
        return Err(CommandError::Usage("a family hash needs NAME".into()));
    }
    Ok(f)
}

fn describe_family(f: &FamilySchema) -> String {
    let compression = match Compression::try_from(f.compression) {
        Ok(Compression::None) => "NONE",
        Ok(Compression::Zstd) => "ZSTD",
        _ => "LZ4",
    };
    let bloom = match BloomType::try_from(f.bloom) {
        Ok(BloomType::None) => "NONE",
        Ok(BloomType::Rowcol) => "ROWCOL",
        _ => "ROW",
    };
    let ttl = match f.ttl_seconds.unwrap_or(0) {
        0 => "FOREVER".to_string(),
        n => format!("{n} SECONDS"),
    };
    format!(
        "{{NAME => '{}', VERSIONS => '{}', MIN_VERSIONS => '{}', TTL => '{ttl}', BLOCKSIZE => '{}', COMPRESSION => '{compression}', BLOOMFILTER => '{bloom}', IN_MEMORY => '{}', BLOCKCACHE => '{}', PREFETCH_BLOCKS_ON_OPEN => '{}', CACHE_SCANS => '{}'}}",
        f.name,
        f.max_versions.unwrap_or(1),
        f.min_versions.unwrap_or(0),
        f.block_size.unwrap_or(65536),
        f.in_memory.unwrap_or(false),
        f.cache_data_on_read.unwrap_or(true),
        f.prefetch_on_open.unwrap_or(true),
        f.cache_scans.unwrap_or(true),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse::parse_line;

    fn hash(line: &str) -> Vec<(String, Value)> {
        match &parse_line(line).unwrap()[0].args[0] {
            Value::Hash(h) => h.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn family_hashes_convert() {
        let f = family_from_hash(&hash(
            "x {NAME => 'cf', VERSIONS => 3, TTL => 86400, IN_MEMORY => true, COMPRESSION => 'zstd', BLOOMFILTER => 'ROWCOL', BLOCKSIZE => '8192'}",
        ))
        .unwrap();
        assert_eq!(f.name, "cf");
        assert_eq!(f.max_versions, Some(3));
        assert_eq!(f.ttl_seconds, Some(86400));
        assert_eq!(f.in_memory, Some(true));
        assert_eq!(f.compression, Compression::Zstd as i32);
        assert_eq!(f.bloom, BloomType::Rowcol as i32);
        assert_eq!(f.block_size, Some(8192));
        assert!(family_from_hash(&hash("x {VERSIONS => 3}")).is_err());
        assert!(
            family_from_hash(&hash("x {NAME => 'a', COLOR => 'red'}"))
                .unwrap_err()
                .to_string()
                .contains("COLOR")
        );
        assert!(family_from_hash(&hash("x {NAME => 'a', VERSIONS => -1}")).is_err());
    }

    #[test]
    fn columns_parse() {
        assert_eq!(column("cf:q").unwrap(), ("cf".into(), "q".into()));
        assert_eq!(column("cf:").unwrap(), ("cf".into(), "".into()));
        assert!(column("cf").is_err());
        assert!(column(":q").is_err());
    }

    #[test]
    fn scans_follow_hbase_including_reversed_bounds() {
        let s = scan_from_hash(&hash(
            "x {STARTROW => 'b', STOPROW => 'y', LIMIT => 5, COLUMNS => ['cf:q', 'meta']}",
        ))
        .unwrap()
        .into_proto();
        assert_eq!(
            (s.start_row.as_slice(), s.stop_row.as_slice(), s.limit),
            (&b"b"[..], &b"y"[..], 5)
        );
        assert_eq!(s.columns.len(), 2);
        let s = scan_from_hash(&hash(
            "x {STARTROW => 'y', STOPROW => 'b', REVERSED => true}",
        ))
        .unwrap()
        .into_proto();
        assert!(s.reverse);
        assert_eq!(s.start_row, b"b\x00");
        assert_eq!(s.stop_row, b"y\x00");
        assert!(scan_from_hash(&hash("x {LIMIT => 0}")).is_err());
        assert!(
            scan_from_hash(&hash("x {FILTER => 'x'}"))
                .unwrap_err()
                .to_string()
                .contains("FILTER")
        );
    }
}
