//! Not a timed test: prints WAL append throughput with local fsync, one task vs many, so
//! group commit can be seen at work. Run with
//! `cargo test -p shoal-storage --release --test wal_throughput -- --ignored --nocapture`
//! (`SHOAL_WAL_BENCH_DIR` picks the disk; default: the temp dir).

use bytes::Bytes;
use shoal_storage::wal::{Wal, WalOptions};
use std::time::{Duration, Instant};

async fn run(tasks: u64, duration: Duration, payload_len: usize) {
    let base = std::env::var("SHOAL_WAL_BENCH_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    let dir = tempfile::tempdir_in(base).expect("tempdir");
    let wal = Wal::open(WalOptions::local(dir.path()))
        .await
        .expect("open");
    let payload = Bytes::from(vec![0xabu8; payload_len]);
    let started = Instant::now();
    let mut handles = Vec::new();
    for t in 0..tasks {
        let (wal, payload) = (wal.clone(), payload.clone());
        handles.push(tokio::spawn(async move {
            let region = format!("region-{t}");
            let mut seq = 0;
            while started.elapsed() < duration {
                seq += 1;
                wal.append(&region, seq, payload.clone())
                    .await
                    .expect("append");
            }
        }));
    }
    for h in handles {
        h.await.expect("task");
    }
    let secs = started.elapsed().as_secs_f64();
    let m = wal.metrics();
    println!(
        "tasks={tasks:3} payload={payload_len}B: {:9.0} appends/s, {:7.0} syncs/s, mean batch {:6.1}, max batch {:5}, mean sync {:6.0} µs, max sync {:6} µs",
        m.appends as f64 / secs,
        m.syncs as f64 / secs,
        m.batch_entries_sum as f64 / m.syncs.max(1) as f64,
        m.batch_entries_max,
        m.sync_micros_sum as f64 / m.syncs.max(1) as f64,
        m.sync_micros_max,
    );
    wal.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "prints numbers; run by hand with --release"]
async fn wal_append_throughput() {
    for tasks in [1, 4, 16, 64] {
        run(tasks, Duration::from_secs(3), 200).await;
    }
}
