//! Table admin calls: list, describe, enable, disable, compact, create and
//! delete tables, and a table's regions. Each is the host call the gRPC
//! `Admin` service makes, acting for the gateway's caller.

use super::{binaries, table};
use crate::host::Access;
use crate::thrift::convert;
use crate::thrift::fault::Fault;
use crate::thrift::wire::{Struct, TType, Value};
use bytes::Bytes;

/// Runs one table admin call: the answer (None for void) or the fault.
pub(crate) async fn call(
    h: Access<'_>,
    method: &str,
    args: &Struct,
) -> Result<Option<Value>, Fault> {
    Ok(Some(match method {
        "getTableNames" => binaries(
            h.list_tables()
                .await
                .into_iter()
                .map(|t| Bytes::from(t.name))
                .collect(),
        ),
        "getTableNamesWithIsTableEnabled" => Value::Map(
            TType::Binary,
            TType::Bool,
            h.list_tables()
                .await
                .into_iter()
                .map(|t| (Value::Binary(Bytes::from(t.name)), Value::Bool(t.enabled)))
                .collect(),
        ),
        "isTableEnabled" => Value::Bool(h.describe_table(&table(args, 1)?).await?.enabled),
        "enableTable" => {
            h.enable_table(&table(args, 1)?).await?;
            return Ok(None);
        }
        "disableTable" => {
            h.disable_table(&table(args, 1)?).await?;
            return Ok(None);
        }
        "compact" | "majorCompact" => {
            // A table name, or a region name `table,startKey,id`.
            let name = table(args, 1)?;
            let name = name.split(',').next().unwrap_or_default();
            h.compact_table(name, method == "majorCompact").await?;
            return Ok(None);
        }
        "getColumnDescriptors" => {
            let t = h.describe_table(&table(args, 1)?).await?;
            Value::Map(
                TType::Binary,
                TType::Struct,
                t.families
                    .iter()
                    .map(|f| {
                        (
                            Value::Binary(Bytes::from(format!("{}:", f.name))),
                            convert::column_descriptor(f),
                        )
                    })
                    .collect(),
            )
        }
        "getTableRegions" => {
            let name = table(args, 1)?;
            let regions = h.region_map(&name)?;
            Value::List(
                TType::Struct,
                regions
                    .iter()
                    .enumerate()
                    .map(|(i, r)| convert::region_info(&name, r, i))
                    .collect(),
            )
        }
        "createTable" => {
            create_table(h, args).await?;
            return Ok(None);
        }
        "deleteTable" => {
            h.drop_table(&table(args, 1)?).await?;
            return Ok(None);
        }
        _ => return Err(Fault::unknown_method(method)),
    }))
}

/// `createTable`: a table with the given column families, no split keys.
async fn create_table(h: Access<'_>, args: &Struct) -> Result<(), Fault> {
    let name = table(args, 1)?;
    let families = args.list(2).unwrap_or_default();
    if families.is_empty() {
        return Err(Fault::illegal(format!(
            "table {name} needs at least one column family"
        )));
    }
    let patches = families
        .iter()
        .map(|v| {
            v.as_struct()
                .ok_or_else(|| Fault::illegal("expected ColumnDescriptor structs"))
                .and_then(convert::family_patch)
        })
        .collect::<Result<Vec<_>, _>>()?;
    h.create_table(&name, patches, Vec::new()).await?;
    Ok(())
}
