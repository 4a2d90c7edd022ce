//! `shoal bench ycsb` end to end on an embedded server: each standard
//! workload loads and runs, prints YCSB's report and writes complete JSON.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

#[test]
fn every_standard_workload_runs_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads");
    for w in ["a", "b", "c", "d", "e", "f"] {
        let json = dir.path().join(format!("{w}.json"));
        let out = std::process::Command::new(support::shoal_bin())
            .args(["bench", "ycsb", "both", "-P"])
            .arg(format!("{root}/workload{w}"))
            .args([
                "-p",
                "recordcount=300",
                "-p",
                "operationcount=600",
                "-p",
                "maxscanlength=20",
                "--threads",
                "4",
                "--embedded",
                "--json",
            ])
            .arg(&json)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "workload {w}: {stderr}");
        assert!(
            stdout.contains("[OVERALL], Throughput(ops/sec), "),
            "{stdout}"
        );
        assert!(stdout.contains("[INSERT], Return=OK, 300"), "{stdout}");
        assert!(!stdout.contains("Return=ERROR"), "{stdout}");
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let ops = &v["run"]["operations"];
        let total: u64 = ops
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.as_str() != "READ-MODIFY-WRITE" || w == "f")
            .map(|(_, o)| o["operations"].as_u64().unwrap())
            .sum();
        assert_eq!(total, 600, "workload {w}: {ops}");
        for key in ["p50_us", "p99_us", "p999_us", "p9999_us", "average_us"] {
            assert!(
                ops.as_object()
                    .unwrap()
                    .values()
                    .all(|o| o.get(key).is_some()),
                "{key}"
            );
        }
        assert!(v["run"]["throughput_ops_per_sec"].as_f64().unwrap() > 0.0);
        // The embedded server shares the process: only the process's CPU
        // per operation is known.
        assert!(v["run"]["server_cpu_us_per_op"].is_null(), "{v}");
        assert!(
            v["run"]["client_cpu_us_per_op"].as_f64().unwrap() > 0.0,
            "{v}"
        );
        assert!(
            stdout.contains("[CPU], per operation, server not measured"),
            "{stdout}"
        );
        // Writes of concurrent threads may share one call (the client's
        // write combining), but every workload's run phase does at least 300
        // reads or scans of its own.
        let requests = v["server"]["requests_during_bench"].as_u64().unwrap();
        assert!(requests >= 300, "workload {w}: {requests} requests");
    }
}

#[test]
fn ycsb_against_a_server_in_another_process_reports_its_cpu_per_operation() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let server = support::ServerProcess::start(&data, None);
    let json = dir.path().join("c.json");
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads");
    let out = std::process::Command::new(support::shoal_bin())
        .args(["bench", "ycsb", "both", "-P"])
        .arg(format!("{root}/workloadc"))
        .args(["-p", "recordcount=300", "-p", "operationcount=600"])
        .args([
            "--threads",
            "4",
            "--addr",
            &server.grpc.to_string(),
            "--http",
            &server.http.to_string(),
            "--window",
            "200ms",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("[CPU], per operation, server "), "{stdout}");
    // Windows of the width asked for (the first may be empty, and so not
    // listed, when the first call starts late on a loaded machine).
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("[WINDOW], ") && l.contains(" s +200ms, operations ")),
        "{stdout}"
    );
    assert!(stdout.contains("[SERVER], put calls "), "{stdout}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for phase in ["load", "run"] {
        for key in ["server_cpu_us_per_op", "client_cpu_us_per_op"] {
            let us = v[phase][key].as_f64().unwrap();
            assert!(us > 0.0 && us.is_finite(), "{phase} {key}: {v}");
        }
        let sys = v[phase]["server_cpu_system_us_per_op"].as_f64().unwrap();
        assert!(sys <= v[phase]["server_cpu_us_per_op"].as_f64().unwrap());
        // Every operation is in exactly one window.
        let windows = v[phase]["windows"].as_array().unwrap();
        let in_windows: u64 = windows
            .iter()
            .map(|w| w["operations"].as_u64().unwrap())
            .sum();
        let ops = if phase == "load" { 300 } else { 600 };
        assert_eq!(in_windows, ops, "{phase}: {v}");
        assert_eq!(v[phase]["window_s"].as_f64(), Some(0.2));
    }
    // The server's side: the load's 300 inserts are its put calls (fewer
    // where the client combined concurrent ones); the reads are none.
    let load = &v["load"]["server_side"];
    let calls = load["total"]["put_calls"].as_u64().unwrap();
    assert!((1..=300).contains(&calls), "{v}");
    assert!(load["total"]["wal_syncs"].as_u64().unwrap() > 0, "{v}");
    assert!(load["total"]["put_p99_us"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(
        v["run"]["server_side"]["total"]["put_calls"].as_u64(),
        Some(0),
        "{v}"
    );
    let per_window: u64 = load["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["put_calls"].as_u64().unwrap())
        .sum();
    assert_eq!(per_window, calls, "the windows add up to the phase: {v}");
    // The same counter is on /metrics.
    let (code, metrics) = server.http_get("/metrics");
    assert_eq!(code, 200);
    let cpu: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("process_cpu_seconds_total "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(cpu > 0.0, "{metrics}");
    server.terminate();
}

#[test]
fn the_callcost_scenario_quick_run_reports_cpu_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = std::process::Command::new(support::shoal_bin())
        .env("TMPDIR", &tmp)
        .args(["bench", "scenario", "callcost", "--quick", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("callcost.json")).unwrap()).unwrap();
    let calls = v["calls"].as_array().unwrap();
    let names: Vec<&str> = calls.iter().map(|c| c["call"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["get", "get_framed", "scan100", "put", "put_framed"],
        "{v}"
    );
    for c in calls {
        assert!(c["calls"].as_u64().unwrap() > 0, "{c}");
        assert!(c["calls_per_sec"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["cpu"]["server_us"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["cpu"]["client_us"].as_f64().unwrap() > 0.0, "{c}");
    }
    assert!(v["server_idle_cpu_ms_per_s"].as_f64().is_some(), "{v}");
    let md = std::fs::read_to_string(dir.path().join("callcost.md")).unwrap();
    assert!(md.contains("| get |") && md.contains("| scan100 |"), "{md}");
    assert!(
        md.contains("| get_framed |") && md.contains("| put_framed |"),
        "{md}"
    );
    // The put figures split off the WAL thread's share (Linux: from /proc).
    let put = calls.iter().find(|c| c["call"] == "put").unwrap();
    let wal = put["server_wal_thread_us"].as_f64().unwrap();
    assert!(
        wal > 0.0 && wal < put["cpu"]["server_us"].as_f64().unwrap(),
        "{put}"
    );
    assert!(dir.path().join("callcost.svg").exists());
    // The server child does not outlive the scenario.
    let left = std::process::Command::new("pgrep")
        .arg("-af")
        .arg(tmp.to_str().unwrap())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "processes left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn bad_properties_are_refused_with_the_property_named() {
    let out = std::process::Command::new(support::shoal_bin())
        .args([
            "bench",
            "ycsb",
            "run",
            "-p",
            "recordcount=10",
            "-p",
            "requestdistribution=pareto",
            "--embedded",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("requestdistribution"), "{err}");
}

/// Runs `shoal bench scenario writetail --quick ARGS --out DIR`.
fn writetail(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(support::shoal_bin())
        .args(["bench", "scenario", "writetail", "--quick"])
        .args(args)
        .arg("--out")
        .arg(dir)
        .output()
        .unwrap()
}

/// Puts of a writetail report's paced run (its windows' counts).
fn paced_puts(report: &serde_json::Value) -> u64 {
    report["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["count"].as_u64().unwrap())
        .sum()
}

#[test]
fn the_writetail_scenario_quick_run_writes_complete_reports() {
    let dir = tempfile::tempdir().unwrap();
    let out = writetail(dir.path(), &["--duration", "6s"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("writetail.json")).unwrap()).unwrap();
    for key in [
        "max_puts_per_sec",
        "sustained_max_puts_per_sec",
        "rate",
        "achieved",
        "flushes",
        "overall",
        "windows",
        "flush_times_s",
    ] {
        assert!(v.get(key).is_some(), "{key} missing: {v}");
    }
    assert!(v["max_puts_per_sec"].as_f64().unwrap() > 0.0);
    assert!(v["flushes"].as_u64().unwrap() >= 1, "{v}");
    // The server's figures (read from its metrics text) came through.
    assert!(v["server"]["wal_syncs"].as_u64().unwrap() > 0, "{v}");
    assert!(
        v["server"]["wal_mean_batch"].as_f64().unwrap() >= 1.0,
        "{v}"
    );
    assert!(v["server"]["flush_mean_ms"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["server"]["imc_flattens"].as_u64().unwrap() > 0, "{v}");
    assert!(!v["windows"].as_array().unwrap().is_empty());
    assert_eq!(v["errors"].as_u64(), Some(0));
    let svg = std::fs::read_to_string(dir.path().join("writetail.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("<path"));
    let md = std::fs::read_to_string(dir.path().join("writetail.md")).unwrap();
    assert!(md.contains("| window end (s) |"));
    assert!(
        md.contains("80 % of the sustained closed-loop maximum"),
        "{md}"
    );
}

#[test]
fn writetail_without_a_probe_says_the_maxima_were_not_measured() {
    let dir = tempfile::tempdir().unwrap();
    let out = writetail(
        dir.path(),
        &["--rate", "500", "--probe", "0s", "--duration", "2s"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("maxima not measured"), "{stdout}");
    let md = std::fs::read_to_string(dir.path().join("writetail.md")).unwrap();
    assert!(md.contains("the maxima were not measured"), "{md}");
    assert!(!md.contains("maximum 0/s"), "{md}");
    // The open-loop generator issues exactly one put per interval of the
    // asked rate: 500/s for 2 s.
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("writetail.json")).unwrap()).unwrap();
    let puts = paced_puts(&v);
    assert!((999..=1001).contains(&puts), "{puts} puts: {v}");
    assert_eq!(v["errors"].as_u64(), Some(0));
}

#[test]
fn writetail_measures_a_running_server_through_its_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    // flush size 1 MiB: a 4 s run at 1,000 puts of 1 KB flushes a few times.
    let config = support::write_config(dir.path(), "");
    let server = support::ServerProcess::start(&data, Some(&config));
    let (grpc, http) = (server.grpc.to_string(), server.http.to_string());
    let out = dir.path().join("out");
    let args = [
        "--rate",
        "1000",
        "--probe",
        "0s",
        "--duration",
        "4s",
        "--window",
        "2s",
        "--server",
        &grpc,
        "--http",
        &http,
    ];
    let run = writetail(&out, &args);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("writetail.json")).unwrap()).unwrap();
    assert_eq!(v["target"].as_str(), Some(grpc.as_str()), "{v}");
    assert!(v["flush_size"].is_null(), "{v}");
    assert!(v["flushes"].as_u64().unwrap() >= 1, "{v}");
    assert!(v["server"]["wal_syncs"].as_u64().unwrap() > 0, "{v}");
    assert!(
        v["server"]["server_put_p99_us"].as_u64().unwrap() > 0,
        "{v}"
    );
    let puts = paced_puts(&v);
    assert!((3_999..=4_001).contains(&puts), "{puts} puts: {v}");
    assert_eq!(v["errors"].as_u64(), Some(0));
    let md = std::fs::read_to_string(out.join("writetail.md")).unwrap();
    assert!(md.contains("flush size the server's own"), "{md}");

    // Its table now exists: a second run says so instead of mixing runs.
    let again = writetail(&dir.path().join("again"), &args);
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("drop an old one first"), "{err}");

    // --server needs --http, and only writetail takes it.
    let lone = writetail(&dir.path().join("lone"), &["--server", &grpc]);
    assert!(!lone.status.success());
    assert!(String::from_utf8_lossy(&lone.stderr).contains("--http"));
    let other = std::process::Command::new(support::shoal_bin())
        .args([
            "bench", "scenario", "warmup", "--quick", "--server", &grpc, "--http", &http,
        ])
        .output()
        .unwrap();
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stderr).contains("only writetail"));
    server.terminate();
}

#[test]
fn the_warmup_scenario_quick_run_refills_l2_with_few_gets() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(support::shoal_bin())
        .args(["bench", "scenario", "warmup", "--quick", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("warmup.json")).unwrap()).unwrap();
    assert_eq!(v["finished"], serde_json::Value::Bool(true), "{v}");
    let bytes = v["prefetch_bytes"].as_u64().unwrap();
    assert!(bytes > 4 << 20, "{v}");
    assert_eq!(v["warmed_bytes"].as_u64().unwrap(), bytes);
    // Consecutive blocks travel together: far fewer GETs than 64 KiB blocks.
    assert!(v["gets"].as_u64().unwrap() * 16 < bytes / 65536, "{v}");
    for ext in ["md", "svg"] {
        assert!(dir.path().join(format!("warmup.{ext}")).exists());
    }
}

#[test]
fn the_bucketcache_scenario_quick_run_reports_every_phase() {
    let dir = tempfile::tempdir().unwrap();
    // The scenario's own temp dir (data dir and child config) goes here.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = std::process::Command::new(support::shoal_bin())
        .env("TMPDIR", &tmp)
        .args([
            "bench",
            "scenario",
            "bucketcache",
            "--quick",
            "--duration",
            "3s",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("bucketcache.json")).unwrap())
            .unwrap();
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 6, "{v}");
    for p in phases {
        assert!(p["ops_per_sec"].as_f64().unwrap() > 0.0, "{p}");
        assert!(!p["samples"].as_array().unwrap().is_empty(), "{p}");
    }
    // Without L2 every miss of the small L1 goes to the object store; with
    // it, almost none do.
    let off = phases[0]["gets_per_10k_reads_steady"].as_f64().unwrap();
    let on = phases[2]["gets_per_10k_reads_steady"].as_f64().unwrap();
    assert!(
        off > 10.0 * on.max(1.0),
        "GETs per 10k reads: off {off}, on {on}"
    );
    for key in [
        "speedup_with_l2",
        "seconds_to_95pct_l2_hits",
        "recovery_s_persistent_l2",
        "recovery_s_wiped_l2",
        "recovery_s_kill9_persistent_l2",
        "recovery_s_kill9_wiped_l2",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    // The last two phases restart a `shoal serve` child after SIGKILL: each
    // knows the throughput before the kill and how long start-up took.
    for (p, name) in phases[4..]
        .iter()
        .zip(["kill -9, persistent L2", "kill -9, L2 wiped"])
    {
        assert_eq!(p["name"], name, "{p}");
        assert!(p["pre_restart_ops_per_sec"].as_f64().unwrap() > 0.0, "{p}");
        let startup = p["startup_s"].as_f64().unwrap();
        assert!(startup > 0.0 && startup < 120.0, "{p}");
        // Samples count from the new process's start, so none precedes it.
        let first = p["samples"][0]["t_s"].as_f64().unwrap();
        assert!(first >= startup, "{p}");
    }
    // After a kill -9 the persistent L2 still serves: few GETs.
    let kill9 = phases[4]["gets_per_10k_reads_steady"].as_f64().unwrap();
    assert!(
        off > 10.0 * kill9.max(1.0),
        "GETs per 10k reads: off {off}, after kill -9 with L2 {kill9}"
    );
    let md = std::fs::read_to_string(dir.path().join("bucketcache.md")).unwrap();
    for row in [
        "| kill -9, persistent L2 |",
        "| kill -9, L2 wiped |",
        "kill -9, persistent L2 | ",
    ] {
        assert!(md.contains(row), "{row}: {md}");
    }
    let svg = std::fs::read_to_string(dir.path().join("bucketcache.svg")).unwrap();
    assert!(svg.contains("kill -9, L2 wiped"), "{svg}");
    // No `shoal serve` child outlives the scenario: none runs with a config
    // file under the scenario's temp dir.
    let left = std::process::Command::new("pgrep")
        .arg("-af")
        .arg(tmp.to_str().unwrap())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "processes left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn the_failover_scenario_quick_run_reports_recovery_and_no_lost_write() {
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v etcd"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "etcd is not installed; scripts/test installs Debian's etcd-server"
        );
        eprintln!("skipped: etcd is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = std::process::Command::new(support::shoal_bin())
        .env("TMPDIR", &tmp)
        .args(["bench", "scenario", "failover", "--quick", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("failover.json")).unwrap()).unwrap();
    // Every region served again (the goal of ≤ 5 s is a benchmark figure,
    // not asserted here; the report must have it).
    assert!(v["recovery_client_s"].as_f64().is_some(), "{v}");
    assert!(v["recovery_master_s"].as_f64().is_some(), "{v}");
    assert!(v["acked_updates"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["acked_updates_lost"].as_u64(), Some(0), "{v}");
    assert_eq!(v["hbase_default_detection_s"].as_f64(), Some(90.0));
    assert!(v["server_cpu_us_per_op"].as_f64().unwrap() > 0.0, "{v}");
    assert!(!v["windows"].as_array().unwrap().is_empty());
    let md = std::fs::read_to_string(dir.path().join("failover.md")).unwrap();
    assert!(md.contains("every region serving again"), "{md}");
    assert!(dir.path().join("failover.svg").exists());
    // No child (server or etcd) outlives the scenario.
    let left = std::process::Command::new("pgrep")
        .arg("-af")
        .arg(tmp.to_str().unwrap())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "processes left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn the_rolling_restart_scenario_quick_run_compares_three_settings() {
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v etcd"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "etcd is not installed; scripts/test installs Debian's etcd-server"
        );
        eprintln!("skipped: etcd is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = std::process::Command::new(support::shoal_bin())
        .env("TMPDIR", &tmp)
        .args(["bench", "scenario", "rolling-restart", "--quick", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("rolling-restart.json")).unwrap())
            .unwrap();
    let modes = v["modes"].as_array().unwrap();
    let names: Vec<&str> = modes.iter().map(|m| m["mode"].as_str().unwrap()).collect();
    assert_eq!(names, ["cache-aware", "plain", "no-l2"], "{v}");
    for m in modes {
        assert!(m["ops"].as_u64().unwrap() > 0, "{m}");
        assert!(m["steady_ops_per_s"].as_f64().unwrap() > 0.0, "{m}");
        assert!(m["rolling_windows"].as_u64().unwrap() > 0, "{m}");
        let events: Vec<&str> = m["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["what"].as_str().unwrap())
            .collect();
        for want in ["SIGTERM s1", "SIGTERM s3", "balancer on", "kill -9"] {
            assert!(events.iter().any(|e| e.contains(want)), "{events:?}");
        }
        // Per-window reads by tier come from the servers' block sources.
        let windows = m["windows"].as_array().unwrap();
        let block_reads: u64 = windows
            .iter()
            .map(|w| {
                ["reads_l1", "reads_l2", "reads_peer", "reads_object_store"]
                    .iter()
                    .map(|k| w[k].as_u64().unwrap())
                    .sum::<u64>()
            })
            .sum();
        assert!(block_reads > 0, "{m}");
    }
    // With an L2 holding the whole table, steady reads never reach the
    // object store; with none (and a small L1) many do.
    let hit = |i: usize| modes[i]["steady_hit_ratio"].as_f64().unwrap();
    assert!(hit(0) > 0.99, "{}", hit(0));
    assert!(hit(2) < hit(0), "{} vs {}", hit(2), hit(0));
    let md = std::fs::read_to_string(dir.path().join("rolling-restart.md")).unwrap();
    assert!(md.contains("rolling restart: lowest window"), "{md}");
    assert!(dir.path().join("rolling-restart.svg").exists());
    assert!(dir.path().join("rolling-restart-plain-s2.log").exists());
    let left = std::process::Command::new("pgrep")
        .arg("-af")
        .arg(tmp.to_str().unwrap())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "processes left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
fn the_snapshot_export_scenario_quick_run_compares_export_and_copy() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let out = std::process::Command::new(support::shoal_bin())
        .args(["bench", "scenario", "snapshot-export", "--quick", "--out"])
        .arg(dir.path())
        .arg("--work-dir")
        .arg(&work)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("snapshot-export.json")).unwrap())
            .unwrap();
    let files = v["setup"]["files"].as_u64().unwrap();
    let bytes = v["setup"]["bytes"].as_u64().unwrap();
    assert!(files >= 4 && bytes > 16 << 20, "{v}");
    // One round: the copy first, then the export, each of every file.
    let runs = v["runs"].as_array().unwrap();
    let what: Vec<&str> = runs.iter().map(|r| r["what"].as_str().unwrap()).collect();
    assert_eq!(what, ["copy", "export"], "{v}");
    for r in runs {
        assert_eq!(r["objects"].as_u64().unwrap(), files, "{r}");
        assert_eq!(r["bytes"].as_u64().unwrap(), bytes, "{r}");
        assert!(r["wall_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["cpu_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["peak_rss"].as_u64().unwrap() > 0, "{r}");
    }
    assert!(v["ratio"].as_f64().unwrap() > 0.0, "{v}");
    let md = std::fs::read_to_string(dir.path().join("snapshot-export.md")).unwrap();
    assert!(
        md.contains("| 1 | export |") && md.contains("export/copy"),
        "{md}"
    );
    assert!(dir.path().join("snapshot-export.svg").exists());
    assert!(dir.path().join("snapshot-export-export.log").exists());
    // The work directory (bucket, targets) is gone, and no child is left.
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
    let left = std::process::Command::new("pgrep")
        .arg("-af")
        .arg(work.to_str().unwrap())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "processes left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

/// `shoal bench scenario pitr --quick`: both servers ran the writers, the
/// window-on one held WAL history and took clones as of instants of the
/// run, and the work directory is gone.
#[test]
fn the_pitr_scenario_quick_run_measures_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let out = std::process::Command::new(support::shoal_bin())
        .args([
            "bench", "scenario", "pitr", "--quick", "--rate", "300", "--out",
        ])
        .arg(dir.path())
        .arg("--work-dir")
        .arg(&work)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("pitr.json")).unwrap()).unwrap();
    for side in ["off", "on"] {
        assert!(v[side]["puts"].as_u64().unwrap() > 0, "{v}");
        assert_eq!(v[side]["errors"].as_u64().unwrap(), 0, "{v}");
    }
    assert!(
        v["bucket_bytes_on"].as_u64().unwrap() > v["bucket_bytes_off"].as_u64().unwrap(),
        "the window keeps the WAL's history: {v}"
    );
    let clones = v["clones"].as_array().unwrap();
    assert_eq!(clones.len(), 2, "{v}");
    // The clone as of the end holds every row written.
    assert_eq!(clones[1]["rows"].as_u64(), v["on"]["puts"].as_u64(), "{v}");
    assert!(clones[0]["rows"].as_u64().unwrap() <= clones[1]["rows"].as_u64().unwrap());
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
}
