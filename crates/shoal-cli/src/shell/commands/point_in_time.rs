//! Point-in-time commands (Shoal's; HBase has none): snapshot_at, clone_at
//! and restore_at take a table as it was at an instant of the server's
//! `point_in_time_window`, written as RFC 3339 (`2026-11-27T20:15:00.250Z`,
//! UTC) or as milliseconds since the epoch.

use super::CommandError;
use crate::shell::args::Args;
use crate::shell::format::human_bytes;
use shoal_client::Client;
use std::io::Write;

type Result<T> = std::result::Result<T, CommandError>;

/// The point-in-time commands' usage lines.
pub const USAGE: &[(&str, &str)] = &[
    (
        "snapshot_at",
        "snapshot_at 't1', '2026-11-27T20:15:00.250Z', 'name'   (the table as it was then; or ms since the epoch)",
    ),
    (
        "clone_at",
        "clone_at 't1', '2026-11-27T20:15:00.250Z', 'new_table'",
    ),
    (
        "restore_at",
        "restore_at 't1', '2026-11-27T20:15:00.250Z'   (disable the table first)",
    ),
];

/// An instant as the commands take it: RFC 3339 or ms since the epoch.
pub fn parse_instant(text: &str) -> Result<i64> {
    if let Ok(ms) = text.trim().parse::<i64>() {
        return Ok(ms);
    }
    let t = humantime::parse_rfc3339_weak(text.trim()).map_err(|e| {
        CommandError::Usage(format!(
            "{text:?} is not an instant: write RFC 3339 (2026-11-27T20:15:00.250Z, UTC) or \
             milliseconds since the epoch ({e})"
        ))
    })?;
    let ms = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| CommandError::Usage(format!("{text:?} is before 1970")))?
        .as_millis();
    i64::try_from(ms).map_err(|_| CommandError::Usage(format!("{text:?} is too far ahead")))
}

/// Runs point-in-time command `name`; false if `name` is not one.
pub async fn run(client: &Client, name: &str, a: &Args<'_>, out: &mut dyn Write) -> Result<bool> {
    let admin = client.admin();
    match name {
        "snapshot_at" => {
            a.count(3, 3)?;
            let at = parse_instant(&a.text(1)?)?;
            let s = admin.snapshot_at(&a.text(0)?, at, &a.text(2)?).await?;
            writeln!(
                out,
                "Took snapshot {} of {} as of {at} ms: {} region(s), {} file(s), {}; wrote {} of replayed writes",
                s.name,
                s.table,
                s.regions,
                s.files,
                human_bytes(s.bytes),
                human_bytes(s.written_bytes),
            )?;
        }
        "clone_at" => {
            a.count(3, 3)?;
            let at = parse_instant(&a.text(1)?)?;
            let d = admin.clone_at(&a.text(0)?, at, &a.text(2)?).await?;
            writeln!(
                out,
                "Cloned {} as of {at} ms into table {} with {} region(s)",
                a.text(0)?,
                d.name,
                d.regions.len()
            )?;
        }
        "restore_at" => {
            a.count(2, 2)?;
            let at = parse_instant(&a.text(1)?)?;
            let d = admin.restore_at(&a.text(0)?, at).await?;
            writeln!(
                out,
                "Restored table {} to {at} ms ({} region(s)); enable it to serve",
                d.name,
                d.regions.len()
            )?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_are_rfc3339_or_milliseconds() {
        assert_eq!(
            parse_instant("1700000000123").expect("ms"),
            1_700_000_000_123
        );
        assert_eq!(
            parse_instant("2023-11-14T22:13:20.123Z").expect("rfc3339"),
            1_700_000_000_123
        );
        let e = parse_instant("yesterday").expect_err("refused");
        assert!(e.to_string().contains("RFC 3339"), "{e}");
    }
}
