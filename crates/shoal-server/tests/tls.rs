//! TLS on the listeners, with certificates made at test time (rcgen): a
//! client trusting the server's CA is served; a plain-text client and a
//! client trusting another CA are refused; a reload takes new certificates
//! for new connections; mutual TLS refuses a client without a certificate;
//! the Thrift port speaks TLS too.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use shoal_client::{Client, ClientError, ClientOptions, ClientTls};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A CA: its certificate (PEM) and what signs with it.
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        issuer: Issuer::new(params, key),
    }
}

/// A leaf certificate for 127.0.0.1 and localhost signed by `ca`: (cert
/// PEM, key PEM).
fn leaf(ca: &Ca) -> (String, String) {
    let params =
        CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

struct Files {
    cert: PathBuf,
    key: PathBuf,
    client_ca: PathBuf,
}

fn write_leaf(dir: &Path, ca: &Ca) -> Files {
    let (cert, key) = leaf(ca);
    let f = Files {
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
        client_ca: dir.join("client-ca.pem"),
    };
    std::fs::write(&f.cert, cert).unwrap();
    std::fs::write(&f.key, key).unwrap();
    f
}

async fn start(dir: &Path, files: &Files, mutual: bool) -> shoal_server::RunningServer {
    let mut c = support::config(dir);
    c.thrift.enabled = true;
    c.thrift.addr = "127.0.0.1:0".parse().unwrap();
    c.tls.cert = files.cert.clone();
    c.tls.key = files.key.clone();
    if mutual {
        c.tls.client_ca = files.client_ca.clone();
    }
    shoal_server::start(c).await.unwrap()
}

fn options(ca_pem: &str, identity: Option<(String, String)>) -> ClientOptions {
    ClientOptions {
        connect_timeout: Duration::from_secs(5),
        retry_deadline: Duration::from_secs(2),
        tls: Some(ClientTls {
            ca_pem: ca_pem.as_bytes().to_vec(),
            identity: identity.map(|(c, k)| (c.into_bytes(), k.into_bytes())),
            domain: None,
        }),
        ..ClientOptions::default()
    }
}

/// Connects and lists tables: the first call that needs the connection.
async fn list(addr: &str, options: ClientOptions) -> Result<usize, ClientError> {
    let c = Client::connect_with(addr, options).await?;
    Ok(c.admin().list().await?.len())
}

#[tokio::test]
async fn trusted_clients_are_served_and_others_refused_and_reload_takes_new_certificates() {
    let dir = tempfile::tempdir().unwrap();
    let first = ca("first CA");
    let files = write_leaf(dir.path(), &first);
    let server = start(&dir.path().join("data"), &files, false).await;
    let addr = server.grpc_addr.to_string();

    // Trusting the CA: served, with a table made and listed.
    let c = Client::connect_with(&addr, options(&first.pem, None))
        .await
        .unwrap();
    c.admin()
        .create_table("t", vec![support::family("cf")], vec![])
        .await
        .unwrap();
    assert_eq!(list(&addr, options(&first.pem, None)).await.unwrap(), 1);

    // Plain text: the server expects a TLS ClientHello and closes.
    let plain = ClientOptions {
        connect_timeout: Duration::from_secs(5),
        retry_deadline: Duration::from_secs(2),
        ..ClientOptions::default()
    };
    assert!(list(&addr, plain).await.is_err(), "plain text served");

    // Trusting another CA: the client refuses the server's certificate.
    let other = ca("other CA");
    assert!(
        list(&addr, options(&other.pem, None)).await.is_err(),
        "a certificate from an untrusted CA was accepted"
    );

    // The HTTP port is TLS too: a plain GET gets no HTTP answer.
    let mut s = tokio::net::TcpStream::connect(server.http_addr)
        .await
        .unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut buf)).await;
    assert!(
        !String::from_utf8_lossy(&buf).contains("200 OK"),
        "plain HTTP answered"
    );

    // Reload: a certificate from a new CA, for new connections.
    let second = ca("second CA");
    let (cert, key) = leaf(&second);
    std::fs::write(&files.cert, cert).unwrap();
    std::fs::write(&files.key, key).unwrap();
    server.reload_security().unwrap();
    assert_eq!(list(&addr, options(&second.pem, None)).await.unwrap(), 1);
    assert!(
        list(&addr, options(&first.pem, None)).await.is_err(),
        "the old certificate is still served after the reload"
    );
    // A broken file: the reload fails and the certificate in use stays.
    std::fs::write(&files.key, "not a key").unwrap();
    assert!(server.reload_security().is_err());
    assert_eq!(list(&addr, options(&second.pem, None)).await.unwrap(), 1);
    // The connection made before the reload goes on.
    assert_eq!(c.admin().list().await.unwrap().len(), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn mutual_tls_refuses_clients_without_a_trusted_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let server_ca = ca("server CA");
    let client_ca = ca("client CA");
    let files = write_leaf(dir.path(), &server_ca);
    std::fs::write(&files.client_ca, &client_ca.pem).unwrap();
    let server = start(&dir.path().join("data"), &files, true).await;
    let addr = server.grpc_addr.to_string();

    assert!(
        list(&addr, options(&server_ca.pem, None)).await.is_err(),
        "a client without a certificate was served"
    );
    let stranger = ca("stranger CA");
    assert!(
        list(&addr, options(&server_ca.pem, Some(leaf(&stranger))))
            .await
            .is_err(),
        "a client certificate from an untrusted CA was accepted"
    );
    assert_eq!(
        list(&addr, options(&server_ca.pem, Some(leaf(&client_ca))))
            .await
            .unwrap(),
        0
    );
    server.shutdown().await;
}

/// A raw TLS client trusting `ca`.
fn connector(ca: &Ca) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    use rustls::pki_types::pem::PemObject;
    for c in rustls::pki_types::CertificateDer::pem_slice_iter(ca.pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

#[tokio::test]
async fn the_thrift_port_speaks_tls() {
    let dir = tempfile::tempdir().unwrap();
    let the_ca = ca("CA");
    let files = write_leaf(dir.path(), &the_ca);
    let server = start(&dir.path().join("data"), &files, false).await;
    let thrift = server.thrift_addr.unwrap();

    // TBinaryProtocol, buffered: getTableNames, seqid 1, no arguments.
    let mut call = vec![0x80, 0x01, 0x00, 0x01];
    call.extend_from_slice(&(13u32).to_be_bytes());
    call.extend_from_slice(b"getTableNames");
    call.extend_from_slice(&1u32.to_be_bytes());
    call.push(0); // end of the argument struct

    let connector = connector(&the_ca);
    let tcp = tokio::net::TcpStream::connect(thrift).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = connector.connect(name, tcp).await.unwrap();
    tls.write_all(&call).await.unwrap();
    let mut reply = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(5), tls.read_exact(&mut reply))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reply, [0x80, 0x01, 0x00, 0x02], "a Thrift reply");

    // Plain Thrift bytes on the TLS port: closed without a reply.
    let mut plain = tokio::net::TcpStream::connect(thrift).await.unwrap();
    plain.write_all(&call).await.unwrap();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), plain.read_to_end(&mut buf)).await;
    assert!(!buf.starts_with(&[0x80, 0x01]), "plain Thrift answered");
    server.shutdown().await;
}

#[tokio::test]
async fn the_rest_port_speaks_tls() {
    let dir = tempfile::tempdir().unwrap();
    let the_ca = ca("CA");
    let files = write_leaf(dir.path(), &the_ca);
    let server = start(&dir.path().join("data"), &files, false).await;
    let rest = server.rest_addr.unwrap();
    let get = b"GET /version/cluster HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

    let connector = connector(&the_ca);
    let tcp = tokio::net::TcpStream::connect(rest).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = connector.connect(name, tcp).await.unwrap();
    tls.write_all(get).await.unwrap();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), tls.read_to_end(&mut reply)).await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.ends_with("2.6.1\n"), "{reply}");

    // Plain HTTP on the TLS port: no HTTP answer.
    let mut plain = tokio::net::TcpStream::connect(rest).await.unwrap();
    plain.write_all(get).await.unwrap();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), plain.read_to_end(&mut buf)).await;
    assert!(
        !String::from_utf8_lossy(&buf).contains("200 OK"),
        "plain HTTP answered"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_native_rpc_port_speaks_tls() {
    let dir = tempfile::tempdir().unwrap();
    let the_ca = ca("CA");
    let files = write_leaf(dir.path(), &the_ca);
    let server = start(&dir.path().join("data"), &files, false).await;
    let native = server.hbase_rpc_addr.unwrap();

    let connector = connector(&the_ca);
    let tcp = tokio::net::TcpStream::connect(native).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let mut tls = connector.connect(name, tcp).await.unwrap();
    // 2.6's registry preamble: one framed answer (the cluster id), then
    // the server closes.
    tls.write_all(b"Regist").await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), tls.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let len = u32::from_be_bytes(answer[..4].try_into().unwrap()) as usize;
    assert_eq!(answer.len(), 4 + len, "one framed answer");

    // The preamble in plain text on the TLS port: no answer.
    let mut plain = tokio::net::TcpStream::connect(native).await.unwrap();
    plain.write_all(b"Regist").await.unwrap();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), plain.read_to_end(&mut buf)).await;
    // Nothing, or a TLS alert record (content type 21): never an answer.
    assert!(
        buf.is_empty() || buf[0] == 21,
        "plain text answered: {buf:?}"
    );
    server.shutdown().await;
}

/// Gets and puts over the framed transport, on TLS with the client's settings.
async fn framed_round_trip(addr: &str, options: ClientOptions) -> Result<(), ClientError> {
    let c = Client::connect_with(
        addr,
        ClientOptions {
            data_transport: shoal_client::DataTransport::Framed,
            ..options
        },
    )
    .await?;
    let t = c.table("t");
    t.put("r", "cf", "q", "v").await?;
    assert_eq!(t.get_value("r", "cf", "q").await?, Some(b"v".to_vec()));
    Ok(())
}

#[tokio::test]
async fn the_framed_transport_runs_on_tls_with_the_same_trust() {
    let dir = tempfile::tempdir().unwrap();
    let server_ca = ca("server CA");
    let client_ca = ca("client CA");
    let files = write_leaf(dir.path(), &server_ca);
    std::fs::write(&files.client_ca, &client_ca.pem).unwrap();
    let server = start(&dir.path().join("data"), &files, true).await;
    let addr = server.grpc_addr.to_string();
    let with_cert = options(&server_ca.pem, Some(leaf(&client_ca)));
    Client::connect_with(&addr, with_cert.clone())
        .await
        .unwrap()
        .admin()
        .create_table("t", vec![support::family("cf")], vec![])
        .await
        .unwrap();
    let opened = server
        .connections()
        .accepted(shoal_server::metrics::Listener::Grpc);
    framed_round_trip(&addr, with_cert).await.unwrap();
    // Two connections: gRPC for the region map, the framed one for the rest.
    assert_eq!(
        server
            .connections()
            .accepted(shoal_server::metrics::Listener::Grpc),
        opened + 2
    );
    // Mutual TLS holds on the framed connection too.
    assert!(
        framed_round_trip(&addr, options(&server_ca.pem, Some(leaf(&ca("stranger")))))
            .await
            .is_err(),
        "a framed client with an untrusted certificate was served"
    );
    server.shutdown().await;
}
