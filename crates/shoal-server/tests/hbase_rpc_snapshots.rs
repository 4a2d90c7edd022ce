//! MasterService's snapshot calls on the wire, from a raw client: a
//! snapshot answers a procedure id (FINISHED) when the request carries a
//! nonce and none without (the client then polls `IsSnapshotDone`); the
//! listing describes each snapshot as HBase does; `RestoreSnapshot`
//! clones into a new table and restores a disabled one; and bad input
//! (malformed requests, missing names and tables, names HBase refuses,
//! unknown snapshots and namespaces, `hbase:meta`) gets HBase's exception,
//! the server still answering. The stock Java client is run against
//! `shoal serve` and a real HBase by `shoal-cli/tests/hbase_snapshot_e2e.rs`.

#![allow(clippy::unwrap_used)]

mod support;

#[path = "support/native.rs"]
mod native;

use bytes::Bytes;
use native::Conn;
use prost::Message;
use shoal_proto::hbase as pb;

const DO_NOT_RETRY: &str = "org.apache.hadoop.hbase.DoNotRetryIOException";

fn snapshot(name: &str, table: Option<&str>) -> pb::SnapshotDescription {
    pb::SnapshotDescription {
        name: name.to_string(),
        table: table.map(str::to_string),
        ..Default::default()
    }
}

fn table_name(name: &str) -> pb::TableName {
    pb::TableName {
        namespace: Bytes::from_static(b"default"),
        qualifier: Bytes::copy_from_slice(name.as_bytes()),
    }
}

/// A call's exception class, or None when it answered.
async fn fails(m: &mut Conn, method: &str, param: &impl Message) -> Option<String> {
    m.call(method, param, &[]).await.exception()
}

async fn take(m: &mut Conn, name: &str, table: &str, nonce: bool) -> pb::SnapshotResponse {
    let a = m
        .call(
            "Snapshot",
            &pb::SnapshotRequest {
                snapshot: snapshot(name, Some(table)),
                nonce_group: nonce.then_some(7),
                nonce: nonce.then_some(11),
            },
            &[],
        )
        .await;
    assert_eq!(a.exception(), None, "snapshot {name} of {table}");
    pb::SnapshotResponse::decode(a.message).unwrap()
}

async fn listed(m: &mut Conn) -> Vec<pb::SnapshotDescription> {
    let a = m
        .call(
            "GetCompletedSnapshots",
            &pb::GetCompletedSnapshotsRequest {},
            &[],
        )
        .await;
    assert_eq!(a.exception(), None);
    pb::GetCompletedSnapshotsResponse::decode(a.message)
        .unwrap()
        .snapshots
}

async fn restore(m: &mut Conn, name: &str, table: Option<&str>) -> Option<String> {
    let r = pb::RestoreSnapshotRequest {
        snapshot: snapshot(name, table),
        ..Default::default()
    };
    fails(m, "RestoreSnapshot", &r).await
}

async fn table_change(m: &mut Conn, method: &str, table: &str) {
    let a = match method {
        "CreateTable" => {
            let r = pb::CreateTableRequest {
                table_schema: pb::TableSchema {
                    table_name: Some(table_name(table)),
                    column_families: vec![pb::ColumnFamilySchema {
                        name: Bytes::from_static(b"cf"),
                        ..Default::default()
                    }],
                    ..Default::default()
                },
                split_keys: vec![Bytes::from_static(b"m")],
                ..Default::default()
            };
            m.call(method, &r, &[]).await
        }
        _ => {
            let r = pb::DisableTableRequest {
                table_name: table_name(table),
                ..Default::default()
            };
            m.call(method, &r, &[]).await
        }
    };
    assert_eq!(a.exception(), None, "{method} {table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_calls_answer_and_bad_input_gets_hbase_exceptions() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(support::config(dir.path()))
        .await
        .unwrap();
    let addr = server.hbase_rpc_addr.unwrap();
    let mut m = Conn::open(addr, "MasterService", false).await;
    table_change(&mut m, "CreateTable", "t").await;
    table_change(&mut m, "CreateTable", "other").await;

    // With a nonce (HBase 2.5/2.6's client): a procedure id, FINISHED.
    let with = take(&mut m, "s1", "t", true).await;
    let proc_id = with.proc_id.expect("a procedure id");
    let a = m
        .call(
            "getProcedureResult",
            &pb::GetProcedureResultRequest {
                proc_id: proc_id as u64,
            },
            &[],
        )
        .await;
    let result = pb::GetProcedureResultResponse::decode(a.message).unwrap();
    assert_eq!(result.state, 2, "FINISHED");
    // Without (older clients): none; the client polls IsSnapshotDone.
    let without = take(&mut m, "s2", "default:t", false).await;
    assert_eq!(without.proc_id, None);
    assert!(without.expected_timeout > 0);
    let a = m
        .call(
            "IsSnapshotDone",
            &pb::IsSnapshotDoneRequest {
                snapshot: Some(snapshot("s2", Some("t"))),
            },
            &[],
        )
        .await;
    assert_eq!(a.exception(), None);
    assert_eq!(
        pb::IsSnapshotDoneResponse::decode(a.message).unwrap().done,
        Some(true)
    );
    // Every type takes the same cut.
    let skip = pb::SnapshotRequest {
        snapshot: pb::SnapshotDescription {
            r#type: Some(pb::snapshot_description::Type::Skipflush as i32),
            ttl: Some(3600),
            ..snapshot("s3", Some("t"))
        },
        ..Default::default()
    };
    assert_eq!(fails(&mut m, "Snapshot", &skip).await, None);

    let all = listed(&mut m).await;
    let names: Vec<&str> = all.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["s1", "s2", "s3"]);
    for d in &all {
        assert_eq!(d.table.as_deref(), Some("t"), "as HBase writes it");
        assert_eq!(d.r#type, Some(pb::snapshot_description::Type::Flush as i32));
        assert_eq!(d.version, Some(2));
        assert_eq!(d.ttl, Some(0), "a TTL is not kept");
        assert!(d.creation_time.unwrap_or(0) > 0);
    }

    // Bad input: HBase's exception each time.
    let snap = "org.apache.hadoop.hbase.snapshot.";
    let long = "x".repeat(300);
    let cases: Vec<(&str, Option<&str>, String)> = vec![
        ("", Some("t"), DO_NOT_RETRY.into()),
        ("bad name", Some("t"), DO_NOT_RETRY.into()),
        (".hidden", Some("t"), DO_NOT_RETRY.into()),
        (long.as_str(), Some("t"), DO_NOT_RETRY.into()),
        ("s9", None, DO_NOT_RETRY.into()),
        ("s9", Some(""), DO_NOT_RETRY.into()),
        ("s9", Some("hbase:meta"), DO_NOT_RETRY.into()),
        // A table in a namespace that does not exist is a table that
        // does not exist (HBase's SnapshotManager checks only the table).
        (
            "s9",
            Some("nons:t"),
            format!("{snap}SnapshotCreationException"),
        ),
        (
            "s9",
            Some("missing"),
            format!("{snap}SnapshotCreationException"),
        ),
        ("s1", Some("t"), format!("{snap}SnapshotExistsException")),
    ];
    for (name, table, want) in &cases {
        let r = pb::SnapshotRequest {
            snapshot: snapshot(name, *table),
            ..Default::default()
        };
        assert_eq!(
            fails(&mut m, "Snapshot", &r).await.as_deref(),
            Some(want.as_str()),
            "snapshot {name:?} of {table:?}"
        );
    }
    // A malformed SnapshotDescription (field 1 of each request).
    let garbage = pb::BytesBytesPair {
        first: Bytes::from_static(&[0xff; 9]),
        second: Bytes::new(),
    };
    for method in [
        "Snapshot",
        "IsSnapshotDone",
        "DeleteSnapshot",
        "RestoreSnapshot",
    ] {
        assert_eq!(
            fails(&mut m, method, &garbage).await.as_deref(),
            Some(DO_NOT_RETRY),
            "{method}"
        );
    }
    let unknown = format!("{snap}UnknownSnapshotException");
    let r = pb::IsSnapshotDoneRequest { snapshot: None };
    assert_eq!(
        fails(&mut m, "IsSnapshotDone", &r).await,
        Some(unknown.clone())
    );
    let r = pb::IsSnapshotDoneRequest {
        snapshot: Some(snapshot("nope", Some("t"))),
    };
    assert_eq!(fails(&mut m, "IsSnapshotDone", &r).await, Some(unknown));
    let missing = format!("{snap}SnapshotDoesNotExistException");
    let r = pb::DeleteSnapshotRequest {
        snapshot: snapshot("nope", None),
    };
    assert_eq!(
        fails(&mut m, "DeleteSnapshot", &r).await,
        Some(missing.clone())
    );
    assert_eq!(restore(&mut m, "nope", Some("t9")).await, Some(missing));
    assert_eq!(
        restore(&mut m, "s1", None).await.as_deref(),
        Some(DO_NOT_RETRY)
    );
    assert_eq!(
        restore(&mut m, "s1", Some("bad table!")).await.as_deref(),
        Some(DO_NOT_RETRY)
    );
    assert_eq!(
        restore(&mut m, "s1", Some("other")).await.as_deref(),
        Some("org.apache.hadoop.hbase.TableExistsException")
    );
    assert_eq!(
        restore(&mut m, "s1", Some("t")).await.as_deref(),
        Some("org.apache.hadoop.hbase.TableNotDisabledException")
    );

    // A clone (a new table, enabled), and a restore of the disabled table.
    assert_eq!(restore(&mut m, "s1", Some("copy")).await, None);
    let a = m
        .call(
            "GetTableState",
            &pb::GetTableStateRequest {
                table_name: table_name("copy"),
            },
            &[],
        )
        .await;
    let state = pb::GetTableStateResponse::decode(a.message).unwrap();
    assert_eq!(state.table_state.state, 0, "ENABLED");
    table_change(&mut m, "DisableTable", "t").await;
    assert_eq!(restore(&mut m, "s2", Some("default:t")).await, None);

    // Deleted: gone from the list; the server answers on.
    let r = pb::DeleteSnapshotRequest {
        snapshot: snapshot("s1", None),
    };
    assert_eq!(fails(&mut m, "DeleteSnapshot", &r).await, None);
    let names: Vec<String> = listed(&mut m).await.into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["s2", "s3"]);
    server.shutdown().await;
}
