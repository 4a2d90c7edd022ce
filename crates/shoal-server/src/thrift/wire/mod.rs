//! Thrift on the wire, written here rather than taken from the `thrift`
//! crate: that crate's server is blocking (a thread per connection) and its
//! types come from the Thrift compiler, a C++ tool the build would need. The
//! gateway needs neither: it decodes whole messages into a value tree
//! ([`Value`]) and picks fields by id.
//!
//! Both protocols Apache Thrift clients use — **binary** (strict, versioned
//! header `0x80 0x01`) and **compact** (`0x82`) — over both transports —
//! **buffered** (messages back to back) and **framed** (a 4-byte big-endian
//! length before each) — recognised per connection from its first bytes
//! ([`detect`]). Decoding is incremental in the simplest way: a message
//! that is not complete yet is `Ok(None)` and is decoded again from its
//! start once more bytes came. Nothing is allocated beyond what the bytes
//! received justify, nesting is bounded, and every malformed input is an
//! error naming the byte offset, never a panic.

mod binary;
mod compact;
mod value;

#[cfg(test)]
mod tests;

use bytes::Bytes;
pub use value::{Struct, TType, Value};

/// The protocol of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// TBinaryProtocol (strict).
    Binary,
    /// TCompactProtocol.
    Compact,
}

/// The transport of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Messages back to back.
    Buffered,
    /// Each message behind its 4-byte big-endian length.
    Framed,
}

/// A message's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageType {
    /// A call expecting a reply.
    Call,
    /// A reply.
    Reply,
    /// An application exception in place of a reply.
    Exception,
    /// A call expecting no reply.
    Oneway,
}

impl MessageType {
    fn id(self) -> u8 {
        match self {
            MessageType::Call => 1,
            MessageType::Reply => 2,
            MessageType::Exception => 3,
            MessageType::Oneway => 4,
        }
    }

    fn from_id(id: u8) -> Option<MessageType> {
        Some(match id {
            1 => MessageType::Call,
            2 => MessageType::Reply,
            3 => MessageType::Exception,
            4 => MessageType::Oneway,
            _ => return None,
        })
    }
}

/// One message: a call and its arguments, or a reply and its result.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The method.
    pub name: String,
    /// Call, reply, exception or oneway.
    pub kind: MessageType,
    /// Matches a reply to its call.
    pub seqid: i32,
    /// The arguments or the result.
    pub body: Struct,
}

/// Bounds on what one message may make the decoder do.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest message (or frame), bytes.
    pub max_message_bytes: usize,
    /// Deepest nesting of structs and containers.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: 64 << 20,
            max_depth: 64,
        }
    }
}

/// Why bytes are not a Thrift message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// Malformed input.
    #[error("bad Thrift message at byte {offset}: {reason}")]
    Malformed {
        /// Where in the message.
        offset: usize,
        /// What was wrong.
        reason: String,
    },
    /// A frame or message larger than the limit.
    #[error("Thrift message of {size} bytes or more is over the limit of {limit} bytes")]
    TooLarge {
        /// Its (declared or received) size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Nesting deeper than the limit.
    #[error("Thrift message nests deeper than {0} levels")]
    TooDeep(usize),
}

/// Decoding outcome inside the codec: more bytes needed, or bad input.
#[derive(Debug)]
pub(crate) enum Stop {
    More,
    Bad(CodecError),
}

pub(crate) type Step<T> = Result<T, Stop>;

/// Reads through one message.
pub(crate) struct Cursor<'a> {
    buf: &'a Bytes,
    pos: usize,
    limits: Limits,
}

impl<'a> Cursor<'a> {
    fn new(buf: &'a Bytes, limits: Limits) -> Cursor<'a> {
        Cursor {
            buf,
            pos: 0,
            limits,
        }
    }

    pub(crate) fn bad<T>(&self, reason: impl Into<String>) -> Step<T> {
        Err(Stop::Bad(CodecError::Malformed {
            offset: self.pos,
            reason: reason.into(),
        }))
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: usize) -> Step<&'a [u8]> {
        if n > self.remaining() {
            return Err(Stop::More);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub(crate) fn u8(&mut self) -> Step<u8> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Step<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// `n` bytes as a slice of the input (no copy), `n` from the wire.
    pub(crate) fn bytes(&mut self, n: i64) -> Step<Bytes> {
        if n < 0 {
            return self.bad(format!("negative length {n}"));
        }
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        if n > self.limits.max_message_bytes {
            return Err(Stop::Bad(CodecError::TooLarge {
                size: n,
                limit: self.limits.max_message_bytes,
            }));
        }
        if n > self.remaining() {
            return Err(Stop::More);
        }
        let b = self.buf.slice(self.pos..self.pos + n);
        self.pos += n;
        Ok(b)
    }

    /// A declared element count: never more than the bytes left can hold
    /// (each element takes at least one byte), so a huge count waits for
    /// bytes that a limit stops first, and allocates nothing.
    pub(crate) fn count(&mut self, n: i64, min_bytes: usize) -> Step<usize> {
        if n < 0 {
            return self.bad(format!("negative element count {n}"));
        }
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        if n.saturating_mul(min_bytes.max(1)) > self.limits.max_message_bytes {
            return Err(Stop::Bad(CodecError::TooLarge {
                size: n,
                limit: self.limits.max_message_bytes,
            }));
        }
        if n.saturating_mul(min_bytes) > self.remaining() {
            return Err(Stop::More);
        }
        Ok(n)
    }

    pub(crate) fn deeper(&self, depth: usize) -> Step<usize> {
        if depth >= self.limits.max_depth {
            return Err(Stop::Bad(CodecError::TooDeep(self.limits.max_depth)));
        }
        Ok(depth + 1)
    }
}

/// What a connection speaks, from its first bytes: `0x80` binary and `0x82`
/// compact, buffered; otherwise a 4-byte frame length and then `0x80` or
/// `0x82`. `None`: not enough bytes yet. The old non-strict binary header
/// (no version) is not accepted: Apache Thrift clients send the strict one
/// by default, and it cannot be told from a frame length.
pub fn detect(first: &[u8]) -> Option<Result<(Protocol, Transport), CodecError>> {
    let bad = |reason: &str| {
        Some(Err(CodecError::Malformed {
            offset: 0,
            reason: reason.to_string(),
        }))
    };
    match first.first()? {
        0x80 => return Some(Ok((Protocol::Binary, Transport::Buffered))),
        0x82 => return Some(Ok((Protocol::Compact, Transport::Buffered))),
        // A frame length's top byte: frames are far below 16 MiB × 128.
        0x00..=0x7f => {}
        _ => return bad("not a Thrift binary or compact message"),
    }
    match first.get(4)? {
        0x80 => Some(Ok((Protocol::Binary, Transport::Framed))),
        0x82 => Some(Ok((Protocol::Compact, Transport::Framed))),
        _ => bad(
            "not a Thrift message (expected the binary protocol's 0x80 or the compact \
             protocol's 0x82, alone or after a 4-byte frame length)",
        ),
    }
}

/// Decodes one message from the front of `buf`: `Ok(None)` when the bytes
/// are a valid beginning of one (read more), or the message and the bytes
/// it took.
pub fn decode(
    buf: &Bytes,
    p: Protocol,
    t: Transport,
    limits: &Limits,
) -> Result<Option<(Message, usize)>, CodecError> {
    match t {
        Transport::Buffered => {
            let mut c = Cursor::new(buf, *limits);
            match read_message(&mut c, p) {
                Ok(m) => Ok(Some((m, c.pos))),
                Err(Stop::More) if buf.len() >= limits.max_message_bytes => {
                    Err(CodecError::TooLarge {
                        size: buf.len(),
                        limit: limits.max_message_bytes,
                    })
                }
                Err(Stop::More) => Ok(None),
                Err(Stop::Bad(e)) => Err(e),
            }
        }
        Transport::Framed => {
            let Some(head) = buf.get(..4) else {
                return Ok(None);
            };
            let len = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
            if len <= 0 {
                return Err(CodecError::Malformed {
                    offset: 0,
                    reason: format!("frame length {len}"),
                });
            }
            let len = len as usize;
            if len > limits.max_message_bytes {
                return Err(CodecError::TooLarge {
                    size: len,
                    limit: limits.max_message_bytes,
                });
            }
            if buf.len() < 4 + len {
                return Ok(None);
            }
            let frame = buf.slice(4..4 + len);
            let mut c = Cursor::new(&frame, *limits);
            match read_message(&mut c, p) {
                Ok(m) if c.pos == len => Ok(Some((m, 4 + len))),
                Ok(_) => Err(CodecError::Malformed {
                    offset: 4 + c.pos,
                    reason: format!("{} bytes after the message in its frame", len - c.pos),
                }),
                Err(Stop::More) => Err(CodecError::Malformed {
                    offset: 4 + len,
                    reason: "the message is cut short by its frame".into(),
                }),
                Err(Stop::Bad(e)) => Err(e),
            }
        }
    }
}

fn read_message(c: &mut Cursor<'_>, p: Protocol) -> Step<Message> {
    let (name, kind, seqid) = match p {
        Protocol::Binary => binary::read_message_begin(c)?,
        Protocol::Compact => compact::read_message_begin(c)?,
    };
    let Some(kind) = MessageType::from_id(kind) else {
        return c.bad(format!("unknown message type {kind}"));
    };
    let name = match String::from_utf8(name.to_vec()) {
        Ok(n) => n,
        Err(_) => return c.bad("method name is not UTF-8"),
    };
    let body = match p {
        Protocol::Binary => binary::read_struct(c, 0)?,
        Protocol::Compact => compact::read_struct(c, 0)?,
    };
    Ok(Message {
        name,
        kind,
        seqid,
        body,
    })
}

/// Appends `msg`, encoded, to `out` (behind its length when framed).
pub fn encode(msg: &Message, p: Protocol, t: Transport, out: &mut Vec<u8>) {
    let start = out.len();
    if t == Transport::Framed {
        out.extend_from_slice(&[0; 4]);
    }
    match p {
        Protocol::Binary => {
            binary::write_message_begin(out, &msg.name, msg.kind.id(), msg.seqid);
            binary::write_struct(out, &msg.body);
        }
        Protocol::Compact => {
            compact::write_message_begin(out, &msg.name, msg.kind.id(), msg.seqid);
            compact::write_struct(out, &msg.body);
        }
    }
    if t == Transport::Framed {
        let len = (out.len() - start - 4) as u32;
        out[start..start + 4].copy_from_slice(&len.to_be_bytes());
    }
}

/// TApplicationException's kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppExceptionKind {
    /// Unknown.
    Unknown = 0,
    /// The method does not exist.
    UnknownMethod = 1,
    /// A message that is not a call.
    InvalidMessageType = 2,
    /// The server failed.
    InternalError = 6,
    /// The arguments could not be read.
    ProtocolError = 7,
}

/// The body of a TApplicationException: `{1: message, 2: type}`.
pub fn application_exception(message: &str, kind: AppExceptionKind) -> Struct {
    Struct::new()
        .with(1, Value::Binary(Bytes::copy_from_slice(message.as_bytes())))
        .with(2, Value::I32(kind as i32))
}
