#!/usr/bin/env bash
# The REST API's throughput measured by wrk (apt: wrk), the cross-check of `rialto bench http`
# (BENCHMARKS.md, "REST"): a fresh `rialto serve` with one API key on 127.0.0.1, then wrk's
# closed loop of POST /api/v1/orders, alternating buy and sell limit orders of 1 ACME at one
# price (each pair trades; the book stays empty), then the server stopped. wrk measures from the
# actual send (closed loop), so its latency is not comparable with bench http's open loop: its
# requests a second are the figure.
#
# Usage: scripts/wrk-rest.sh [BIN] [CONNECTIONS] [SECONDS]
#        (default: target/release/rialto, 10 connections, 8 seconds; one wrk thread)
set -euo pipefail
bin=${1:-target/release/rialto}
conns=${2:-10}
secs=${3:-8}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p rialto" >&2; exit 1; }
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
"$bin" apikey new --account 1 --name wrk >"$dir/key"
token=$(head -n 1 "$dir/key")
{ sed -n '/^\[\[api_keys\]\]/,$p' "$dir/key"; echo "requests_per_sec = 10000000"; } >"$dir/rialto.toml"
"$bin" serve --data-dir "$dir/data" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
    --config "$dir/rialto.toml" >"$dir/log" 2>&1 &
pid=$!
addr=
for _ in $(seq 300); do
    addr=$(grep -m1 -o 'listening for HTTP on [0-9.]*:[0-9]*' "$dir/log" | sed 's/.* //' || true)
    [ -n "$addr" ] && break
    sleep 0.1
done
[ -n "$addr" ] || { echo "rialto serve did not serve HTTP:" >&2; cat "$dir/log" >&2; exit 1; }
cat >"$dir/orders.lua" <<'EOF'
local n = 0
local token = os.getenv("TOKEN")
request = function()
  n = n + 1
  local side = (n % 2 == 0) and "buy" or "sell"
  local body = '{"symbol":"ACME","side":"' .. side ..
    '","type":"limit","time_in_force":"gtc","price":"10.00","quantity":"1"}'
  return wrk.format("POST", "/api/v1/orders",
    {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
end
EOF
echo "wrk -t1 -c$conns -d${secs}s against $bin serve at $addr"
TOKEN=$token wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$dir/orders.lua" "http://$addr"
