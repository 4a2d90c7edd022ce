//! The framed transport of Shoal's Data calls: the same `shoal.v1` messages
//! as gRPC, length-framed over one plain (or TLS) connection, on the gRPC
//! port. A server tells the two apart by a connection's first byte (HTTP/2's
//! preface starts with `P`, this transport's with `S`).
//!
//! Why: on a 2-core machine HTTP/2 (stream state, HPACK, flow control, one
//! `writev` per response, hand-offs between tasks) cost a cached get about
//! three times the server CPU that the engine's own work does. This framing
//! is what HBase's native RPC does, and what made its gets cheap here.
//!
//! The wire (all integers big-endian):
//! - The client opens with [`MAGIC`], a version byte ([`VERSION`]) and one
//!   frame of its own: a 4-byte length, then a `FrameHello` (its token).
//! - The server answers that with an answer frame of call id
//!   [`HELLO_CALL`]: [`OK`] with an empty body, or [`FAILED`] with a
//!   `FrameError`, after which it closes the connection.
//! - A call: length (of what follows it), call id, a method byte
//!   ([`Method`]), the request message.
//! - An answer: length, the call's id, [`OK`] then the response message, or
//!   [`FAILED`] then a `FrameError` (a gRPC code, message and the metadata a
//!   gRPC answer would carry). Answers come in completion order.
//!
//! Scans, region maps and admin calls stay on gRPC.

use crate::v1::{FrameError, FrameHint};
use bytes::{Buf, Bytes, BytesMut};
use prost::Message;

/// First bytes of a framed connection.
pub const MAGIC: &[u8; 4] = b"SHOL";
/// The version of the framing this module speaks.
pub const VERSION: u8 = 1;
/// The call id of the hello's answer (clients number calls from 1).
pub const HELLO_CALL: u32 = 0;
/// Largest hello frame a server reads.
pub const MAX_HELLO_BYTES: usize = 64 << 10;
/// Bytes of a frame before its message: length, call id, kind.
pub const HEADER_BYTES: usize = 9;
/// The kind byte of an answer that succeeded.
pub const OK: u8 = 0;
/// The kind byte of an answer that failed (body: a `FrameError`).
pub const FAILED: u8 = 1;

/// The calls the transport carries (the kind byte of a call frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Method {
    /// `GetRequest` → `GetResponse`.
    Get = 1,
    /// `MultiGetRequest` → `MultiGetResponse`.
    MultiGet = 2,
    /// `MutateRequest` → `MutateResponse`.
    Mutate = 3,
    /// `MultiMutateRequest` → `MultiMutateResponse`.
    MultiMutate = 4,
}

impl Method {
    /// The method of a call's kind byte.
    pub fn from_byte(b: u8) -> Option<Method> {
        Some(match b {
            1 => Method::Get,
            2 => Method::MultiGet,
            3 => Method::Mutate,
            4 => Method::MultiMutate,
            _ => return None,
        })
    }

    /// Its name, as gRPC's method names.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "Get",
            Method::MultiGet => "MultiGet",
            Method::Mutate => "Mutate",
            Method::MultiMutate => "MultiMutate",
        }
    }
}

/// A frame that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameFault {
    /// Its length is under the header's.
    TooShort(usize),
    /// Its length is over the reader's limit.
    TooLarge {
        /// The frame's length.
        len: usize,
        /// The limit.
        max: usize,
    },
}

impl std::fmt::Display for FrameFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameFault::TooShort(n) => write!(f, "a frame of {n} bytes is shorter than its header"),
            FrameFault::TooLarge { len, max } => {
                write!(f, "a frame of {len} bytes is over the limit of {max}")
            }
        }
    }
}

impl std::error::Error for FrameFault {}

/// One frame read: its call id, kind byte (method or answer kind) and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The call it belongs to.
    pub id: u32,
    /// A [`Method`] byte (calls) or [`OK`] / [`FAILED`] (answers).
    pub kind: u8,
    /// The message.
    pub body: Bytes,
}

/// Appends the client's opening: magic, version and the hello frame.
pub fn encode_hello(out: &mut Vec<u8>, token: Option<&str>) {
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    let hello = crate::v1::FrameHello {
        token: token.unwrap_or_default().to_string(),
    };
    out.extend_from_slice(&(hello.encoded_len() as u32).to_be_bytes());
    hello.encode_raw(out);
}

/// Appends one frame: `message` as call `id` of kind `kind`.
pub fn encode_frame<M: Message>(out: &mut Vec<u8>, id: u32, kind: u8, message: &M) {
    let len = 5 + message.encoded_len();
    out.reserve(4 + len);
    out.extend_from_slice(&(len as u32).to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.push(kind);
    message.encode_raw(out);
}

/// Appends a failed answer to call `id`.
pub fn encode_failure(out: &mut Vec<u8>, id: u32, error: &FrameError) {
    encode_frame(out, id, FAILED, error);
}

/// The length of the first frame in `buf` (what follows its 4-byte length
/// field), if those 4 bytes have arrived.
pub fn frame_length(buf: &[u8]) -> Option<usize> {
    let len: [u8; 4] = buf.get(..4)?.try_into().ok()?;
    Some(u32::from_be_bytes(len) as usize)
}

/// Takes the first whole frame off `buf`: `Ok(None)` until all of it has
/// arrived. A frame shorter than its header or longer than `max` is a fault
/// (the connection cannot be read on).
pub fn take_frame(buf: &mut BytesMut, max: usize) -> Result<Option<Frame>, FrameFault> {
    let Some(len) = frame_length(buf) else {
        return Ok(None);
    };
    if len < HEADER_BYTES - 4 {
        return Err(FrameFault::TooShort(len));
    }
    if len > max {
        return Err(FrameFault::TooLarge { len, max });
    }
    if buf.len() < 4 + len {
        buf.reserve(4 + len - buf.len());
        return Ok(None);
    }
    buf.advance(4);
    let mut frame = buf.split_to(len);
    let id = frame.get_u32();
    let kind = frame.get_u8();
    Ok(Some(Frame {
        id,
        kind,
        body: frame.freeze(),
    }))
}

/// A gRPC status as an error answer: code, message and ASCII metadata.
pub fn status_to_error(status: &tonic::Status) -> FrameError {
    let hints = status
        .metadata()
        .iter()
        .filter_map(|kv| match kv {
            tonic::metadata::KeyAndValueRef::Ascii(k, v) => Some(FrameHint {
                key: k.as_str().to_string(),
                value: v.to_str().ok()?.to_string(),
            }),
            tonic::metadata::KeyAndValueRef::Binary(..) => None,
        })
        .collect();
    FrameError {
        code: status.code() as i32,
        message: status.message().to_string(),
        hints,
    }
}

/// An error answer as the gRPC status it stands for (hints that cannot be
/// metadata are dropped).
pub fn error_to_status(e: FrameError) -> tonic::Status {
    let mut status = tonic::Status::new(tonic::Code::from_i32(e.code), e.message);
    for h in e.hints {
        if let (Ok(k), Ok(v)) = (
            tonic::metadata::MetadataKey::from_bytes(h.key.as_bytes()),
            h.value.parse(),
        ) {
            status.metadata_mut().insert(k, v);
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1::{GetRequest, GetSpec};

    #[test]
    fn frames_round_trip_whole_and_in_pieces() {
        let req = GetRequest {
            table: "t".into(),
            get: Some(GetSpec {
                row: Bytes::from_static(b"row-1"),
                ..Default::default()
            }),
        };
        let mut wire = Vec::new();
        encode_frame(&mut wire, 7, Method::Get as u8, &req);
        encode_frame(&mut wire, 8, Method::Mutate as u8, &req);
        // Fed one byte at a time, each frame appears once it is whole.
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for b in &wire {
            buf.extend_from_slice(&[*b]);
            while let Some(f) = take_frame(&mut buf, 1 << 20).expect("valid") {
                got.push(f);
            }
        }
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].id, got[0].kind), (7, Method::Get as u8));
        assert_eq!((got[1].id, got[1].kind), (8, Method::Mutate as u8));
        assert_eq!(
            GetRequest::decode(got[1].body.clone()).expect("decodes"),
            req
        );
        assert!(buf.is_empty());
    }

    #[test]
    fn short_and_oversized_frames_are_faults() {
        let mut buf = BytesMut::from(&[0u8, 0, 0, 3, 1, 2, 3][..]);
        assert_eq!(take_frame(&mut buf, 100), Err(FrameFault::TooShort(3)));
        let mut buf = BytesMut::from(&[0u8, 0, 1, 0][..]);
        assert_eq!(
            take_frame(&mut buf, 100),
            Err(FrameFault::TooLarge { len: 256, max: 100 })
        );
    }

    #[test]
    fn statuses_keep_their_code_message_and_hints() {
        let mut s = tonic::Status::unavailable("region r1 is not served here");
        s.metadata_mut()
            .insert(crate::NOT_SERVING_HEADER, "r1".parse().expect("ascii"));
        s.metadata_mut()
            .insert(crate::OWNER_HEADER, "10.0.0.2:7070".parse().expect("ascii"));
        let back = error_to_status(status_to_error(&s));
        assert_eq!(back.code(), tonic::Code::Unavailable);
        assert_eq!(back.message(), s.message());
        assert_eq!(
            back.metadata()
                .get(crate::NOT_SERVING_HEADER)
                .map(|v| v.to_str().ok()),
            Some(Some("r1"))
        );
        assert_eq!(
            back.metadata()
                .get(crate::OWNER_HEADER)
                .map(|v| v.to_str().ok()),
            Some(Some("10.0.0.2:7070"))
        );
    }

    #[test]
    fn methods_round_trip_and_unknown_bytes_are_none() {
        for m in [
            Method::Get,
            Method::MultiGet,
            Method::Mutate,
            Method::MultiMutate,
        ] {
            assert_eq!(Method::from_byte(m as u8), Some(m));
        }
        assert_eq!(Method::from_byte(0), None);
        assert_eq!(Method::from_byte(200), None);
    }
}
