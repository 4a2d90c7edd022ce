//! Table and server commands: create, list, describe, alter, disable,
//! enable, drop, truncate, flush, compact, is_enabled, is_disabled, exists,
//! split, status, version.

use super::CommandError;
use crate::shell::args::Args;
use crate::shell::convert::{alter_request, create_request};
use crate::shell::format::{human_bytes, to_string_binary};
use shoal_client::proto::KeepDeletedCells;
use shoal_client::{
    BloomType, Client, Compression, FamilySchema, InMemoryCompaction, RegionInfo, TableState,
};
use std::io::Write;

type Result<T> = std::result::Result<T, CommandError>;

/// Runs the admin command `name`.
pub async fn run(client: &Client, name: &str, a: &Args<'_>, out: &mut dyn Write) -> Result<()> {
    let admin = client.admin();
    match name {
        "create" => {
            let req = create_request(a)?;
            let d = admin
                .create_table(&req.name, req.families, req.split_keys)
                .await?;
            writeln!(
                out,
                "Created table {} with {} region(s)",
                d.name,
                d.regions.len()
            )?;
        }
        "list" => {
            a.count(0, 0)?;
            let tables = admin.list().await?;
            writeln!(out, "TABLE")?;
            for t in &tables {
                writeln!(out, "{}", t.name)?;
            }
            writeln!(out, "{} row(s)", tables.len())?;
        }
        "describe" => {
            a.count(1, 1)?;
            let d = admin.describe(&a.text(0)?).await?;
            let state = if d.state == TableState::Disabled as i32 {
                "DISABLED"
            } else {
                "ENABLED"
            };
            writeln!(out, "Table {} is {state}", d.name)?;
            writeln!(out, "COLUMN FAMILIES DESCRIPTION")?;
            for f in &d.families {
                writeln!(out, "{}", describe_family(f))?;
            }
            writeln!(out, "{} row(s)", d.families.len())?;
            writeln!(out, "REGIONS")?;
            for r in &d.regions {
                writeln!(out, "{}", describe_region(r))?;
            }
        }
        "alter" => {
            let req = alter_request(a)?;
            admin
                .alter(&req.name, req.upsert_families, req.delete_families)
                .await?;
            writeln!(out, "Table {} altered", req.name)?;
        }
        "disable" | "enable" | "drop" | "truncate" | "flush" | "compact" | "major_compact" => {
            a.count(1, 1)?;
            let t = a.text(0)?;
            let message = match name {
                "disable" => admin.disable(&t).await?,
                "enable" => admin.enable(&t).await?,
                "drop" => admin.drop_table(&t).await?,
                "truncate" => {
                    // As HBase's shell does: disable, truncate (the server
                    // enables the empty table again).
                    let d = admin.describe(&t).await?;
                    if d.state != TableState::Disabled as i32 {
                        writeln!(out, "Disabling table {t}...")?;
                        admin.disable(&t).await?;
                    }
                    writeln!(out, "Truncating table {t}...")?;
                    admin.truncate(&t).await?
                }
                "flush" => admin.flush(&t).await?,
                "compact" => admin.compact(&t, false).await?,
                _ => admin.compact(&t, true).await?,
            };
            if !message.is_empty() {
                writeln!(out, "{message}")?;
            }
        }
        "exists" => {
            a.count(1, 1)?;
            let t = a.text(0)?;
            let e = admin.exists(&t).await?;
            let does = if e { "does" } else { "does not" };
            writeln!(out, "Table {t} {does} exist\n{e}")?;
        }
        "is_enabled" | "is_disabled" => {
            a.count(1, 1)?;
            let d = admin.describe(&a.text(0)?).await?;
            let enabled = d.state != TableState::Disabled as i32;
            writeln!(out, "{}", enabled == (name == "is_enabled"))?;
        }
        "split" => {
            a.count(1, 2)?;
            let row = match a.get(1) {
                None => None,
                Some(_) => Some(a.bytes(1)?),
            };
            let regions = admin.split(&a.text(0)?, row).await?;
            for r in &regions {
                writeln!(out, "{}", describe_region(r))?;
            }
            writeln!(out, "{} new region(s)", regions.len())?;
        }
        "status" => {
            a.count(0, 1)?;
            let s = admin.status().await?;
            writeln!(
                out,
                "shoal {} up {}s, data at {}",
                s.version, s.uptime_seconds, s.data_location
            )?;
            writeln!(
                out,
                "{} table(s), {} region(s), store {}, memstore {}",
                s.tables,
                s.regions,
                human_bytes(s.store_bytes),
                human_bytes(s.memstore_bytes)
            )?;
            writeln!(
                out,
                "cache: L1 {} (hit ratio {:.1}%), L2 {} (hit ratio {:.1}%), object-store GETs {}",
                human_bytes(s.l1_bytes),
                s.l1_hit_ratio * 100.0,
                human_bytes(s.l2_bytes),
                s.l2_hit_ratio * 100.0,
                s.object_store_gets
            )?;
            writeln!(out, "requests served: {}", s.requests)?;
            if !s.cluster_name.is_empty() {
                writeln!(
                    out,
                    "cluster: {} live server(s), master {}, balancer {}; answered by {}",
                    s.servers.len(),
                    if s.master.is_empty() {
                        "(none right now)"
                    } else {
                        &s.master
                    },
                    if s.balancer_on { "on" } else { "off" },
                    s.cluster_name
                )?;
            }
            let detailed = a
                .get(0)
                .and_then(|v| v.as_text())
                .is_some_and(|t| t == "detailed");
            if detailed {
                if s.servers.is_empty() {
                    writeln!(out, "single server: it serves every region")?;
                }
                for server in &s.servers {
                    writeln!(
                        out,
                        "  {} at {}: {} region(s){}",
                        server.name,
                        server.addr,
                        server.regions,
                        if server.name == s.master {
                            " (master)"
                        } else {
                            ""
                        }
                    )?;
                    for id in &server.region_ids {
                        writeln!(out, "    {id}")?;
                    }
                }
            }
        }
        "move" => {
            a.count(1, 2)?;
            let to = match a.get(1) {
                None => String::new(),
                Some(_) => a.text(1)?,
            };
            writeln!(out, "{}", admin.move_region(&a.text(0)?, &to).await?)?;
        }
        "balancer" => {
            a.count(0, 0)?;
            let s = admin.status().await?;
            if s.cluster_name.is_empty() {
                writeln!(out, "false (a single server: nothing to balance)")?;
            } else {
                writeln!(out, "{}", s.balancer_on)?;
            }
        }
        "balance_switch" => {
            a.count(1, 1)?;
            let on = match a.get(0) {
                Some(crate::shell::value::Value::Bool(b)) => *b,
                _ => match a.text(0)?.as_str() {
                    "true" => true,
                    "false" => false,
                    other => {
                        return Err(CommandError::Usage(format!(
                            "balance_switch takes true or false, not {other:?}"
                        )));
                    }
                },
            };
            writeln!(out, "{}", admin.balance_switch(on).await?)?;
        }
        "grant" => {
            a.count(2, 4)?;
            let (table, family) = scope(a, 2)?;
            let msg = admin
                .grant(&a.text(0)?, &a.text(1)?, &table, &family)
                .await?;
            writeln!(out, "{msg}")?;
        }
        "revoke" => {
            a.count(1, 3)?;
            let (table, family) = scope(a, 1)?;
            writeln!(out, "{}", admin.revoke(&a.text(0)?, &table, &family).await?)?;
        }
        "user_permission" => {
            a.count(0, 1)?;
            let table = match a.get(0) {
                Some(_) => a.text(0)?,
                None => String::new(),
            };
            let r = admin.user_permissions(&table, "").await?;
            writeln!(out, "User                 Table,Family: Permission")?;
            for p in &r.permissions {
                let scope = if p.table.is_empty() {
                    "(global)".to_string()
                } else if p.table.starts_with('@') {
                    p.table.clone()
                } else {
                    format!("{},{}", p.table, p.family)
                };
                writeln!(out, " {:<20} {scope}: actions={}", p.user, p.actions)?;
            }
            writeln!(out, "{} row(s)", r.permissions.len())?;
        }
        "version" => {
            a.count(0, 0)?;
            let s = admin.status().await?;
            writeln!(
                out,
                "shoal shell {}, server {}",
                env!("CARGO_PKG_VERSION"),
                s.version
            )?;
        }
        other => {
            return Err(CommandError::Usage(format!(
                "Unknown command '{other}'. Try 'help'."
            )));
        }
    }
    Ok(())
}

/// The table and family of a grant or revoke, from argument `from` on.
/// A grant's scope as HBase's shell writes it: nothing (global), `@ns`
/// (a namespace), a table, or a table and a family.
fn scope(a: &Args<'_>, from: usize) -> Result<(String, String)> {
    let table = match a.get(from) {
        Some(_) => a.text(from)?,
        None => String::new(),
    };
    let family = match a.get(from + 1) {
        Some(_) => a.text(from + 1)?,
        None => String::new(),
    };
    Ok((table, family))
}

/// A region as `id [start, end) size=… memstore=… files=… cache=…%`.
fn describe_region(r: &RegionInfo) -> String {
    format!(
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
    )
}

/// A family as HBase's `describe` prints it.
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
    let imc = match InMemoryCompaction::try_from(f.in_memory_compaction) {
        Ok(InMemoryCompaction::None) => "NONE",
        Ok(InMemoryCompaction::Eager) => "EAGER",
        _ => "BASIC",
    };
    let kdc = match KeepDeletedCells::try_from(f.keep_deleted_cells) {
        Ok(KeepDeletedCells::True) => "TRUE",
        Ok(KeepDeletedCells::Ttl) => "TTL",
        _ => "FALSE",
    };
    let ttl = match f.ttl_seconds.unwrap_or(0) {
        0 => "FOREVER".to_string(),
        n => format!("{n} SECONDS"),
    };
    format!(
        "{{NAME => '{}', VERSIONS => '{}', MIN_VERSIONS => '{}', TTL => '{ttl}', BLOCKSIZE => '{}', COMPRESSION => '{compression}', BLOOMFILTER => '{bloom}', IN_MEMORY => '{}', BLOCKCACHE => '{}', PREFETCH_BLOCKS_ON_OPEN => '{}', CACHE_SCANS => '{}', IN_MEMORY_COMPACTION => '{imc}', KEEP_DELETED_CELLS => '{kdc}'}}",
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

    #[test]
    fn families_describe_like_hbase() {
        let f = FamilySchema {
            name: "cf".into(),
            max_versions: Some(3),
            ttl_seconds: Some(60),
            compression: Compression::Zstd as i32,
            bloom: BloomType::Rowcol as i32,
            ..Default::default()
        };
        let d = describe_family(&f);
        assert!(
            d.starts_with(
                "{NAME => 'cf', VERSIONS => '3', MIN_VERSIONS => '0', TTL => '60 SECONDS'"
            ),
            "{d}"
        );
        assert!(d.contains("COMPRESSION => 'ZSTD', BLOOMFILTER => 'ROWCOL'"));
        let r = RegionInfo {
            id: "r1".into(),
            start_row: b"a".to_vec(),
            end_row: vec![0xff],
            size_bytes: 2048,
            ..Default::default()
        };
        assert_eq!(
            describe_region(&r),
            " r1 [a, \\xFF) size=2.0 KiB memstore=0 B files=0 cache=0%"
        );
    }
}
