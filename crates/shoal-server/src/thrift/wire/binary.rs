//! TBinaryProtocol: big-endian fixed-width numbers, `i32` lengths, a type
//! byte and an `i16` id per struct field; the strict message header
//! `0x8001 | type`, name, seqid.

use super::{Cursor, Step, Struct, TType, Value};

const VERSION_1: u32 = 0x8001_0000;

pub(super) fn read_message_begin(c: &mut Cursor<'_>) -> Step<(bytes::Bytes, u8, i32)> {
    let head = u32::from_be_bytes(c.array::<4>()?);
    if head & 0xffff_0000 != VERSION_1 {
        return c.bad(format!(
            "binary protocol header {head:#010x} (expected version 0x8001)"
        ));
    }
    let kind = (head & 0xff) as u8;
    let len = i32::from_be_bytes(c.array::<4>()?);
    let name = c.bytes(i64::from(len))?;
    let seqid = i32::from_be_bytes(c.array::<4>()?);
    Ok((name, kind, seqid))
}

pub(super) fn read_struct(c: &mut Cursor<'_>, depth: usize) -> Step<Struct> {
    let depth = c.deeper(depth)?;
    let mut s = Struct::new();
    loop {
        let t = c.u8()?;
        let Some(ttype) = TType::from_binary_id(t) else {
            return c.bad(format!("unknown field type {t}"));
        };
        if ttype == TType::Stop {
            return Ok(s);
        }
        let id = i16::from_be_bytes(c.array::<2>()?);
        let v = read_value(c, ttype, depth)?;
        s.fields.push((id, v));
    }
}

fn elem_type(c: &mut Cursor<'_>) -> Step<TType> {
    let t = c.u8()?;
    match TType::from_binary_id(t) {
        Some(TType::Stop) | None => c.bad(format!("unknown element type {t}")),
        Some(t) => Ok(t),
    }
}

/// The fewest bytes one element of `t` takes (for count checks).
fn min_size(t: TType) -> usize {
    match t {
        TType::Bool | TType::Byte | TType::Struct => 1,
        TType::I16 => 2,
        TType::I32 | TType::Binary => 4,
        TType::I64 | TType::Double => 8,
        TType::Map => 9,
        TType::Set | TType::List => 5,
        TType::Uuid => 16,
        TType::Stop => 1,
    }
}

fn read_value(c: &mut Cursor<'_>, t: TType, depth: usize) -> Step<Value> {
    Ok(match t {
        TType::Bool => Value::Bool(c.u8()? != 0),
        TType::Byte => Value::Byte(c.u8()? as i8),
        TType::I16 => Value::I16(i16::from_be_bytes(c.array()?)),
        TType::I32 => Value::I32(i32::from_be_bytes(c.array()?)),
        TType::I64 => Value::I64(i64::from_be_bytes(c.array()?)),
        TType::Double => Value::Double(f64::from_bits(u64::from_be_bytes(c.array()?))),
        TType::Binary => {
            let len = i32::from_be_bytes(c.array()?);
            Value::Binary(c.bytes(i64::from(len))?)
        }
        TType::Uuid => Value::Uuid(c.array()?),
        TType::Struct => Value::Struct(read_struct(c, depth)?),
        TType::List | TType::Set => {
            let depth = c.deeper(depth)?;
            let et = elem_type(c)?;
            let n = i32::from_be_bytes(c.array()?);
            let n = c.count(i64::from(n), min_size(et))?;
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
            let (kt, vt) = (elem_type(c)?, elem_type(c)?);
            let n = i32::from_be_bytes(c.array()?);
            let n = c.count(i64::from(n), min_size(kt) + min_size(vt))?;
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

pub(super) fn write_message_begin(out: &mut Vec<u8>, name: &str, kind: u8, seqid: i32) {
    out.extend_from_slice(&(VERSION_1 | u32::from(kind)).to_be_bytes());
    out.extend_from_slice(&(name.len() as i32).to_be_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&seqid.to_be_bytes());
}

pub(super) fn write_struct(out: &mut Vec<u8>, s: &Struct) {
    for (id, v) in &s.fields {
        out.push(v.ttype().binary_id());
        out.extend_from_slice(&id.to_be_bytes());
        write_value(out, v);
    }
    out.push(0);
}

fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Bool(b) => out.push(u8::from(*b)),
        Value::Byte(b) => out.push(*b as u8),
        Value::I16(n) => out.extend_from_slice(&n.to_be_bytes()),
        Value::I32(n) => out.extend_from_slice(&n.to_be_bytes()),
        Value::I64(n) => out.extend_from_slice(&n.to_be_bytes()),
        Value::Double(d) => out.extend_from_slice(&d.to_bits().to_be_bytes()),
        Value::Binary(b) => {
            out.extend_from_slice(&(b.len() as i32).to_be_bytes());
            out.extend_from_slice(b);
        }
        Value::Uuid(u) => out.extend_from_slice(u),
        Value::Struct(s) => write_struct(out, s),
        Value::List(t, items) | Value::Set(t, items) => {
            out.push(t.binary_id());
            out.extend_from_slice(&(items.len() as i32).to_be_bytes());
            for i in items {
                write_value(out, i);
            }
        }
        Value::Map(kt, vt, entries) => {
            out.push(kt.binary_id());
            out.push(vt.binary_id());
            out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
            for (k, v) in entries {
                write_value(out, k);
                write_value(out, v);
            }
        }
    }
}
