//! The `Hbase` service's methods, a file per group of calls: `tables`
//! (table admin), `reads` (gets), `writes` (mutations, deletes,
//! check-and-put), `counters` (increments, appends) and `scans` (scanner
//! calls). Each takes its arguments by field id from the decoded struct,
//! makes the same host call the gRPC services make, and builds the answer;
//! the readers of those arguments are here.

pub(crate) mod counters;
pub(crate) mod reads;
pub(crate) mod scans;
pub(crate) mod tables;
pub(crate) mod writes;

use super::fault::Fault;
use super::wire::{Struct, TType, Value};
use bytes::Bytes;

/// A required binary argument.
fn bin(args: &Struct, id: i16, what: &str) -> Result<Bytes, Fault> {
    args.binary(id)
        .cloned()
        .ok_or_else(|| Fault::illegal(format!("argument {what} is missing")))
}

/// A required table name argument.
fn table(args: &Struct, id: i16) -> Result<String, Fault> {
    let raw = bin(args, id, "tableName")?;
    String::from_utf8(raw.to_vec()).map_err(|_| Fault::illegal("a table name must be UTF-8"))
}

/// A required i64 argument.
fn long(args: &Struct, id: i16, what: &str) -> Result<i64, Fault> {
    args.i64(id)
        .ok_or_else(|| Fault::illegal(format!("argument {what} is missing")))
}

/// A required i32 argument.
fn int(args: &Struct, id: i16, what: &str) -> Result<i32, Fault> {
    args.i32(id)
        .ok_or_else(|| Fault::illegal(format!("argument {what} is missing")))
}

/// An optional `list<Text>` argument (absent: empty).
fn texts(args: &Struct, id: i16) -> Result<Vec<Bytes>, Fault> {
    match args.list(id) {
        None => Ok(Vec::new()),
        Some(list) => list
            .iter()
            .map(|v| {
                v.as_binary()
                    .cloned()
                    .ok_or_else(|| Fault::illegal("expected a list of strings"))
            })
            .collect(),
    }
}

fn binaries(list: Vec<Bytes>) -> Value {
    Value::List(TType::Binary, list.into_iter().map(Value::Binary).collect())
}

fn versions(n: i32) -> Result<u32, Fault> {
    if n < 1 {
        return Err(Fault::illegal(format!(
            "numVersions must be at least 1, got {n}"
        )));
    }
    Ok(n as u32)
}
