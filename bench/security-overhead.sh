#!/usr/bin/env bash
# What TLS and tokens cost a read workload (docs/benchmarks.md, "TLS and
# auth on YCSB C").
#
# Loads YCSB rows (10 x 100 B) into 10 pre-split regions, flushes and
# major-compacts them; then, for each mode, restarts the server, runs
# workload C once to warm the cache and once to measure, with the client in
# its own process:
#   plain  no TLS, auth off (as before this feature)
#   secure TLS on gRPC (certificates from a CA made here with openssl),
#          auth on, the client a user with READ on the table (not a
#          superuser, so every call is checked against the grants)
# The HTTP port stays plain so the benchmark can read the server's CPU from
# /metrics (auth.metrics_open). Reports: $OUT/<mode>.{txt,json}.
#
#   cargo build --release -p shoal-cli
#   bench/security-overhead.sh               # 200,000 rows, 30 s per run
#   RECORDS=50000 DURATION=10 bench/security-overhead.sh
set -euo pipefail

SHOAL=${SHOAL:-target/release/shoal}
RECORDS=${RECORDS:-200000}
DURATION=${DURATION:-30}
ROUNDS=${ROUNDS:-1}
GRPC_PORT=${GRPC_PORT:-17170}
HTTP_PORT=${HTTP_PORT:-17171}
OUT=${OUT:-bench-results/security-overhead}
WORKLOAD=${WORKLOAD:-workloads/workloadc}
ROOT=$(mktemp -d /tmp/shoal-security-overhead.XXXXXX)
PID=

# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
trap serve_cleanup EXIT

[[ -x "$SHOAL" ]] || { echo "no $SHOAL: cargo build --release -p shoal-cli" >&2; exit 1; }
command -v openssl > /dev/null || { echo "openssl is needed to make the certificates" >&2; exit 1; }
mkdir -p "$OUT"

# A CA and a server certificate for 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj "/CN=bench CA" -keyout "$ROOT/ca.key" -out "$ROOT/ca.pem" 2> /dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
  -keyout "$ROOT/server.key" -out "$ROOT/server.csr" 2> /dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > "$ROOT/san.ext"
openssl x509 -req -in "$ROOT/server.csr" -CA "$ROOT/ca.pem" -CAkey "$ROOT/ca.key" \
  -CAcreateserial -days 2 -extfile "$ROOT/san.ext" -out "$ROOT/server.pem" 2> /dev/null

"$SHOAL" token new admin --file "$ROOT/tokens" --out "$ROOT/admin.token" > /dev/null 2>&1
"$SHOAL" token new reader --file "$ROOT/tokens" --out "$ROOT/reader.token" > /dev/null 2>&1

ycsb_server_config > "$ROOT/plain.toml"
{ ycsb_server_config; cat <<EOF
[tls]
cert = "$ROOT/server.pem"
key = "$ROOT/server.key"
listeners = ["grpc"]
[auth]
enabled = true
tokens = "$ROOT/tokens"
superusers = ["admin"]
EOF
} > "$ROOT/secure.toml"

start() { serve_start "$ROOT/$1.toml"; }
stop() { serve_stop; }

ADDR=127.0.0.1:$GRPC_PORT
ADMIN=(--ca "$ROOT/ca.pem" --token-file "$ROOT/admin.token")
start secure
"$SHOAL" shell --addr "$ADDR" "${ADMIN[@]}" -e "create 'usertable', 'family', SPLITS => ['user1','user2','user3','user4','user5','user6','user7','user8','user9']; grant 'reader', 'R', 'usertable'"
echo "loading $RECORDS rows"
"$SHOAL" bench ycsb load -P "$WORKLOAD" -p recordcount="$RECORDS" --threads 8 --addr "$ADDR" "${ADMIN[@]}" > "$OUT/load.txt" 2>&1
"$SHOAL" shell --addr "$ADDR" "${ADMIN[@]}" -e "flush 'usertable'; major_compact 'usertable'"
stop

ops=$(( RECORDS * 100 ))
for round in $(seq 1 "$ROUNDS"); do
  for mode in plain secure; do
    creds=()
    [[ $mode == secure ]] && creds=(--ca "$ROOT/ca.pem" --token-file "$ROOT/reader.token")
    start "$mode"
    run() {
      "$SHOAL" bench ycsb run -P "$WORKLOAD" -p recordcount="$RECORDS" -p operationcount="$ops" \
        --duration "$1" --threads 8 --addr "$ADDR" --http "127.0.0.1:$HTTP_PORT" "${creds[@]}" "${@:2}"
    }
    run 15s > /dev/null 2>&1
    run "${DURATION}s" --json "$OUT/$mode-$round.json" > "$OUT/$mode-$round.txt" 2>&1
    stop
    echo "== $mode (round $round)"
    grep -E "Throughput|\[READ\], (50th|99th)Percentile|\[CPU\]" "$OUT/$mode-$round.txt"
  done
done
