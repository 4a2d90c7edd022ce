//! Compiles the subset of etcd's v3 API that Shoal uses
//! (`proto/etcd/rpc.proto`) with protox — no `protoc` needed — into prost
//! messages and tonic client stubs.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(["etcd/rpc.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        .compile_fds(fds)?;
    Ok(())
}
