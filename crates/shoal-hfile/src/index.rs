//! The block indexes. The root level (`IDXROOT2`, in the load-on-open section) lists
//! entries `[offset u64][on-disk size i32][key: vint length + bytes]`, then for a
//! multi-level data index optional mid-key metadata. Lower levels (`IDXINTE2`
//! intermediate, `IDXLEAF2` leaf) are non-root blocks: `[entry count i32]`, a secondary
//! index of `count + 1` i32 offsets of each entry (relative to the end of the secondary
//! index; the last one is the total), then the entries `[offset u64][on-disk size i32]
//! [key]`, each key's length implied by the secondary index.

use crate::cursor::Cursor;
use bytes::Bytes;

/// One index entry: a block and the first key (or, for the meta index, the name) in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    pub offset: u64,
    pub on_disk_size: u32,
    pub key: Bytes,
}

/// Offset plus on-disk size in an entry.
const ENTRY_OVERHEAD: usize = 12;

/// Mid-key metadata after a multi-level root: leaf block offset, its size, entry number.
const MID_KEY_METADATA_LEN: usize = 8 + 4 + 4;

/// Reads a root index block holding exactly `count` entries and, if `with_mid_key`,
/// the mid-key metadata (HBase writes it when the index has more than one level).
pub(crate) fn parse_root_block(
    data: &Bytes,
    count: u32,
    with_mid_key: bool,
) -> Result<Vec<IndexEntry>, String> {
    let (entries, used) = parse_root(data, count)?;
    let rest = data.len() - used;
    let wanted = if with_mid_key {
        MID_KEY_METADATA_LEN
    } else {
        0
    };
    if rest != wanted {
        return Err(format!(
            "{count} entries leave {rest} bytes of the root index block, not {wanted}"
        ));
    }
    Ok(entries)
}

/// Reads `count` root-level entries from the start of `data`; also returns the bytes
/// they took.
fn parse_root(data: &Bytes, count: u32) -> Result<(Vec<IndexEntry>, usize), String> {
    let mut c = Cursor::new(data);
    let mut out = Vec::new();
    for i in 0..count {
        let what = |f: &str| format!("root index entry {i} {f}");
        let offset = c.u64(&what("offset"))?;
        let on_disk_size = size(c.i32(&what("size"))?)?;
        let n = c.hadoop_vlen(&what("key length"))?;
        let start = c.pos();
        c.take(n, &what("key"))?;
        out.push(IndexEntry {
            offset,
            on_disk_size,
            key: data.slice(start..start + n),
        });
    }
    Ok((out, c.pos()))
}

fn size(v: i32) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("negative block size {v} in index"))
}

/// Reads the entries of a non-root (intermediate or leaf) index block.
pub(crate) fn parse_non_root(data: &Bytes) -> Result<Vec<IndexEntry>, String> {
    let mut c = Cursor::new(data);
    let count = c.len32("non-root index entry count")?;
    let secondary_len = count
        .checked_add(1)
        .and_then(|n| n.checked_mul(4))
        .filter(|n| *n <= c.remaining())
        .ok_or_else(|| format!("secondary index of {count} entries overruns the block"))?;
    let mut secondary = Cursor::new(c.take(secondary_len, "secondary index")?);
    let base = c.pos();
    let mut rel = secondary.len32("secondary index")?;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let next = secondary.len32("secondary index")?;
        let entry_len = next
            .checked_sub(rel)
            .filter(|n| *n >= ENTRY_OVERHEAD && base + next <= data.len())
            .ok_or_else(|| format!("non-root index entry {i} spans {rel}..{next}, which is bad"))?;
        let start = base + rel;
        let mut e = Cursor::new(&data[start..start + entry_len]);
        let offset = e.u64("entry offset")?;
        let on_disk_size = size(e.i32("entry size")?)?;
        out.push(IndexEntry {
            offset,
            on_disk_size,
            key: data.slice(start + ENTRY_OVERHEAD..start + entry_len),
        });
        rel = next;
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod build {
    //! Index block payloads for hand-built test files.
    use super::IndexEntry;

    pub fn root(entries: &[IndexEntry]) -> Vec<u8> {
        let mut out = Vec::new();
        for e in entries {
            out.extend_from_slice(&e.offset.to_be_bytes());
            out.extend_from_slice(&e.on_disk_size.to_be_bytes());
            crate::encoding::testutil::vlong(&mut out, e.key.len() as i64);
            out.extend_from_slice(&e.key);
        }
        out
    }

    pub fn non_root(entries: &[IndexEntry]) -> Vec<u8> {
        let mut out = (entries.len() as u32).to_be_bytes().to_vec();
        let mut rel = 0u32;
        let mut body = Vec::new();
        for e in entries {
            out.extend_from_slice(&rel.to_be_bytes());
            body.extend_from_slice(&e.offset.to_be_bytes());
            body.extend_from_slice(&e.on_disk_size.to_be_bytes());
            body.extend_from_slice(&e.key);
            rel = body.len() as u32;
        }
        out.extend_from_slice(&rel.to_be_bytes());
        out.extend_from_slice(&body);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<IndexEntry> {
        (0..5u64)
            .map(|i| IndexEntry {
                offset: i * 1000,
                on_disk_size: 999,
                key: Bytes::from(vec![b'k'; i as usize * 70]),
            })
            .collect()
    }

    #[test]
    fn root_and_non_root_round_trip() {
        let e = entries();
        let root = build::root(&e);
        assert_eq!(
            parse_root_block(&Bytes::from(root.clone()), 5, false),
            Ok(e.clone())
        );
        assert!(parse_root_block(&Bytes::from(root.clone()), 4, false).is_err());
        assert!(parse_root_block(&Bytes::from(root.clone()), 5, true).is_err());
        let mut with_mid = root;
        with_mid.extend_from_slice(&[0; 16]);
        assert_eq!(
            parse_root_block(&Bytes::from(with_mid), 5, true),
            Ok(e.clone())
        );
        assert_eq!(parse_non_root(&Bytes::from(build::non_root(&e))), Ok(e));
    }

    #[test]
    fn bad_indexes_fail() {
        let e = entries();
        let root = Bytes::from(build::root(&e));
        assert!(parse_root(&root, 6).is_err());
        let mut nr = build::non_root(&e);
        nr[3] = 200;
        assert!(parse_non_root(&Bytes::from(nr)).is_err());
        let mut nr = build::non_root(&e);
        nr[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(parse_non_root(&Bytes::from(nr)).is_err());
    }
}
