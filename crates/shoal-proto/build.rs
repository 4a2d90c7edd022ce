//! Compiles `proto/shoal/v1/shoal.proto` with protox (a protobuf compiler in
//! Rust, so no `protoc` needs to be installed) and generates prost messages and
//! tonic client and server stubs; and HBase's RPC messages
//! (`proto/hbase/`, package `hbase.pb`) as plain prost messages for the
//! native-RPC front door; and HBase's REST gateway's messages
//! (`proto/hbase_rest/`) for the REST front door.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(["shoal/v1/shoal.proto"], ["proto"])?;
    let mut config = tonic_prost_build::configure();
    for path in [
        ".shoal.v1.Cell",
        ".shoal.v1.Row",
        ".shoal.v1.Put",
        ".shoal.v1.RowMutation",
        ".shoal.v1.GetSpec",
        ".shoal.v1.PeerBlocksResponse",
        ".shoal.v1.HandedRow",
        ".shoal.v1.HandedCell",
        ".shoal.v1.EndMoveReadsResponse",
    ] {
        config = config.bytes(path);
    }
    config
        // Row data as `bytes::Bytes`: a server hands cells from cached blocks
        // and memstore entries to the encoder without copying them into
        // fresh vectors first, and a decoder slices values out of the
        // received buffer instead of allocating one vector per field.
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;

    // HBase's messages: bytes fields as `Bytes` (cells and keys are sliced
    // out of the received frame), no service stubs (the native RPC is not
    // gRPC: `shoal-server`'s `hbase_rpc` dispatches by method name).
    let hbase = protox::compile(
        [
            "RPC.proto",
            "Client.proto",
            "Registry.proto",
            "ShoalMaster.proto",
            "ShoalAdmin.proto",
            // Cluster and region load (`GetClusterStatus`, `GetRegionLoad`).
            "ClusterStatus.proto",
            // HBase's files: snapshot manifests, split references, HFile
            // trailers (read by `shoal-import` and `shoal-hfile`).
            "Snapshot.proto",
            "HFile.proto",
        ],
        ["proto/hbase"],
    )?;
    tonic_prost_build::configure()
        .bytes(".hbase.pb")
        .build_client(false)
        .build_server(false)
        .compile_fds(hbase)?;

    // HBase's REST gateway's messages (`proto/hbase_rest/`, vendored from
    // hbase-rest 2.6.1): the bodies of `application/x-protobuf` requests
    // and answers of `shoal-server`'s `rest` door.
    let rest = protox::compile(
        [
            "CellMessage.proto",
            "CellSetMessage.proto",
            "ColumnSchemaMessage.proto",
            "NamespacePropertiesMessage.proto",
            "NamespacesMessage.proto",
            "ScannerMessage.proto",
            "StorageClusterStatusMessage.proto",
            "TableInfoMessage.proto",
            "TableListMessage.proto",
            "TableSchemaMessage.proto",
            "VersionMessage.proto",
        ],
        ["proto/hbase_rest"],
    )?;
    tonic_prost_build::configure()
        .bytes(".org.apache.hadoop.hbase.rest.protobuf.generated")
        .build_client(false)
        .build_server(false)
        .compile_fds(rest)?;
    Ok(())
}
