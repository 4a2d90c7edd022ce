//! A raw client of HBase's native RPC for the server's tests: the
//! connection preamble and header, call frames, and answers (header,
//! message or exception, cell block).

#![allow(clippy::unwrap_used, dead_code)] // test code; each test file uses part of it

use bytes::Bytes;
use prost::Message;
use shoal_proto::hbase as pb;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub const CODEC: &str = "org.apache.hadoop.hbase.codec.KeyValueCodec";

pub struct Conn {
    pub tcp: TcpStream,
    pub next_id: u32,
}

/// One answer: header, message (None with an exception), cell block.
pub struct Answer {
    pub header: pb::ResponseHeader,
    pub message: Bytes,
    pub cells: Bytes,
}

impl Answer {
    pub fn exception(&self) -> Option<String> {
        self.header
            .exception
            .as_ref()
            .map(|e| e.exception_class_name.clone().unwrap_or_default())
    }
}

pub fn header(service: &str, codec: bool) -> Vec<u8> {
    let mut out = b"HBas\x00\x50".to_vec();
    let h = pb::ConnectionHeader {
        user_info: Some(pb::UserInformation {
            effective_user: "tester".into(),
            real_user: None,
        }),
        service_name: Some(service.into()),
        cell_block_codec_class: codec.then(|| CODEC.to_string()),
        ..Default::default()
    }
    .encode_to_vec();
    out.extend_from_slice(&(h.len() as u32).to_be_bytes());
    out.extend_from_slice(&h);
    out
}

pub fn frame(id: u32, method: &str, param: &[u8], cells: &[u8]) -> Vec<u8> {
    let h = pb::RequestHeader {
        call_id: Some(id),
        method_name: Some(method.into()),
        request_param: Some(true),
        cell_block_meta: (!cells.is_empty()).then_some(pb::CellBlockMeta {
            length: Some(cells.len() as u32),
        }),
        ..Default::default()
    };
    let mut body = Vec::new();
    h.encode_length_delimited(&mut body).unwrap();
    prost::encoding::encode_varint(param.len() as u64, &mut body);
    body.extend_from_slice(param);
    body.extend_from_slice(cells);
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

pub async fn read_answer(tcp: &mut TcpStream) -> Option<Answer> {
    let mut len = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(10), tcp.read_exact(&mut len))
        .await
        .unwrap()
        .ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    tcp.read_exact(&mut body).await.ok()?;
    let mut body = Bytes::from(body);
    let header = pb::ResponseHeader::decode_length_delimited(&mut body).unwrap();
    let mut message = Bytes::new();
    if header.exception.is_none() {
        let n = prost::encoding::decode_varint(&mut body).unwrap() as usize;
        message = body.split_to(n);
    }
    Some(Answer {
        header,
        message,
        cells: body,
    })
}

impl Conn {
    pub async fn open(addr: SocketAddr, service: &str, codec: bool) -> Conn {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(&header(service, codec)).await.unwrap();
        Conn { tcp, next_id: 1 }
    }

    pub async fn send(&mut self, method: &str, param: &impl Message, cells: &[u8]) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        let bytes = frame(id, method, &param.encode_to_vec(), cells);
        self.tcp.write_all(&bytes).await.unwrap();
        id
    }

    pub async fn call(&mut self, method: &str, param: &impl Message, cells: &[u8]) -> Answer {
        let id = self.send(method, param, cells).await;
        let a = read_answer(&mut self.tcp).await.expect("an answer");
        assert_eq!(a.header.call_id, Some(id));
        a
    }
}
