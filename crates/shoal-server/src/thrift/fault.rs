//! What a Thrift call can fail with, as HBase's gateway raises it: `Fault`
//! and its kinds, the conversion from the host's `ServiceError`
//! (`AlreadyExists` for an existing table, `IllegalArgument` for bad
//! arguments, `IOError` for everything else), and the result struct that
//! carries a fault back in the field the method declares for it.

use super::wire::{Struct, Value};
use crate::error::ServiceError;
use bytes::Bytes;

/// What went wrong, as the exception HBase would raise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// Which exception.
    pub kind: FaultKind,
    /// Its message.
    pub message: String,
}

/// HBase's Thrift1 exceptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// `IOError` (field 1 of every method's result).
    Io,
    /// `IllegalArgument` (field 2, where declared).
    Illegal,
    /// `AlreadyExists` (field 3 of createTable).
    Exists,
    /// The method is not part of the service: a TApplicationException.
    UnknownMethod,
}

impl Fault {
    /// An `IOError`.
    pub fn io(message: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::Io,
            message: message.into(),
        }
    }

    /// An `IllegalArgument`.
    pub fn illegal(message: impl Into<String>) -> Fault {
        Fault {
            kind: FaultKind::Illegal,
            message: message.into(),
        }
    }

    /// A method the service does not have (a TApplicationException).
    pub fn unknown_method(method: &str) -> Fault {
        Fault {
            kind: FaultKind::UnknownMethod,
            message: format!("Invalid method name: '{method}'"),
        }
    }
}

impl From<ServiceError> for Fault {
    fn from(e: ServiceError) -> Fault {
        let kind = match &e {
            ServiceError::TableExists(_)
            | ServiceError::SnapshotExists(_)
            | ServiceError::NamespaceExists(_) => FaultKind::Exists,
            ServiceError::InvalidArgument(_) => FaultKind::Illegal,
            _ => FaultKind::Io,
        };
        Fault {
            kind,
            message: e.to_string(),
        }
    }
}

/// Methods that declare `IllegalArgument` (result field 2).
const DECLARE_ILLEGAL: &[&str] = &[
    "createTable",
    "mutateRow",
    "mutateRowTs",
    "mutateRows",
    "mutateRowsTs",
    "atomicIncrement",
    "scannerGet",
    "scannerGetList",
    "scannerClose",
    "checkAndPut",
];

/// The result struct of `method`: field 0 holds the answer (absent for
/// void), or the declared exception's field holds the fault; an exception
/// the method does not declare goes out as its `IOError`.
pub fn result_struct(method: &str, outcome: Result<Option<Value>, Fault>) -> Struct {
    match outcome {
        Ok(Some(v)) => Struct::new().with(0, v),
        Ok(None) => Struct::new(),
        Err(f) => {
            let message = Value::Binary(Bytes::from(f.message));
            match f.kind {
                FaultKind::Exists if method == "createTable" => {
                    Struct::new().with(3, Value::Struct(Struct::new().with(1, message)))
                }
                FaultKind::Illegal if DECLARE_ILLEGAL.contains(&method) => {
                    Struct::new().with(2, Value::Struct(Struct::new().with(1, message)))
                }
                _ => Struct::new().with(
                    1,
                    Value::Struct(Struct::new().with(1, message).with(2, Value::Bool(false))),
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_go_to_the_declared_exception_or_io_error() {
        let s = result_struct("createTable", Err(Fault::illegal("x")));
        assert!(s.get(2).is_some());
        let s = result_struct("deleteTable", Err(Fault::illegal("x")));
        assert!(s.get(1).is_some() && s.get(2).is_none());
        let s = result_struct(
            "createTable",
            Err(Fault {
                kind: FaultKind::Exists,
                message: "t".into(),
            }),
        );
        assert!(s.get(3).is_some());
        assert!(result_struct("enableTable", Ok(None)).fields.is_empty());
    }
}
