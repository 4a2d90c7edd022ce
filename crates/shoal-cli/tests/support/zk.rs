//! A raw ZooKeeper client, just enough to check Shoal's read-only
//! ZooKeeper registry on the wire: open a session, send requests, read
//! replies, and HBase's znode data (metadata prefix, `PBUF`, protobuf).
#![allow(dead_code, clippy::unwrap_used)] // test code; each test uses part of it

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A ZooKeeper session on one connection.
pub struct Zk {
    /// The connection.
    pub s: TcpStream,
}

fn int(b: &mut Vec<u8>, v: i32) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn string(b: &mut Vec<u8>, v: &str) {
    int(b, v.len() as i32);
    b.extend_from_slice(v.as_bytes());
}

impl Zk {
    pub fn open(addr: SocketAddr) -> Zk {
        let s = TcpStream::connect(addr).expect("connect to the registry");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut zk = Zk { s };
        let mut c = Vec::new();
        int(&mut c, 0); // protocol version
        c.extend_from_slice(&0i64.to_be_bytes()); // last zxid
        int(&mut c, 30_000); // timeout
        c.extend_from_slice(&0i64.to_be_bytes()); // session
        int(&mut c, 16);
        c.extend_from_slice(&[0; 16]); // password
        c.push(0); // readOnly
        zk.send(&c);
        let r = zk.frame().expect("a ConnectResponse");
        assert_eq!(r.len(), 37, "ConnectResponse with the readOnly byte");
        let timeout = i32::from_be_bytes(r[4..8].try_into().unwrap());
        assert!((4_000..=40_000).contains(&timeout), "negotiated {timeout}");
        assert_ne!(&r[8..16], &[0; 8], "a session id");
        assert_eq!(r[36], 0, "not announced read-only");
        zk
    }

    pub fn send(&mut self, record: &[u8]) {
        let mut f = (record.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(record);
        self.s.write_all(&f).unwrap();
    }

    /// The next frame, or None once the server closed the connection.
    pub fn frame(&mut self) -> Option<Vec<u8>> {
        let mut len = [0u8; 4];
        self.s.read_exact(&mut len).ok()?;
        let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
        self.s.read_exact(&mut body).ok()?;
        Some(body)
    }

    /// Sends (xid, op, path, watch) and returns (xid, err, body).
    pub fn ask(&mut self, xid: i32, op: i32, path: Option<&str>) -> (i32, i32, Vec<u8>) {
        let mut r = Vec::new();
        int(&mut r, xid);
        int(&mut r, op);
        if let Some(p) = path {
            string(&mut r, p);
            r.push(0);
        }
        self.send(&r);
        let f = self.frame().expect("a reply");
        let xid = i32::from_be_bytes(f[0..4].try_into().unwrap());
        let err = i32::from_be_bytes(f[12..16].try_into().unwrap());
        (xid, err, f[16..].to_vec())
    }

    pub fn data(&mut self, path: &str) -> Vec<u8> {
        let (_, err, body) = self.ask(1, 4, Some(path));
        assert_eq!(err, 0, "getData {path}");
        let n = i32::from_be_bytes(body[0..4].try_into().unwrap()) as usize;
        body[4..4 + n].to_vec()
    }

    pub fn children(&mut self, path: &str) -> Vec<String> {
        let (_, err, body) = self.ask(1, 8, Some(path));
        assert_eq!(err, 0, "getChildren {path}");
        let n = i32::from_be_bytes(body[0..4].try_into().unwrap());
        let mut at = 4;
        (0..n)
            .map(|_| {
                let len = i32::from_be_bytes(body[at..at + 4].try_into().unwrap()) as usize;
                let s = String::from_utf8(body[at + 4..at + 4 + len].to_vec()).unwrap();
                at += 4 + len;
                s
            })
            .collect()
    }
}

/// The protobuf after HBase's metadata prefix and `PBUF`.
pub fn protobuf(data: &[u8]) -> &[u8] {
    assert_eq!(data[0], 0xFF, "HBase's metadata magic");
    let n = u32::from_be_bytes(data[1..5].try_into().unwrap()) as usize;
    assert_eq!(&data[5 + n..9 + n], b"PBUF");
    &data[9 + n..]
}

/// The cluster id in `/hbase/hbaseid` (a ClusterId: field 1, a string).
pub fn cluster_id(zk: &mut Zk) -> String {
    let pb = protobuf(&zk.data("/hbase/hbaseid")).to_vec();
    assert_eq!(pb[0], 0x0a);
    String::from_utf8(pb[2..2 + pb[1] as usize].to_vec()).unwrap()
}

/// The `host:port` of the `ServerName` in field 1 of `message` (HBase's
/// `Master` and `MetaRegionServer`).
pub fn server_address(message: &[u8]) -> String {
    fn varint(b: &[u8], at: &mut usize) -> u64 {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = b[*at];
            *at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
        }
        v
    }
    assert_eq!(message[0], 0x0a, "field 1, a message");
    let mut at = 1;
    let len = varint(message, &mut at) as usize;
    let name = &message[at..at + len];
    let (mut host, mut port) = (String::new(), 0);
    let mut i = 0;
    while i < name.len() {
        let tag = name[i];
        i += 1;
        match tag {
            0x0a => {
                let n = varint(name, &mut i) as usize;
                host = String::from_utf8(name[i..i + n].to_vec()).unwrap();
                i += n;
            }
            0x10 => port = varint(name, &mut i),
            _ => {
                varint(name, &mut i);
            }
        }
    }
    format!("{host}:{port}")
}
