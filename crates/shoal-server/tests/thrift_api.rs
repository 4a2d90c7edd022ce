//! The Thrift1 gateway call by call, with a small client built on the
//! server's own codec: each method's answer, HBase's exceptions, scanner
//! leases, and bad input on the port (the server stays up, data intact).
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use bytes::{Bytes, BytesMut};
use shoal_server::thrift::wire::{
    self, Limits, Message, MessageType, Protocol, Struct, TType, Transport, Value,
};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Client {
    tcp: TcpStream,
    p: Protocol,
    t: Transport,
    seq: i32,
    buf: BytesMut,
}

/// A call's outcome: the result struct, or a TApplicationException.
enum Answer {
    Result(Struct),
    AppException(Struct),
}

impl Client {
    async fn connect(addr: SocketAddr, p: Protocol, t: Transport) -> Client {
        Client {
            tcp: TcpStream::connect(addr).await.unwrap(),
            p,
            t,
            seq: 0,
            buf: BytesMut::new(),
        }
    }

    async fn raw(&mut self, name: &str, args: Struct) -> Answer {
        self.seq += 1;
        let msg = Message {
            name: name.into(),
            kind: MessageType::Call,
            seqid: self.seq,
            body: args,
        };
        let mut out = Vec::new();
        wire::encode(&msg, self.p, self.t, &mut out);
        self.tcp.write_all(&out).await.unwrap();
        loop {
            let view = Bytes::copy_from_slice(&self.buf);
            if let Some((m, used)) =
                wire::decode(&view, self.p, self.t, &Limits::default()).unwrap()
            {
                let _ = self.buf.split_to(used);
                assert_eq!(m.seqid, self.seq);
                return match m.kind {
                    MessageType::Reply => Answer::Result(m.body),
                    MessageType::Exception => Answer::AppException(m.body),
                    k => panic!("unexpected {k:?}"),
                };
            }
            let n = self.tcp.read_buf(&mut self.buf).await.unwrap();
            assert!(n > 0, "the server closed the connection during {name}");
        }
    }

    /// The result struct of a call that must succeed; its field 0.
    async fn ok(&mut self, name: &str, args: Struct) -> Option<Value> {
        match self.raw(name, args).await {
            Answer::Result(s) => {
                assert!(
                    s.fields.iter().all(|(id, _)| *id == 0),
                    "{name} raised {s:?}"
                );
                s.get(0).cloned()
            }
            Answer::AppException(s) => panic!("{name}: {s:?}"),
        }
    }

    /// The exception (field id, message) a call must raise.
    async fn fails(&mut self, name: &str, args: Struct) -> (i16, String) {
        match self.raw(name, args).await {
            Answer::Result(s) => {
                let (id, v) = s
                    .fields
                    .iter()
                    .find(|(id, _)| *id != 0)
                    .unwrap_or_else(|| panic!("{name} succeeded: {s:?}"));
                let msg = v
                    .as_struct()
                    .and_then(|e| e.binary(1))
                    .cloned()
                    .unwrap_or_default();
                (*id, String::from_utf8_lossy(&msg).into_owned())
            }
            Answer::AppException(s) => (-1, text(s.get(1).unwrap())),
        }
    }
}

fn b(s: &str) -> Value {
    Value::Binary(Bytes::copy_from_slice(s.as_bytes()))
}

fn text(v: &Value) -> String {
    String::from_utf8_lossy(v.as_binary().unwrap()).into_owned()
}

fn list(items: Vec<Value>) -> Value {
    let t = items.first().map_or(TType::Binary, Value::ttype);
    Value::List(t, items)
}

fn args() -> Struct {
    Struct::new()
}

fn mutation(column: &str, value: Option<&str>) -> Value {
    let mut m = Struct::new()
        .with(1, Value::Bool(value.is_none()))
        .with(2, b(column));
    if let Some(v) = value {
        m = m.with(3, b(v));
    }
    Value::Struct(m)
}

fn family(name: &str, versions: i32) -> Value {
    Value::Struct(Struct::new().with(1, b(name)).with(2, Value::I32(versions)))
}

/// The (column, value) pairs of a list of TRowResults' first row.
fn columns_of(v: &Value) -> Vec<(String, String)> {
    let Value::List(_, rows) = v else {
        panic!("{v:?}")
    };
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let row = first.as_struct().unwrap();
    let mut out: Vec<(String, String)> = row
        .map(2)
        .unwrap()
        .iter()
        .map(|(k, c)| (text(k), text(c.as_struct().unwrap().get(1).unwrap())))
        .collect();
    out.sort();
    out
}

fn names_of(v: &Value) -> Vec<String> {
    let Value::List(_, names) = v else {
        panic!("{v:?}")
    };
    names.iter().map(text).collect()
}

fn rows_of(v: &Value) -> Vec<String> {
    let Value::List(_, rows) = v else {
        panic!("{v:?}")
    };
    rows.iter()
        .map(|r| text(r.as_struct().unwrap().get(1).unwrap()))
        .collect()
}

fn cells_of(v: &Value) -> Vec<(String, i64)> {
    let Value::List(_, cells) = v else {
        panic!("{v:?}")
    };
    cells
        .iter()
        .map(|c| {
            let c = c.as_struct().unwrap();
            (text(c.get(1).unwrap()), c.i64(2).unwrap())
        })
        .collect()
}

async fn server(dir: &std::path::Path, scanner_timeout: Duration) -> shoal_server::RunningServer {
    let mut c = support::config(dir);
    c.thrift.scanner_timeout = scanner_timeout;
    shoal_server::start(c).await.unwrap()
}

async fn scan_all(c: &mut Client, id: i32) -> Vec<String> {
    let mut rows = Vec::new();
    loop {
        let got = c
            .ok(
                "scannerGetList",
                args().with(1, Value::I32(id)).with(2, Value::I32(3)),
            )
            .await
            .unwrap();
        let batch = rows_of(&got);
        if batch.is_empty() {
            return rows;
        }
        rows.extend(batch);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_answers_as_hbases_gateway_does() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path(), Duration::from_secs(60)).await;
    let addr = s.thrift_addr.unwrap();
    let mut c = Client::connect(addr, Protocol::Binary, Transport::Buffered).await;
    let t = || b("t");
    c.ok(
        "createTable",
        args()
            .with(1, t())
            .with(2, list(vec![family("cf1:", 3), family("cf2:", 1)])),
    )
    .await;
    assert_eq!(
        names_of(&c.ok("getTableNames", args()).await.unwrap()),
        vec!["t"]
    );
    assert_eq!(
        c.ok("isTableEnabled", args().with(1, t())).await,
        Some(Value::Bool(true))
    );
    let Some(Value::Map(_, _, fams)) = c.ok("getColumnDescriptors", args().with(1, t())).await
    else {
        panic!()
    };
    let names: Vec<String> = fams.iter().map(|(k, _)| text(k)).collect();
    assert_eq!(names, vec!["cf1:", "cf2:"]);
    assert_eq!(fams[0].1.as_struct().unwrap().i32(2), Some(3));

    // Writes: a row, a timestamped batch, then reads of every kind.
    c.ok(
        "mutateRow",
        args().with(1, t()).with(2, b("r1")).with(
            3,
            list(vec![
                mutation("cf1:a", Some("new")),
                mutation("cf2:b", Some("x")),
            ]),
        ),
    )
    .await;
    let batch =
        |row: &str, ms: Vec<Value>| Value::Struct(Struct::new().with(1, b(row)).with(2, list(ms)));
    c.ok(
        "mutateRowsTs",
        args()
            .with(1, t())
            .with(
                2,
                list(vec![
                    batch("r1", vec![mutation("cf1:a", Some("old"))]),
                    batch("r2", vec![mutation("cf1:a", Some("two"))]),
                ]),
            )
            .with(3, Value::I64(1000)),
    )
    .await;
    let get = |col: &str| args().with(1, t()).with(2, b("r1")).with(3, b(col));
    let got = c.ok("get", get("cf1:a")).await.unwrap();
    assert_eq!(cells_of(&got)[0].0, "new");
    let got = c
        .ok("getVer", get("cf1:a").with(4, Value::I32(5)))
        .await
        .unwrap();
    assert_eq!(cells_of(&got).len(), 2);
    assert_eq!(cells_of(&got)[1], ("old".into(), 1000));
    // *Ts reads mean [0, ts).
    let got = c
        .ok(
            "getVerTs",
            get("cf1:a")
                .with(4, Value::I64(1001))
                .with(5, Value::I32(5)),
        )
        .await
        .unwrap();
    assert_eq!(cells_of(&got), vec![("old".into(), 1000)]);
    let got = c
        .ok(
            "getVerTs",
            get("cf1:a")
                .with(4, Value::I64(1000))
                .with(5, Value::I32(5)),
        )
        .await
        .unwrap();
    assert!(cells_of(&got).is_empty());
    let row = args().with(1, t()).with(2, b("r1"));
    let got = c.ok("getRow", row.clone()).await.unwrap();
    assert_eq!(
        columns_of(&got),
        vec![("cf1:a".into(), "new".into()), ("cf2:b".into(), "x".into())]
    );
    let got = c
        .ok(
            "getRowWithColumns",
            row.clone().with(3, list(vec![b("cf2")])),
        )
        .await
        .unwrap();
    assert_eq!(columns_of(&got), vec![("cf2:b".into(), "x".into())]);
    let got = c
        .ok("getRowTs", row.clone().with(3, Value::I64(1001)))
        .await
        .unwrap();
    assert_eq!(columns_of(&got), vec![("cf1:a".into(), "old".into())]);
    let got = c
        .ok(
            "getRowWithColumnsTs",
            row.clone()
                .with(3, list(vec![b("cf2:b")]))
                .with(4, Value::I64(1001)),
        )
        .await
        .unwrap();
    assert!(columns_of(&got).is_empty(), "nothing before 1001 in cf2:b");
    let rows = args()
        .with(1, t())
        .with(2, list(vec![b("r1"), b("nope"), b("r2")]));
    assert_eq!(
        rows_of(&c.ok("getRows", rows.clone()).await.unwrap()),
        vec!["r1", "r2"],
        "absent rows are left out"
    );
    let got = c
        .ok(
            "getRowsWithColumns",
            rows.clone().with(3, list(vec![b("cf1:a")])),
        )
        .await
        .unwrap();
    assert_eq!(rows_of(&got), vec!["r1", "r2"]);
    let got = c
        .ok("getRowsTs", rows.clone().with(3, Value::I64(999)))
        .await
        .unwrap();
    assert!(rows_of(&got).is_empty());
    let got = c
        .ok(
            "getRowsWithColumnsTs",
            rows.with(3, list(vec![b("cf1")])).with(4, Value::I64(1001)),
        )
        .await
        .unwrap();
    assert_eq!(rows_of(&got), vec!["r1", "r2"]);

    // Counters, appends, check-and-put.
    let counter = args().with(1, t()).with(2, b("n")).with(3, b("cf1:c"));
    assert_eq!(
        c.ok("atomicIncrement", counter.clone().with(4, Value::I64(5)))
            .await,
        Some(Value::I64(5))
    );
    let inc = |by: i64| {
        Value::Struct(
            Struct::new()
                .with(1, t())
                .with(2, b("n"))
                .with(3, b("cf1:c"))
                .with(4, Value::I64(by)),
        )
    };
    c.ok("increment", args().with(1, inc(2))).await;
    c.ok("incrementRows", args().with(1, list(vec![inc(1), inc(1)])))
        .await;
    assert_eq!(
        c.ok("atomicIncrement", counter.with(4, Value::I64(0)))
            .await,
        Some(Value::I64(9))
    );
    let append = Value::Struct(
        Struct::new()
            .with(1, t())
            .with(2, b("r2"))
            .with(3, list(vec![b("cf1:a")]))
            .with(4, list(vec![b("+more")])),
    );
    let got = c.ok("append", args().with(1, append)).await.unwrap();
    assert_eq!(cells_of(&got)[0].0, "two+more");
    let cap = |value: Option<&str>, put: &str| {
        let mut a = args().with(1, t()).with(2, b("r2")).with(3, b("cf1:a"));
        if let Some(v) = value {
            a = a.with(5, b(v));
        }
        a.with(6, mutation("cf1:z", Some(put)))
    };
    assert_eq!(
        c.ok("checkAndPut", cap(Some("wrong"), "1")).await,
        Some(Value::Bool(false))
    );
    assert_eq!(
        c.ok("checkAndPut", cap(Some("two+more"), "2")).await,
        Some(Value::Bool(true))
    );
    assert_eq!(
        c.ok("checkAndPut", cap(None, "3")).await,
        Some(Value::Bool(false))
    );
    let got = c
        .ok(
            "get",
            args().with(1, t()).with(2, b("r2")).with(3, b("cf1:z")),
        )
        .await;
    assert_eq!(cells_of(&got.unwrap())[0].0, "2");

    // Scanners: start/stop, prefix, timestamps, TScan with a filter,
    // reversed, sorted columns and a batch size.
    c.ok(
        "mutateRows",
        args().with(1, t()).with(
            2,
            list(
                ["s1", "s2", "s3", "s4", "s5", "t1"]
                    .iter()
                    .map(|r| {
                        batch(
                            r,
                            vec![mutation("cf1:a", Some(r)), mutation("cf1:b", Some("v"))],
                        )
                    })
                    .collect(),
            ),
        ),
    )
    .await;
    let open = |name: &str, a: Struct| (name.to_string(), a);
    for ((name, a), want) in [
        (
            open(
                "scannerOpen",
                args()
                    .with(1, t())
                    .with(2, b("s3"))
                    .with(3, list(vec![b("cf1:a")])),
            ),
            vec!["s3", "s4", "s5", "t1"],
        ),
        (
            open(
                "scannerOpenWithStop",
                args()
                    .with(1, t())
                    .with(2, b("s2"))
                    .with(3, b("s4"))
                    .with(4, list(vec![])),
            ),
            vec!["s2", "s3"],
        ),
        (
            open(
                "scannerOpenWithPrefix",
                args().with(1, t()).with(2, b("s")).with(3, list(vec![])),
            ),
            vec!["s1", "s2", "s3", "s4", "s5"],
        ),
        (
            open(
                "scannerOpenTs",
                args()
                    .with(1, t())
                    .with(2, b("r"))
                    .with(3, list(vec![]))
                    .with(4, Value::I64(1001)),
            ),
            vec!["r1", "r2"],
        ),
        (
            open(
                "scannerOpenWithStopTs",
                args()
                    .with(1, t())
                    .with(2, b("r"))
                    .with(3, b("r2"))
                    .with(4, list(vec![]))
                    .with(5, Value::I64(1001)),
            ),
            vec!["r1"],
        ),
    ] {
        let Some(Value::I32(id)) = c.ok(&name, a).await else {
            panic!("{name}")
        };
        assert_eq!(scan_all(&mut c, id).await, want, "{name}");
        c.ok("scannerClose", args().with(1, Value::I32(id))).await;
    }
    let tscan = |s: Struct| args().with(1, t()).with(2, Value::Struct(s));
    let scan = Struct::new().with(1, b("s")).with(2, b("u")).with(
        6,
        b("RowFilter(>=, 'binary:s3') AND SingleColumnValueFilter('cf1', 'a', !=, 'binary:s4')"),
    );
    let Some(Value::I32(id)) = c.ok("scannerOpenWithScan", tscan(scan)).await else {
        panic!()
    };
    assert_eq!(scan_all(&mut c, id).await, vec!["s3", "s5", "t1"]);
    // Reversed: from the (inclusive) start down to the (exclusive) stop.
    let scan = Struct::new()
        .with(1, b("s4"))
        .with(2, b("s1"))
        .with(9, Value::Bool(true));
    let Some(Value::I32(id)) = c.ok("scannerOpenWithScan", tscan(scan)).await else {
        panic!()
    };
    assert_eq!(scan_all(&mut c, id).await, vec!["s4", "s3", "s2"]);
    // Sorted columns and a batch of one cell per result.
    let scan = Struct::new()
        .with(1, b("s1"))
        .with(2, b("s2"))
        .with(7, Value::I32(1))
        .with(8, Value::Bool(true));
    let Some(Value::I32(id)) = c.ok("scannerOpenWithScan", tscan(scan)).await else {
        panic!()
    };
    let got = c
        .ok(
            "scannerGetList",
            args().with(1, Value::I32(id)).with(2, Value::I32(10)),
        )
        .await
        .unwrap();
    let Value::List(_, results) = got else {
        panic!()
    };
    assert_eq!(results.len(), 2, "one result per cell with batchSize 1");
    let sorted = results[0].as_struct().unwrap().list(3).unwrap();
    assert_eq!(
        text(sorted[0].as_struct().unwrap().get(1).unwrap()),
        "cf1:a"
    );
    let got = c
        .ok("scannerGet", args().with(1, Value::I32(id)))
        .await
        .unwrap();
    assert!(rows_of(&got).is_empty(), "exhausted");

    // Deletes of every kind.
    let del = |name: &str, col: Option<&str>, ts: Option<i64>| {
        let mut a = args().with(1, t()).with(2, b("s1"));
        let mut next = 3;
        if let Some(col) = col {
            a = a.with(next, b(col));
            next += 1;
        }
        if let Some(ts) = ts {
            a = a.with(next, Value::I64(ts));
        }
        (name.to_string(), a)
    };
    for (name, a) in [
        del("deleteAllTs", Some("cf1:a"), Some(1)),
        del("deleteAll", Some("cf1:a"), None),
    ] {
        c.ok(&name, a).await;
    }
    let got = c
        .ok("getRow", args().with(1, t()).with(2, b("s1")))
        .await
        .unwrap();
    assert_eq!(columns_of(&got), vec![("cf1:b".into(), "v".into())]);
    let (name, a) = del("deleteAllRowTs", None, Some(1));
    c.ok(&name, a).await;
    assert!(
        !rows_of(
            &c.ok("getRow", args().with(1, t()).with(2, b("s1")))
                .await
                .unwrap()
        )
        .is_empty()
    );
    let (name, a) = del("deleteAllRow", None, None);
    c.ok(&name, a).await;
    assert!(
        rows_of(
            &c.ok("getRow", args().with(1, t()).with(2, b("s1")))
                .await
                .unwrap()
        )
        .is_empty()
    );
    c.ok(
        "mutateRowTs",
        args()
            .with(1, t())
            .with(2, b("s2"))
            .with(3, list(vec![mutation("cf1", None)]))
            .with(4, Value::I64(i64::MAX - 1)),
    )
    .await;
    let got = c
        .ok("getRow", args().with(1, t()).with(2, b("s2")))
        .await
        .unwrap();
    assert!(rows_of(&got).is_empty(), "a bare family deletes the family");

    // Regions, compaction, row-or-before, region info, disable, delete.
    let Some(Value::List(_, regions)) = c.ok("getTableRegions", args().with(1, t())).await else {
        panic!()
    };
    assert_eq!(regions.len(), 1);
    let name = regions[0].as_struct().unwrap().binary(4).unwrap().clone();
    c.ok("compact", args().with(1, t())).await;
    c.ok("majorCompact", args().with(1, Value::Binary(name.clone())))
        .await;
    let got = c
        .ok(
            "getRowOrBefore",
            args().with(1, t()).with(2, b("s45")).with(3, b("cf1")),
        )
        .await
        .unwrap();
    assert_eq!(cells_of(&got)[0].0, "s4");
    let info = c
        .ok("getRegionInfo", args().with(1, b("t,s3,x")))
        .await
        .unwrap();
    assert_eq!(info.as_struct().unwrap().binary(4), Some(&name));
    c.ok("disableTable", args().with(1, t())).await;
    assert_eq!(
        c.ok("isTableEnabled", args().with(1, t())).await,
        Some(Value::Bool(false))
    );
    c.ok("deleteTable", args().with(1, t())).await;
    assert!(names_of(&c.ok("getTableNames", args()).await.unwrap()).is_empty());
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_hbases_exceptions() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path(), Duration::from_secs(60)).await;
    let mut c = Client::connect(s.thrift_addr.unwrap(), Protocol::Compact, Transport::Framed).await;
    let create = args().with(1, b("t")).with(2, list(vec![family("cf:", 1)]));
    c.ok("createTable", create.clone()).await;
    let (field, msg) = c.fails("createTable", create).await;
    assert_eq!(field, 3, "AlreadyExists: {msg}");
    let (field, msg) = c
        .fails("createTable", args().with(1, b("u")).with(2, list(vec![])))
        .await;
    assert_eq!(field, 2, "IllegalArgument: {msg}");
    let (field, msg) = c
        .fails("getRow", args().with(1, b("missing")).with(2, b("r")))
        .await;
    assert_eq!(field, 1, "IOError");
    assert!(msg.contains("missing"), "{msg}");
    let (field, msg) = c
        .fails("scannerGet", args().with(1, Value::I32(12345)))
        .await;
    assert_eq!(field, 2, "IllegalArgument for an unknown scanner: {msg}");
    let (field, msg) = c.fails("noSuchMethod", args()).await;
    assert_eq!(field, -1, "TApplicationException");
    assert!(msg.contains("noSuchMethod"), "{msg}");
    let scan = Struct::new().with(6, b("FuzzyRowFilter('x')"));
    let (field, msg) = c
        .fails(
            "scannerOpenWithScan",
            args().with(1, b("t")).with(2, Value::Struct(scan)),
        )
        .await;
    assert_eq!(field, 1);
    assert_eq!(msg, "filter FuzzyRowFilter is not supported");
    let (field, _) = c
        .fails(
            "mutateRow",
            args()
                .with(1, b("t"))
                .with(2, b("r"))
                .with(3, list(vec![mutation(":q", Some("v"))])),
        )
        .await;
    assert_eq!(field, 2, "a column without a family");
    let (field, msg) = c
        .fails(
            "mutateRow",
            args()
                .with(1, b("t"))
                .with(2, b("r"))
                .with(3, list(vec![mutation("nofamily:q", Some("v"))])),
        )
        .await;
    assert_eq!(field, 1, "{msg}");
    // A namespaced table is `ns:t`, once its namespace exists.
    let ns_table = || {
        args()
            .with(1, b("tns:t"))
            .with(2, list(vec![family("cf:", 1)]))
    };
    let (field, msg) = c.fails("createTable", ns_table()).await;
    assert_eq!(field, 1, "IOError for a missing namespace: {msg}");
    assert!(msg.contains("namespace"), "{msg}");
    s.host
        .create_namespace("tns", Default::default())
        .await
        .unwrap();
    c.ok("createTable", ns_table()).await;
    c.ok(
        "mutateRow",
        args()
            .with(1, b("tns:t"))
            .with(2, b("r"))
            .with(3, list(vec![mutation("cf:q", Some("v"))])),
    )
    .await;
    let row = c
        .ok("getRow", args().with(1, b("tns:t")).with(2, b("r")))
        .await
        .unwrap();
    assert_eq!(rows_of(&row), vec!["r"]);
    let names = names_of(&c.ok("getTableNames", args()).await.unwrap());
    assert!(names.contains(&"tns:t".to_string()), "{names:?}");
    // The connection is still good after all of that.
    c.ok("getTableNames", args()).await;
    // Thrift calls count in the server's request metrics.
    let m = s.host.requests().snapshot();
    let get = m.op(shoal_server::metrics::RequestOp::Get).unwrap();
    assert!(get.count >= 1 && get.errors >= 1, "{get:?}");
    let admin = m.op(shoal_server::metrics::RequestOp::Admin).unwrap();
    assert!(admin.count >= 3, "{admin:?}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_scanners_expire_and_closed_ones_are_gone() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path(), Duration::from_secs(1)).await;
    let mut c = Client::connect(
        s.thrift_addr.unwrap(),
        Protocol::Binary,
        Transport::Buffered,
    )
    .await;
    c.ok(
        "createTable",
        args().with(1, b("t")).with(2, list(vec![family("cf:", 1)])),
    )
    .await;
    c.ok(
        "mutateRow",
        args()
            .with(1, b("t"))
            .with(2, b("r"))
            .with(3, list(vec![mutation("cf:q", Some("v"))])),
    )
    .await;
    let open = args().with(1, b("t")).with(2, b("")).with(3, list(vec![]));
    let Some(Value::I32(idle)) = c.ok("scannerOpen", open.clone()).await else {
        panic!()
    };
    let Some(Value::I32(used)) = c.ok("scannerOpen", open).await else {
        panic!()
    };
    // Used every half second: kept past the timeout.
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        c.ok(
            "scannerGetList",
            args().with(1, Value::I32(used)).with(2, Value::I32(0)),
        )
        .await;
    }
    let (field, msg) = c
        .fails("scannerGet", args().with(1, Value::I32(idle)))
        .await;
    assert_eq!(field, 2, "{msg}");
    assert!(msg.contains("expired") || msg.contains("invalid"), "{msg}");
    let got = c
        .ok("scannerGet", args().with(1, Value::I32(used)))
        .await
        .unwrap();
    assert_eq!(rows_of(&got), vec!["r"]);
    c.ok("scannerClose", args().with(1, Value::I32(used))).await;
    let (field, _) = c
        .fails("scannerClose", args().with(1, Value::I32(used)))
        .await;
    assert_eq!(field, 2);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bytes_close_only_their_connection() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path(), Duration::from_secs(60)).await;
    let addr = s.thrift_addr.unwrap();
    let mut c = Client::connect(addr, Protocol::Binary, Transport::Buffered).await;
    c.ok(
        "createTable",
        args().with(1, b("t")).with(2, list(vec![family("cf:", 1)])),
    )
    .await;
    c.ok(
        "mutateRow",
        args()
            .with(1, b("t"))
            .with(2, b("keep"))
            .with(3, list(vec![mutation("cf:q", Some("v"))])),
    )
    .await;
    let call_head = |len: [u8; 4]| {
        let mut v = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 6];
        v.extend_from_slice(b"getRow");
        v.extend_from_slice(&[0, 0, 0, 1, 11, 0, 1]);
        v.extend_from_slice(&len);
        v
    };
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("HTTP", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        (
            "random bytes",
            (0..200u32).map(|i| (i * 7919 % 251) as u8).collect(),
        ),
        ("a 2 GiB string", call_head([0x7f, 0xff, 0xff, 0xff])),
        ("a negative length", call_head([0xff, 0xff, 0xff, 0xf0])),
        (
            "a frame over the limit",
            vec![0x7f, 0xff, 0xff, 0xff, 0x80, 0x01],
        ),
        ("a frame cut short", {
            let mut v = vec![0, 0, 0, 50, 0x80, 0x01, 0x00, 0x01];
            v.extend_from_slice(&[0, 0, 0, 13]);
            v
        }),
        ("a bad field type", {
            let mut v = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 1, b'x', 0, 0, 0, 1];
            v.push(99);
            v
        }),
    ];
    for (what, bytes) in inputs {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(&bytes).await.unwrap();
        // The frame cut short waits for the rest: close our side.
        if what == "a frame cut short" {
            tcp.shutdown().await.unwrap();
        }
        let mut sink = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut sink)).await;
        assert!(read.is_ok(), "{what}: the server closed the connection");
        // The server is up and the data intact, on the old connection too.
        let got = c
            .ok("getRow", args().with(1, b("t")).with(2, b("keep")))
            .await
            .unwrap();
        assert_eq!(rows_of(&got), vec!["keep"], "{what}");
    }
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_call_sent_in_pieces_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path(), Duration::from_secs(60)).await;
    let addr = s.thrift_addr.unwrap();
    let mut c = Client::connect(addr, Protocol::Binary, Transport::Buffered).await;
    c.ok(
        "createTable",
        args().with(1, b("t")).with(2, list(vec![family("cf:", 1)])),
    )
    .await;
    // A 3 MiB put in 100 KiB pieces, some right after another, some after
    // a pause: the server waits for the whole message either way.
    let value = "v".repeat(3 << 20);
    let call = Message {
        name: "mutateRow".into(),
        kind: MessageType::Call,
        seqid: 1,
        body: args()
            .with(1, b("t"))
            .with(2, b("big"))
            .with(3, list(vec![mutation("cf:q", Some(&value))])),
    };
    let mut out = Vec::new();
    wire::encode(&call, Protocol::Binary, Transport::Buffered, &mut out);
    let mut raw = TcpStream::connect(addr).await.unwrap();
    for (i, piece) in out.chunks(100 << 10).enumerate() {
        raw.write_all(piece).await.unwrap();
        if i % 3 == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let mut reply = BytesMut::new();
    let answer = loop {
        let view = Bytes::copy_from_slice(&reply);
        if let Some((m, _)) = wire::decode(
            &view,
            Protocol::Binary,
            Transport::Buffered,
            &Limits::default(),
        )
        .unwrap()
        {
            break m;
        }
        assert!(raw.read_buf(&mut reply).await.unwrap() > 0);
    };
    assert_eq!(answer.kind, MessageType::Reply);
    assert!(answer.body.fields.is_empty(), "{:?}", answer.body);
    let got = c
        .ok(
            "get",
            args().with(1, b("t")).with(2, b("big")).with(3, b("cf:q")),
        )
        .await
        .unwrap();
    assert_eq!(cells_of(&got)[0].0.len(), 3 << 20);
    s.shutdown().await;
}
