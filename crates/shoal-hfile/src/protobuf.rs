//! Just enough protobuf wire-format decoding for the two messages an HFile holds
//! (`FileTrailerProto` and `FileInfoProto`): varints, length-delimited fields, skipping
//! the rest. Errors are strings; callers add the file and offset.

/// One field of a message: its number and value.
#[derive(Debug, PartialEq)]
pub(crate) enum Field<'a> {
    Varint(u32, u64),
    Bytes(u32, &'a [u8]),
    /// Fixed-width fields are skipped by every caller; only the number is kept.
    Fixed(u32),
}

/// Reads a base-128 varint at `*pos`.
pub(crate) fn varint(buf: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf
            .get(*pos)
            .ok_or_else(|| "protobuf varint runs past the end".to_owned())?;
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("protobuf varint longer than 10 bytes".to_owned())
}

/// Splits a message into fields, in order.
pub(crate) fn fields(msg: &[u8]) -> Result<Vec<Field<'_>>, String> {
    let mut pos = 0;
    let mut out = Vec::new();
    while pos < msg.len() {
        let key = varint(msg, &mut pos)?;
        let number = u32::try_from(key >> 3).map_err(|_| "protobuf field number too big")?;
        let field = match key & 7 {
            0 => Field::Varint(number, varint(msg, &mut pos)?),
            1 => {
                skip(msg, &mut pos, 8)?;
                Field::Fixed(number)
            }
            2 => {
                let len = varint(msg, &mut pos)?;
                let len = usize::try_from(len).map_err(|_| "protobuf length too big")?;
                let start = pos;
                skip(msg, &mut pos, len)?;
                Field::Bytes(number, &msg[start..pos])
            }
            5 => {
                skip(msg, &mut pos, 4)?;
                Field::Fixed(number)
            }
            t => return Err(format!("protobuf wire type {t} not supported")),
        };
        out.push(field);
    }
    Ok(out)
}

fn skip(msg: &[u8], pos: &mut usize, n: usize) -> Result<(), String> {
    match pos.checked_add(n) {
        Some(end) if end <= msg.len() => {
            *pos = end;
            Ok(())
        }
        _ => Err("protobuf field runs past the end".to_owned()),
    }
}

/// A varint length prefix followed by that many bytes (`writeDelimitedTo`). Returns the
/// message and the total bytes used.
pub(crate) fn delimited(buf: &[u8]) -> Result<(&[u8], usize), String> {
    let mut pos = 0;
    let len = varint(buf, &mut pos)?;
    let len = usize::try_from(len).map_err(|_| "protobuf length too big")?;
    let start = pos;
    skip(buf, &mut pos, len)?;
    Ok((&buf[start..pos], pos))
}

#[cfg(test)]
pub(crate) mod encode {
    //! Protobuf writing for hand-built test files.

    pub fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    pub fn uint_field(out: &mut Vec<u8>, number: u32, v: u64) {
        varint(out, u64::from(number) << 3);
        varint(out, v);
    }

    pub fn bytes_field(out: &mut Vec<u8>, number: u32, v: &[u8]) {
        varint(out, (u64::from(number) << 3) | 2);
        varint(out, v.len() as u64);
        out.extend_from_slice(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_and_skips_fixed() {
        let mut m = Vec::new();
        encode::uint_field(&mut m, 1, 300);
        encode::bytes_field(&mut m, 11, b"abc");
        m.extend_from_slice(&[(3 << 3) | 5, 1, 2, 3, 4]);
        let f = fields(&m).expect("fields");
        assert_eq!(
            f,
            vec![
                Field::Varint(1, 300),
                Field::Bytes(11, b"abc"),
                Field::Fixed(3)
            ]
        );
    }

    #[test]
    fn rejects_overruns() {
        assert!(fields(&[(1 << 3) | 2, 5, 1]).is_err());
        assert!(fields(&[8, 0x80]).is_err());
        assert!(delimited(&[3, 1]).is_err());
    }
}
