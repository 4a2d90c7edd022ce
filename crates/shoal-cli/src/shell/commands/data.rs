//! Row commands: put, get, scan, count, delete, deleteall, incr,
//! get_counter, append, check_and_put.

use super::CommandError;
use crate::shell::args::Args;
use crate::shell::convert::{deleteall_mutation, get_from_args, scan_from_hash};
use crate::shell::format::{cell_line, column_name, header, line, to_string_binary, version};
use crate::shell::value::Value;
use shoal_client::{Client, CompareOp, Get, RowMutation, Scan, counter_value};
use std::io::Write;

type Result<T> = std::result::Result<T, CommandError>;

/// `put 't1', 'row', 'cf:q', 'value' [, ts]`.
pub async fn put(client: &Client, a: &Args<'_>) -> Result<()> {
    a.count(4, 5)?;
    let (f, q) = a.column(2)?;
    let m = RowMutation::new(a.bytes(1)?);
    let m = match a.opt_int(4)? {
        Some(ts) => m.put_at(f, q, ts, a.bytes(3)?),
        None => m.put(f, q, a.bytes(3)?),
    };
    client.table(a.text(0)?).mutate(m).await?;
    Ok(())
}

/// `get 't1', 'row' [, columns or options]`: `COLUMN  CELL` lines.
pub async fn get(client: &Client, a: &Args<'_>, out: &mut dyn Write) -> Result<()> {
    let get = get_from_args(a)?;
    let row = client.table(a.text(0)?).get(get).await?;
    writeln!(out, "{}", header("COLUMN", "CELL"))?;
    for c in &row.cells {
        writeln!(out, "{}", line(&column_name(c), &version(c)))?;
    }
    writeln!(out, "{} row(s)", usize::from(!row.cells.is_empty()))?;
    Ok(())
}

/// The scan a `scan` or `count` describes.
fn scan_of(a: &Args<'_>, extra: &[&str]) -> Result<(Scan, Vec<(String, Value)>)> {
    a.count(1, 2)?;
    match a.get(1) {
        None => Ok((Scan::new(), Vec::new())),
        Some(Value::Hash(h)) => {
            let (mine, scan): (Vec<_>, Vec<_>) = h
                .iter()
                .cloned()
                .partition(|(k, _)| extra.contains(&k.as_str()));
            Ok((scan_from_hash(&scan)?, mine))
        }
        Some(_) => Err(a.usage()),
    }
}

/// `scan 't1' [, {options}]`: `ROW  COLUMN+CELL` lines, printed as rows
/// arrive.
pub async fn scan(client: &Client, a: &Args<'_>, out: &mut dyn Write) -> Result<()> {
    let (scan, _) = scan_of(a, &[])?;
    let mut rows = client.table(a.text(0)?).scanner(scan);
    writeln!(out, "{}", header("ROW", "COLUMN+CELL"))?;
    let mut count = 0u64;
    let mut last: Option<Vec<u8>> = None;
    while let Some(row) = rows.next().await? {
        if last.as_deref() != Some(&row.row[..]) {
            count += 1;
        }
        let key = to_string_binary(&row.row);
        for c in &row.cells {
            writeln!(out, "{}", line(&key, &cell_line(c)))?;
        }
        last = Some(row.row.to_vec());
    }
    writeln!(out, "{count} row(s)")?;
    Ok(())
}

/// `count 't1' [, {INTERVAL => n, scan options}]`: progress every
/// `INTERVAL` rows (default 1000), then the total.
pub async fn count(client: &Client, a: &Args<'_>, out: &mut dyn Write) -> Result<()> {
    let (scan, mine) = scan_of(a, &["INTERVAL", "CACHE"])?;
    let mut interval = 1000u64;
    for (k, v) in &mine {
        match (k.as_str(), v) {
            ("INTERVAL", Value::Int(n)) if *n > 0 => interval = n.unsigned_abs(),
            ("CACHE", Value::Int(_)) => {}
            _ => {
                return Err(CommandError::Usage(format!(
                    "{k} must be a positive integer"
                )));
            }
        }
    }
    let mut rows = client.table(a.text(0)?).scanner(scan.batch(0));
    let mut n = 0u64;
    while let Some(row) = rows.next().await? {
        n += 1;
        if n.is_multiple_of(interval) {
            writeln!(
                out,
                "Current count: {n}, row: {}",
                to_string_binary(&row.row)
            )?;
        }
    }
    writeln!(out, "{n} row(s)")?;
    Ok(())
}

/// `delete 't1', 'row', 'cf:q' [, ts]`: every version at or below `ts`.
pub async fn delete(client: &Client, a: &Args<'_>) -> Result<()> {
    a.count(3, 4)?;
    let (f, q) = a.column(2)?;
    let m = RowMutation::new(a.bytes(1)?).delete_column(f, q, a.opt_int(3)?);
    client.table(a.text(0)?).mutate(m).await?;
    Ok(())
}

/// `deleteall 't1', 'row' [, 'cf' | 'cf:q'] [, ts]`.
pub async fn deleteall(client: &Client, a: &Args<'_>) -> Result<()> {
    let m = deleteall_mutation(a)?;
    client.table(a.text(0)?).mutate(m).await?;
    Ok(())
}

/// `incr 't1', 'row', 'cf:q' [, amount]`.
pub async fn incr(client: &Client, a: &Args<'_>, out: &mut dyn Write) -> Result<()> {
    a.count(3, 4)?;
    let (f, q) = a.column(2)?;
    let by = a.opt_int(3)?.unwrap_or(1);
    let values = client
        .table(a.text(0)?)
        .increment(a.bytes(1)?, &[(&f, &q, by)])
        .await?;
    let v = values.first().copied().unwrap_or_default();
    writeln!(out, "COUNTER VALUE = {v}")?;
    Ok(())
}

/// `get_counter 't1', 'row', 'cf:q'`.
pub async fn get_counter(client: &Client, a: &Args<'_>, out: &mut dyn Write) -> Result<()> {
    a.count(3, 3)?;
    let (f, q) = a.column(2)?;
    let row = client
        .table(a.text(0)?)
        .get(Get::new(a.bytes(1)?).column(&f, &q))
        .await?;
    match row.cells.first() {
        None => writeln!(out, "No counter found at specified coordinates")?,
        Some(c) => {
            let v = counter_value(&c.value).ok_or_else(|| {
                CommandError::Usage(format!(
                    "{} is not a counter: its value has {} bytes, a counter 8",
                    column_name(c),
                    c.value.len()
                ))
            })?;
            writeln!(out, "COUNTER VALUE = {v}")?;
        }
    }
    Ok(())
}

/// `append 't1', 'row', 'cf:q', 'value'`.
pub async fn append(client: &Client, a: &Args<'_>, out: &mut dyn Write) -> Result<()> {
    a.count(4, 4)?;
    let (f, q) = a.column(2)?;
    let v = a.bytes(3)?;
    let values = client
        .table(a.text(0)?)
        .append(a.bytes(1)?, &[(&f, &q, &v)])
        .await?;
    let current = values.first().map(|v| to_string_binary(v));
    writeln!(out, "CURRENT VALUE = {}", current.unwrap_or_default())?;
    Ok(())
}

/// `check_and_put 't1', 'row', 'cf:q', 'expected', 'cf:q2', 'value'`:
/// puts if the column's current value equals `expected`.
pub async fn check_and_put(client: &Client, a: &Args<'_>, out: &mut dyn Write) -> Result<()> {
    a.count(6, 6)?;
    let (cf, cq) = a.column(2)?;
    let (pf, pq) = a.column(4)?;
    let m = RowMutation::new(a.bytes(1)?).put(pf, pq, a.bytes(5)?);
    let done = client
        .table(a.text(0)?)
        .check_and_mutate(cf, cq, CompareOp::Equal, a.bytes(3)?, m)
        .await?;
    writeln!(out, "{done}")?;
    Ok(())
}
