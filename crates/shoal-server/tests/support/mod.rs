//! What the server's integration tests share: a small server configuration
//! on a test directory, listening on loopback ports the OS picks.

#![allow(clippy::unwrap_used, dead_code)] // test code; each test file uses part of it

use shoal_server::ServerConfig;
use std::path::Path;

/// A server on `dir` with small caches (8 MiB L1, 64 MiB L2) on 127.0.0.1.
pub fn config(dir: &Path) -> ServerConfig {
    let mut c = ServerConfig::default();
    c.server.data_dir = dir.to_path_buf();
    c.server.grpc_addr = "127.0.0.1:0".parse().unwrap();
    c.server.http_addr = "127.0.0.1:0".parse().unwrap();
    c.thrift.addr = "127.0.0.1:0".parse().unwrap();
    c.rest.addr = "127.0.0.1:0".parse().unwrap();
    c.hbase_rpc.addr = "127.0.0.1:0".parse().unwrap();
    c.cache.l2_capacity = shoal_server::config::ByteSize(64 << 20);
    c.cache.l1_data = shoal_server::config::ByteSize(8 << 20);
    c
}

/// Raw gRPC stubs of one server.
pub struct Clients {
    pub data: shoal_proto::v1::data_client::DataClient<tonic::transport::Channel>,
    pub admin: shoal_proto::v1::admin_client::AdminClient<tonic::transport::Channel>,
}

/// Connects raw stubs to `server` (responses up to 64 MiB).
pub async fn clients(server: &shoal_server::RunningServer) -> Clients {
    let url = format!("http://{}", server.grpc_addr);
    let channel = tonic::transport::Channel::from_shared(url)
        .unwrap()
        .connect()
        .await
        .unwrap();
    Clients {
        data: shoal_proto::v1::data_client::DataClient::new(channel.clone())
            .max_decoding_message_size(64 << 20),
        admin: shoal_proto::v1::admin_client::AdminClient::new(channel),
    }
}

/// A family with default settings.
pub fn family(name: &str) -> shoal_proto::v1::FamilySchema {
    shoal_proto::v1::FamilySchema {
        name: name.into(),
        ..Default::default()
    }
}

/// Raises this process's soft open-files limit to its hard limit and checks
/// that at least `needed` descriptors are allowed (tests that open
/// thousands of sockets run both ends in this process).
#[allow(unsafe_code)]
pub fn raise_open_files_limit(needed: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read or write one `struct rlimit`
    // through the pointer, which points at a live, aligned local of that type.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = limit.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every platform
    let soft = limit.rlim_cur as u64;
    assert!(
        limit.rlim_cur == libc::RLIM_INFINITY || soft >= needed,
        "this test needs {needed} open files; the hard limit is {}",
        limit.rlim_cur
    );
}

/// Polls `condition` every 20 ms until it holds; panics naming `what` if it
/// does not within `within`.
pub async fn wait_until(
    within: std::time::Duration,
    what: &str,
    mut condition: impl FnMut() -> bool,
) {
    let deadline = std::time::Instant::now() + within;
    while !condition() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out after {within:?} waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
