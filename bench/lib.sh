# Shared by the bench scripts (sourced): one `shoal serve` started in the
# background and stopped again. The script sets SHOAL, ROOT, GRPC_PORT and
# HTTP_PORT; `serve_start` sets PID and waits for /healthz; `serve_cleanup`
# (for an EXIT trap) stops a server still running and removes ROOT.

# The issue-22 setup's server: gRPC and HTTP only, 1 GiB of L1 for data.
ycsb_server_config() {
  cat <<CONF
[server]
data_dir = "$ROOT/data"
grpc_addr = "127.0.0.1:$GRPC_PORT"
http_addr = "127.0.0.1:$HTTP_PORT"
[cache]
l1_data = "1GiB"
l1_rows = "${L1_ROWS:-64MiB}"
[thrift]
enabled = false
[rest]
enabled = false
[wal]
commit_delay = "${WAL_COMMIT_DELAY:-0s}"
[hbase_rpc]
enabled = false
CONF
}

# YCSB's table, 10 regions pre-split at user1 … user9. Extra shell
# arguments (credentials) come first.
create_usertable() {
  "$SHOAL" shell --addr "127.0.0.1:$GRPC_PORT" "$@" -e "create 'usertable', 'family', SPLITS => ['user1','user2','user3','user4','user5','user6','user7','user8','user9']"
}

serve_start() { # CONFIG [serve arguments…]
  local config=$1
  shift
  "$SHOAL" serve -c "$config" "$@" > "$ROOT/server.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$HTTP_PORT/healthz" > /dev/null && return 0
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "the server did not start:" >&2; tail -20 "$ROOT/server.log" >&2; exit 1
}

serve_stop() {
  kill "$PID"; wait "$PID" || true; PID=
}

serve_cleanup() {
  if [[ -n "${PID:-}" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$ROOT"
}
