//! One SST file written from loose cells: the writes a point-in-time
//! restore replays from the WAL's history into a snapshot of its own.
//!
//! The cells may come in any order and twice over (an entry a failover
//! logged again in its new owner's WAL): they are put in cell order and a
//! cell whose whole key (row, column, timestamp, type and sequence number)
//! equals the one before it is written once.

use super::FamilyConfig;
use super::flush::store_file_entry;
use crate::cell::Cell;
use crate::manifest::StoreFile;
use crate::object::Bucket;
use crate::sst::{FileId, SstError, SstWriter, UploadSink};

/// Writes `cells` (all of `family`) as one file at `<dir>/<family>/<id>.sst`
/// with the family's file settings. `None` if there are no cells (nothing
/// is written).
pub async fn write_cells_file(
    bucket: &Bucket,
    dir: &str,
    family: &FamilyConfig,
    mut cells: Vec<Cell>,
) -> Result<Option<StoreFile>, SstError> {
    if cells.is_empty() {
        return Ok(None);
    }
    cells.sort_by(|a, b| a.key().cmp(&b.key()));
    cells.dedup_by(|later, earlier| later.key() == earlier.key());
    let name = String::from_utf8_lossy(&family.name).into_owned();
    let id = FileId::generate();
    let path = format!("{}/{}/{}.sst", dir.trim_end_matches('/'), name, id);
    let sink = UploadSink::new(bucket, &path).await?;
    let mut writer = SstWriter::new(
        id,
        path.clone(),
        family.name.clone(),
        family.sst.clone(),
        sink,
    )?;
    for cell in &cells {
        if let Err(e) = writer.add(cell).await {
            if let Err(abort) = writer.abort().await {
                tracing::warn!(path = %path, error = %abort, "aborting a replayed-cells file");
            }
            return Err(e);
        }
    }
    let summary = writer.finish().await?;
    Ok(Some(store_file_entry(id, path, &summary)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::CellType;
    use bytes::Bytes;

    fn cell(row: &str, ts: i64, seq: u64, value: &str) -> Cell {
        Cell {
            row: Bytes::from(row.to_owned()),
            family: Bytes::from_static(b"cf"),
            qualifier: Bytes::from_static(b"q"),
            timestamp: ts,
            kind: CellType::Put,
            seq,
            value: Bytes::from(value.to_owned()),
        }
    }

    #[tokio::test]
    async fn cells_in_any_order_and_twice_make_one_sorted_file() {
        let bucket = Bucket::memory();
        let family = FamilyConfig::new(Bytes::from_static(b"cf"));
        let cells = vec![
            cell("b", 5, 2, "b"),
            cell("a", 5, 1, "a"),
            cell("b", 5, 2, "b"),
            cell("a", 7, 3, "a2"),
        ];
        let file = write_cells_file(&bucket, "snap/files/r1", &family, cells)
            .await
            .expect("written")
            .expect("a file");
        assert_eq!(file.cell_count, 3, "the twice-seen cell is written once");
        assert_eq!(file.max_seq, 3);
        assert_eq!(file.first_row, Bytes::from_static(b"a"));
        assert_eq!(file.last_row, Bytes::from_static(b"b"));
        assert!(file.path.starts_with("snap/files/r1/cf/"), "{}", file.path);
        let none = write_cells_file(&bucket, "snap/files/r1", &family, Vec::new())
            .await
            .expect("nothing to write");
        assert!(none.is_none());
    }
}
