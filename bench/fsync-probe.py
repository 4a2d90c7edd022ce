#!/usr/bin/env python3
"""The disk's fdatasync latency, as the WAL meets it
(docs/bench-history/ycsb-write-tail.md, "What slows a group commit here").

Overwrites 4 KiB at a time in a preallocated 64 MiB file (as a WAL group
commit overwrites a prepared segment) and times each fdatasync for DURATION
seconds. Optional interference, each in its own process:

  --spare-fill KIB   meanwhile prepare 64 MiB segments over and over as
                     SpareSegment::create does (zeros in KIB chunks, each
                     synced; 1024 is what it does today)
  --pause-ms MS      sleep between those chunks
  --cpu-hogs N       meanwhile keep N busy loops running

    bench/fsync-probe.py [--dir DIR] [--duration 30] [--spare-fill 1024] [--cpu-hogs 3]
"""
import argparse
import multiprocessing
import os
import time


def spare_fill(path, chunk, pause, until):
    zeros = b"\0" * chunk
    while time.time() < until:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for _ in range((64 << 20) // chunk):
            os.write(fd, zeros)
            os.fdatasync(fd)
            if pause:
                time.sleep(pause)
        os.fsync(fd)
        os.close(fd)
        os.unlink(path)


def hog(until):
    while time.time() < until:
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=os.path.expanduser("~/.cache"))
    ap.add_argument("--duration", type=float, default=30)
    ap.add_argument("--spare-fill", type=int, default=0, metavar="KIB")
    ap.add_argument("--pause-ms", type=float, default=0)
    ap.add_argument("--cpu-hogs", type=int, default=0)
    a = ap.parse_args()
    probe = os.path.join(a.dir, "fsync-probe.bin")
    size = 64 << 20
    fd = os.open(probe, os.O_RDWR | os.O_CREAT, 0o600)
    for off in range(0, size, 1 << 20):
        os.pwrite(fd, b"\0" * (1 << 20), off)
    os.fsync(fd)
    until = time.time() + a.duration
    helpers = []
    if a.spare_fill:
        helpers.append(multiprocessing.Process(
            target=spare_fill,
            args=(os.path.join(a.dir, "fsync-probe-spare.bin"), a.spare_fill << 10,
                  a.pause_ms / 1000, until)))
    helpers += [multiprocessing.Process(target=hog, args=(until,)) for _ in range(a.cpu_hogs)]
    for h in helpers:
        h.start()
    lat, off, buf = [], 0, b"x" * 4096
    try:
        while time.time() < until:
            os.pwrite(fd, buf, off)
            t = time.perf_counter()
            os.fdatasync(fd)
            lat.append(time.perf_counter() - t)
            off = (off + 4096) % size
            time.sleep(0.0003)
    finally:
        for h in helpers:
            h.join()
        os.close(fd)
        os.unlink(probe)
    lat.sort()

    def q(p):
        return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000

    print(f"{len(lat)} fdatasyncs in {a.duration:g} s: p50 {q(.5):.2f} ms, p99 {q(.99):.2f}, "
          f"p99.9 {q(.999):.2f}, p99.99 {q(.9999):.2f}, max {lat[-1] * 1000:.2f} ms; "
          f"over 8 ms: {sum(1 for x in lat if x > .008)}")


if __name__ == "__main__":
    main()
