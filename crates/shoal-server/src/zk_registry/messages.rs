//! ZooKeeper's client messages, as jute records: the session's opening
//! (`ConnectRequest` / `ConnectResponse`, each with the trailing
//! `readOnly` byte clients since 3.4 send and read), the request and reply
//! headers, `Stat`, and the numbers ZooKeeper gives its operations
//! (`ZooDefs.OpCode`) and errors (`KeeperException.Code`).

use super::jute::{JuteError, Reader, Writer};

/// Operation numbers (`ZooDefs.OpCode`).
pub mod op {
    /// create
    pub const CREATE: i32 = 1;
    /// delete
    pub const DELETE: i32 = 2;
    /// exists
    pub const EXISTS: i32 = 3;
    /// getData
    pub const GET_DATA: i32 = 4;
    /// setData
    pub const SET_DATA: i32 = 5;
    /// getACL
    pub const GET_ACL: i32 = 6;
    /// setACL
    pub const SET_ACL: i32 = 7;
    /// getChildren
    pub const GET_CHILDREN: i32 = 8;
    /// sync
    pub const SYNC: i32 = 9;
    /// ping
    pub const PING: i32 = 11;
    /// getChildren2 (children and the parent's stat)
    pub const GET_CHILDREN2: i32 = 12;
    /// check (inside multi)
    pub const CHECK: i32 = 13;
    /// multi
    pub const MULTI: i32 = 14;
    /// create2
    pub const CREATE2: i32 = 15;
    /// reconfig
    pub const RECONFIG: i32 = 16;
    /// createContainer
    pub const CREATE_CONTAINER: i32 = 19;
    /// deleteContainer
    pub const DELETE_CONTAINER: i32 = 20;
    /// createTTL
    pub const CREATE_TTL: i32 = 21;
    /// auth (addAuthInfo)
    pub const AUTH: i32 = 100;
    /// setWatches
    pub const SET_WATCHES: i32 = 101;
    /// setWatches2 (with persistent watches)
    pub const SET_WATCHES2: i32 = 105;
    /// closeSession
    pub const CLOSE_SESSION: i32 = -11;

    /// True for the operations that change the tree.
    pub fn writes(op: i32) -> bool {
        matches!(
            op,
            CREATE
                | DELETE
                | SET_DATA
                | SET_ACL
                | CHECK
                | MULTI
                | CREATE2
                | RECONFIG
                | CREATE_CONTAINER
                | DELETE_CONTAINER
                | CREATE_TTL
        )
    }

    /// The operation's name, for logs.
    pub fn name(op: i32) -> &'static str {
        match op {
            CREATE => "create",
            DELETE => "delete",
            EXISTS => "exists",
            GET_DATA => "getData",
            SET_DATA => "setData",
            GET_ACL => "getACL",
            SET_ACL => "setACL",
            GET_CHILDREN => "getChildren",
            SYNC => "sync",
            PING => "ping",
            GET_CHILDREN2 => "getChildren2",
            CHECK => "check",
            MULTI => "multi",
            CREATE2 => "create2",
            RECONFIG => "reconfig",
            CREATE_CONTAINER => "createContainer",
            DELETE_CONTAINER => "deleteContainer",
            CREATE_TTL => "createTTL",
            AUTH => "auth",
            SET_WATCHES => "setWatches",
            SET_WATCHES2 => "setWatches2",
            CLOSE_SESSION => "closeSession",
            _ => "other",
        }
    }
}

/// Error numbers (`KeeperException.Code`) this registry answers.
pub mod err {
    /// Done.
    pub const OK: i32 = 0;
    /// The request could not be read.
    pub const MARSHALLING_ERROR: i32 = -5;
    /// The operation is not served here.
    pub const UNIMPLEMENTED: i32 = -6;
    /// A path that is not absolute or not UTF-8.
    pub const BAD_ARGUMENTS: i32 = -8;
    /// No such znode.
    pub const NO_NODE: i32 = -101;
    /// A write sent to a read-only server.
    pub const NOT_READ_ONLY: i32 = -119;
}

/// `ConnectRequest`, the first record of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectRequest {
    /// Protocol version (0).
    pub protocol_version: i32,
    /// The last zxid the client saw (ignored: this tree has no history).
    pub last_zxid_seen: i64,
    /// The session timeout asked for, ms.
    pub timeout_ms: i32,
    /// 0 for a new session, else the one the client resumes.
    pub session_id: i64,
    /// The session's password (empty for a new one).
    pub password: Vec<u8>,
    /// The client accepts a read-only server (None: an old client that
    /// does not send the byte).
    pub read_only: Option<bool>,
}

impl ConnectRequest {
    /// Reads one from `record`.
    pub fn read(record: &[u8]) -> Result<ConnectRequest, JuteError> {
        let mut r = Reader::new(record);
        let protocol_version = r.int("protocolVersion")?;
        let last_zxid_seen = r.long("lastZxidSeen")?;
        let timeout_ms = r.int("timeOut")?;
        let session_id = r.long("sessionId")?;
        let password = r.buffer("passwd")?.unwrap_or_default().to_vec();
        let read_only = if r.remaining() > 0 {
            Some(r.boolean("readOnly")?)
        } else {
            None
        };
        Ok(ConnectRequest {
            protocol_version,
            last_zxid_seen,
            timeout_ms,
            session_id,
            password,
            read_only,
        })
    }
}

/// `ConnectResponse`, the answer to [`ConnectRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectResponse {
    /// The negotiated session timeout, ms.
    pub timeout_ms: i32,
    /// The session.
    pub session_id: i64,
    /// Its password.
    pub password: [u8; 16],
    /// Whether to send the trailing `readOnly` byte (the client sent one).
    pub with_read_only: bool,
}

impl ConnectResponse {
    /// The record. The `readOnly` byte says false: a client told it is on a
    /// read-only server reports `ConnectedReadOnly` rather than
    /// `SyncConnected`, and asynchbase, for one, then never reads.
    pub fn write(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.int(0)
            .int(self.timeout_ms)
            .long(self.session_id)
            .buffer(&self.password);
        if self.with_read_only {
            w.boolean(false);
        }
        w.finish()
    }
}

/// `RequestHeader`: every request after the connect starts with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHeader {
    /// The client's number for the request (negative for pings and the
    /// like).
    pub xid: i32,
    /// The operation.
    pub op: i32,
}

impl RequestHeader {
    /// Reads the header from `r`.
    pub fn read(r: &mut Reader<'_>) -> Result<RequestHeader, JuteError> {
        Ok(RequestHeader {
            xid: r.int("xid")?,
            op: r.int("type")?,
        })
    }
}

/// `ReplyHeader`, then (when `err` is OK) the operation's response.
pub fn reply_header(w: &mut Writer, xid: i32, zxid: i64, err: i32) {
    w.int(xid).long(zxid).int(err);
}

/// `Stat`: a znode's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    /// Created by this zxid.
    pub czxid: i64,
    /// Last changed by this zxid.
    pub mzxid: i64,
    /// Created at (ms since the epoch).
    pub ctime: i64,
    /// Last changed at (ms).
    pub mtime: i64,
    /// Data version.
    pub version: i32,
    /// Children version.
    pub cversion: i32,
    /// ACL version.
    pub aversion: i32,
    /// The session owning an ephemeral znode (0: persistent).
    pub ephemeral_owner: i64,
    /// Bytes of data.
    pub data_length: i32,
    /// Children.
    pub num_children: i32,
    /// Last zxid that changed the children.
    pub pzxid: i64,
}

impl Stat {
    /// Appends the record.
    pub fn write(&self, w: &mut Writer) {
        w.long(self.czxid)
            .long(self.mzxid)
            .long(self.ctime)
            .long(self.mtime)
            .int(self.version)
            .int(self.cversion)
            .int(self.aversion)
            .long(self.ephemeral_owner)
            .int(self.data_length)
            .int(self.num_children)
            .long(self.pzxid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connect(read_only: Option<bool>) -> Vec<u8> {
        let mut w = Writer::new();
        w.int(0).long(0).int(30_000).long(0).buffer(&[0; 16]);
        if let Some(b) = read_only {
            w.boolean(b);
        }
        w.finish()
    }

    #[test]
    fn connect_requests_old_and_new() {
        let c = ConnectRequest::read(&connect(Some(true))).unwrap();
        assert_eq!((c.timeout_ms, c.read_only), (30_000, Some(true)));
        let c = ConnectRequest::read(&connect(None)).unwrap();
        assert_eq!(c.read_only, None);
        assert!(ConnectRequest::read(&connect(None)[..10]).is_err());
        let r = ConnectResponse {
            timeout_ms: 4000,
            session_id: 9,
            password: [7; 16],
            with_read_only: true,
        }
        .write();
        assert_eq!(r.len(), 4 + 4 + 8 + 4 + 16 + 1);
        assert_eq!(r[r.len() - 1], 0, "never announced as read-only");
    }

    #[test]
    fn stats_are_68_bytes_and_writes_are_known() {
        let mut w = Writer::new();
        Stat::default().write(&mut w);
        assert_eq!(w.finish().len(), 68);
        assert!(op::writes(op::CREATE) && op::writes(op::MULTI) && op::writes(op::SET_DATA));
        assert!(!op::writes(op::GET_DATA) && !op::writes(op::SYNC));
    }
}
