//! The server in-process, driven through the raw gRPC stubs: tables, rows,
//! scans across regions, splits (manual and under load), admin errors,
//! restart. (End-to-end tests of the binary with the client and the shell
//! live in the cli crate.)

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use shoal_proto::v1 as pb;
use shoal_server::ServerConfig;
use std::path::Path;

mod support;

/// The shared test server with small flushes and no automatic splits.
fn config(dir: &Path) -> ServerConfig {
    let mut c = support::config(dir);
    c.regions.flush_size = shoal_server::config::ByteSize(1 << 20);
    c.regions.split_check_interval = std::time::Duration::from_secs(3600);
    c
}

use support::{Clients, clients, family};

fn put(row: &str, q: &str, v: &str) -> pb::RowMutation {
    pb::RowMutation {
        row: row.as_bytes().to_vec().into(),
        mutations: vec![pb::Mutation {
            kind: Some(pb::mutation::Kind::Put(pb::Put {
                family: b"cf".to_vec().into(),
                qualifier: q.as_bytes().to_vec().into(),
                timestamp: None,
                value: v.as_bytes().to_vec().into(),
            })),
        }],
    }
}

async fn create(c: &mut Clients, name: &str, splits: &[&str]) {
    c.admin
        .create_table(pb::CreateTableRequest {
            name: name.into(),
            families: vec![family("cf")],
            split_keys: splits.iter().map(|s| s.as_bytes().to_vec()).collect(),
        })
        .await
        .unwrap();
}

async fn write(c: &mut Clients, table: &str, row: &str, v: &str) {
    c.data
        .mutate(pb::MutateRequest {
            table: table.into(),
            mutation: Some(put(row, "q", v)),
        })
        .await
        .unwrap();
}

async fn read(c: &mut Clients, table: &str, row: &str) -> Option<String> {
    let r = c
        .data
        .get(pb::GetRequest {
            table: table.into(),
            get: Some(pb::GetSpec {
                row: row.as_bytes().to_vec().into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    r.row.and_then(|r| {
        r.cells
            .first()
            .map(|c| String::from_utf8(c.value.to_vec()).unwrap())
    })
}

async fn scan(c: &mut Clients, req: pb::ScanRequest) -> Vec<String> {
    let mut stream = c.data.scan(req).await.unwrap().into_inner();
    let mut rows = Vec::new();
    while let Some(msg) = stream.message().await.unwrap() {
        for r in msg.rows {
            rows.push(String::from_utf8(r.row.to_vec()).unwrap());
        }
    }
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_scans_and_presplit_regions() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t", &["g", "p"]).await;
    for k in ["a", "f", "g", "h", "o", "p", "z"] {
        write(&mut c, "t", k, &format!("v-{k}")).await;
    }
    assert_eq!(read(&mut c, "t", "h").await.as_deref(), Some("v-h"));
    assert_eq!(read(&mut c, "t", "nope").await, None);
    let all = scan(
        &mut c,
        pb::ScanRequest {
            table: "t".into(),
            rows_per_message: 2,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(all, ["a", "f", "g", "h", "o", "p", "z"]);
    let rev = scan(
        &mut c,
        pb::ScanRequest {
            table: "t".into(),
            start_row: b"b".to_vec(),
            stop_row: b"q".to_vec(),
            reverse: true,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(rev, ["p", "o", "h", "g", "f"]);
    let limited = scan(
        &mut c,
        pb::ScanRequest {
            table: "t".into(),
            start_row: b"c".to_vec(),
            limit: 3,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(limited, ["f", "g", "h"]);
    let d = c
        .admin
        .describe_table(pb::TableRequest { name: "t".into() })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert_eq!(d.regions.len(), 3);
    server.shutdown().await;

    // Everything is back after a restart.
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    assert_eq!(read(&mut c, "t", "z").await.as_deref(), Some("v-z"));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_under_load_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t", &[]).await;
    for i in 0..2000 {
        write(&mut c, "t", &format!("row{i:05}"), &format!("{i}")).await;
    }
    // Writers keep going while the table splits twice.
    let writer = {
        let mut c = clients(&server).await;
        tokio::spawn(async move {
            for i in 2000..3000 {
                write(&mut c, "t", &format!("row{i:05}"), &format!("{i}")).await;
            }
        })
    };
    let split = c
        .admin
        .split(pb::SplitRequest {
            table: "t".into(),
            split_row: Some(b"row01000".to_vec()),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(split.regions.len(), 2);
    // The children read the parent's files until their compactions (which
    // start in the background right after the split); a child with
    // references does not split again. On a loaded machine the compaction
    // may already be done, and then the split is allowed.
    let again = c
        .admin
        .split(pb::SplitRequest {
            table: "t".into(),
            split_row: Some(b"row00500".to_vec()),
        })
        .await;
    if let Err(e) = again {
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(e.message().contains("compaction"), "{}", e.message());
    }
    c.admin
        .compact(pb::CompactRequest {
            table: "t".into(),
            major: true,
        })
        .await
        .unwrap();
    c.admin
        .split(pb::SplitRequest {
            table: "t".into(),
            split_row: None,
        })
        .await
        .unwrap();
    writer.await.unwrap();
    let rows = scan(
        &mut c,
        pb::ScanRequest {
            table: "t".into(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(rows.len(), 3000);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r, &format!("row{i:05}"));
    }
    let d = c
        .admin
        .describe_table(pb::TableRequest { name: "t".into() })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert!(d.regions.len() >= 3, "{:?}", d.regions.len());
    server.shutdown().await;

    // After a restart, the children still serve every row; after their
    // compactions the parents' files go.
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    for i in (0..3000).step_by(97) {
        assert_eq!(
            read(&mut c, "t", &format!("row{i:05}")).await,
            Some(format!("{i}"))
        );
    }
    c.admin
        .compact(pb::CompactRequest {
            table: "t".into(),
            major: true,
        })
        .await
        .unwrap();
    server.host.check_regions().await;
    let d = server.host.describe_table("t").await.unwrap();
    assert!(d.split_parents.is_empty(), "{:?}", d.split_parents);
    let rows = scan(
        &mut c,
        pb::ScanRequest {
            table: "t".into(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(rows.len(), 3000);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_errors_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    let code = |r: Result<tonic::Response<pb::AdminResponse>, tonic::Status>| {
        r.map(|_| ()).unwrap_err().code()
    };
    let e = c
        .data
        .get(pb::GetRequest {
            table: "missing".into(),
            get: Some(pb::GetSpec {
                row: b"r".to_vec().into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound);
    assert!(e.message().contains("missing"), "{}", e.message());
    let e = c
        .admin
        .create_table(pb::CreateTableRequest {
            name: "bad name".into(),
            families: vec![family("cf")],
            split_keys: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    create(&mut c, "t", &[]).await;
    let e = c
        .admin
        .create_table(pb::CreateTableRequest {
            name: "t".into(),
            families: vec![family("cf")],
            split_keys: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::AlreadyExists);
    let e = c
        .data
        .mutate(pb::MutateRequest {
            table: "t".into(),
            mutation: Some(pb::RowMutation {
                row: b"r".to_vec().into(),
                mutations: vec![pb::Mutation {
                    kind: Some(pb::mutation::Kind::Put(pb::Put {
                        family: b"nope".to_vec().into(),
                        qualifier: b"q".to_vec().into(),
                        timestamp: None,
                        value: b"v".to_vec().into(),
                    })),
                }],
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound);
    assert!(e.message().contains("nope"), "{}", e.message());
    assert_eq!(
        code(
            c.admin
                .drop_table(pb::TableRequest { name: "t".into() })
                .await
        ),
        tonic::Code::FailedPrecondition
    );
    c.admin
        .disable_table(pb::TableRequest { name: "t".into() })
        .await
        .unwrap();
    let e = c
        .data
        .get(pb::GetRequest {
            table: "t".into(),
            get: Some(pb::GetSpec {
                row: b"r".to_vec().into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition);
    c.admin
        .drop_table(pb::TableRequest { name: "t".into() })
        .await
        .unwrap();
    let tables = c
        .admin
        .list_tables(pb::ListTablesRequest {})
        .await
        .unwrap()
        .into_inner()
        .tables;
    assert!(tables.is_empty());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regions_split_by_themselves_past_the_split_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    cfg.regions.split_size = shoal_server::config::ByteSize(1 << 20);
    let server = shoal_server::start(cfg).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t", &[]).await;
    // Values that do not compress, so the files really pass the split size.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..3000 {
        let value: String = (0..1000)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (b'!' + (x >> 58) as u8) as char
            })
            .collect();
        write(&mut c, "t", &format!("row{i:05}"), &value).await;
    }
    // The periodic check (hourly in this config) is run by hand.
    server.host.check_regions().await;
    let regions = server.host.describe_table("t").await.unwrap().regions;
    assert!(regions.len() >= 2, "{regions:?}");
    let rows = scan(
        &mut c,
        pb::ScanRequest {
            table: "t".into(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(rows.len(), 3000);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_open_across_the_parent_cleanup_still_reads_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    // No cache: every block must come from the files themselves.
    cfg.cache.enabled = false;
    let server = shoal_server::start(cfg).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t", &[]).await;
    for i in 0..3000 {
        write(&mut c, "t", &format!("row{i:05}"), &"v".repeat(200)).await;
    }
    c.admin
        .split(pb::SplitRequest {
            table: "t".into(),
            split_row: Some(b"row01500".to_vec()),
        })
        .await
        .unwrap();
    // A slow reader: one row per message, and it stops after the first.
    let mut stream = c
        .data
        .scan(pb::ScanRequest {
            table: "t".into(),
            rows_per_message: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut rows = stream.message().await.unwrap().unwrap().rows.len();
    // The children compact away the parent's files and the janitor runs.
    c.admin
        .compact(pb::CompactRequest {
            table: "t".into(),
            major: true,
        })
        .await
        .unwrap();
    server.host.check_regions().await;
    while let Some(msg) = stream.message().await.unwrap() {
        rows += msg.rows.len();
    }
    assert_eq!(rows, 3000);
    // Once nobody reads them, the parent's files go.
    server.host.check_regions().await;
    let d = server.host.describe_table("t").await.unwrap();
    assert!(d.split_parents.is_empty(), "{:?}", d.split_parents);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_region_map_lists_every_region_with_its_server_and_follows_splits() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    create(&mut c, "t", &["g", "p"]).await;
    let map = |c: &mut Clients| {
        let mut data = c.data.clone();
        async move {
            data.region_map(pb::RegionMapRequest { table: "t".into() })
                .await
                .unwrap()
                .into_inner()
        }
    };
    let m = map(&mut c).await;
    let bounds: Vec<(&[u8], &[u8])> = m
        .regions
        .iter()
        .map(|r| (&r.start_row[..], &r.end_row[..]))
        .collect();
    assert_eq!(
        bounds,
        [(&b""[..], &b"g"[..]), (b"g", b"p"), (b"p", b"")],
        "{m:?}"
    );
    let here = server.grpc_addr.to_string();
    assert!(
        m.regions
            .iter()
            .all(|r| r.server == here && !r.region_id.is_empty())
    );
    assert_eq!(m.answered_by, here);
    write(&mut c, "t", "k", "v").await;
    c.admin
        .split(pb::SplitRequest {
            table: "t".into(),
            split_row: Some(b"k".to_vec()),
        })
        .await
        .unwrap();
    let m = map(&mut c).await;
    let starts: Vec<&[u8]> = m.regions.iter().map(|r| &r.start_row[..]).collect();
    assert_eq!(starts, [&b""[..], b"g", b"k", b"p"]);
    let status = c
        .data
        .region_map(pb::RegionMapRequest {
            table: "nope".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound);
    server.shutdown().await;
}

/// `server.noop` (a measuring tool): writes are acknowledged and dropped,
/// gets answer empty rows, limits still apply, admin calls work; after a
/// restart without it, nothing written meanwhile exists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noop_mode_acknowledges_and_drops() {
    let dir = tempfile::tempdir().unwrap();
    {
        let server = shoal_server::start(config(dir.path())).await.unwrap();
        let mut c = clients(&server).await;
        create(&mut c, "t", &["m"]).await;
        write(&mut c, "t", "real", "kept").await;
        server.shutdown().await;
    }
    let mut cfg = config(dir.path());
    cfg.server.noop = true;
    let server = shoal_server::start(cfg).await.unwrap();
    let mut c = clients(&server).await;
    write(&mut c, "t", "a", "dropped").await;
    assert_eq!(read(&mut c, "t", "a").await, None, "a no-op get is empty");
    assert_eq!(
        read(&mut c, "t", "real").await,
        None,
        "even for stored rows"
    );
    let many = c
        .data
        .multi_mutate(pb::MultiMutateRequest {
            table: "t".into(),
            mutations: vec![put("b", "q", "x"), put("", "q", "x")],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(many.results.len(), 2);
    assert_eq!(many.results[0].code, 0);
    assert_ne!(many.results[1].code, 0, "an empty row is still refused");
    // Admin calls are real.
    create(&mut c, "u", &[]).await;
    server.shutdown().await;

    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    assert_eq!(read(&mut c, "t", "real").await.as_deref(), Some("kept"));
    assert_eq!(
        read(&mut c, "t", "a").await,
        None,
        "no-op writes never existed"
    );
    assert_eq!(read(&mut c, "t", "b").await, None);
    let tables = c
        .admin
        .list_tables(pb::ListTablesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(tables.tables.len(), 2, "{tables:?}");
    server.shutdown().await;
}

/// Namespaces: made, listed, described, holding tables named `ns:t` whose
/// objects live under the namespace; `default:t` is `t`; a missing
/// namespace, a second one of a name, a non-empty drop and the built-in
/// ones answer typed errors; everything survives a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_hold_tables() {
    let dir = tempfile::tempdir().unwrap();
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    let ns = |name: &str| pb::Namespace {
        name: name.into(),
        properties: [("k".to_string(), "v".to_string())].into(),
    };
    let missing = c
        .admin
        .create_table(pb::CreateTableRequest {
            name: "ns1:t".into(),
            families: vec![family("cf")],
            split_keys: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    assert!(
        missing.message().contains("namespace"),
        "{}",
        missing.message()
    );
    c.admin.create_namespace(ns("ns1")).await.unwrap();
    let again = c.admin.create_namespace(ns("ns1")).await.unwrap_err();
    assert_eq!(again.code(), tonic::Code::AlreadyExists);
    let bad = c.admin.create_namespace(ns("bad-name")).await.unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
    create(&mut c, "ns1:t", &["m"]).await;
    create(&mut c, "default:plain", &[]).await;
    write(&mut c, "ns1:t", "a", "in-ns").await;
    write(&mut c, "plain", "a", "default").await;
    assert_eq!(read(&mut c, "ns1:t", "a").await.as_deref(), Some("in-ns"));
    assert_eq!(
        read(&mut c, "default:plain", "a").await.as_deref(),
        Some("default")
    );
    let e = c
        .data
        .get(pb::GetRequest {
            table: "ns2:t".into(),
            get: Some(pb::GetSpec {
                row: b"a".to_vec().into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound);
    let all = c
        .admin
        .list_namespaces(pb::ListNamespacesRequest {})
        .await
        .unwrap()
        .into_inner()
        .namespaces;
    let names: Vec<&str> = all.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["default", "hbase", "ns1"]);
    assert_eq!(all[2].properties.get("k").map(String::as_str), Some("v"));
    let tables = c
        .admin
        .list_tables(pb::ListTablesRequest {})
        .await
        .unwrap()
        .into_inner()
        .tables;
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["ns1:t", "plain"]);
    // The namespace's objects are under it.
    let data = config(dir.path()).objects_dir().join("data");
    let under_ns = walkdir(&data)
        .iter()
        .any(|p| p.components().any(|c| c.as_os_str() == "ns1"));
    assert!(
        under_ns,
        "no object under a directory named ns1 in {data:?}"
    );
    let full = c
        .admin
        .drop_namespace(pb::NamespaceRequest { name: "ns1".into() })
        .await
        .unwrap_err();
    assert_eq!(
        full.code(),
        tonic::Code::FailedPrecondition,
        "{}",
        full.message()
    );
    let builtin = c
        .admin
        .drop_namespace(pb::NamespaceRequest {
            name: "default".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(builtin.code(), tonic::Code::FailedPrecondition);
    let hbase = c
        .admin
        .create_table(pb::CreateTableRequest {
            name: "hbase:t".into(),
            families: vec![family("cf")],
            split_keys: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(hbase.code(), tonic::Code::InvalidArgument);
    let mut altered = ns("ns1");
    altered.properties = [("k2".to_string(), "v2".to_string())].into();
    c.admin.alter_namespace(altered).await.unwrap();
    // A restart keeps it all.
    drop(c);
    server.shutdown().await;
    let server = shoal_server::start(config(dir.path())).await.unwrap();
    let mut c = clients(&server).await;
    assert_eq!(read(&mut c, "ns1:t", "a").await.as_deref(), Some("in-ns"));
    let d = c
        .admin
        .describe_namespace(pb::NamespaceRequest { name: "ns1".into() })
        .await
        .unwrap()
        .into_inner()
        .namespace
        .unwrap();
    assert_eq!(d.properties.len(), 1);
    assert_eq!(d.properties.get("k2").map(String::as_str), Some("v2"));
    let t = || pb::TableRequest {
        name: "ns1:t".into(),
    };
    c.admin.disable_table(t()).await.unwrap();
    c.admin.drop_table(t()).await.unwrap();
    c.admin
        .drop_namespace(pb::NamespaceRequest { name: "ns1".into() })
        .await
        .unwrap();
    let gone = c
        .admin
        .describe_namespace(pb::NamespaceRequest { name: "ns1".into() })
        .await
        .unwrap_err();
    assert_eq!(gone.code(), tonic::Code::NotFound);
    server.shutdown().await;
}

/// Every file under `dir`.
fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}
