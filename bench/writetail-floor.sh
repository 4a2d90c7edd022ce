#!/usr/bin/env bash
# The write tail at fixed rates beside the no-op floor (docs/benchmarks.md,
# "The write tail at fixed rates, beside the no-op floor").
#
# Loads 200,000 YCSB rows (10 x 100 B) into 10 pre-split regions, flushes and
# major-compacts them, restarts the server and inserts new keys at each
# offered rate for DURATION seconds, with the client in its own process; then
# restarts the server with --noop and runs the same command, so each rate's
# figures stand beside the floor of the same run. Server-side figures come
# from its /metrics (--http). Reports: $OUT/<mode>-<rate>.{txt,json}.
#
#   cargo build --release -p shoal-cli
#   bench/writetail-floor.sh                  # 2000 and 3000 inserts/s, 30 s each
#   RATES="2000 3000 20000:64:small" bench/writetail-floor.sh
#
# A rate is RATE[:THREADS[:small]]; `small` puts one 100 B cell per row
# (the 20k puts/s case needs more threads than 8 to be offered at all).
# CLIENT_ARGS adds arguments to the measured `shoal bench ycsb` runs (both
# modes), e.g. CLIENT_ARGS="--write-rpcs 32".
# Run it on an otherwise idle machine; a copy of a data directory made just
# before a run leaves dirty pages whose writeback stalls the WAL's fsyncs.
set -euo pipefail

SHOAL=${SHOAL:-target/release/shoal}
RATES=${RATES:-"2000 3000"}
DURATION=${DURATION:-30}
GRPC_PORT=${GRPC_PORT:-17070}
HTTP_PORT=${HTTP_PORT:-17071}
OUT=${OUT:-bench-results/writetail-floor}
WORKLOAD=${WORKLOAD:-workloads/workloadc}
read -r -a CLIENT_EXTRA <<< "${CLIENT_ARGS:-}"
ROOT=$(mktemp -d /tmp/shoal-writetail-floor.XXXXXX)
PID=

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
trap serve_cleanup EXIT

[[ -x "$SHOAL" ]] || { echo "no $SHOAL: cargo build --release -p shoal-cli" >&2; exit 1; }
mkdir -p "$OUT"
ycsb_server_config > "$ROOT/config.toml"

start() { serve_start "$ROOT/config.toml" "$@"; }
stop() { serve_stop; }

ADDR=127.0.0.1:$GRPC_PORT
start
create_usertable
echo "loading 200,000 rows"
"$SHOAL" bench ycsb load -P "$WORKLOAD" -p recordcount=200000 --threads 8 --addr "$ADDR" > "$OUT/load.txt" 2>&1
"$SHOAL" shell --addr "$ADDR" -e "flush 'usertable'; major_compact 'usertable'"
stop
# The setup wrote a few hundred MB (SSTs, the cache's L2 files); without this the
# kernel writes them back about 30 s later (vm.dirty_expire_centisecs), in the
# middle of the first rate, and the WAL's fsyncs wait behind that writeback.
sync

next=200000
for spec in $RATES; do
  IFS=: read -r rate threads small <<< "$spec"
  threads=${threads:-8}
  extra=()
  [[ "$small" == small ]] && extra=(-p fieldcount=1 -p fieldlength=100)
  n=$(( rate * DURATION ))
  for mode in real noop; do
    if [[ $mode == noop ]]; then start --noop; else start; fi
    "$SHOAL" bench ycsb load -P "$WORKLOAD" -p recordcount=$(( next + n )) -p insertstart=$next \
      -p insertcount=$n "${extra[@]}" "${CLIENT_EXTRA[@]}" --threads "$threads" --target "$rate" \
      --addr "$ADDR" --http "127.0.0.1:$HTTP_PORT" --json "$OUT/$mode-$rate.json" > "$OUT/$mode-$rate.txt" 2>&1
    stop
    [[ $mode == real ]] && next=$(( next + n ))
    echo "== $mode, $rate/s offered, $threads threads"
    grep -E "Throughput|(50th|99th|99\.9th|99\.99th)Percentile|MaxLatency|\[CPU\]|\[SERVER\]" "$OUT/$mode-$rate.txt" \
      | sed 's/Latency(us)/ (µs)/'
  done
done
