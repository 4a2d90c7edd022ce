//! Block cache goals, measured end to end on this machine's disk.
//!
//! ```text
//! cargo bench -p shoal-storage --bench cache [-- --quick] [--json FILE]
//!     [--fill-mb N] [--dir DIR] [--skip-fio]
//! ```
//!
//! 1. **Restart**: fills a [`DiskCache`] with 64 KiB entries (10 GiB by default,
//!    `--fill-mb` or `SHOAL_CACHE_BENCH_FILL_MB` to scale, `--quick` = 256 MiB),
//!    closes it, drops the page cache and reopens it in a fresh process (this
//!    binary re-executed): time until `open` returns and until ≥ 95% of random
//!    gets hit. Then the same after SIGKILL of a child process that was filling
//!    a second directory, reopened in this process, with entries lost.
//! 2. **Index memory**: the cache's estimate (`index_bytes / entries`), a model
//!    of the real structures, and the VmRSS delta per entry of the fresh
//!    process that recovered the index.
//! 3. **Hit path**: L1 hit latency through a `FamilyCache`; L2 hit latency at
//!    concurrency 1 with a cold page cache against fio `--direct=1` random 64 KiB
//!    reads at QD1; L2 throughput with 32 tokio tasks against fio at QD32.
//!    `SHOAL_CACHE_BENCH_PAGE_CACHE=0` reads with `O_DIRECT`, `=1` through
//!    the page cache (`cache.l2_page_cache`, the default).
//! 4. **No silent drops**: inserts offered at the disk's sequential write
//!    bandwidth (fio) for ~10 s; inserted + dropped must equal offered.
//!
//! Needs root for `/proc/sys/vm/drop_caches` (the L2 reads through the page
//! cache); without it the L2 figures are flagged. All data goes under `--dir`
//! (default: a fresh directory in the system temp dir) and is removed at exit.

use bytes::Bytes;
use shoal_storage::cache::{
    BlockCache, CacheConfig, DiskCache, DiskCacheConfig, FamilyCachePolicy, L2,
};
use shoal_storage::sst::block::BlockBuilder;
use shoal_storage::sst::{Block, BlockAddr, BlockFetcher, FileId, MemoryFetcher};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ENTRY: usize = 64 << 10;
const SEGMENT: u64 = 16 << 20;
/// Entries of 64 KiB (+ 36 bytes of header, + 32 bytes of seal) in a 16 MiB segment.
const PER_SEGMENT: u64 = 255;
/// Inserts between two `flush` calls while filling: 16 MiB, a quarter of the queue.
const BATCH: u64 = 256;
const FILL_FILE: FileId = FileId(0x5348_4f41_4c5f_4649_4c4c_0000_0000_0001);
const KILL_FILE: FileId = FileId(0x5348_4f41_4c5f_4b49_4c4c_0000_0000_0002);
const DROP_FILE: FileId = FileId(0x5348_4f41_4c5f_4452_4f50_0000_0000_0003);

// ---------------------------------------------------------------- utilities

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

fn template() -> Vec<u8> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut v = Vec::with_capacity(ENTRY);
    while v.len() < ENTRY {
        v.extend_from_slice(&rng.next().to_le_bytes());
    }
    v.truncate(ENTRY);
    v
}

/// Entry `i`: the template with `i` in its first 8 bytes, so every entry differs.
fn value(template: &[u8], i: u64) -> Bytes {
    let mut v = template.to_vec();
    v[..8].copy_from_slice(&i.to_le_bytes());
    Bytes::from(v)
}

fn offset(i: u64) -> u64 {
    i * ENTRY as u64
}

/// A cache big enough that `entries` never evict, with room for the segment
/// each reopen starts.
fn capacity_for(entries: u64) -> u64 {
    (entries.div_ceil(PER_SEGMENT) + 8) * SEGMENT
}

/// `SHOAL_CACHE_BENCH_PAGE_CACHE=0` measures `O_DIRECT` reads, `=1` reads
/// through the page cache (`cache.l2_page_cache`, the default); children
/// inherit it.
fn open_cache(dir: &Path, capacity: u64) -> DiskCache {
    let defaults = DiskCacheConfig::new(dir, capacity);
    let page_cache_reads = match std::env::var("SHOAL_CACHE_BENCH_PAGE_CACHE").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => defaults.page_cache_reads,
    };
    DiskCache::open(DiskCacheConfig {
        page_cache_reads,
        ..defaults
    })
    .expect("open disk cache")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn mem_available_mib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .unwrap_or(0)
        >> 10
}

/// `sync; echo 3 > /proc/sys/vm/drop_caches`.
fn drop_caches() -> Result<(), String> {
    let _ = Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| e.to_string())
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p / 100.0).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Inserts entries `from..to` in batches, waiting for the writer after each
/// batch (so the queue never overflows); `after_batch` sees the count written.
fn fill(cache: &DiskCache, file: FileId, from: u64, to: u64, mut after_batch: impl FnMut(u64)) {
    let t = template();
    let mut i = from;
    while i < to {
        let end = (i + BATCH).min(to);
        for j in i..end {
            cache.insert(file, offset(j), value(&t, j));
        }
        cache.flush();
        i = end;
        after_batch(i);
    }
}

// ---------------------------------------------------------------- options

struct Opts {
    quick: bool,
    fill_bytes: u64,
    json: Option<PathBuf>,
    dir: Option<PathBuf>,
    skip_fio: bool,
}

fn parse_opts(args: &[String]) -> Opts {
    let mut o = Opts {
        quick: false,
        fill_bytes: 10 << 30,
        json: None,
        dir: std::env::var_os("SHOAL_CACHE_BENCH_DIR").map(PathBuf::from),
        skip_fio: false,
    };
    let mut fill_mb: Option<u64> = std::env::var("SHOAL_CACHE_BENCH_FILL_MB")
        .ok()
        .and_then(|v| v.parse().ok());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--json" => o.json = it.next().map(PathBuf::from),
            "--dir" => o.dir = it.next().map(PathBuf::from),
            "--fill-mb" => fill_mb = it.next().and_then(|v| v.parse().ok()),
            "--skip-fio" => o.skip_fio = true,
            // `cargo bench` passes `--bench`; filters are ignored.
            _ => {}
        }
    }
    if o.quick {
        o.fill_bytes = 256 << 20;
    }
    if let Some(mb) = fill_mb {
        o.fill_bytes = mb << 20;
    }
    o
}

// ---------------------------------------------------------------- children

/// `--child-fill DIR CAPACITY LIMIT`: fills until killed (or LIMIT entries),
/// printing `FLUSHED n DROPPED d` after every batch the writer has written.
fn child_fill(dir: &str, capacity: u64, limit: u64) {
    let cache = open_cache(Path::new(dir), capacity);
    let t = template();
    let mut i = 0;
    loop {
        if i < limit {
            for j in i..i + BATCH {
                cache.insert(KILL_FILE, offset(j), value(&t, j));
            }
            cache.flush();
            i += BATCH;
            println!("FLUSHED {i} DROPPED {}", cache.metrics().dropped);
        } else {
            // Keep writing: if the parent is gone, the closed pipe ends us.
            std::thread::sleep(Duration::from_millis(50));
            println!("IDLE");
        }
    }
}

/// `--child-reopen DIR CAPACITY ENTRIES`: a fresh process reopens a closed cache.
fn child_reopen(dir: &str, capacity: u64, entries: u64) {
    let rt = runtime();
    // Warm the runtime's blocking pool so its threads are not in the delta.
    rt.block_on(async {
        let _ = tokio::task::spawn_blocking(|| ()).await;
    });
    let rss0 = rss_kib();
    let t0 = Instant::now();
    let cache = open_cache(Path::new(dir), capacity);
    let open = t0.elapsed();
    let hits95 = rt.block_on(time_to_hits(&cache, FILL_FILE, entries, t0));
    let recovered = cache.wait_recovered(Duration::from_secs(600));
    let all = t0.elapsed();
    let rss1 = rss_kib();
    let m = cache.metrics();
    println!(
        "RESULT open_us={} hits95_us={} all_us={} recovered={} rss0_kib={rss0} rss1_kib={rss1} entries={} index_bytes={} recovery_micros={} recovered_entries={}",
        open.as_micros(),
        hits95.map_or(-1, |d| d.as_micros() as i64),
        all.as_micros(),
        recovered,
        m.entries,
        m.index_bytes,
        m.recovery_micros,
        m.recovered_entries,
    );
    cache.close();
}

/// Polls rounds of random gets over `0..present` until a round has ≥ 95% hits.
async fn time_to_hits(
    cache: &DiskCache,
    file: FileId,
    present: u64,
    t0: Instant,
) -> Option<Duration> {
    const ROUND: u64 = 40;
    let mut rng = Rng(0x1234_5678_9abc_def1);
    loop {
        let mut hits = 0;
        for _ in 0..ROUND {
            let i = rng.below(present);
            if L2::get(cache, file, offset(i)).await.is_some() {
                hits += 1;
            }
        }
        if hits * 100 >= 95 * ROUND {
            return Some(t0.elapsed());
        }
        if t0.elapsed() > Duration::from_secs(300) {
            return None;
        }
    }
}

// ---------------------------------------------------------------- fio

#[derive(Debug, Default, Clone)]
struct Fio {
    read_iops: f64,
    read_bw_kib: f64,
    p50_us: f64,
    p99_us: f64,
    write_bw_kib: f64,
}

/// Runs fio on `filename` (none: the job's `extra` names the files).
fn fio(filename: &str, extra: &[&str]) -> Result<(Fio, String), String> {
    let mut args: Vec<String> = vec!["--name=shoal".into()];
    if !filename.is_empty() {
        args.push(format!("--filename={filename}"));
    }
    args.extend(["--output-format=terse".into(), "--terse-version=3".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let cmd = format!("fio {}", args.join(" "));
    let out = Command::new("fio")
        .args(&args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let err: String = err.trim().chars().take(300).collect();
        return Err(format!("{cmd}: {err}"));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("3;"))
        .ok_or_else(|| format!("{cmd}: no terse line"))?;
    let f: Vec<&str> = line.split(';').collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // Terse v3 (1-based): 7 read bw KiB/s, 8 read iops, 18..37 read clat
    // percentiles "p%=usec", 48 write bw KiB/s.
    let pct = |p: &str| {
        f[17..37.min(f.len())]
            .iter()
            .find_map(|v| v.strip_prefix(p).and_then(|x| x.parse::<f64>().ok()))
            .unwrap_or(0.0)
    };
    Ok((
        Fio {
            read_bw_kib: num(6),
            read_iops: num(7),
            p50_us: pct("50.000000%="),
            p99_us: pct("99.000000%="),
            write_bw_kib: num(47),
        },
        cmd,
    ))
}

/// The fio file and its size/runtime flags, to re-measure the raw disk right
/// next to an L2 measurement (the virtual disk's speed drifts).
struct RawDisk {
    /// The fio file, or (no `size_arg`) a directory of files for `--opendir`.
    file: String,
    size_arg: Option<String>,
    rt_arg: String,
}

impl RawDisk {
    /// 64 KiB `--direct=1` random reads: psync at QD1, libaio at QD32.
    fn randread(&self, r: &mut Report, qd: u32) -> Option<Fio> {
        let depth = format!("--iodepth={qd}");
        let engine = if qd == 1 {
            "--ioengine=psync"
        } else {
            "--ioengine=libaio"
        };
        let mut args = vec![
            "--rw=randread",
            "--bs=64k",
            "--direct=1",
            engine,
            self.rt_arg.as_str(),
            "--time_based",
        ];
        if qd > 1 {
            args.push(&depth);
        }
        let opendir = format!("--opendir={}", self.file);
        let target = match &self.size_arg {
            Some(size) => {
                args.push(size);
                self.file.as_str()
            }
            None => {
                args.extend(["--readonly", "--file_service_type=random", &opendir]);
                ""
            }
        };
        match fio(target, &args) {
            Ok((f, cmd)) => {
                eprintln!("  {cmd}\n    -> {f:?}");
                if !r.commands.contains(&cmd) {
                    r.commands.push(cmd);
                }
                Some(f)
            }
            Err(e) => {
                r.note(format!("fio failed: {e}"));
                None
            }
        }
    }
}

// ---------------------------------------------------------------- report

struct Report {
    rows: Vec<(String, String, String, Option<bool>)>,
    figures: Vec<(String, f64)>,
    notes: Vec<String>,
    commands: Vec<String>,
}

impl Report {
    fn row(&mut self, figure: &str, measured: String, target: &str, met: Option<bool>) {
        self.rows
            .push((figure.into(), measured, target.into(), met));
    }

    fn fig(&mut self, name: &str, v: f64) {
        self.figures.push((name.into(), v));
    }

    fn note(&mut self, s: String) {
        eprintln!("note: {s}");
        self.notes.push(s);
    }

    fn print(&self) {
        let w0 = self
            .rows
            .iter()
            .map(|r| r.0.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let w1 = self
            .rows
            .iter()
            .map(|r| r.1.len())
            .max()
            .unwrap_or(8)
            .max(8);
        let w2 = self
            .rows
            .iter()
            .map(|r| r.2.len())
            .max()
            .unwrap_or(6)
            .max(6);
        println!();
        println!(
            "{:w0$} | {:w1$} | {:w2$} | met?",
            "figure", "measured", "target"
        );
        println!("{}", "-".repeat(w0 + w1 + w2 + 14));
        for (f, m, t, met) in &self.rows {
            let met = match met {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            };
            println!("{f:w0$} | {m:w1$} | {t:w2$} | {met}");
        }
        if !self.notes.is_empty() {
            println!();
            for n in &self.notes {
                println!("note: {n}");
            }
        }
    }

    fn json(&self) -> String {
        fn esc(s: &str) -> String {
            let mut o = String::with_capacity(s.len() + 2);
            o.push('"');
            for c in s.chars() {
                match c {
                    '"' => o.push_str("\\\""),
                    '\\' => o.push_str("\\\\"),
                    '\n' => o.push_str("\\n"),
                    c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
                    c => o.push(c),
                }
            }
            o.push('"');
            o
        }
        let num = |v: f64| {
            if v.is_finite() {
                format!("{v}")
            } else {
                "null".into()
            }
        };
        let figures: Vec<String> = self
            .figures
            .iter()
            .map(|(k, v)| format!("    {}: {}", esc(k), num(*v)))
            .collect();
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|(f, m, t, met)| {
                format!(
                    "    {{\"figure\": {}, \"measured\": {}, \"target\": {}, \"met\": {}}}",
                    esc(f),
                    esc(m),
                    esc(t),
                    met.map_or("null".into(), |b| b.to_string())
                )
            })
            .collect();
        let list = |v: &[String]| v.iter().map(|s| esc(s)).collect::<Vec<_>>().join(", ");
        format!(
            "{{\n  \"figures\": {{\n{}\n  }},\n  \"table\": [\n{}\n  ],\n  \"notes\": [{}],\n  \"commands\": [{}]\n}}\n",
            figures.join(",\n"),
            rows.join(",\n"),
            list(&self.notes),
            list(&self.commands)
        )
    }
}

/// Removes the bench's data directory however the run ends.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------- phases

fn l1_hits(r: &mut Report) {
    let cache = BlockCache::new(CacheConfig::default(), Arc::new(MemoryFetcher::new()), None);
    let family = cache.family(FamilyCachePolicy::default());
    let mut b = BlockBuilder::new(16);
    let mut n = 0u32;
    while b.estimated_len() < ENTRY - 200 {
        b.add(format!("row{n:08}").as_bytes(), &[b'v'; 100]);
        n += 1;
    }
    let block = Block::new(Bytes::from(b.finish())).expect("block");
    const BLOCKS: u64 = 1000;
    let addr = |i: u64| BlockAddr {
        file: FILL_FILE,
        offset: offset(i),
        len: ENTRY as u64,
    };
    for i in 0..BLOCKS {
        family.offer_block(addr(i), &block);
    }
    let cached = (0..BLOCKS)
        .filter(|&i| family.cached_block(&addr(i)).is_some())
        .count();
    assert_eq!(cached as u64, BLOCKS, "every block fits L1");
    let mut rng = Rng(42);
    let picks: Vec<BlockAddr> = (0..200_000).map(|_| addr(rng.below(BLOCKS))).collect();
    // Warm up, then time each lookup on its own.
    for a in picks.iter().take(20_000) {
        std::hint::black_box(family.cached_block(a));
    }
    let mut lat = Vec::with_capacity(picks.len());
    for a in &picks {
        let t = Instant::now();
        let b = family.cached_block(a);
        let d = t.elapsed();
        std::hint::black_box(b).expect("hit");
        lat.push(d.as_nanos() as u64);
    }
    lat.sort_unstable();
    let mut timer: Vec<u64> = (0..100_000)
        .map(|_| {
            let t = Instant::now();
            t.elapsed().as_nanos() as u64
        })
        .collect();
    timer.sort_unstable();
    let t = Instant::now();
    for a in &picks {
        std::hint::black_box(family.cached_block(a));
    }
    let mean = t.elapsed().as_nanos() as f64 / picks.len() as f64;
    let (p50, p99) = (percentile(&lat, 50.0), percentile(&lat, 99.0));
    r.fig("l1_hit_p50_ns", p50 as f64);
    r.fig("l1_hit_p99_ns", p99 as f64);
    r.fig("l1_hit_mean_ns_untimed", mean);
    r.fig("timer_overhead_p50_ns", percentile(&timer, 50.0) as f64);
    r.row(
        "L1 hit p50 / p99 (cached_block, 1 thread)",
        format!("{p50} / {p99} ns"),
        "<= 2000 ns",
        Some(p99 <= 2000),
    );
    // One verification pass over a 64 KiB frame (an L2 hit read by an SST
    // reader pays three: L2 entry, BlockCache frame check, reader decode).
    let data = template();
    let t = Instant::now();
    let mut acc = 0u32;
    for _ in 0..20_000 {
        acc ^= crc32c::crc32c(std::hint::black_box(&data));
    }
    std::hint::black_box(acc);
    let crc_us = secs(t.elapsed()) * 1e6 / 20_000.0;
    r.fig("crc32c_64k_us", crc_us);
    r.row(
        "crc32c over 64 KiB (one verification pass)",
        format!("{crc_us:.2} us"),
        "info",
        None,
    );
    r.note(format!(
        "L1 latencies include Instant overhead (p50 {} ns); untimed mean {mean:.0} ns/lookup",
        percentile(&timer, 50.0)
    ));
}

fn fill_and_close(r: &mut Report, dir: &Path, entries: u64) {
    let capacity = capacity_for(entries);
    let cache = open_cache(dir, capacity);
    let t = Instant::now();
    let mut last = Instant::now();
    fill(&cache, FILL_FILE, 0, entries, |n| {
        if last.elapsed() > Duration::from_secs(10) {
            last = Instant::now();
            eprintln!(
                "  fill {n}/{entries} ({:.0} MB/s, load {})",
                (n * ENTRY as u64) as f64 / 1e6 / secs(t.elapsed()),
                loadavg()
            );
        }
    });
    cache.close();
    let took = t.elapsed();
    let m = cache.metrics();
    let mbps = (entries * ENTRY as u64) as f64 / 1e6 / secs(took);
    eprintln!(
        "  filled {entries} entries in {:.1} s ({mbps:.0} MB/s): inserts {} dropped {} evicted {} entries {}",
        secs(took),
        m.inserts,
        m.dropped,
        m.evicted,
        m.entries
    );
    r.fig("fill_entries", entries as f64);
    r.fig("fill_seconds", secs(took));
    r.fig("fill_mb_per_s", mbps);
    r.fig("fill_dropped", m.dropped as f64);
    r.row(
        "fill (batches of 256 + flush, buffered)",
        format!(
            "{:.2} GiB in {:.1} s = {mbps:.0} MB/s",
            (entries * ENTRY as u64) as f64 / (1u64 << 30) as f64,
            secs(took)
        ),
        "info",
        None,
    );
    assert_eq!(
        m.dropped, 0,
        "the fill waits for the writer, nothing may drop"
    );
    assert_eq!(m.entries, entries, "nothing evicted");
}

fn parse_result(line: &str) -> Vec<(String, f64)> {
    line.split_whitespace()
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            let v = match v {
                "true" => 1.0,
                "false" => 0.0,
                v => v.parse().ok()?,
            };
            Some((k.to_string(), v))
        })
        .collect()
}

fn clean_restart(r: &mut Report, dir: &Path, entries: u64, cold: bool) {
    let exe = std::env::current_exe().expect("bench binary");
    let out = Command::new(exe)
        .args([
            "--child-reopen",
            &dir.display().to_string(),
            &capacity_for(entries).to_string(),
            &entries.to_string(),
        ])
        .stderr(Stdio::inherit())
        .output()
        .expect("run reopen child");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .unwrap_or_else(|| panic!("reopen child printed no result: {text}"));
    let kv = parse_result(line);
    let get = |k: &str| kv.iter().find(|(n, _)| n == k).map_or(0.0, |(_, v)| *v);
    let open_s = get("open_us") / 1e6;
    let hits_s = get("hits95_us") / 1e6;
    let all_s = get("all_us") / 1e6;
    let rec_s = get("recovery_micros") / 1e6;
    let tag = if cold { "cold" } else { "warm" };
    eprintln!("  clean reopen ({tag} page cache): {line}");
    r.fig(&format!("clean_{tag}_open_s"), open_s);
    r.fig(&format!("clean_{tag}_hits95_s"), hits_s);
    r.fig(&format!("clean_{tag}_recovery_s"), rec_s);
    r.row(
        &format!("clean restart, {tag} page cache: open returns"),
        format!("{open_s:.3} s"),
        "<= 5 s",
        Some(open_s <= 5.0),
    );
    r.row(
        &format!("clean restart, {tag} page cache: >= 95% gets hit"),
        if hits_s < 0.0 {
            "never".into()
        } else {
            format!("{hits_s:.3} s (index rebuilt {rec_s:.3} s)")
        },
        "<= 5 s",
        Some((0.0..=5.0).contains(&hits_s)),
    );
    if !cold {
        return;
    }
    let n = get("entries");
    let est = get("index_bytes") / n.max(1.0);
    let rss = (get("rss1_kib") - get("rss0_kib")) * 1024.0 / n.max(1.0);
    r.fig("index_entries", n);
    r.fig("index_estimate_bytes_per_entry", est);
    r.fig("index_rss_bytes_per_entry", rss);
    r.fig("recovery_seconds_all", all_s);
    r.row(
        "index memory: metrics estimate",
        format!("{est:.1} B/entry"),
        "<= 100 B",
        Some(est <= 100.0),
    );
    r.row(
        "index memory: VmRSS delta, fresh process",
        format!("{rss:.1} B/entry ({n:.0} entries)"),
        "<= 100 B",
        Some(rss <= 100.0),
    );
    // A model of what the structures actually hold (hashbrown: power-of-two
    // buckets at <= 7/8 load, one control byte each; the per-segment key lists
    // grow by doubling to 256 for 255 entries).
    // Mirrors src/cache/disk: `Key` is three u64s (24 B, align 8) since
    // 3e85a64, `Loc` three u32s (12 B); the per-segment lists hold `Key`s.
    let key = std::mem::size_of::<[u64; 3]>();
    let loc = std::mem::size_of::<[u32; 3]>();
    let bucket = (key + loc).next_multiple_of(std::mem::align_of::<[u64; 3]>());
    let buckets = ((n as u64 * 8 / 7).max(1)).next_power_of_two();
    let lists = n.div_euclid(PER_SEGMENT as f64).ceil() * 256.0 * key as f64;
    let model = (buckets as f64 * (bucket as f64 + 1.0) + lists) / n.max(1.0);
    r.fig("index_model_bytes_per_entry", model);
    r.row(
        "index memory: model of the structures",
        format!("{model:.1} B/entry ({key} B key, {bucket} B bucket, {buckets} buckets)"),
        "<= 100 B",
        Some(model <= 100.0),
    );
    if n < 50_000.0 {
        r.note(format!(
            "RSS per entry over only {n:.0} entries is dominated by allocator/runtime noise; use the full size"
        ));
    }
}

fn l2_hits(r: &mut Report, dir: &Path, entries: u64, disk: Option<&RawDisk>, cold: bool) {
    let rt = runtime();
    let cache = open_cache(dir, capacity_for(entries));
    assert!(cache.wait_recovered(Duration::from_secs(600)));
    // The raw comparison reads the cache's own segment files (same span, same
    // extents; the virtual disk is faster over small spans), right after each
    // L2 measurement: fio --opendir over hard links to the full segments.
    let links = dir.with_extension("fio-links");
    let _ = std::fs::remove_dir_all(&links);
    std::fs::create_dir_all(&links).expect("fio links dir");
    for e in std::fs::read_dir(dir)
        .expect("cache dir")
        .filter_map(|e| e.ok())
    {
        if e.file_name().to_string_lossy().starts_with("slot-")
            && e.metadata().is_ok_and(|m| m.len() >= SEGMENT / 2)
        {
            std::fs::hard_link(e.path(), links.join(e.file_name())).expect("hard link");
        }
    }
    let disk = disk.map(|d| RawDisk {
        file: links.display().to_string(),
        size_arg: None,
        rt_arg: d.rt_arg.clone(),
    });
    let disk = disk.as_ref();
    let mut keys: Vec<u64> = (0..entries).collect();
    Rng(7).shuffle(&mut keys);
    let n1 = (entries / 4).clamp(1, 3000) as usize;
    let n32 = ((entries as usize).saturating_sub(n1)).min(40_000);
    let drop_note = |r: &mut Report| {
        if cold && let Err(e) = drop_caches() {
            r.note(format!(
                "drop_caches failed ({e}): L2 reads may come from the page cache"
            ));
        }
    };
    // Concurrency 1.
    drop_note(r);
    let load1 = loadavg();
    let mut lat = Vec::with_capacity(n1);
    let t = template();
    rt.block_on(async {
        for (k, &i) in keys[..n1].iter().enumerate() {
            let s = Instant::now();
            let got = L2::get(&cache, FILL_FILE, offset(i)).await;
            lat.push(s.elapsed().as_nanos() as u64);
            let got = got.expect("L2 hit");
            assert_eq!(got.len(), ENTRY);
            if k % 100 == 0 {
                assert_eq!(got, value(&t, i), "entry {i} reads back");
            }
        }
    });
    lat.sort_unstable();
    let (p50, p99) = (
        percentile(&lat, 50.0) as f64 / 1e3,
        percentile(&lat, 99.0) as f64 / 1e3,
    );
    // The same keys again, now in the page cache: the software cost of a hit
    // (spawn_blocking, buffer, copy, crc32c).
    let mut warm = Vec::with_capacity(n1);
    rt.block_on(async {
        for &i in &keys[..n1] {
            let s = Instant::now();
            let got = L2::get(&cache, FILL_FILE, offset(i)).await;
            warm.push(s.elapsed().as_nanos() as u64);
            got.expect("L2 hit");
        }
    });
    warm.sort_unstable();
    let (w50, w99) = (
        percentile(&warm, 50.0) as f64 / 1e3,
        percentile(&warm, 99.0) as f64 / 1e3,
    );
    r.fig("l2_warm_p50_us", w50);
    r.fig("l2_warm_p99_us", w99);
    r.row(
        "L2 hit p50 / p99, page-cache warm (software floor)",
        format!("{w50:.1} / {w99:.1} us"),
        "info",
        None,
    );
    r.fig("l2_qd1_p50_us", p50);
    r.fig("l2_qd1_p99_us", p99);
    r.row(
        "L2 hit p50 / p99, concurrency 1 (L2::get, cold)",
        format!("{p50:.0} / {p99:.0} us ({n1} gets, load {load1})"),
        "-",
        None,
    );
    if let Some(qd1) = disk.and_then(|d| d.randread(r, 1)) {
        r.fig("raw_adjacent_qd1_p50_us", qd1.p50_us);
        r.fig("raw_adjacent_qd1_p99_us", qd1.p99_us);
        let (r50, r99) = (p50 / qd1.p50_us.max(1e-9), p99 / qd1.p99_us.max(1e-9));
        r.row(
            "raw fio --direct=1 64k randread QD1 p50 / p99 (run next)",
            format!("{:.0} / {:.0} us", qd1.p50_us, qd1.p99_us),
            "-",
            None,
        );
        r.fig("l2_qd1_p50_ratio", r50);
        r.fig("l2_qd1_p99_ratio", r99);
        r.row(
            "L2 / raw latency ratio p50 / p99",
            format!("{r50:.2}x / {r99:.2}x"),
            "<= 2x",
            Some(r50 <= 2.0 && r99 <= 2.0),
        );
    }
    // Concurrency 32.
    drop_note(r);
    let cache = Arc::new(cache);
    let work: Arc<Vec<u64>> = Arc::new(keys[n1..n1 + n32].to_vec());
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let start = Instant::now();
    let misses = rt.block_on(async {
        let tasks: Vec<_> = (0..32)
            .map(|_| {
                let (cache, work, next) = (cache.clone(), work.clone(), next.clone());
                tokio::spawn(async move {
                    let mut misses = 0u64;
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&i) = work.get(k) else { break };
                        if L2::get(&*cache, FILL_FILE, offset(i)).await.is_none() {
                            misses += 1;
                        }
                    }
                    misses
                })
            })
            .collect();
        let mut misses = 0;
        for t in tasks {
            misses += t.await.expect("task");
        }
        misses
    });
    let took = start.elapsed();
    let iops = n32 as f64 / secs(took);
    r.fig("l2_qd32_iops", iops);
    r.fig("l2_qd32_misses", misses as f64);
    r.row(
        "L2 hits/s, 32 tokio tasks (cold)",
        format!(
            "{iops:.0}/s = {:.0} MB/s ({n32} gets, {misses} misses, load {})",
            iops * ENTRY as f64 / 1e6,
            loadavg()
        ),
        "-",
        None,
    );
    if let Some(qd32) = disk.and_then(|d| d.randread(r, 32)) {
        r.fig("raw_adjacent_qd32_iops", qd32.read_iops);
        let ratio = iops / qd32.read_iops.max(1e-9);
        r.fig("l2_qd32_ratio", ratio);
        r.row(
            "raw fio --direct=1 64k randread QD32 libaio (run next)",
            format!(
                "{:.0} IOPS = {:.0} MB/s",
                qd32.read_iops,
                qd32.read_bw_kib * 1024.0 / 1e6
            ),
            "-",
            None,
        );
        r.row(
            "L2 QD32 / raw QD32 throughput",
            format!("{:.0}%", ratio * 100.0),
            ">= 70%",
            Some(ratio >= 0.7),
        );
    }
    let _ = std::fs::remove_dir_all(&links);
    // `remove_file` walks the whole index under the one index lock; time it
    // for a file with no entries (what every get and insert waits behind).
    let t = Instant::now();
    L2::remove_file(&*cache, FileId(1));
    let remove_ms = secs(t.elapsed()) * 1e3;
    r.fig("remove_file_ms", remove_ms);
    r.row(
        "remove_file (index lock held), full index",
        format!("{remove_ms:.2} ms over {entries} entries"),
        "info",
        None,
    );
    let m = cache.metrics();
    eprintln!("  L2 metrics after reads: {m:?}");
    cache.close();
}

fn kill_restart(r: &mut Report, dir: &Path, entries: u64) {
    let capacity = capacity_for(entries + 2 * BATCH);
    let kill_at = (entries * 9 / 10).max(BATCH);
    let exe = std::env::current_exe().expect("bench binary");
    let mut child = Command::new(exe)
        .args([
            "--child-fill",
            &dir.display().to_string(),
            &capacity.to_string(),
            &entries.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn fill child");
    let stdout = child.stdout.take().expect("child stdout");
    let mut flushed = 0u64;
    let mut dropped = 0u64;
    let t = Instant::now();
    let mut last = Instant::now();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let mut w = line.split_whitespace();
        if w.next() == Some("FLUSHED") {
            flushed = w.next().and_then(|v| v.parse().ok()).unwrap_or(flushed);
            dropped = w.nth(1).and_then(|v| v.parse().ok()).unwrap_or(dropped);
        }
        if last.elapsed() > Duration::from_secs(10) {
            last = Instant::now();
            eprintln!("  child flushed {flushed}/{kill_at} (load {})", loadavg());
        }
        if flushed >= kill_at {
            break;
        }
    }
    child.kill().expect("SIGKILL child");
    let status = child.wait().expect("reap child");
    eprintln!(
        "  killed the fill child after {flushed} flushed entries ({:.1} s, {status})",
        secs(t.elapsed())
    );
    if let Err(e) = drop_caches() {
        r.note(format!("drop_caches before the kill -9 reopen failed: {e}"));
    }
    let rt = runtime();
    let rss0 = rss_kib();
    let t0 = Instant::now();
    let cache = open_cache(dir, capacity);
    let open = t0.elapsed();
    let hits95 = rt.block_on(time_to_hits(&cache, KILL_FILE, flushed, t0));
    assert!(cache.wait_recovered(Duration::from_secs(600)));
    let all = t0.elapsed();
    let rss1 = rss_kib();
    let m = cache.metrics();
    let lost = (0..flushed)
        .filter(|&i| !cache.contains(KILL_FILE, offset(i)))
        .count() as u64;
    let beyond = (flushed..flushed + 2 * BATCH)
        .filter(|&i| cache.contains(KILL_FILE, offset(i)))
        .count();
    // Read back a sample: the data must be the data written.
    let tpl = template();
    let mut rng = Rng(99);
    let wrong = rt.block_on(async {
        let mut wrong = 0;
        for _ in 0..500 {
            let i = rng.below(flushed);
            if let Some(v) = L2::get(&cache, KILL_FILE, offset(i)).await
                && v != value(&tpl, i)
            {
                wrong += 1;
            }
        }
        wrong
    });
    let open_s = secs(open);
    let hits_s = hits95.map_or(-1.0, secs);
    let rec_s = m.recovery_micros as f64 / 1e6;
    eprintln!(
        "  kill -9 reopen: open {open_s:.3} s, 95% hits {hits_s:.3} s, all {:.3} s, rss {rss0}->{rss1} KiB, {m:?}",
        secs(all)
    );
    r.fig("kill_flushed", flushed as f64);
    r.fig("kill_child_dropped", dropped as f64);
    r.fig("kill_open_s", open_s);
    r.fig("kill_hits95_s", hits_s);
    r.fig("kill_recovery_s", rec_s);
    r.fig("kill_lost", lost as f64);
    r.fig("kill_recovered_beyond_flushed", beyond as f64);
    r.fig("kill_wrong_data", wrong as f64);
    r.row(
        "kill -9 restart (cold): open returns",
        format!("{open_s:.3} s"),
        "<= 10 s",
        Some(open_s <= 10.0),
    );
    r.row(
        "kill -9 restart (cold): >= 95% gets hit",
        if hits_s < 0.0 {
            "never".into()
        } else {
            format!("{hits_s:.3} s (index rebuilt {rec_s:.3} s)")
        },
        "<= 10 s",
        Some((0.0..=10.0).contains(&hits_s)),
    );
    r.row(
        "kill -9: flushed entries lost / wrong data",
        format!("{lost} of {flushed} lost, {wrong}/500 wrong; +{beyond} unflushed kept"),
        "0 lost",
        Some(lost == 0 && wrong == 0),
    );
    cache.close();
}

fn no_silent_drops(r: &mut Report, dir: &Path, seq_write_bw: f64, quick: bool) {
    let window = if quick {
        Duration::from_secs(3)
    } else {
        Duration::from_secs(10)
    };
    let capacity = if quick { 512 << 20 } else { 4 << 30 };
    let cache = open_cache(dir, capacity);
    let rate = seq_write_bw / ENTRY as f64; // entries per second
    let data = Bytes::from(template());
    let mut offered = 0u64;
    let start = Instant::now();
    while start.elapsed() < window {
        let due = (secs(start.elapsed()) * rate) as u64;
        while offered < due {
            cache.insert(DROP_FILE, offset(offered), data.clone());
            offered += 1;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    let offer_s = secs(start.elapsed());
    cache.flush();
    let drained_s = secs(start.elapsed());
    let m = cache.metrics();
    let conserved = m.inserts + m.dropped == offered;
    r.fig("drops_offered", offered as f64);
    r.fig("drops_inserted", m.inserts as f64);
    r.fig("drops_dropped", m.dropped as f64);
    r.fig("drops_rate_entries_per_s", rate);
    r.row(
        "sustained inserts at disk seq-write BW",
        format!(
            "{:.0} MB/s offered for {offer_s:.1} s: {offered} offered, {} inserted, {} dropped ({:.1}%), drained at {drained_s:.1} s",
            seq_write_bw / 1e6,
            m.inserts,
            m.dropped,
            m.dropped as f64 * 100.0 / offered.max(1) as f64
        ),
        "-",
        None,
    );
    r.row(
        "inserted + dropped == offered",
        format!(
            "{} + {} = {} vs {offered}",
            m.inserts,
            m.dropped,
            m.inserts + m.dropped
        ),
        "equal",
        Some(conserved),
    );
    eprintln!("  drop test metrics: {m:?}");
    cache.close();
}

// ---------------------------------------------------------------- main

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--child-fill") {
        let num = |k: usize| {
            args.get(i + k)
                .and_then(|v| v.parse().ok())
                .expect("child arg")
        };
        child_fill(&args[i + 1], num(2), num(3));
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--child-reopen") {
        let num = |k: usize| {
            args.get(i + k)
                .and_then(|v| v.parse().ok())
                .expect("child arg")
        };
        child_reopen(&args[i + 1], num(2), num(3));
        return;
    }
    let o = parse_opts(&args);
    let base = o
        .dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("shoal-cache-bench-{}", std::process::id()));
    std::fs::create_dir_all(&base).expect("bench dir");
    let _cleanup = Cleanup(base.clone());
    let entries = (o.fill_bytes / ENTRY as u64).max(2 * BATCH);
    let mut r = Report {
        rows: Vec::new(),
        figures: Vec::new(),
        notes: Vec::new(),
        commands: Vec::new(),
    };
    let started = Instant::now();
    eprintln!(
        "cache bench: {entries} entries of 64 KiB ({:.2} GiB) in {}; {} CPUs, {} MiB available, load {}",
        (entries * ENTRY as u64) as f64 / (1u64 << 30) as f64,
        base.display(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        mem_available_mib(),
        loadavg()
    );
    r.fig(
        "cpus",
        std::thread::available_parallelism().map_or(0, |n| n.get()) as f64,
    );
    r.fig("mem_available_mib", mem_available_mib() as f64);
    r.note(format!("load average at start: {}", loadavg()));
    let can_drop = drop_caches();
    if let Err(e) = &can_drop {
        r.note(format!(
            "cannot drop the page cache ({e}): L2 read figures are optimistic unless the data set exceeds free RAM"
        ));
    }

    eprintln!("[1/6] L1 hit path");
    l1_hits(&mut r);

    eprintln!("[2/6] raw disk (fio)");
    let raw = if o.skip_fio {
        None
    } else {
        let file = base.join("fio.dat");
        let size = if o.quick { "512M" } else { "4G" };
        let runtime = if o.quick { "3" } else { "10" };
        let run = |r: &mut Report, extra: &[&str]| match fio(&file.display().to_string(), extra) {
            Ok((f, cmd)) => {
                eprintln!("  {cmd}\n    -> {f:?}");
                r.commands.push(cmd);
                Some(f)
            }
            Err(e) => {
                r.note(format!("fio failed: {e}"));
                None
            }
        };
        let size_arg = format!("--size={size}");
        let rt_arg = format!("--runtime={runtime}");
        let seq = run(
            &mut r,
            &[
                "--rw=write",
                "--bs=1M",
                "--direct=1",
                "--ioengine=libaio",
                "--iodepth=8",
                &size_arg,
                "--end_fsync=1",
            ],
        );
        let disk = RawDisk {
            file: file.display().to_string(),
            size_arg: Some(size_arg.clone()),
            rt_arg: rt_arg.clone(),
        };
        let qd1 = disk.randread(&mut r, 1);
        let qd32 = disk.randread(&mut r, 32);
        let ios = if o.quick {
            "--number_ios=1000"
        } else {
            "--number_ios=3000"
        };
        let buffered = run(
            &mut r,
            &[
                "--rw=randread",
                "--bs=64k",
                "--direct=0",
                "--invalidate=1",
                "--fadvise_hint=0",
                "--ioengine=psync",
                &size_arg,
                ios,
            ],
        );
        if let Some(b) = buffered {
            r.fig("raw_buffered_qd1_p50_us", b.p50_us);
            r.fig("raw_buffered_qd1_p99_us", b.p99_us);
            r.row(
                "fio buffered (no O_DIRECT, no fadvise) 64k randread QD1 p50 / p99",
                format!("{:.0} / {:.0} us", b.p50_us, b.p99_us),
                "info",
                None,
            );
        }
        match (seq, qd1, qd32) {
            (Some(s), Some(a), Some(b)) => {
                r.fig("raw_seq_write_mb_s", s.write_bw_kib * 1024.0 / 1e6);
                r.fig("raw_qd1_p50_us", a.p50_us);
                r.fig("raw_qd1_p99_us", a.p99_us);
                r.fig("raw_qd1_iops", a.read_iops);
                r.fig("raw_qd32_iops", b.read_iops);
                r.row(
                    "raw fio --direct=1 seq write 1M QD8",
                    format!("{:.0} MB/s", s.write_bw_kib * 1024.0 / 1e6),
                    "-",
                    None,
                );
                r.row(
                    "raw fio --direct=1 64k randread QD1 p50/p99, QD32 (at start)",
                    format!(
                        "{:.0} / {:.0} us, {:.0} IOPS",
                        a.p50_us, a.p99_us, b.read_iops
                    ),
                    "info",
                    None,
                );
                Some((s, a, b, disk))
            }
            _ => None,
        }
    };

    eprintln!("[3/6] fill {entries} entries, close (load {})", loadavg());
    let dir_a = base.join("clean");
    fill_and_close(&mut r, &dir_a, entries);

    eprintln!(
        "[4/6] clean restart in a fresh process (load {})",
        loadavg()
    );
    let cold = drop_caches().is_ok();
    clean_restart(&mut r, &dir_a, entries, cold);
    clean_restart(&mut r, &dir_a, entries, false);

    eprintln!("[5/6] L2 hit path (load {})", loadavg());
    l2_hits(
        &mut r,
        &dir_a,
        entries,
        raw.as_ref().map(|(_, _, _, d)| d),
        can_drop.is_ok(),
    );
    if let Some((_, _, _, d)) = &raw {
        let _ = std::fs::remove_file(&d.file);
    }
    let _ = std::fs::remove_dir_all(&dir_a);

    eprintln!(
        "[6/6] kill -9 restart, then sustained inserts (load {})",
        loadavg()
    );
    let dir_b = base.join("killed");
    kill_restart(&mut r, &dir_b, entries);
    let _ = std::fs::remove_dir_all(&dir_b);
    match raw.as_ref() {
        Some((s, _, _, _)) => {
            let dir_c = base.join("drops");
            no_silent_drops(&mut r, &dir_c, s.write_bw_kib * 1024.0, o.quick);
            let _ = std::fs::remove_dir_all(&dir_c);
        }
        None => r.note("no fio figures: sustained-insert test skipped".into()),
    }

    r.note(format!(
        "load average at end: {}; total {:.0} s",
        loadavg(),
        secs(started.elapsed())
    ));
    r.print();
    if let Some(path) = &o.json {
        std::fs::write(path, r.json()).expect("write json");
        println!("\njson: {}", path.display());
    }
}
