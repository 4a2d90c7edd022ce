//! Crash test: kill -9 during concurrent appends; every acknowledged entry is recovered
//! with its payload, and nothing else but intact entries appears.
//!
//! The test binary re-executes itself ([`child::Child`]): the `#[ignore]`d `crash_child`
//! test, run only when `SHOAL_WAL_CRASH_DIR` is set, appends from several tasks and prints
//! `ACK <region> <seq>` once each `append` has returned `Ok`. The parent reads those lines,
//! SIGKILLs the child after a random number of them, drains what the child printed before
//! dying (those were acknowledged too), reopens the WAL and checks. Cycles share one WAL
//! directory, so later cycles also recover segments torn and truncated by earlier ones.
//! `SHOAL_CRASH_CYCLES` (default 20) sets the number of cycles, `SHOAL_CRASH_SEED` the seed.
//!
//! The second test has the child also mark its entries flushed as it goes (printing
//! `FLUSHED <region> <seq>` first), so segments retire while it appends and later
//! segments are made from their files (recycling, `docs/wal.md`): a kill can land
//! anywhere in a recycled segment, and recovery must still return every acknowledged
//! entry above the flushed mark and never one left over from a file's earlier life.

use bytes::Bytes;
use rand::{Rng, SeedableRng};
use shoal_storage::wal::{Wal, WalOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

mod support;

use support::child;

const CHILD_TEST: &str = "crash_child";
const ENV_DIR: &str = "SHOAL_WAL_CRASH_DIR";
const ENV_BASE: &str = "SHOAL_WAL_CRASH_BASE";
const ENV_FLUSH: &str = "SHOAL_WAL_CRASH_FLUSH";
/// With flushing on, each task marks all but its last this many entries flushed,
/// every 32 appends.
const FLUSH_LAG: u64 = 24;
const TASKS: u64 = 6;

/// The payload of (region, seq): checkable after recovery, 0..~3 KiB so records straddle
/// batches and segments.
fn payload(region: &str, seq: u64) -> Bytes {
    let len = (seq.wrapping_mul(2654435761) % 3000) as usize;
    let mut p = format!("{region}#{seq}#").into_bytes();
    p.extend((0..len).map(|i| (seq as usize + i) as u8));
    Bytes::from(p)
}

fn wal_options(dir: &str) -> WalOptions {
    WalOptions {
        segment_bytes: 32 * 1024,
        ..WalOptions::local(dir)
    }
}

/// One line to the parent, flushed.
fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").expect("stdout");
    out.flush().expect("stdout");
}

/// The child: appends until killed. Runs only when the parent sets the env vars.
#[test]
#[ignore = "run by wal_crash_recovers_every_acknowledged_entry as a child process"]
fn crash_child() {
    let (Ok(dir), Ok(base)) = (std::env::var(ENV_DIR), std::env::var(ENV_BASE)) else {
        return;
    };
    let base: u64 = base.parse().expect("base seq");
    let flush = std::env::var(ENV_FLUSH).is_ok();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let wal = Wal::open(wal_options(&dir)).await.expect("child open");
        let mut tasks = Vec::new();
        for t in 0..TASKS {
            let wal = wal.clone();
            tasks.push(tokio::spawn(async move {
                let region = format!("r{t}");
                for seq in base.. {
                    wal.append(&region, seq, payload(&region, seq))
                        .await
                        .expect("child append");
                    say(&format!("ACK {region} {seq}"));
                    if flush && seq % 32 == 0 && seq - base > FLUSH_LAG {
                        // Announced before it is marked: a kill in between only
                        // makes the parent expect less.
                        say(&format!("FLUSHED {region} {}", seq - FLUSH_LAG));
                        wal.mark_flushed(&region, seq - FLUSH_LAG)
                            .await
                            .expect("child mark flushed");
                    }
                }
            }));
        }
        for t in tasks {
            t.await.expect("task");
        }
    });
}

#[test]
fn wal_crash_recovers_every_acknowledged_entry() {
    crash_cycles(false);
}

#[test]
fn wal_crash_with_retiring_and_recycled_segments_recovers_every_acknowledged_entry() {
    crash_cycles(true);
}

/// Kill -9 cycles on one WAL directory; with `flush`, the child retires segments as
/// it goes.
fn crash_cycles(flush: bool) {
    let cycles: u64 = std::env::var("SHOAL_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let seed: u64 = std::env::var("SHOAL_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(rand::random);
    println!("wal crash test (flush {flush}): {cycles} cycles, SHOAL_CRASH_SEED={seed}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().expect("tempdir");
    let dir_str = dir.path().to_str().expect("utf-8 temp path").to_owned();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");

    // Every acknowledged (region, seq), over all cycles.
    let mut acked: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    // The highest flushed mark announced per region: entries at or below it may be gone.
    let mut flushed: BTreeMap<String, u64> = BTreeMap::new();
    let mut recycled = 0;
    let mut tails_cut = 0;
    for cycle in 0..cycles {
        let base = (cycle + 1) * 10_000_000;
        // 0 kills the child while it may still be opening (recovering, truncating).
        let kill_after: usize = if rng.random_ratio(1, 8) {
            0
        } else {
            rng.random_range(1..=600)
        };
        let mut envs = vec![(ENV_DIR, dir_str.clone()), (ENV_BASE, base.to_string())];
        if flush {
            envs.push((ENV_FLUSH, "1".to_owned()));
        }
        let mut child = child::Child::spawn(CHILD_TEST, &envs);
        let mut lines = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut acks = 0;
        while acks < kill_after {
            match child.next_line(deadline) {
                child::Next::Line(l) => {
                    acks += usize::from(l.starts_with("ACK "));
                    lines.push(l);
                }
                other => panic!("cycle {cycle}: child stopped early ({other:?}) after {acks} acks"),
            }
        }
        child.kill();
        let (rest, status) = child.drain(Instant::now() + Duration::from_secs(30));
        assert!(
            !status.success(),
            "cycle {cycle}: the child should have been killed"
        );
        lines.extend(rest);
        for line in &lines {
            if let Some(mark) = line.strip_prefix("FLUSHED ") {
                let (region, seq) = mark.split_once(' ').expect("FLUSHED region seq");
                let seq: u64 = seq.parse().expect("seq");
                let m = flushed.entry(region.to_owned()).or_default();
                *m = (*m).max(seq);
            }
            if let Some(ack) = line.strip_prefix("ACK ") {
                let (region, seq) = ack.split_once(' ').expect("ACK region seq");
                acked
                    .entry(region.to_owned())
                    .or_default()
                    .insert(seq.parse().expect("seq"));
            }
        }

        runtime.block_on(async {
            let wal = Wal::open(wal_options(&dir_str))
                .await
                .unwrap_or_else(|e| panic!("cycle {cycle} (seed {seed}): open after kill: {e}"));
            tails_cut += wal.metrics().corrupt_tails_cut;
            recycled += wal.metrics().segments_recycled;
            let mut regions = wal.recovered_regions();
            regions.extend(acked.keys().cloned());
            regions.sort();
            regions.dedup();
            for region in regions {
                let got = wal.take_recovered(&region, 0);
                let mut seen = BTreeSet::new();
                for e in &got {
                    assert_eq!(e.region, region);
                    assert_eq!(
                        e.payload,
                        payload(&region, e.seq),
                        "cycle {cycle}: garbage payload for {region}/{}",
                        e.seq
                    );
                    assert!(
                        seen.insert(e.seq),
                        "cycle {cycle}: {region}/{} recovered twice",
                        e.seq
                    );
                }
                let mark = flushed.get(&region).copied().unwrap_or(0);
                for seq in acked
                    .get(&region)
                    .into_iter()
                    .flatten()
                    .filter(|&&s| s > mark)
                {
                    assert!(
                        seen.contains(seq),
                        "cycle {cycle} (seed {seed}): acknowledged {region}/{seq} lost"
                    );
                }
            }
            // What the child flushed stays flushed in the next run.
            for (region, &seq) in &flushed {
                wal.mark_flushed(region, seq).await.expect("mark flushed");
            }
            wal.close().await.expect("close");
        });
    }
    let total: usize = acked.values().map(BTreeSet::len).sum();
    println!(
        "wal crash test (flush {flush}): {total} acknowledged entries, all recovered above \
         the flushed marks; {tails_cut} torn tails cut; {recycled} first segments recycled"
    );
    assert!(total > 0, "no acknowledged entries at all");
    if flush {
        // Files were reused: at the opens, at least (spares made in the children
        // are not counted here).
        assert!(recycled > 0, "no segment was recycled in {cycles} cycles");
    }
}
