//! Snapshot commands, as HBase's shell names them: snapshot,
//! list_snapshots, clone_snapshot, restore_snapshot, delete_snapshot, and
//! describe_snapshot (Shoal's: what a snapshot holds).

use super::CommandError;
use crate::shell::args::Args;
use crate::shell::format::human_bytes;
use shoal_client::Client;
use std::io::Write;

type Result<T> = std::result::Result<T, CommandError>;

/// The snapshot commands' usage lines.
pub const USAGE: &[(&str, &str)] = &[
    (
        "snapshot",
        "snapshot 't1', 'name'   (a consistent cut of every region; no data copied)",
    ),
    ("list_snapshots", "list_snapshots"),
    ("describe_snapshot", "describe_snapshot 'name'"),
    (
        "clone_snapshot",
        "clone_snapshot 'name', 'new_table'   (shares the snapshot's files)",
    ),
    (
        "restore_snapshot",
        "restore_snapshot 'name'   (disable the table first)",
    ),
    ("delete_snapshot", "delete_snapshot 'name'"),
];

fn when(ms: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Runs snapshot command `name`; false if `name` is not one.
pub async fn run(client: &Client, name: &str, a: &Args<'_>, out: &mut dyn Write) -> Result<bool> {
    let admin = client.admin();
    match name {
        "snapshot" => {
            a.count(2, 2)?;
            let s = admin.snapshot(&a.text(0)?, &a.text(1)?).await?;
            writeln!(
                out,
                "Took snapshot {} of {}: {} region(s), {} file(s), {}; wrote {}; writes waited {} µs",
                s.name,
                s.table,
                s.regions,
                s.files,
                human_bytes(s.bytes),
                human_bytes(s.written_bytes),
                s.pause_micros
            )?;
        }
        "list_snapshots" => {
            a.count(0, 0)?;
            let all = admin.list_snapshots().await?;
            writeln!(out, "SNAPSHOT TABLE + CREATION TIME")?;
            for s in &all {
                writeln!(out, " {} {} ({})", s.name, s.table, when(s.created_ms))?;
            }
            writeln!(out, "{} row(s)", all.len())?;
        }
        "describe_snapshot" => {
            a.count(1, 1)?;
            let s = admin.describe_snapshot(&a.text(0)?).await?;
            writeln!(out, "Snapshot {} of table {}", s.name, s.table)?;
            writeln!(out, "taken {}", when(s.created_ms))?;
            writeln!(
                out,
                "{} region(s), {} file(s), {}",
                s.regions,
                s.files,
                human_bytes(s.bytes)
            )?;
            writeln!(out, "writes waited {} µs for the cut", s.pause_micros)?;
        }
        "clone_snapshot" => {
            a.count(2, 2)?;
            let d = admin.clone_snapshot(&a.text(0)?, &a.text(1)?).await?;
            writeln!(
                out,
                "Cloned snapshot into table {} with {} region(s)",
                d.name,
                d.regions.len()
            )?;
        }
        "restore_snapshot" => {
            a.count(1, 1)?;
            let d = admin.restore_snapshot(&a.text(0)?).await?;
            writeln!(
                out,
                "Restored table {} ({} region(s)); enable it to serve",
                d.name,
                d.regions.len()
            )?;
        }
        "delete_snapshot" => {
            a.count(1, 1)?;
            writeln!(out, "{}", admin.delete_snapshot(&a.text(0)?).await?)?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}
