//! Counter calls: `atomicIncrement`, `increment`, `incrementRows`, and
//! `append`.

use super::{bin, long, table, texts};
use crate::host::Access;
use crate::thrift::convert;
use crate::thrift::fault::Fault;
use crate::thrift::wire::{Struct, TType, Value};
use bytes::Bytes;

/// Runs one counter call: the answer (None for void) or the fault.
pub(crate) async fn call(
    h: Access<'_>,
    method: &str,
    args: &Struct,
) -> Result<Option<Value>, Fault> {
    Ok(Some(match method {
        "atomicIncrement" => {
            let (name, row, column) = (
                table(args, 1)?,
                bin(args, 2, "row")?,
                bin(args, 3, "column")?,
            );
            let by = long(args, 4, "value")?;
            let (family, qualifier) = match convert::split_column(&column)? {
                (f, Some(q)) => (f, q),
                (f, None) => (f, Bytes::new()),
            };
            let values = h
                .increment(&name, row, vec![(family, qualifier, by)], None)
                .await?
                .values;
            Value::I64(values.first().copied().unwrap_or_default())
        }
        "increment" => {
            let inc = args
                .structure(1)
                .ok_or_else(|| Fault::illegal("argument increment is missing"))?;
            increment(h, inc).await?;
            return Ok(None);
        }
        "incrementRows" => {
            for v in args.list(1).unwrap_or_default() {
                let inc = v
                    .as_struct()
                    .ok_or_else(|| Fault::illegal("increments: expected TIncrement structs"))?;
                increment(h, inc).await?;
            }
            return Ok(None);
        }
        "append" => {
            let a = args
                .structure(1)
                .ok_or_else(|| Fault::illegal("argument append is missing"))?;
            let name = table(a, 1)?;
            let row = bin(a, 2, "TAppend.row")?;
            let (columns, values) = (texts(a, 3)?, texts(a, 4)?);
            if columns.len() != values.len() {
                return Err(Fault::io(format!(
                    "TAppend: {} columns but {} values",
                    columns.len(),
                    values.len()
                )));
            }
            let mut list = Vec::with_capacity(columns.len());
            for (c, v) in columns.iter().zip(values) {
                let (f, q) = convert::split_column(c)?;
                list.push((f, q.unwrap_or_default(), v));
            }
            let names: Vec<(Bytes, Bytes)> = list
                .iter()
                .map(|(f, q, _)| (f.clone(), q.clone()))
                .collect();
            let new = h.append(&name, row, list, None).await?;
            // Each new value with its stored cell's timestamp.
            let stamp = |f: &Bytes, q: &Bytes| {
                new.cells
                    .iter()
                    .find(|c| c.family == f && c.qualifier == q)
                    .map_or(0, |c| c.timestamp)
            };
            Value::List(
                TType::Struct,
                names
                    .iter()
                    .zip(&new.values)
                    .map(|((f, q), v)| convert::tcell(v.clone(), stamp(f, q)))
                    .collect(),
            )
        }
        _ => return Err(Fault::unknown_method(method)),
    }))
}

/// One `TIncrement`.
async fn increment(h: Access<'_>, inc: &Struct) -> Result<(), Fault> {
    let name = table(inc, 1)?;
    let row = bin(inc, 2, "TIncrement.row")?;
    let column = bin(inc, 3, "TIncrement.column")?;
    let by = inc.i64(4).unwrap_or(1);
    let (f, q) = convert::split_column(&column)?;
    h.increment(&name, row, vec![(f, q.unwrap_or_default(), by)], None)
        .await?;
    Ok(())
}
