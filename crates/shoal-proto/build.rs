//! Compiles `proto/shoal/v1/shoal.proto` with protox (a protobuf compiler in
//! Rust, so no `protoc` needs to be installed) and generates prost messages and
//! tonic client and server stubs.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(["shoal/v1/shoal.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
