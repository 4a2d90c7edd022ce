//! HBase's cell as this crate hands it out, and the KeyValue key layout it is parsed from:
//! `[row len u16][row][family len u8][family][qualifier][timestamp i64][type u8]`, all
//! big-endian, the qualifier taking whatever is left. Tags are `[len u16][type u8][value]`
//! repeated, `len` counting the type byte.

use bytes::Bytes;

/// Key bytes besides row, family and qualifier: row length, family length, timestamp, type.
pub(crate) const KEY_INFRASTRUCTURE_LEN: usize = 2 + 1 + 8 + 1;
/// Timestamp and type at the end of a key.
pub(crate) const TIMESTAMP_TYPE_LEN: usize = 9;

/// The type of a cell as stored (Minimum and Maximum are never stored).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellKind {
    Put,
    Delete,
    DeleteFamilyVersion,
    DeleteColumn,
    DeleteFamily,
}

impl CellKind {
    pub fn from_code(code: u8) -> Option<CellKind> {
        match code {
            4 => Some(CellKind::Put),
            8 => Some(CellKind::Delete),
            10 => Some(CellKind::DeleteFamilyVersion),
            12 => Some(CellKind::DeleteColumn),
            14 => Some(CellKind::DeleteFamily),
            _ => None,
        }
    }

    pub fn code(self) -> u8 {
        match self {
            CellKind::Put => 4,
            CellKind::Delete => 8,
            CellKind::DeleteFamilyVersion => 10,
            CellKind::DeleteColumn => 12,
            CellKind::DeleteFamily => 14,
        }
    }

    /// HBase's name of the type (`Put`, `DeleteColumn`, …).
    pub fn name(self) -> &'static str {
        match self {
            CellKind::Put => "Put",
            CellKind::Delete => "Delete",
            CellKind::DeleteFamilyVersion => "DeleteFamilyVersion",
            CellKind::DeleteColumn => "DeleteColumn",
            CellKind::DeleteFamily => "DeleteFamily",
        }
    }
}

/// One tag of a cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub kind: u8,
    pub value: Bytes,
}

/// One cell read from an HFile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HCell {
    pub row: Bytes,
    pub family: Bytes,
    pub qualifier: Bytes,
    pub timestamp: i64,
    pub kind: CellKind,
    pub value: Bytes,
    pub tags: Vec<Tag>,
    /// The MVCC / sequence id stored with the cell (0 if the file stores none).
    pub seq_id: u64,
}

impl HCell {
    /// The cell's key serialized as HBase's KeyValue key.
    pub fn key_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            KEY_INFRASTRUCTURE_LEN + self.row.len() + self.family.len() + self.qualifier.len(),
        );
        out.extend_from_slice(&(self.row.len() as u16).to_be_bytes());
        out.extend_from_slice(&self.row);
        out.push(self.family.len() as u8);
        out.extend_from_slice(&self.family);
        out.extend_from_slice(&self.qualifier);
        out.extend_from_slice(&self.timestamp.to_be_bytes());
        out.push(self.kind.code());
        out
    }
}

/// A key split into its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    pub row: Bytes,
    pub family: Bytes,
    pub qualifier: Bytes,
    pub timestamp: i64,
    /// The type byte as stored (index keys may hold Minimum/Maximum).
    pub type_code: u8,
}

/// Splits a KeyValue key into row, family, qualifier, timestamp and type byte.
pub fn parse_key(key: &Bytes) -> Result<Key, String> {
    let n = key.len();
    if n < KEY_INFRASTRUCTURE_LEN {
        return Err(format!(
            "key of {n} bytes is shorter than {KEY_INFRASTRUCTURE_LEN}"
        ));
    }
    let row_len = usize::from(u16::from_be_bytes([key[0], key[1]]));
    let fam_len_at = 2 + row_len;
    let fam_len = usize::from(*key.get(fam_len_at).ok_or_else(|| overrun(row_len, n))?);
    let qual_at = fam_len_at + 1 + fam_len;
    if qual_at + TIMESTAMP_TYPE_LEN > n {
        return Err(format!(
            "key of {n} bytes cannot hold a {row_len}-byte row and {fam_len}-byte family"
        ));
    }
    let ts_at = n - TIMESTAMP_TYPE_LEN;
    let mut ts = [0; 8];
    ts.copy_from_slice(&key[ts_at..ts_at + 8]);
    Ok(Key {
        row: key.slice(2..fam_len_at),
        family: key.slice(fam_len_at + 1..qual_at),
        qualifier: key.slice(qual_at..ts_at),
        timestamp: i64::from_be_bytes(ts),
        type_code: key[n - 1],
    })
}

fn overrun(row_len: usize, n: usize) -> String {
    format!("row of {row_len} bytes overruns a key of {n} bytes")
}

/// Splits serialized tags.
pub fn parse_tags(tags: &Bytes) -> Result<Vec<Tag>, String> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < tags.len() {
        let len = match tags.get(pos..pos + 2) {
            Some(b) => usize::from(u16::from_be_bytes([b[0], b[1]])),
            None => return Err("tag length runs past the tags".into()),
        };
        if len == 0 || pos + 2 + len > tags.len() {
            return Err(format!(
                "tag of {len} bytes at tag byte {pos} overruns the tags"
            ));
        }
        out.push(Tag {
            kind: tags[pos + 2],
            value: tags.slice(pos + 3..pos + 2 + len),
        });
        pos += 2 + len;
    }
    Ok(out)
}

/// Builds a cell from its serialized key, value, tags and sequence id.
pub(crate) fn cell_from_parts(
    key: &Bytes,
    value: Bytes,
    tags: &Bytes,
    seq_id: i64,
) -> Result<HCell, String> {
    let k = parse_key(key)?;
    let kind = CellKind::from_code(k.type_code)
        .ok_or_else(|| format!("cell type byte {} is not a stored type", k.type_code))?;
    let seq_id = u64::try_from(seq_id).map_err(|_| format!("negative sequence id {seq_id}"))?;
    Ok(HCell {
        row: k.row,
        family: k.family,
        qualifier: k.qualifier,
        timestamp: k.timestamp,
        kind,
        value,
        tags: parse_tags(tags)?,
        seq_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn key(row: &[u8], fam: &[u8], q: &[u8], ts: i64, t: u8) -> Vec<u8> {
        let mut k = (row.len() as u16).to_be_bytes().to_vec();
        k.extend_from_slice(row);
        k.push(fam.len() as u8);
        k.extend_from_slice(fam);
        k.extend_from_slice(q);
        k.extend_from_slice(&ts.to_be_bytes());
        k.push(t);
        k
    }

    #[test]
    fn key_round_trips() {
        let raw = Bytes::from(key(b"row", b"f", b"qual", -5, 4));
        let k = parse_key(&raw).expect("key");
        assert_eq!(
            (&k.row[..], &k.family[..], &k.qualifier[..]),
            (&b"row"[..], &b"f"[..], &b"qual"[..])
        );
        assert_eq!((k.timestamp, k.type_code), (-5, 4));
        let c = cell_from_parts(&raw, Bytes::new(), &Bytes::new(), 7).expect("cell");
        assert_eq!(c.key_bytes(), raw.to_vec());
    }

    #[test]
    fn bad_keys_fail() {
        assert!(
            parse_key(&Bytes::from_static(&[
                0, 200, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
            ]))
            .is_err()
        );
        let raw = Bytes::from(key(b"r", b"f", b"", 1, 3));
        assert!(cell_from_parts(&raw, Bytes::new(), &Bytes::new(), 0).is_err());
    }

    #[test]
    fn tags_parse() {
        let t = Bytes::from_static(&[0, 3, 8, b'h', b'i', 0, 1, 9]);
        let tags = parse_tags(&t).expect("tags");
        assert_eq!(tags.len(), 2);
        assert_eq!((tags[0].kind, &tags[0].value[..]), (8, &b"hi"[..]));
        assert_eq!((tags[1].kind, tags[1].value.len()), (9, 0));
        assert!(parse_tags(&Bytes::from_static(&[0, 5, 1])).is_err());
    }
}
