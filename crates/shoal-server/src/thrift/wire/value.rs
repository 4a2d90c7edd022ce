//! Thrift values as a tree: what a message decodes to and what a reply is
//! built from. The gateway has no generated code; it picks fields by id.

use bytes::Bytes;

/// Thrift's type ids (the binary protocol's numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TType {
    /// End of a struct's fields.
    Stop,
    /// bool
    Bool,
    /// i8
    Byte,
    /// double
    Double,
    /// i16
    I16,
    /// i32
    I32,
    /// i64
    I64,
    /// string and binary
    Binary,
    /// struct (also exceptions and argument lists)
    Struct,
    /// map
    Map,
    /// set
    Set,
    /// list
    List,
    /// uuid
    Uuid,
}

impl TType {
    /// The binary protocol's type byte.
    pub fn binary_id(self) -> u8 {
        match self {
            TType::Stop => 0,
            TType::Bool => 2,
            TType::Byte => 3,
            TType::Double => 4,
            TType::I16 => 6,
            TType::I32 => 8,
            TType::I64 => 10,
            TType::Binary => 11,
            TType::Struct => 12,
            TType::Map => 13,
            TType::Set => 14,
            TType::List => 15,
            TType::Uuid => 16,
        }
    }

    /// The type of a binary protocol type byte.
    pub fn from_binary_id(id: u8) -> Option<TType> {
        Some(match id {
            0 => TType::Stop,
            2 => TType::Bool,
            3 => TType::Byte,
            4 => TType::Double,
            6 => TType::I16,
            8 => TType::I32,
            10 => TType::I64,
            11 => TType::Binary,
            12 => TType::Struct,
            13 => TType::Map,
            14 => TType::Set,
            15 => TType::List,
            16 => TType::Uuid,
            _ => return None,
        })
    }
}

/// A decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// bool
    Bool(bool),
    /// i8
    Byte(i8),
    /// i16
    I16(i16),
    /// i32
    I32(i32),
    /// i64
    I64(i64),
    /// double
    Double(f64),
    /// string or binary: a slice of the received bytes, no copy.
    Binary(Bytes),
    /// struct
    Struct(Struct),
    /// list of elements of one type
    List(TType, Vec<Value>),
    /// set of elements of one type
    Set(TType, Vec<Value>),
    /// map from keys of one type to values of one type
    Map(TType, TType, Vec<(Value, Value)>),
    /// uuid
    Uuid([u8; 16]),
}

impl Value {
    /// Its type.
    pub fn ttype(&self) -> TType {
        match self {
            Value::Bool(_) => TType::Bool,
            Value::Byte(_) => TType::Byte,
            Value::I16(_) => TType::I16,
            Value::I32(_) => TType::I32,
            Value::I64(_) => TType::I64,
            Value::Double(_) => TType::Double,
            Value::Binary(_) => TType::Binary,
            Value::Struct(_) => TType::Struct,
            Value::List(..) => TType::List,
            Value::Set(..) => TType::Set,
            Value::Map(..) => TType::Map,
            Value::Uuid(_) => TType::Uuid,
        }
    }

    /// The bytes of a string or binary.
    pub fn as_binary(&self) -> Option<&Bytes> {
        match self {
            Value::Binary(b) => Some(b),
            _ => None,
        }
    }

    /// The struct.
    pub fn as_struct(&self) -> Option<&Struct> {
        match self {
            Value::Struct(s) => Some(s),
            _ => None,
        }
    }
}

/// A struct: its fields in wire order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Struct {
    /// (field id, value)
    pub fields: Vec<(i16, Value)>,
}

impl Struct {
    /// A struct with no fields.
    pub fn new() -> Struct {
        Struct::default()
    }

    /// The struct with field `id` added.
    pub fn with(mut self, id: i16, v: Value) -> Struct {
        self.fields.push((id, v));
        self
    }

    /// Field `id` (the last one, if a peer sent it twice).
    pub fn get(&self, id: i16) -> Option<&Value> {
        self.fields
            .iter()
            .rev()
            .find(|(i, _)| *i == id)
            .map(|(_, v)| v)
    }

    /// A string or binary field (None: absent or of another type).
    pub fn binary(&self, id: i16) -> Option<&Bytes> {
        self.get(id).and_then(Value::as_binary)
    }

    /// A bool field.
    pub fn bool(&self, id: i16) -> Option<bool> {
        match self.get(id) {
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    /// An i32 field.
    pub fn i32(&self, id: i16) -> Option<i32> {
        match self.get(id) {
            Some(Value::I32(v)) => Some(*v),
            _ => None,
        }
    }

    /// An i64 field.
    pub fn i64(&self, id: i16) -> Option<i64> {
        match self.get(id) {
            Some(Value::I64(v)) => Some(*v),
            _ => None,
        }
    }

    /// A struct field.
    pub fn structure(&self, id: i16) -> Option<&Struct> {
        self.get(id).and_then(Value::as_struct)
    }

    /// A list (or set) field's elements.
    pub fn list(&self, id: i16) -> Option<&[Value]> {
        match self.get(id) {
            Some(Value::List(_, v)) | Some(Value::Set(_, v)) => Some(v),
            _ => None,
        }
    }

    /// A map field's entries.
    pub fn map(&self, id: i16) -> Option<&[(Value, Value)]> {
        match self.get(id) {
            Some(Value::Map(_, _, v)) => Some(v),
            _ => None,
        }
    }
}
