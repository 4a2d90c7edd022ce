# Shared by the bench scripts (sourced): one `shoal serve` started in the
# background and stopped again. The script sets SHOAL, ROOT and HTTP_PORT;
# `serve_start` sets PID and waits for /healthz; `serve_cleanup` (for an EXIT
# trap) stops a server still running and removes ROOT.

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
