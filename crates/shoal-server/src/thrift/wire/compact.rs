//! TCompactProtocol: zigzag varints for i16/i32/i64, varint lengths, field
//! headers with the id as a delta from the previous field's in the high
//! nibble, bools folded into the field type, little-endian doubles; the
//! message header `0x82`, `version | type << 5`, varint seqid, name.

use super::{Cursor, Step, Struct, TType, Value};

const PROTOCOL_ID: u8 = 0x82;
const VERSION: u8 = 1;

fn compact_id(t: TType) -> u8 {
    match t {
        TType::Stop => 0,
        TType::Bool => 1,
        TType::Byte => 3,
        TType::I16 => 4,
        TType::I32 => 5,
        TType::I64 => 6,
        TType::Double => 7,
        TType::Binary => 8,
        TType::List => 9,
        TType::Set => 10,
        TType::Map => 11,
        TType::Struct => 12,
        TType::Uuid => 13,
    }
}

fn from_compact_id(id: u8) -> Option<TType> {
    Some(match id {
        0 => TType::Stop,
        1 | 2 => TType::Bool,
        3 => TType::Byte,
        4 => TType::I16,
        5 => TType::I32,
        6 => TType::I64,
        7 => TType::Double,
        8 => TType::Binary,
        9 => TType::List,
        10 => TType::Set,
        11 => TType::Map,
        12 => TType::Struct,
        13 => TType::Uuid,
        _ => return None,
    })
}

fn varint(c: &mut Cursor<'_>) -> Step<u64> {
    let mut v: u64 = 0;
    for i in 0..10 {
        let b = c.u8()?;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    c.bad("varint longer than 10 bytes")
}

fn zigzag(c: &mut Cursor<'_>) -> Step<i64> {
    let v = varint(c)?;
    Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
}

fn zigzag_i32(c: &mut Cursor<'_>) -> Step<i32> {
    let v = zigzag(c)?;
    i32::try_from(v).or_else(|_| c.bad(format!("i32 out of range: {v}")))
}

fn zigzag_i16(c: &mut Cursor<'_>) -> Step<i16> {
    let v = zigzag(c)?;
    i16::try_from(v).or_else(|_| c.bad(format!("i16 out of range: {v}")))
}

pub(super) fn read_message_begin(c: &mut Cursor<'_>) -> Step<(bytes::Bytes, u8, i32)> {
    let id = c.u8()?;
    if id != PROTOCOL_ID {
        return c.bad(format!("compact protocol id {id:#04x} (expected 0x82)"));
    }
    let vt = c.u8()?;
    if vt & 0x1f != VERSION {
        return c.bad(format!("compact protocol version {}", vt & 0x1f));
    }
    let kind = vt >> 5;
    let seqid = varint(c)? as u32 as i32;
    let len = varint(c)?;
    let name = c.bytes(i64::try_from(len).unwrap_or(i64::MAX))?;
    Ok((name, kind, seqid))
}

pub(super) fn read_struct(c: &mut Cursor<'_>, depth: usize) -> Step<Struct> {
    let depth = c.deeper(depth)?;
    let mut s = Struct::new();
    let mut last: i16 = 0;
    loop {
        let h = c.u8()?;
        let kind = h & 0x0f;
        if kind == 0 {
            return Ok(s);
        }
        let delta = h >> 4;
        let id = if delta == 0 {
            zigzag_i16(c)?
        } else {
            last.wrapping_add(i16::from(delta))
        };
        last = id;
        let v = match kind {
            1 => Value::Bool(true),
            2 => Value::Bool(false),
            _ => {
                let Some(t) = from_compact_id(kind) else {
                    return c.bad(format!("unknown field type {kind}"));
                };
                read_value(c, t, depth)?
            }
        };
        s.fields.push((id, v));
    }
}

fn elem_type(c: &mut Cursor<'_>, nibble: u8) -> Step<TType> {
    match from_compact_id(nibble) {
        Some(TType::Stop) | None => c.bad(format!("unknown element type {nibble}")),
        Some(t) => Ok(t),
    }
}

fn read_value(c: &mut Cursor<'_>, t: TType, depth: usize) -> Step<Value> {
    Ok(match t {
        // Inside containers a bool is a byte: 1 true, anything else false.
        TType::Bool => Value::Bool(c.u8()? == 1),
        TType::Byte => Value::Byte(c.u8()? as i8),
        TType::I16 => Value::I16(zigzag_i16(c)?),
        TType::I32 => Value::I32(zigzag_i32(c)?),
        TType::I64 => Value::I64(zigzag(c)?),
        TType::Double => Value::Double(f64::from_bits(u64::from_le_bytes(c.array()?))),
        TType::Binary => {
            let len = varint(c)?;
            Value::Binary(c.bytes(i64::try_from(len).unwrap_or(i64::MAX))?)
        }
        TType::Uuid => Value::Uuid(c.array()?),
        TType::Struct => Value::Struct(read_struct(c, depth)?),
        TType::List | TType::Set => {
            let depth = c.deeper(depth)?;
            let h = c.u8()?;
            let et = elem_type(c, h & 0x0f)?;
            let n = match h >> 4 {
                15 => varint(c)?,
                n => u64::from(n),
            };
            let n = c.count(i64::try_from(n).unwrap_or(i64::MAX), 1)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(read_value(c, et, depth)?);
            }
            if t == TType::List {
                Value::List(et, v)
            } else {
                Value::Set(et, v)
            }
        }
        TType::Map => {
            let depth = c.deeper(depth)?;
            let n = varint(c)?;
            if n == 0 {
                return Ok(Value::Map(TType::Binary, TType::Binary, Vec::new()));
            }
            let n = c.count(i64::try_from(n).unwrap_or(i64::MAX), 2)?;
            let h = c.u8()?;
            let (kt, vt) = (elem_type(c, h >> 4)?, elem_type(c, h & 0x0f)?);
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                let k = read_value(c, kt, depth)?;
                v.push((k, read_value(c, vt, depth)?));
            }
            Value::Map(kt, vt, v)
        }
        TType::Stop => return c.bad("stop is not a value"),
    })
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_zigzag(out: &mut Vec<u8>, v: i64) {
    put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
}

pub(super) fn write_message_begin(out: &mut Vec<u8>, name: &str, kind: u8, seqid: i32) {
    out.push(PROTOCOL_ID);
    out.push(VERSION | (kind << 5));
    put_varint(out, u64::from(seqid as u32));
    put_varint(out, name.len() as u64);
    out.extend_from_slice(name.as_bytes());
}

pub(super) fn write_struct(out: &mut Vec<u8>, s: &Struct) {
    let mut last: i16 = 0;
    for (id, v) in &s.fields {
        let kind = match v {
            Value::Bool(true) => 1,
            Value::Bool(false) => 2,
            other => compact_id(other.ttype()),
        };
        let delta = i32::from(*id) - i32::from(last);
        if (1..=15).contains(&delta) {
            out.push(((delta as u8) << 4) | kind);
        } else {
            out.push(kind);
            put_zigzag(out, i64::from(*id));
        }
        last = *id;
        if !matches!(v, Value::Bool(_)) {
            write_value(out, v);
        }
    }
    out.push(0);
}

fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Bool(b) => out.push(if *b { 1 } else { 2 }),
        Value::Byte(b) => out.push(*b as u8),
        Value::I16(n) => put_zigzag(out, i64::from(*n)),
        Value::I32(n) => put_zigzag(out, i64::from(*n)),
        Value::I64(n) => put_zigzag(out, *n),
        Value::Double(d) => out.extend_from_slice(&d.to_bits().to_le_bytes()),
        Value::Binary(b) => {
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
        Value::Uuid(u) => out.extend_from_slice(u),
        Value::Struct(s) => write_struct(out, s),
        Value::List(t, items) | Value::Set(t, items) => {
            let et = compact_id(*t);
            if items.len() < 15 {
                out.push(((items.len() as u8) << 4) | et);
            } else {
                out.push(0xf0 | et);
                put_varint(out, items.len() as u64);
            }
            for i in items {
                write_value(out, i);
            }
        }
        Value::Map(kt, vt, entries) => {
            put_varint(out, entries.len() as u64);
            if !entries.is_empty() {
                out.push((compact_id(*kt) << 4) | compact_id(*vt));
                for (k, v) in entries {
                    write_value(out, k);
                    write_value(out, v);
                }
            }
        }
    }
}
