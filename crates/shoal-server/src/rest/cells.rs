//! Between the storage layer's rows and HBase REST's cell sets: the
//! columns a path or scanner names as a [`Columns`] selection, and rows
//! read as a [`CellSetModel`].

use super::fault::RestError;
use super::model::{CellModel, CellSetModel, RowModel};
use super::row_spec::split_column;
use bytes::Bytes;
use shoal_storage::cell::Cell;
use shoal_storage::region::{Columns, RowResult};

/// The selection `family` / `family:qualifier` specifiers name (none:
/// every column). A family named whole takes all its qualifiers.
pub fn columns(specs: &[Bytes]) -> Result<Columns, RestError> {
    let mut c = Columns::all();
    for spec in specs {
        let (family, qualifier) = split_column(spec);
        if family.is_empty() {
            return Err(RestError::bad("a column names no family"));
        }
        c = match qualifier {
            None => c.family(family),
            Some(q) => {
                if matches!(c.families.get(&family), Some(None)) {
                    c // the whole family is asked for already
                } else {
                    c.column(family, q)
                }
            }
        };
    }
    Ok(c)
}

/// `family:qualifier` of a cell.
pub fn column_of(cell: &Cell) -> Bytes {
    let mut v = Vec::with_capacity(cell.family.len() + 1 + cell.qualifier.len());
    v.extend_from_slice(&cell.family);
    v.push(b':');
    v.extend_from_slice(&cell.qualifier);
    Bytes::from(v)
}

/// A cell as HBase REST's `CellModel`.
pub fn cell_model(cell: &Cell) -> CellModel {
    CellModel {
        column: Some(column_of(cell)),
        timestamp: cell.timestamp,
        value: cell.value.clone(),
    }
}

/// Rows as a cell set (rows without cells left out).
pub fn cell_set(rows: impl IntoIterator<Item = RowResult>) -> CellSetModel {
    CellSetModel {
        rows: rows
            .into_iter()
            .filter(|r| !r.cells.is_empty())
            .map(|r| RowModel {
                key: Some(r.row.clone()),
                cells: r.cells.iter().map(cell_model).collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_and_columns() {
        let c = columns(&[Bytes::from("cf:a"), Bytes::from("cf:b"), Bytes::from("g")])
            .unwrap_or_default();
        assert!(c.wants(b"cf", b"a") && c.wants(b"cf", b"b") && !c.wants(b"cf", b"c"));
        assert!(c.wants(b"g", b"anything"));
        let c = columns(&[Bytes::from("cf"), Bytes::from("cf:a")]).unwrap_or_default();
        assert!(c.wants(b"cf", b"z"));
        assert!(columns(&[Bytes::from(":q")]).is_err());
        assert!(columns(&[]).is_ok_and(|c| c.families.is_empty()));
    }
}
