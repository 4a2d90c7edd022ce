//! HBase's native RPC on the wire, from a raw client: the registry
//! preamble, calls multiplexed on one connection, cell blocks both ways,
//! scanners, and bad input (garbage preambles, lengths past the limit,
//! unknown services and methods, truncated cell blocks) — each a clear
//! exception or a closed connection, the server up and the data intact;
//! and heartbeats from a filtered scan that finds little; bulk load (a
//! group that does not fit its region loads nothing and answers
//! `loaded=false`, paths of other file systems are refused).
//! The stock Java client is run against `shoal serve` by
//! `shoal-cli/tests/hbase_client_e2e.rs`.

#![allow(clippy::unwrap_used)]

mod support;

use bytes::{Buf, Bytes};
use prost::Message;
use shoal_proto::hbase as pb;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[path = "support/native.rs"]
mod native;

use native::{Conn, frame, header, read_answer};

fn kv(out: &mut Vec<u8>, row: &[u8], family: &[u8], qualifier: &[u8], ts: i64, value: &[u8]) {
    let key_len = 2 + row.len() + 1 + family.len() + qualifier.len() + 9;
    out.extend_from_slice(&((8 + key_len + value.len()) as u32).to_be_bytes());
    out.extend_from_slice(&(key_len as u32).to_be_bytes());
    out.extend_from_slice(&(value.len() as u32).to_be_bytes());
    out.extend_from_slice(&(row.len() as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.push(family.len() as u8);
    out.extend_from_slice(family);
    out.extend_from_slice(qualifier);
    out.extend_from_slice(&ts.to_be_bytes());
    out.push(4);
    out.extend_from_slice(value);
}

/// (row, qualifier, value) of each cell in a block.
fn cells_of(mut block: Bytes) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    while block.has_remaining() {
        let len = block.get_u32() as usize;
        let mut kv = block.split_to(len);
        let key_len = kv.get_u32() as usize;
        let value_len = kv.get_u32() as usize;
        let mut key = kv.split_to(key_len);
        let value = kv.split_to(value_len);
        let row_len = key.get_u16() as usize;
        let row = key.split_to(row_len);
        let fam_len = key.get_u8() as usize;
        let _family = key.split_to(fam_len);
        let qualifier = key.split_to(key.len() - 9);
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        out.push((s(&row), s(&qualifier), s(&value)));
    }
    out
}

async fn server(dir: &std::path::Path) -> shoal_server::RunningServer {
    server_with_threads(dir, 0).await
}

/// A server whose connections run on `serving_threads` threads of their
/// own (0: the shared runtime).
async fn server_with_threads(
    dir: &std::path::Path,
    serving_threads: usize,
) -> shoal_server::RunningServer {
    let mut c = support::config(dir);
    c.hbase_rpc.max_message_bytes = shoal_server::config::ByteSize(1 << 20);
    c.server.serving_threads = serving_threads;
    shoal_server::start(c).await.unwrap()
}

fn table(name: &str) -> pb::TableName {
    pb::TableName {
        namespace: Bytes::from_static(b"default"),
        qualifier: Bytes::copy_from_slice(name.as_bytes()),
    }
}

async fn create(addr: SocketAddr, name: &str, splits: &[&str]) {
    create_with(addr, name, "cf", splits).await;
}

async fn create_with(addr: SocketAddr, name: &str, family: &str, splits: &[&str]) {
    let mut m = Conn::open(addr, "MasterService", false).await;
    let a = m
        .call(
            "CreateTable",
            &pb::CreateTableRequest {
                table_schema: pb::TableSchema {
                    table_name: Some(table(name)),
                    column_families: vec![pb::ColumnFamilySchema {
                        name: Bytes::copy_from_slice(family.as_bytes()),
                        ..Default::default()
                    }],
                    ..Default::default()
                },
                split_keys: splits
                    .iter()
                    .map(|s| Bytes::copy_from_slice(s.as_bytes()))
                    .collect(),
                ..Default::default()
            },
            &[],
        )
        .await;
    assert_eq!(a.exception(), None);
}

/// The region names of `table`, from a forward meta scan.
async fn regions(addr: SocketAddr, name: &str) -> Vec<Bytes> {
    let mut c = Conn::open(addr, "ClientService", false).await;
    let a = c
        .call(
            "Scan",
            &pb::ScanRequest {
                region: Some(pb::RegionSpecifier {
                    r#type: 1,
                    value: Bytes::from_static(b"hbase:meta,,1"),
                }),
                scan: Some(pb::Scan {
                    column: vec![pb::Column {
                        family: Bytes::from_static(b"info"),
                        qualifier: vec![],
                    }],
                    start_row: Some(Bytes::from(format!("{name},,"))),
                    stop_row: Some(Bytes::from(format!("{name} ,,"))),
                    ..Default::default()
                }),
                number_of_rows: Some(100),
                ..Default::default()
            },
            &[],
        )
        .await;
    let resp = pb::ScanResponse::decode(a.message).unwrap();
    assert_eq!(resp.more_results_in_region, Some(false));
    resp.results
        .iter()
        .map(|r| r.cell[0].row.clone().unwrap())
        .collect()
}

fn region(name: &Bytes) -> pb::RegionSpecifier {
    pb::RegionSpecifier {
        r#type: 1,
        value: name.clone(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_meta_and_calls_multiplexed_with_cell_blocks() {
    multiplexed_calls(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_on_serving_threads() {
    multiplexed_calls(2).await;
}

async fn multiplexed_calls(serving_threads: usize) {
    let dir = tempfile::tempdir().unwrap();
    let s = server_with_threads(dir.path(), serving_threads).await;
    let addr = s.hbase_rpc_addr.unwrap();

    // 2.6's registry preamble: the cluster id, then the server closes.
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"Regist").await.unwrap();
    let a = read_answer(&mut tcp).await.unwrap();
    assert_eq!(a.header.call_id, Some(u32::MAX));
    let id = pb::GetConnectionRegistryResponse::decode(a.message).unwrap();
    assert_eq!(id.cluster_id.len(), 36);
    assert!(read_answer(&mut tcp).await.is_none(), "closed after it");

    create(addr, "t", &["m"]).await;
    let names = regions(addr, "t").await;
    assert_eq!(names.len(), 2);
    assert!(names[0].starts_with(b"t,,") && names[1].starts_with(b"t,m,"));

    // Puts in a cell block to both regions, many calls in flight at once.
    let mut c = Conn::open(addr, "ClientService", true).await;
    let mut ids = Vec::new();
    for i in 0..50 {
        let row = format!("{}{i:03}", if i % 2 == 0 { "a" } else { "x" });
        let r = if i % 2 == 0 { &names[0] } else { &names[1] };
        let mut block = Vec::new();
        kv(
            &mut block,
            row.as_bytes(),
            b"cf",
            b"q",
            i64::MAX,
            format!("v{i}").as_bytes(),
        );
        let req = pb::MutateRequest {
            region: region(r),
            mutation: pb::MutationProto {
                mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
                associated_cell_count: Some(1),
                ..Default::default()
            },
            condition: None,
            nonce_group: None,
        };
        ids.push(c.send("Mutate", &req, &block).await);
    }
    let mut answered = Vec::new();
    for _ in 0..50 {
        let a = read_answer(&mut c.tcp).await.unwrap();
        assert_eq!(a.exception(), None);
        answered.push(a.header.call_id.unwrap());
    }
    answered.sort_unstable();
    assert_eq!(answered, ids, "every call answered once, by its id");

    // A row in the wrong region: NotServingRegionException (the client
    // looks it up again).
    let get = |r: &Bytes, row: &str| pb::GetRequest {
        region: region(r),
        get: pb::Get {
            row: Bytes::from(row.to_string()),
            ..Default::default()
        },
    };
    let a = c.call("Get", &get(&names[0], "x001"), &[]).await;
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.NotServingRegionException")
    );
    let a = c.call("Get", &get(&names[1], "x001"), &[]).await;
    let r = pb::GetResponse::decode(a.message).unwrap().result.unwrap();
    assert_eq!(r.associated_cell_count, Some(1));
    assert_eq!(
        cells_of(a.cells),
        vec![("x001".into(), "q".into(), "v1".into())]
    );
    // A region name that is not (or no longer) here.
    let a = c
        .call(
            "Get",
            &get(
                &Bytes::from_static(b"t,,1.00000000000000000000000000000000."),
                "a000",
            ),
            &[],
        )
        .await;
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.NotServingRegionException")
    );

    // A scanner over the second region, three rows a call, with its
    // sequence checked.
    let open = pb::ScanRequest {
        region: Some(region(&names[1])),
        scan: Some(pb::Scan::default()),
        number_of_rows: Some(3),
        ..Default::default()
    };
    let a = c.call("Scan", &open, &[]).await;
    let first = pb::ScanResponse::decode(a.message).unwrap();
    assert_eq!(first.cells_per_result, vec![1, 1, 1]);
    assert_eq!(first.more_results_in_region, Some(true));
    let id = first.scanner_id.unwrap();
    let next = |seq: u64| pb::ScanRequest {
        scanner_id: Some(id),
        number_of_rows: Some(100),
        next_call_seq: Some(seq),
        ..Default::default()
    };
    let a = c.call("Scan", &next(0), &[]).await;
    let rest = pb::ScanResponse::decode(a.message).unwrap();
    assert_eq!(rest.cells_per_result.len(), 22, "25 rows in the region");
    assert_eq!(rest.more_results_in_region, Some(false));
    assert_eq!(cells_of(a.cells)[21].0, "x049");
    // The scanner closed itself at the region's end.
    let a = c.call("Scan", &next(1), &[]).await;
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.UnknownScannerException")
    );
    // A skipped sequence number is refused.
    let a = c.call("Scan", &open, &[]).await;
    let id2 = pb::ScanResponse::decode(a.message)
        .unwrap()
        .scanner_id
        .unwrap();
    let a = c
        .call(
            "Scan",
            &pb::ScanRequest {
                scanner_id: Some(id2),
                number_of_rows: Some(1),
                next_call_seq: Some(5),
                ..Default::default()
            },
            &[],
        )
        .await;
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException")
    );
    // An open that asks for no rows answers at once; the rows follow.
    let a = c
        .call(
            "Scan",
            &pb::ScanRequest {
                number_of_rows: Some(0),
                ..open.clone()
            },
            &[],
        )
        .await;
    let opened = pb::ScanResponse::decode(a.message).unwrap();
    assert!(opened.cells_per_result.is_empty());
    assert_eq!(opened.more_results_in_region, Some(true));
    let a = c
        .call(
            "Scan",
            &pb::ScanRequest {
                scanner_id: opened.scanner_id,
                number_of_rows: Some(100),
                next_call_seq: Some(0),
                ..Default::default()
            },
            &[],
        )
        .await;
    assert_eq!(cells_of(a.cells).len(), 25);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_an_exception_or_a_closed_connection() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(dir.path()).await;
    let addr = s.hbase_rpc_addr.unwrap();
    create(addr, "t", &[]).await;
    let names = regions(addr, "t").await;
    let mut c = Conn::open(addr, "ClientService", true).await;
    let mut block = Vec::new();
    kv(&mut block, b"keep", b"cf", b"q", 7, b"safe");
    let put = pb::MutateRequest {
        region: region(&names[0]),
        mutation: pb::MutationProto {
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            associated_cell_count: Some(1),
            ..Default::default()
        },
        condition: None,
        nonce_group: None,
    };
    assert_eq!(c.call("Mutate", &put, &block).await.exception(), None);

    // Garbage instead of a preamble: FatalConnectionException, closed.
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
    let a = read_answer(&mut tcp).await.unwrap();
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.ipc.FatalConnectionException")
    );
    assert!(read_answer(&mut tcp).await.is_none());
    // Kerberos asked for: refused by name.
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"HBas\x00\x51").await.unwrap();
    let a = read_answer(&mut tcp).await.unwrap();
    let text = a.header.exception.unwrap().stack_trace.unwrap();
    assert!(text.contains("SIMPLE"), "{text}");
    // An unknown service.
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(&header("AccessControlService", false))
        .await
        .unwrap();
    let a = read_answer(&mut tcp).await.unwrap();
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.ipc.FatalConnectionException")
    );
    // A length past the limit (1 MiB here): closed.
    let mut big = Conn::open(addr, "ClientService", true).await;
    big.tcp
        .write_all(&(64u32 << 20).to_be_bytes())
        .await
        .unwrap();
    let a = read_answer(&mut big.tcp).await.unwrap();
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.exceptions.RequestTooBigException")
    );
    assert!(read_answer(&mut big.tcp).await.is_none(), "closed");
    // A frame whose header does not decode: closed.
    let mut bad = Conn::open(addr, "ClientService", true).await;
    bad.tcp
        .write_all(&[0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff])
        .await
        .unwrap();
    assert!(read_answer(&mut bad.tcp).await.is_none(), "closed");
    // An unknown method and a malformed request: an exception, the
    // connection stays.
    let a = c.call("Frobnicate", &put, &[]).await;
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.exceptions.UnknownProtocolException")
    );
    let id = c.next_id;
    c.next_id += 1;
    c.tcp
        .write_all(&frame(id, "Get", &[0xff, 0xff, 0xff], &[]))
        .await
        .unwrap();
    let a = read_answer(&mut c.tcp).await.unwrap();
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.DoNotRetryIOException")
    );
    // A truncated cell block (a cell cut short inside a block whose size
    // is right), and a mutation announcing more cells than the block has.
    let cut = &block[..block.len() - 3];
    let mut lying = (block.len() as u32 - 4 + 10).to_be_bytes().to_vec();
    lying.extend_from_slice(&block[4..]);
    for cells in [cut, &lying[..]] {
        let a = c.call("Mutate", &put, cells).await;
        assert_eq!(
            a.exception().as_deref(),
            Some("org.apache.hadoop.hbase.DoNotRetryIOException")
        );
    }
    let mut two = put.clone();
    two.mutation.associated_cell_count = Some(2);
    let a = c.call("Mutate", &two, &block).await;
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.DoNotRetryIOException")
    );

    // The server is up and the row intact.
    let a = c
        .call(
            "Get",
            &pb::GetRequest {
                region: region(&names[0]),
                get: pb::Get {
                    row: Bytes::from_static(b"keep"),
                    ..Default::default()
                },
            },
            &[],
        )
        .await;
    assert_eq!(
        cells_of(a.cells),
        vec![("keep".into(), "q".into(), "safe".into())]
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filtered_scan_answers_heartbeats_until_it_finds_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = support::config(dir.path());
    // Answer at once with what is ready.
    c.hbase_rpc.heartbeat_interval = Duration::ZERO;
    let s = shoal_server::start(c).await.unwrap();
    let addr = s.hbase_rpc_addr.unwrap();
    create(addr, "t", &[]).await;
    let names = regions(addr, "t").await;
    let mut c = Conn::open(addr, "ClientService", true).await;
    // 5,000 rows; the filter takes only the last.
    for chunk in 0..5 {
        let mut block = Vec::new();
        let mut actions = Vec::new();
        for i in chunk * 1000..(chunk + 1) * 1000 {
            kv(
                &mut block,
                format!("r{i:05}").as_bytes(),
                b"cf",
                b"q",
                1,
                format!("v{i}").as_bytes(),
            );
            actions.push(pb::Action {
                index: Some(i as u32),
                mutation: Some(pb::MutationProto {
                    mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
                    associated_cell_count: Some(1),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        let multi = pb::MultiRequest {
            region_action: vec![pb::RegionAction {
                region: region(&names[0]),
                atomic: None,
                action: actions,
                condition: None,
            }],
            ..Default::default()
        };
        assert_eq!(c.call("Multi", &multi, &block).await.exception(), None);
    }
    let filter = pb::Filter {
        name: "org.apache.hadoop.hbase.filter.ValueFilter".into(),
        serialized_filter: Some(Bytes::from(
            pb::ValueFilter {
                compare_filter: pb::CompareFilter {
                    compare_op: pb::CompareType::Equal as i32,
                    comparator: Some(pb::Comparator {
                        name: "org.apache.hadoop.hbase.filter.BinaryComparator".into(),
                        serialized_comparator: Some(Bytes::from(
                            pb::BinaryComparator {
                                comparable: pb::ByteArrayComparable {
                                    value: Some(Bytes::from_static(b"v4999")),
                                },
                            }
                            .encode_to_vec(),
                        )),
                    }),
                },
            }
            .encode_to_vec(),
        )),
    };
    let a = c
        .call(
            "Scan",
            &pb::ScanRequest {
                region: Some(region(&names[0])),
                scan: Some(pb::Scan {
                    filter: Some(filter),
                    ..Default::default()
                }),
                number_of_rows: Some(10),
                client_handles_heartbeats: Some(true),
                ..Default::default()
            },
            &[],
        )
        .await;
    let mut cells = a.cells.clone();
    let mut resp = pb::ScanResponse::decode(a.message).unwrap();
    let id = resp.scanner_id.unwrap();
    let (mut heartbeats, mut found, mut seq) = (0, Vec::new(), 0);
    loop {
        if resp.heartbeat_message == Some(true) {
            heartbeats += 1;
            assert!(resp.cells_per_result.is_empty());
            assert_eq!(resp.more_results_in_region, Some(true));
        }
        found.extend(cells_of(cells));
        if resp.more_results_in_region == Some(false) {
            break;
        }
        let a = c
            .call(
                "Scan",
                &pb::ScanRequest {
                    scanner_id: Some(id),
                    number_of_rows: Some(10),
                    next_call_seq: Some(seq),
                    client_handles_heartbeats: Some(true),
                    ..Default::default()
                },
                &[],
            )
            .await;
        assert_eq!(a.exception(), None);
        seq += 1;
        cells = a.cells;
        resp = pb::ScanResponse::decode(a.message).unwrap();
    }
    assert!(
        heartbeats >= 1,
        "a scan that finds nothing at first answers heartbeats"
    );
    assert_eq!(found, vec![("r04999".into(), "q".into(), "v4999".into())]);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auth_on_calls_act_as_the_configured_user() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("admin sha256:{}\n", "00".repeat(32))).unwrap();
    let config = |user: &str| {
        let mut c = support::config(&dir.path().join("data"));
        c.auth.enabled = true;
        c.auth.tokens = tokens.clone();
        c.auth.superusers = vec!["admin".into()];
        c.thrift.enabled = false;
        c.auth.hbase_rpc_user = user.into();
        c
    };
    // No user named for the native RPC: its port stays closed.
    let s = shoal_server::start(config("")).await.unwrap();
    assert_eq!(s.hbase_rpc_addr, None);
    s.shutdown().await;
    // Calls act as `javaapps`, who holds no grant: refused, by name.
    let s = shoal_server::start(config("javaapps")).await.unwrap();
    let addr = s.hbase_rpc_addr.unwrap();
    let mut m = Conn::open(addr, "MasterService", false).await;
    let a = m
        .call(
            "CreateTable",
            &pb::CreateTableRequest {
                table_schema: pb::TableSchema {
                    table_name: Some(table("t")),
                    column_families: vec![pb::ColumnFamilySchema {
                        name: Bytes::from_static(b"cf"),
                        ..Default::default()
                    }],
                    ..Default::default()
                },
                ..Default::default()
            },
            &[],
        )
        .await;
    let e = a.header.exception.unwrap();
    assert_eq!(
        e.exception_class_name.as_deref(),
        Some("org.apache.hadoop.hbase.security.AccessDeniedException")
    );
    assert!(e.stack_trace.unwrap().contains("javaapps"));
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_never_finished_is_closed_after_the_idle_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = support::config(dir.path());
    c.server.idle_timeout = Duration::from_secs(1);
    let s = shoal_server::start(c).await.unwrap();
    let addr = s.hbase_rpc_addr.unwrap();
    let mut conn = Conn::open(addr, "ClientService", true).await;
    // A call announced as 100 bytes, of which 10 ever come.
    conn.tcp.write_all(&100u32.to_be_bytes()).await.unwrap();
    conn.tcp.write_all(&[0u8; 10]).await.unwrap();
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), conn.tcp.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "still open after 20 s");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "closed before the idle timeout"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_load_whole_groups_into_the_region_named() {
    let dir = tempfile::tempdir().unwrap();
    let srv = server(dir.path()).await;
    let addr = srv.hbase_rpc_addr.unwrap();
    // The fixture: one HFile of family f, rows 0x000000 to 0xffff07.
    let input = dir.path().join("input/f");
    std::fs::create_dir_all(&input).unwrap();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shoal-hfile/tests/fixtures/hfiles/v2-NONE-NONE.hfile");
    std::fs::copy(&fixture, input.join("0a1b")).unwrap();
    let path = format!("file:{}/0a1b", input.display());
    create_with(addr, "bl_whole", "f", &[]).await;
    create_with(addr, "bl_split", "f", &["m"]).await;
    let mut c = Conn::open(addr, "ClientService", false).await;

    let whole = regions(addr, "bl_whole").await;
    let a = c
        .call(
            "PrepareBulkLoad",
            &pb::PrepareBulkLoadRequest {
                table_name: table("bl_whole"),
                region: Some(region(&whole[0])),
            },
            &[],
        )
        .await;
    assert_eq!(a.exception(), None);
    let token = pb::PrepareBulkLoadResponse::decode(a.message)
        .unwrap()
        .bulk_token;
    assert!(token.starts_with("shoal-bulkload:bl_whole:"), "{token}");
    let load = |r: &Bytes, path: &str| pb::BulkLoadHFileRequest {
        region: region(r),
        family_path: vec![pb::bulk_load_h_file_request::FamilyPath {
            family: Bytes::from_static(b"f"),
            path: path.to_string(),
        }],
        assign_seq_num: Some(true),
        bulk_token: Some(token.clone()),
        ..Default::default()
    };
    let row_z = |r: &Bytes| pb::GetRequest {
        region: region(r),
        get: pb::Get {
            row: Bytes::from_static(b"z"),
            ..Default::default()
        },
    };
    async fn cells(c: &mut Conn, get: &pb::GetRequest) -> usize {
        let a = c.call("Get", get, &[]).await;
        assert_eq!(a.exception(), None);
        let r = pb::GetResponse::decode(a.message).unwrap();
        r.result.map_or(0, |r| r.cell.len())
    }

    // The whole table is one region: the file fits and loads.
    let a = c.call("BulkLoadHFile", &load(&whole[0], &path), &[]).await;
    assert_eq!(a.exception(), None);
    assert!(pb::BulkLoadHFileResponse::decode(a.message).unwrap().loaded);
    let loaded = cells(&mut c, &row_z(&whole[0])).await;
    assert!(loaded > 0, "row z of the fixture is visible");
    // The same call again (its answer lost, say): the load key makes it a
    // no-op, and the row reads the same.
    let a = c.call("BulkLoadHFile", &load(&whole[0], &path), &[]).await;
    assert!(pb::BulkLoadHFileResponse::decode(a.message).unwrap().loaded);
    assert_eq!(cells(&mut c, &row_z(&whole[0])).await, loaded);

    // Two regions: the file reaches past the first one's end, so nothing
    // loads and the client is told to regroup.
    let split = regions(addr, "bl_split").await;
    assert_eq!(split.len(), 2);
    let a = c.call("BulkLoadHFile", &load(&split[0], &path), &[]).await;
    assert_eq!(a.exception(), None);
    assert!(!pb::BulkLoadHFileResponse::decode(a.message).unwrap().loaded);
    assert_eq!(cells(&mut c, &row_z(&split[1])).await, 0);

    // Another file system, or a region this server does not know.
    let a = c
        .call(
            "BulkLoadHFile",
            &load(&split[0], "hdfs://nn:8020/staging/f/0a1b"),
            &[],
        )
        .await;
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.DoNotRetryIOException")
    );
    let text = a.header.exception.unwrap().stack_trace.unwrap_or_default();
    assert!(text.contains("hdfs://nn:8020/staging/f/0a1b"), "{text}");
    let gone = Bytes::from_static(b"bl_split,,1.0123456789abcdef0123456789abcdef.");
    let a = c.call("BulkLoadHFile", &load(&gone, &path), &[]).await;
    assert_eq!(
        a.exception().as_deref(),
        Some("org.apache.hadoop.hbase.NotServingRegionException")
    );

    let a = c
        .call(
            "CleanupBulkLoad",
            &pb::CleanupBulkLoadRequest {
                bulk_token: token.clone(),
                region: Some(region(&whole[0])),
            },
            &[],
        )
        .await;
    assert_eq!(a.exception(), None);
    srv.shutdown().await;
}
