#!/usr/bin/env bash
# HBase's Java client on Shoal's native RPC against Shoal's own client on
# gRPC (docs/benchmarks.md, "The Java client on the native RPC").
#
# One server (release build, its own process); each client in its own
# process, 8 threads, YCSB-shaped rows (10 x 100 B, keys "user" + FNV hash)
# in 10 pre-split regions:
#   java   hbase-client 2.6.1 (tests/hbase-client-java, HBaseBench): puts of
#          $RECORDS rows, then random whole-row gets for $DURATION s
#   grpc   `shoal bench ycsb`: load of $RECORDS rows, then workload C for
#          $DURATION s
# Between load and reads each table is flushed and major-compacted, and the
# reads are warmed for 10 s first. Server CPU per call is the server
# process's user+system CPU (/proc/PID/stat) over the phase divided by the
# calls. Reports: $OUT/summary.txt.
#
#   cargo build --release -p shoal-cli
#   bench/hbase-client.sh                      # 100,000 rows, 30 s of reads
#   RECORDS=20000 DURATION=10 bench/hbase-client.sh
#   ONLY=java PERF=/tmp/gets.perf bench/hbase-client.sh   # Java only; profile
#                                      # the server for 10 s of the Java gets
#   SERVING_THREADS=2 bench/hbase-client.sh  # server.serving_threads
#   L1_ROWS=0 bench/hbase-client.sh          # cache.l1_rows (0: no row cache)
set -euo pipefail

SHOAL=${SHOAL:-target/release/shoal}
RECORDS=${RECORDS:-100000}
DURATION=${DURATION:-30}
GRPC_PORT=${GRPC_PORT:-17270}
HTTP_PORT=${HTTP_PORT:-17271}
HBASE_PORT=${HBASE_PORT:-17272}
HBASE_VERSION=${HBASE_VERSION:-2.6.1}
OUT=${OUT:-bench-results/hbase-client}
ONLY=${ONLY:-}
SERVING_THREADS=${SERVING_THREADS:-0}
L1_ROWS=${L1_ROWS:-64MiB}
PERF=${PERF:-}
ROOT=$(mktemp -d /tmp/shoal-hbase-client.XXXXXX)
PID=

cleanup() {
  if [[ -n "$PID" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$ROOT"
}
trap cleanup EXIT

[[ -x "$SHOAL" ]] || { echo "no $SHOAL: cargo build --release -p shoal-cli" >&2; exit 1; }
for tool in java javac mvn curl; do
  command -v "$tool" > /dev/null || { echo "$tool is needed" >&2; exit 1; }
done
mkdir -p "$OUT"

mvn -q -B -f tests/hbase-client-java/pom.xml dependency:build-classpath \
  -Dhbase.version="$HBASE_VERSION" -Dmdep.outputFile="$ROOT/cp.txt" > /dev/null
javac -nowarn -d "$ROOT/classes" -cp "$(cat "$ROOT/cp.txt")" \
  tests/hbase-client-java/src/main/java/shoal/it/*.java 2> /dev/null
CP="$ROOT/classes:$(cat "$ROOT/cp.txt")"

cat > "$ROOT/shoal.toml" <<CONF
[server]
data_dir = "$ROOT/data"
grpc_addr = "127.0.0.1:$GRPC_PORT"
http_addr = "127.0.0.1:$HTTP_PORT"
serving_threads = $SERVING_THREADS
[cache]
l1_rows = "$L1_ROWS"
[thrift]
enabled = false
[rest]
enabled = false
[hbase_rpc]
addr = "127.0.0.1:$HBASE_PORT"
CONF

"$SHOAL" serve -c "$ROOT/shoal.toml" > "$ROOT/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 200); do
  curl -sf "http://127.0.0.1:$HTTP_PORT/healthz" > /dev/null && break
  kill -0 "$PID" 2>/dev/null || { tail -20 "$ROOT/server.log" >&2; exit 1; }
  sleep 0.1
done

# The server's CPU so far, in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
HZ=$(getconf CLK_TCK)
# Server CPU per call in microseconds: ticks before, ticks after, calls.
per_call() { awk -v a="$1" -v b="$2" -v n="$3" -v hz="$HZ" 'BEGIN { printf "%.1f", (b - a) / hz * 1e6 / n }'; }

bench_java() { java -cp "$CP" shoal.it.HBaseBench "127.0.0.1:$HBASE_PORT" "$@" 2> "$ROOT/java.err"; }
ADDR=127.0.0.1:$GRPC_PORT
summary="$OUT/summary.txt"
: > "$summary"

echo "== java: put $RECORDS rows"
t0=$(ticks); line=$(bench_java load jtable "$RECORDS" 8); t1=$(ticks)
ops=$(sed -E 's/.* ops=([0-9]+).*/\1/' <<< "$line")
echo "java   $line server_cpu_us_per_call=$(per_call "$t0" "$t1" "$ops")" | tee -a "$summary"
"$SHOAL" shell --addr "$ADDR" -e "flush 'jtable'; major_compact 'jtable'" > /dev/null
bench_java get jtable "$RECORDS" 10 8 > /dev/null
echo "== java: gets for ${DURATION}s"
PERF_PID=
if [[ -n "$PERF" ]]; then
  (sleep 2; perf record -q -F 999 -g -p "$PID" -o "$PERF" -- sleep 10 > /dev/null 2>&1) &
  PERF_PID=$!
fi
t0=$(ticks); line=$(bench_java get jtable "$RECORDS" "$DURATION" 8); t1=$(ticks)
ops=$(sed -E 's/.* ops=([0-9]+).*/\1/' <<< "$line")
echo "java   $line server_cpu_us_per_call=$(per_call "$t0" "$t1" "$ops")" | tee -a "$summary"
[[ -n "$PERF_PID" ]] && wait "$PERF_PID"
[[ "$ONLY" == java ]] && exit 0

echo "== grpc: load $RECORDS rows"
"$SHOAL" shell --addr "$ADDR" -e "create 'usertable', 'family', SPLITS => ['user1','user2','user3','user4','user5','user6','user7','user8','user9']" > /dev/null
t0=$(ticks)
"$SHOAL" bench ycsb load -P workloads/workloadc -p recordcount="$RECORDS" --threads 8 --addr "$ADDR" \
  --json "$OUT/grpc-load.json" > "$OUT/grpc-load.txt" 2>&1
t1=$(ticks)
tput=$(grep -m1 'Throughput' "$OUT/grpc-load.txt" | awk -F', ' '{printf "%.0f", $3}')
p50=$(grep -m1 '\[INSERT\], 50thPercentileLatency' "$OUT/grpc-load.txt" | awk -F', ' '{print $3}')
p99=$(grep -m1 '\[INSERT\], 99thPercentileLatency' "$OUT/grpc-load.txt" | awk -F', ' '{print $3}')
echo "grpc   put ops=$RECORDS ops_per_sec=$tput p50_us=$p50 p99_us=$p99 server_cpu_us_per_call=$(per_call "$t0" "$t1" "$RECORDS")" | tee -a "$summary"
"$SHOAL" shell --addr "$ADDR" -e "flush 'usertable'; major_compact 'usertable'" > /dev/null
run_c() {
  "$SHOAL" bench ycsb run -P workloads/workloadc -p recordcount="$RECORDS" \
    -p operationcount=$(( RECORDS * 1000 )) --duration "$1" --threads 8 --addr "$ADDR" "${@:2}"
}
run_c 10s > /dev/null 2>&1
echo "== grpc: workload C for ${DURATION}s"
t0=$(ticks)
run_c "${DURATION}s" --json "$OUT/grpc-c.json" > "$OUT/grpc-c.txt" 2>&1
t1=$(ticks)
ops=$(grep -m1 '\[READ\], Operations' "$OUT/grpc-c.txt" | awk -F', ' '{print $3}')
tput=$(grep -m1 'Throughput' "$OUT/grpc-c.txt" | awk -F', ' '{printf "%.0f", $3}')
p50=$(grep -m1 '\[READ\], 50thPercentileLatency' "$OUT/grpc-c.txt" | awk -F', ' '{print $3}')
p99=$(grep -m1 '\[READ\], 99thPercentileLatency' "$OUT/grpc-c.txt" | awk -F', ' '{print $3}')
echo "grpc   get ops=$ops ops_per_sec=$tput p50_us=$p50 p99_us=$p99 server_cpu_us_per_call=$(per_call "$t0" "$t1" "$ops")" | tee -a "$summary"
