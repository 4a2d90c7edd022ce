#!/usr/bin/env bash
# YCSB C's first pass after a clean restart against the warm pass that
# follows it (docs/benchmarks.md, YCSB; every run: docs/bench-history/ycsb.md,
# "C's first pass after a clean restart").
#
# Loads 200,000 YCSB rows (10 x 100 B) into 10 pre-split regions, flushes and
# major-compacts them, restarts the server, then runs workload C twice back
# to back ($OPS operations each, 8 threads, the client in its own process):
# the first pass reads a cold L1 (what the restart left: L2, and whatever the
# regions' opening copied from it into L1), the second a warm one. Repeats
# the restart and both passes $RUNS times. Reports: $OUT/summary.txt.
#
#   cargo build --release -p shoal-cli
#   bench/first-pass.sh                   # 3 runs of 300,000 operations
#   RUNS=1 OPS=100000 bench/first-pass.sh
#   TRANSPORT=grpc bench/first-pass.sh    # gets over gRPC (default: framed)
set -euo pipefail

SHOAL=${SHOAL:-target/release/shoal}
RUNS=${RUNS:-3}
OPS=${OPS:-300000}
GRPC_PORT=${GRPC_PORT:-17080}
HTTP_PORT=${HTTP_PORT:-17081}
OUT=${OUT:-bench-results/first-pass}
ROOT=$(mktemp -d /tmp/shoal-first-pass.XXXXXX)
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
create_usertable > /dev/null
echo "loading 200,000 rows"
"$SHOAL" bench ycsb load -P workloads/workloadc -p recordcount=200000 --threads 8 --addr "$ADDR" > "$OUT/load.txt" 2>&1
"$SHOAL" shell --addr "$ADDR" -e "flush 'usertable'; major_compact 'usertable'" > /dev/null
stop

summary="$OUT/summary.txt"
: > "$summary"
pass() {
  "$SHOAL" bench ycsb run -P workloads/workloadc -p recordcount=200000 -p operationcount="$OPS" \
    --threads 8 --addr "$ADDR" --http "127.0.0.1:$HTTP_PORT" --transport "${TRANSPORT:-framed}" \
    > "$OUT/$1.txt" 2>&1
  local tput cpu
  tput=$(grep -m1 'Throughput' "$OUT/$1.txt" | awk -F', ' '{printf "%.0f", $3}')
  cpu=$(grep -m1 '^\[CPU\]' "$OUT/$1.txt" | sed -E 's/.*server ([0-9.]+) .*/\1/' || true)
  echo "$tput ${cpu:-?}"
}
for run in $(seq 1 "$RUNS"); do
  start
  sleep 2  # the regions' opening work (L1 filled from L2) runs first
  read -r first first_cpu <<< "$(pass "run$run-first")"
  read -r warm warm_cpu <<< "$(pass "run$run-warm")"
  stop
  ratio=$(awk -v a="$first" -v b="$warm" 'BEGIN { printf "%.0f", 100 * a / b }')
  echo "run $run: first $first ops/s (server ${first_cpu} us/get), warm $warm ops/s (${warm_cpu} us/get), first/warm ${ratio}%" | tee -a "$summary"
done
