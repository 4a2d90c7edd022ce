#!/usr/bin/env python3
"""happybase against Shoal's Thrift gateway: table.put and table.row throughput and
latency from N Python processes, with the server's CPU per call read from its
/metrics before and after each phase.

    python3 bench/happybase_bench.py --thrift 127.0.0.1:9090 --http 127.0.0.1:7071 \
        --procs 8 --rows 20000 --seconds 20

Needs happybase (pip install happybase==1.3.0). Prints one line per phase and, with
--json FILE, writes the figures.
"""
import argparse
import json
import multiprocessing as mp
import os
import random
import time
import urllib.request

TABLE = b"hb_bench"


def server_cpu(http):
    text = urllib.request.urlopen(f"http://{http}/metrics", timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith("process_cpu_seconds_total "):
            return float(line.split()[1])
    raise RuntimeError("process_cpu_seconds_total not in /metrics")


def worker(args, phase, wid, deadline_at, out):
    import happybase

    host, port = args.thrift.split(":")
    conn = happybase.Connection(host, int(port), autoconnect=True)
    table = conn.table(TABLE)
    rnd = random.Random(wid)
    value = os.urandom(args.value_bytes)
    lat = []
    n = 0
    while time.time() < deadline_at:
        key = b"user%010d" % rnd.randrange(args.rows)
        t0 = time.perf_counter()
        if phase == "put":
            table.put(key, {b"f:field0": value})
        else:
            table.row(key)
        lat.append(time.perf_counter() - t0)
        n += 1
    conn.close()
    out.put((n, lat))


def run_phase(args, phase):
    q = mp.Queue()
    start_cpu = server_cpu(args.http)
    t0 = time.time()
    deadline_at = t0 + args.seconds
    procs = [mp.Process(target=worker, args=(args, phase, i, deadline_at, q)) for i in range(args.procs)]
    for p in procs:
        p.start()
    results = [q.get() for _ in procs]
    for p in procs:
        p.join()
    elapsed = time.time() - t0
    end_cpu = server_cpu(args.http)
    ops = sum(n for n, _ in results)
    lat = sorted(x for _, l in results for x in l)
    pick = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1e6 if lat else 0
    return {
        "phase": phase,
        "procs": args.procs,
        "ops": ops,
        "seconds": round(elapsed, 2),
        "ops_per_sec": round(ops / elapsed, 1),
        "p50_us": round(pick(0.50)),
        "p99_us": round(pick(0.99)),
        "p999_us": round(pick(0.999)),
        "server_cpu_us_per_op": round((end_cpu - start_cpu) / max(ops, 1) * 1e6, 1),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--thrift", default="127.0.0.1:9090")
    ap.add_argument("--http", default="127.0.0.1:7071")
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--value-bytes", type=int, default=1000)
    ap.add_argument("--json")
    args = ap.parse_args()

    import happybase

    host, port = args.thrift.split(":")
    conn = happybase.Connection(host, int(port))
    if TABLE in conn.tables():
        conn.delete_table(TABLE, disable=True)
    conn.create_table(TABLE, {"f": {"max_versions": 1}})
    # Load every row once so the reads find data.
    table = conn.table(TABLE)
    value = os.urandom(args.value_bytes)
    with table.batch(batch_size=500) as b:
        for i in range(args.rows):
            b.put(b"user%010d" % i, {b"f:field0": value})
    conn.close()
    report = [run_phase(args, "put"), run_phase(args, "row")]
    for r in report:
        print(
            f"{r['phase']:>4}: {r['ops_per_sec']:>9.1f} ops/s  p50 {r['p50_us']} us  "
            f"p99 {r['p99_us']} us  p99.9 {r['p999_us']} us  server CPU {r['server_cpu_us_per_op']} us/op  "
            f"({r['procs']} processes, {r['seconds']} s)"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
