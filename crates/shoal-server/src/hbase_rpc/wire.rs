//! HBase's RPC framing over a byte stream: the 6-byte preambles (`HBas`
//! with its version and auth byte; 2.6's `Regist`), the length-prefixed
//! `ConnectionHeader`, and the calls and answers — a 4-byte big-endian
//! total length, a varint-delimited header, a varint-delimited message,
//! then an optional cell block whose size the header gives.

use bytes::{Buf, Bytes};
use prost::Message;
use shoal_proto::hbase::{CellBlockMeta, ExceptionResponse, RequestHeader, ResponseHeader};

/// The preamble of a normal connection: `HBas`, version 0.
pub const MAGIC: &[u8; 4] = b"HBas";
/// The version byte the server speaks.
pub const VERSION: u8 = 0;
/// SIMPLE authentication (the only method served).
pub const AUTH_SIMPLE: u8 = 80;
/// 2.6's cluster-id preamble: the client asks for the cluster id, then the
/// server closes the connection.
pub const REGISTRY_PREAMBLE: &[u8; 6] = b"Regist";
/// The call id of answers that belong to no call (preamble answers, fatal
/// connection errors): -1 as HBase writes it.
pub const NO_CALL: u32 = u32::MAX;

/// What a connection's first six bytes ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preamble {
    /// `HBas`, version 0, SIMPLE auth: a connection header follows.
    Rpc,
    /// `Regist`: answer the cluster id and close.
    Registry,
    /// Something else; the text says what, for the client's exception.
    Refused(String),
}

/// Reads the preamble.
pub fn preamble(six: &[u8; 6]) -> Preamble {
    if six == REGISTRY_PREAMBLE {
        return Preamble::Registry;
    }
    if &six[..4] != MAGIC {
        return Preamble::Refused(format!(
            "Expected HEADER=HBas but received HEADER={}",
            String::from_utf8_lossy(&six[..4]).escape_debug()
        ));
    }
    if six[4] != VERSION {
        return Preamble::Refused(format!(
            "Unsupported RPC version {}; this server speaks version {VERSION}",
            six[4]
        ));
    }
    if six[5] != AUTH_SIMPLE {
        return Preamble::Refused(format!(
            "Authentication method {} is not served: Shoal's native RPC takes SIMPLE \
             authentication only (hbase.security.authentication=simple)",
            six[5]
        ));
    }
    Preamble::Rpc
}

/// A malformed frame: the connection is closed after it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// A declared length past the limit.
    #[error("a call of {len} bytes is over hbase_rpc.max_message_bytes ({max})")]
    TooBig {
        /// The declared length.
        len: u64,
        /// The limit.
        max: usize,
    },
    /// Bytes that do not decode.
    #[error("malformed call: {0}")]
    Malformed(String),
}

/// One call as read from the wire.
#[derive(Debug, Clone)]
pub struct Call {
    /// Its header (call id, method, cell block size, …).
    pub header: RequestHeader,
    /// The encoded request message (empty when the call has none).
    pub param: Bytes,
    /// The cell block (empty when none).
    pub cells: Bytes,
}

impl Call {
    /// The call id (0 if the client sent none).
    pub fn id(&self) -> u32 {
        self.header.call_id.unwrap_or(0)
    }

    /// The method name.
    pub fn method(&self) -> &str {
        self.header.method_name.as_deref().unwrap_or("")
    }
}

/// Reads a varint-delimited message off the front of `buf`.
fn delimited<M: Message + Default>(buf: &mut Bytes, what: &str) -> Result<M, FrameError> {
    let len = prost::encoding::decode_varint(buf)
        .map_err(|e| FrameError::Malformed(format!("{what} length: {e}")))?;
    let len = usize::try_from(len)
        .ok()
        .filter(|l| *l <= buf.len())
        .ok_or_else(|| {
            FrameError::Malformed(format!(
                "{what} of {len} bytes, but only {} bytes remain in the call",
                buf.len()
            ))
        })?;
    let body = buf.split_to(len);
    M::decode(body).map_err(|e| FrameError::Malformed(format!("{what}: {e}")))
}

/// Decodes one call's body (the bytes after its 4-byte length).
pub fn decode_call(mut body: Bytes) -> Result<Call, FrameError> {
    let header: RequestHeader = delimited(&mut body, "request header")?;
    let param = if header.request_param.unwrap_or(false) {
        let len = prost::encoding::decode_varint(&mut body)
            .map_err(|e| FrameError::Malformed(format!("request length: {e}")))?;
        let len = usize::try_from(len)
            .ok()
            .filter(|l| *l <= body.len())
            .ok_or_else(|| {
                FrameError::Malformed(format!(
                    "request of {len} bytes, but only {} bytes remain in the call",
                    body.len()
                ))
            })?;
        body.split_to(len)
    } else {
        Bytes::new()
    };
    let block = header
        .cell_block_meta
        .as_ref()
        .and_then(|m| m.length)
        .unwrap_or(0) as usize;
    if block != body.len() {
        return Err(FrameError::Malformed(format!(
            "the header announces a cell block of {block} bytes, but {} bytes follow the request",
            body.len()
        )));
    }
    Ok(Call {
        header,
        param,
        cells: body,
    })
}

/// Appends a framed answer: the header, then `message` unless the answer is
/// an exception, then the cell block.
pub fn encode_answer(
    out: &mut Vec<u8>,
    call_id: u32,
    answer: Result<(&[u8], &[u8]), &ExceptionResponse>,
) {
    let (header, message, cells) = match answer {
        Ok((message, cells)) => (
            ResponseHeader {
                call_id: Some(call_id),
                exception: None,
                cell_block_meta: (!cells.is_empty()).then_some(CellBlockMeta {
                    length: Some(cells.len() as u32),
                }),
            },
            Some(message),
            cells,
        ),
        Err(e) => (
            ResponseHeader {
                call_id: Some(call_id),
                exception: Some(e.clone()),
                cell_block_meta: None,
            },
            None,
            &[][..],
        ),
    };
    let start = out.len();
    out.reserve(4 + 5 + header.encoded_len() + 5 + message.map_or(0, <[u8]>::len) + cells.len());
    out.extend_from_slice(&[0; 4]);
    // Encoding into a Vec cannot fail: it grows as needed.
    let _ = header.encode_length_delimited(out);
    if let Some(m) = message {
        prost::encoding::encode_varint(m.len() as u64, out);
        out.extend_from_slice(m);
    }
    out.extend_from_slice(cells);
    let total = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&total.to_be_bytes());
}

/// The 4-byte length at the front of `buf`, if it is there.
pub fn frame_length(buf: &[u8]) -> Option<u32> {
    let mut b = buf.get(..4)?;
    Some(b.get_u32())
}

/// An exception answer: HBase's Java class name, a message as its stack
/// trace (what the client shows), and whether the client may retry.
pub fn exception(class: &str, message: &str, do_not_retry: bool) -> ExceptionResponse {
    ExceptionResponse {
        exception_class_name: Some(class.to_string()),
        stack_trace: Some(message.to_string()),
        hostname: None,
        port: None,
        do_not_retry: Some(do_not_retry),
        server_overloaded: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(header: &RequestHeader, param: &[u8], cells: &[u8]) -> Bytes {
        let mut out = Vec::new();
        header.encode_length_delimited(&mut out).unwrap();
        prost::encoding::encode_varint(param.len() as u64, &mut out);
        out.extend_from_slice(param);
        out.extend_from_slice(cells);
        Bytes::from(out)
    }

    #[test]
    fn preambles() {
        assert_eq!(preamble(b"HBas\x00\x50"), Preamble::Rpc);
        assert_eq!(preamble(b"Regist"), Preamble::Registry);
        assert!(matches!(preamble(b"HBas\x00\x51"), Preamble::Refused(m) if m.contains("SIMPLE")));
        assert!(matches!(preamble(b"HBas\x01\x50"), Preamble::Refused(_)));
        assert!(
            matches!(preamble(b"GET / "), Preamble::Refused(m) if m.starts_with("Expected HEADER="))
        );
    }

    #[test]
    fn call_round_trip_and_bad_lengths() {
        let header = RequestHeader {
            call_id: Some(7),
            method_name: Some("Get".into()),
            request_param: Some(true),
            cell_block_meta: Some(CellBlockMeta { length: Some(3) }),
            ..Default::default()
        };
        let call = decode_call(frame(&header, b"pq", b"abc")).unwrap();
        assert_eq!((call.id(), call.method()), (7, "Get"));
        assert_eq!(&call.param[..], b"pq");
        assert_eq!(&call.cells[..], b"abc");
        // A cell block shorter than announced.
        assert!(decode_call(frame(&header, b"pq", b"ab")).is_err());
        // A header length past the end.
        assert!(decode_call(Bytes::from_static(&[0x7f, 1, 2])).is_err());
        // Garbage.
        assert!(decode_call(Bytes::from_static(&[0xff; 12])).is_err());
    }

    #[test]
    fn answers_are_framed() {
        let mut out = Vec::new();
        encode_answer(&mut out, 9, Ok((b"msg", b"cells")));
        let total = frame_length(&out).unwrap() as usize;
        assert_eq!(total, out.len() - 4);
        let mut body = Bytes::copy_from_slice(&out[4..]);
        let h: ResponseHeader = delimited(&mut body, "h").unwrap();
        assert_eq!(h.call_id, Some(9));
        assert_eq!(h.cell_block_meta.unwrap().length, Some(5));
        let mut out = Vec::new();
        encode_answer(
            &mut out,
            3,
            Err(&exception("java.io.IOException", "no", true)),
        );
        let mut body = Bytes::copy_from_slice(&out[4..]);
        let h: ResponseHeader = delimited(&mut body, "h").unwrap();
        assert!(body.is_empty(), "no message after an exception");
        assert_eq!(
            h.exception.unwrap().exception_class_name.as_deref(),
            Some("java.io.IOException")
        );
    }
}
