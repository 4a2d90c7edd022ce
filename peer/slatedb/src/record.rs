//! How a YCSB record is stored in SlateDB: one key per record, the value is the
//! record's fields in order, each as a little-endian `u32` length then its bytes.
//!
//! This is what YCSB's RocksDB binding does (its `serializeValues`): a key-value
//! store has no columns, so an update is read, replace one field, write back.

use anyhow::{Context, bail};

/// Encodes `fields` (field0, field1, ...) as one value.
pub fn encode(fields: &[Vec<u8>]) -> anyhow::Result<Vec<u8>> {
    let total: usize = fields.iter().map(|f| 4 + f.len()).sum();
    let mut out = Vec::with_capacity(total);
    for f in fields {
        let len = u32::try_from(f.len()).context("field longer than 4 GiB")?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(f);
    }
    Ok(out)
}

/// Decodes a value written by [`encode`].
pub fn decode(mut value: &[u8]) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut fields = Vec::new();
    while !value.is_empty() {
        let Some((len, rest)) = value.split_first_chunk::<4>() else {
            bail!("truncated field length");
        };
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            bail!("field of {len} bytes but only {} left", rest.len());
        }
        fields.push(rest[..len].to_vec());
        value = &rest[len..];
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_truncation() -> anyhow::Result<()> {
        let fields = vec![b"abc".to_vec(), Vec::new(), vec![7u8; 100]];
        let value = encode(&fields)?;
        assert_eq!(value.len(), 3 * 4 + 103);
        assert_eq!(decode(&value)?, fields);
        assert!(decode(&value[..value.len() - 1]).is_err());
        assert!(decode(&value[..2]).is_err());
        Ok(())
    }
}
