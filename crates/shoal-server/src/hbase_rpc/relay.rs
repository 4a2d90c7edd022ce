//! Table changes that reach a server that is not the cluster's master
//! (a client that still takes it for the master, or that was pointed at
//! it) are relayed to the master's native RPC as they came, and its
//! answer is returned as it is: the client sees one call. A relayed call
//! says so in its connection header, and a server never relays it again
//! (two servers that each took the other for the master would pass it
//! back and forth); it answers "not master" instead, and the client asks
//! the registry for the master and retries there.

use super::errors::{self, RpcError};
use super::wire;
use bytes::{Buf, Bytes};
use prost::Message;
use shoal_proto::hbase as pb;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The connection-header attribute that marks a relayed call.
pub const RELAYED: &str = "shoal.relayed";

/// Longest a relayed call may take: table changes wait for their regions
/// (bounded at 30 s on the master), and the client has its own timeout.
const DEADLINE: Duration = Duration::from_secs(90);

/// True if a connection header marks its calls as relayed.
pub fn is_relayed(header: &pb::ConnectionHeader) -> bool {
    header.attribute.iter().any(|a| a.name == RELAYED)
}

/// The MasterService calls a server that is not master relays: those
/// that change tables, and the balancer's switch (the rest it answers
/// from its own catalog and view of the cluster).
pub fn changes_tables(method: &str) -> bool {
    matches!(
        method,
        "CreateTable"
            | "DeleteTable"
            | "TruncateTable"
            | "truncateTable"
            | "EnableTable"
            | "DisableTable"
            | "ModifyTable"
            | "AddColumn"
            | "ModifyColumn"
            | "DeleteColumn"
            | "SetBalancerRunning"
            | "CreateNamespace"
            | "DeleteNamespace"
            | "ModifyNamespace"
    )
}

/// Sends one MasterService call to the master at `master` (its
/// native-RPC address) and returns its answer: the encoded message, or
/// the master's exception. A failure to reach it, or a malformed answer,
/// is the error HBase's client retries at the master the registry names.
pub async fn to_master(master: &str, method: &str, param: Bytes) -> Result<Vec<u8>, RpcError> {
    let unreachable = |why: String| {
        RpcError::not_master(format!(
            "this server is not the cluster's master, and relaying the call to the master \
             at {master} failed: {why}"
        ))
    };
    match tokio::time::timeout(DEADLINE, exchange(master, method, param)).await {
        Ok(Ok(Ok(message))) => Ok(message),
        Ok(Ok(Err(exception))) => Err(errors::from_exception(&exception)),
        Ok(Err(e)) => Err(unreachable(e.to_string())),
        Err(_) => Err(unreachable(format!("no answer in {DEADLINE:?}"))),
    }
}

/// One call on a connection of its own (table changes are rare).
async fn exchange(
    master: &str,
    method: &str,
    param: Bytes,
) -> std::io::Result<Result<Vec<u8>, pb::ExceptionResponse>> {
    let bad = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let mut tcp = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::net::TcpStream::connect(master),
    )
    .await
    .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"))??;
    let _ = tcp.set_nodelay(true);
    let mut out = wire::MAGIC.to_vec();
    out.extend_from_slice(&[wire::VERSION, wire::AUTH_SIMPLE]);
    let header = pb::ConnectionHeader {
        service_name: Some("MasterService".into()),
        attribute: vec![pb::NameBytesPair {
            name: RELAYED.into(),
            value: Some(Bytes::from_static(b"1")),
        }],
        ..Default::default()
    }
    .encode_to_vec();
    out.extend_from_slice(&(header.len() as u32).to_be_bytes());
    out.extend_from_slice(&header);
    let request = pb::RequestHeader {
        call_id: Some(1),
        method_name: Some(method.to_string()),
        request_param: Some(true),
        ..Default::default()
    };
    let mut body = Vec::with_capacity(param.len() + 64);
    request.encode_length_delimited(&mut body)?;
    prost::encoding::encode_varint(param.len() as u64, &mut body);
    body.extend_from_slice(&param);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    tcp.write_all(&out).await?;
    let mut len = [0u8; 4];
    tcp.read_exact(&mut len).await?;
    let len = u32::from_be_bytes(len) as usize;
    if len > 64 << 20 {
        return Err(bad(format!("an answer of {len} bytes")));
    }
    let mut answer = vec![0u8; len];
    tcp.read_exact(&mut answer).await?;
    let mut answer = Bytes::from(answer);
    let header = pb::ResponseHeader::decode_length_delimited(&mut answer)
        .map_err(|e| bad(format!("answer header: {e}")))?;
    if let Some(e) = header.exception {
        return Ok(Err(e));
    }
    let n = prost::encoding::decode_varint(&mut answer)
        .map_err(|e| bad(format!("answer length: {e}")))? as usize;
    if n > answer.remaining() {
        return Err(bad(format!("an answer of {n} bytes in {}", answer.len())));
    }
    Ok(Ok(answer.split_to(n).to_vec()))
}
