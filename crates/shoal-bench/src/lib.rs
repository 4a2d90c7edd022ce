//! `shoal bench`: YCSB-compatible workloads against a Shoal server.
//!
//! `keys` and `generators` reproduce Java YCSB exactly (keys, Zipfian,
//! scrambled Zipfian, latest, hotspot, uniform); `workload` reads YCSB
//! property files into a CoreWorkload; `runner` runs the load and run
//! phases (closed loop or paced, warm-up excluded); `measure` keeps
//! HdrHistograms and prints YCSB's text report or JSON; `cpu` measures CPU
//! per operation of the server and of this process; `scenario` runs the
//! scripted experiments (JSON, markdown and SVG reports).

pub mod cpu;
pub mod generators;
pub mod keys;
pub mod measure;
pub mod runner;
pub mod scenario;
pub mod server_side;
pub mod thread_cpu;
pub mod workload;

pub use measure::Measurements;
pub use runner::{PhaseReport, RunOptions};
pub use workload::{CoreWorkload, Op, Properties};
