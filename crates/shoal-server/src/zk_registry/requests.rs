//! Answering one request of an open session: pure, from the request's
//! bytes (a frame without its length) to the reply's. Reads (`exists`,
//! `getData`, `getChildren`, `getChildren2`, `getACL`, `sync`) are served
//! from the tree; `ping`, `setWatches` and `auth` are acknowledged (no
//! watch ever fires); `closeSession` is acknowledged and ends the
//! connection. Every write answers `NOTREADONLY`, anything else
//! `UNIMPLEMENTED`, a request whose body cannot be read
//! `MARSHALLINGERROR`; a frame too short for a header ends the connection
//! (there is no xid to answer).

use super::jute::{Reader, Writer};
use super::messages::{RequestHeader, err, op, reply_header};
use super::znodes::{Tree, ZXID, Znode};

/// What to send back, and whether the connection ends after it.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    /// The reply record (None: nothing can be answered).
    pub reply: Option<Vec<u8>>,
    /// Close the connection after the reply.
    pub close: bool,
    /// The operation, for logs.
    pub op: i32,
}

/// `ZooDefs.Perms.READ`.
const PERM_READ: i32 = 1;

/// Answers `request`; `tree` makes the znodes when the request reads one.
pub fn answer<'a>(request: &[u8], tree: impl FnOnce() -> Tree<'a>) -> Answer {
    let mut r = Reader::new(request);
    let Ok(h) = RequestHeader::read(&mut r) else {
        return Answer {
            reply: None,
            close: true,
            op: 0,
        };
    };
    let mut w = Writer::new();
    let close = h.op == op::CLOSE_SESSION;
    match h.op {
        op::PING | op::SET_WATCHES | op::SET_WATCHES2 | op::AUTH | op::CLOSE_SESSION => {
            reply_header(&mut w, h.xid, ZXID, err::OK)
        }
        op::EXISTS
        | op::GET_DATA
        | op::GET_CHILDREN
        | op::GET_CHILDREN2
        | op::GET_ACL
        | op::SYNC => read(&mut w, h, &mut r, tree),
        o if op::writes(o) => reply_header(&mut w, h.xid, ZXID, err::NOT_READ_ONLY),
        _ => reply_header(&mut w, h.xid, ZXID, err::UNIMPLEMENTED),
    }
    Answer {
        reply: Some(w.finish()),
        close,
        op: h.op,
    }
}

/// One read: its path (and watch flag, ignored), then the znode.
fn read<'a>(w: &mut Writer, h: RequestHeader, r: &mut Reader<'_>, tree: impl FnOnce() -> Tree<'a>) {
    let path = match r.ustring("path") {
        Ok(Some(p)) => p,
        Ok(None) => return reply_header(w, h.xid, ZXID, err::BAD_ARGUMENTS),
        Err(e) => {
            tracing::debug!(error = %e, op = op::name(h.op), "ZooKeeper request unreadable");
            return reply_header(w, h.xid, ZXID, err::MARSHALLING_ERROR);
        }
    };
    if !path.starts_with('/') {
        return reply_header(w, h.xid, ZXID, err::BAD_ARGUMENTS);
    }
    if h.op == op::SYNC {
        reply_header(w, h.xid, ZXID, err::OK);
        w.buffer(path.as_bytes());
        return;
    }
    let Some(Znode {
        data,
        children,
        stat,
    }) = tree().get(path)
    else {
        return reply_header(w, h.xid, ZXID, err::NO_NODE);
    };
    reply_header(w, h.xid, ZXID, err::OK);
    match h.op {
        op::EXISTS => stat.write(w),
        op::GET_DATA => {
            w.buffer(&data);
            stat.write(w);
        }
        op::GET_CHILDREN => {
            w.strings(&children);
        }
        op::GET_CHILDREN2 => {
            w.strings(&children);
            stat.write(w);
        }
        _ => {
            // getACL: world:anyone may read, nobody may write.
            w.int(1).int(PERM_READ).buffer(b"world").buffer(b"anyone");
            stat.write(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hbase_rpc::ServerIdentity;
    use crate::hbase_rpc::registry_facts::RegistryFacts;

    fn me() -> ServerIdentity {
        ServerIdentity {
            host: "127.0.0.1".into(),
            port: 16020,
            start_code: 42,
        }
    }

    fn ask(xid: i32, opcode: i32, path: Option<&str>, watch: bool) -> Answer {
        let me = me();
        let mut w = Writer::new();
        w.int(xid).int(opcode);
        if let Some(p) = path {
            w.buffer(p.as_bytes()).boolean(watch);
        }
        answer(w.bytes(), || Tree {
            parent: "/hbase",
            cluster_id: "cid",
            me: &me,
            facts: RegistryFacts {
                master: Some(me.address()),
                servers: vec![me.address()],
                meta: me.address(),
            },
            started_ms: 9,
        })
    }

    /// (xid, zxid, err) and the rest.
    fn header(a: &Answer) -> (i32, i64, i32, Vec<u8>) {
        let reply = a.reply.as_ref().expect("a reply");
        let mut r = Reader::new(reply);
        let h = (
            r.int("xid").unwrap(),
            r.long("zxid").unwrap(),
            r.int("err").unwrap(),
        );
        (h.0, h.1, h.2, reply[16..].to_vec())
    }

    #[test]
    fn reads_are_served() {
        let a = ask(1, op::GET_DATA, Some("/hbase/hbaseid"), true);
        let (xid, _, e, body) = header(&a);
        assert_eq!((xid, e), (1, err::OK));
        let mut r = Reader::new(&body);
        let data = r.buffer("data").unwrap().unwrap();
        assert!(data.windows(3).any(|w| w == b"cid"));
        assert_eq!(r.remaining(), 68);
        let (_, _, e, body) = header(&ask(2, op::GET_CHILDREN, Some("/hbase/rs"), false));
        assert_eq!(e, err::OK);
        let mut r = Reader::new(&body);
        assert_eq!(r.int("n").unwrap(), 1);
        assert_eq!(r.ustring("c").unwrap(), Some("127.0.0.1,16020,42"));
        let (_, _, e, body) = header(&ask(3, op::GET_CHILDREN2, Some("/hbase"), false));
        assert_eq!(e, err::OK);
        assert!(body.len() > 68);
        let (_, _, e, body) = header(&ask(4, op::EXISTS, Some("/hbase/master"), true));
        assert_eq!((e, body.len()), (err::OK, 68));
        let (_, _, e, body) = header(&ask(5, op::GET_ACL, Some("/hbase"), false));
        assert_eq!((e, body.len()), (err::OK, 4 + 4 + 9 + 10 + 68));
        let mut w = Writer::new();
        w.int(6).int(op::SYNC).buffer(b"/hbase");
        let a = answer(w.bytes(), || unreachable!("sync reads no znode"));
        assert_eq!(header(&a).2, err::OK);
    }

    #[test]
    fn errors_are_zookeepers() {
        let e = |a: &Answer| header(a).2;
        assert_eq!(
            e(&ask(1, op::GET_DATA, Some("/hbase/nope"), false)),
            err::NO_NODE
        );
        assert_eq!(
            e(&ask(1, op::EXISTS, Some("hbase"), false)),
            err::BAD_ARGUMENTS
        );
        assert_eq!(
            e(&ask(1, op::CREATE, Some("/hbase/x"), false)),
            err::NOT_READ_ONLY
        );
        assert_eq!(e(&ask(1, op::MULTI, None, false)), err::NOT_READ_ONLY);
        assert_eq!(e(&ask(1, 106, Some("/hbase"), false)), err::UNIMPLEMENTED);
        assert_eq!(e(&ask(1, 9999, None, false)), err::UNIMPLEMENTED);
        // A read without its path.
        assert_eq!(
            e(&ask(7, op::GET_DATA, None, false)),
            err::MARSHALLING_ERROR
        );
        // Ping and close.
        let p = ask(-2, op::PING, None, false);
        assert_eq!((header(&p).0, header(&p).2, p.close), (-2, err::OK, false));
        assert!(ask(8, op::CLOSE_SESSION, None, false).close);
        // No header at all: nothing to answer, the connection ends.
        let a = answer(&[1, 2, 3], || unreachable!());
        assert_eq!((a.reply, a.close), (None, true));
    }
}
