//! Shoal's HFile writer: files read back equal through this crate's reader
//! (`roundtrip`), and HBase 2.6.1's own reader opens, scans and seeks them (`hbase`).

#[path = "../support/mod.rs"]
mod support;

mod cells;
mod hbase;
mod roundtrip;
