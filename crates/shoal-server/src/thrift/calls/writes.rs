//! Mutation calls: `mutateRow*`, `mutateRows*`, `deleteAll*`,
//! `deleteAllRow*`, and `checkAndPut`.

use super::{bin, long, table};
use crate::host::Access;
use crate::thrift::convert;
use crate::thrift::fault::Fault;
use crate::thrift::wire::{Struct, Value};
use bytes::Bytes;
use shoal_storage::region::{CheckAndMutate, CompareOp, RowMutation, RowOp};

/// Runs one mutation call: the answer (None for void) or the fault.
pub(crate) async fn call(
    h: Access<'_>,
    method: &str,
    args: &Struct,
) -> Result<Option<Value>, Fault> {
    Ok(Some(match method {
        "mutateRow" | "mutateRowTs" => {
            let (name, row) = (table(args, 1)?, bin(args, 2, "row")?);
            let list = convert::mutations(args.list(3).unwrap_or_default())?;
            let ts = match method {
                "mutateRowTs" => Some(long(args, 4, "timestamp")?),
                _ => None,
            };
            h.mutate(&name, convert::row_mutation(row, &list, ts)?)
                .await?;
            return Ok(None);
        }
        "mutateRows" | "mutateRowsTs" => {
            let name = table(args, 1)?;
            let ts = match method {
                "mutateRowsTs" => Some(long(args, 3, "timestamp")?),
                _ => None,
            };
            let mut batch = Vec::new();
            for b in args.list(2).unwrap_or_default() {
                let b = b
                    .as_struct()
                    .ok_or_else(|| Fault::illegal("rowBatches: expected BatchMutation structs"))?;
                let row = bin(b, 1, "BatchMutation.row")?;
                let list = convert::mutations(b.list(2).unwrap_or_default())?;
                let m = convert::row_mutation(row, &list, ts)?;
                if !m.ops.is_empty() {
                    batch.push(m);
                }
            }
            if batch.is_empty() {
                return Ok(None);
            }
            for r in h.mutate_many(&name, batch).await? {
                r?;
            }
            return Ok(None);
        }
        "deleteAll" | "deleteAllTs" => {
            let (name, row, column) = (
                table(args, 1)?,
                bin(args, 2, "row")?,
                bin(args, 3, "column")?,
            );
            let ts = match method {
                "deleteAllTs" => Some(long(args, 4, "timestamp")?),
                _ => None,
            };
            let op = match convert::split_column(&column)? {
                (family, None) => RowOp::DeleteFamily {
                    family,
                    timestamp: ts,
                },
                (family, Some(qualifier)) => RowOp::DeleteColumn {
                    family,
                    qualifier,
                    timestamp: ts,
                },
            };
            h.mutate(&name, RowMutation::new(row).op(op)).await?;
            return Ok(None);
        }
        "deleteAllRow" | "deleteAllRowTs" => {
            let (name, row) = (table(args, 1)?, bin(args, 2, "row")?);
            let ts = match method {
                "deleteAllRowTs" => Some(long(args, 3, "timestamp")?),
                _ => None,
            };
            h.mutate(
                &name,
                RowMutation::new(row).op(RowOp::DeleteRow { timestamp: ts }),
            )
            .await?;
            return Ok(None);
        }
        "checkAndPut" => check_and_put(h, args).await?,
        _ => return Err(Fault::unknown_method(method)),
    }))
}

/// `checkAndPut`: the mutation, applied if the column holds the value (or,
/// with no value given, does not exist).
async fn check_and_put(h: Access<'_>, args: &Struct) -> Result<Value, Fault> {
    let (name, row, column) = (
        table(args, 1)?,
        bin(args, 2, "row")?,
        bin(args, 3, "column")?,
    );
    let (family, qualifier) = convert::split_column(&column)?;
    let m = args
        .structure(6)
        .ok_or_else(|| Fault::illegal("argument mput is missing"))?;
    let list = convert::mutations(&[Value::Struct(m.clone())])?;
    let mutation = convert::row_mutation(row, &list, None)?;
    // An absent value checks that the column does not exist.
    let (op, value) = match args.binary(5) {
        Some(v) => (CompareOp::Equal, v.clone()),
        None => (CompareOp::Missing, Bytes::new()),
    };
    let check = CheckAndMutate {
        time_range: Default::default(),
        filter: None,
        family,
        qualifier: qualifier.unwrap_or_default(),
        op,
        value,
        mutation,
    };
    Ok(Value::Bool(h.check_and_mutate(&name, check).await?))
}
