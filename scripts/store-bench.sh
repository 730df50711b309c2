#!/usr/bin/env bash
# The trade store's figures (BENCHMARKS.md, "Trade store"), in one go on this machine:
#
# 1. Order entry with the store off, in SQLite and in PostgreSQL, interleaved (off, sqlite, pg,
#    off, ...; `rialto bench fix` with a fresh `rialto serve` each run): the ack latency
#    percentiles of each, their medians and the ratios to "off", and the store's lag (journal
#    record to its rows committed) per record, P50 / P99 / max, from the follower's summary line
#    at the server's clean stop.
# 2. Catch-up: a journal made at the same rate with the store off, then `rialto store rebuild`
#    into each database (the follower's write path, batch by batch, from record 1): rows a
#    second.
#
# PostgreSQL: a throwaway cluster (Debian's binaries; fsync and synchronous commit on, as a
# user's would be) on a free 127.0.0.1 port, a fresh database per run, removed at the end.
#
# Usage: scripts/store-bench.sh [options]
#   --bin PATH        rialto (default target/release/rialto: cargo build --release -p rialto)
#   --bots N          bench fix's bot sessions (default 10)
#   --rate R          requests a second per bot (default 2000: 20 K/s in all)
#   --duration S      measured seconds per run (default 20)
#   --repeat N        runs per mode, interleaved (default 3)
#   --catchup S       seconds of trading that make the catch-up journal (default 60; 0 skips)
#   --no-postgres     SQLite only
#   --out DIR         where every run's output goes (default bench-out/store-UTCDATE)
set -euo pipefail
cd "$(dirname "$0")/.."

bin=target/release/rialto bots=10 rate=2000 duration=20 repeat=3 catchup=60 pg=1
out=bench-out/store-$(date -u +%Y%m%dT%H%M%SZ)
while [ $# -gt 0 ]; do
    case $1 in
    --bin) bin=$2; shift 2 ;;
    --bots) bots=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --catchup) catchup=$2; shift 2 ;;
    --no-postgres) pg=0; shift ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p rialto" >&2; exit 1; }
bin=$(realpath "$bin")
mkdir -p "$out"
work=$(mktemp -d)
chmod 755 "$work" # the postgres user goes through it to its cluster
pg_dir= pg_ctl= serve_pid=
cleanup() {
    [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
    if [ -n "$pg_dir" ]; then as_pg "$pg_ctl" -D "$pg_dir/data" -m immediate stop >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# as_pg CMD...: PostgreSQL refuses to run as root; as root it runs as the postgres user.
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}


if [ "$pg" = 1 ]; then
    bindir=$(pg_config --bindir 2>/dev/null || ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -x "$bindir/initdb" ] || { echo "PostgreSQL's initdb not found (apt-get install postgresql, or --no-postgres)" >&2; exit 1; }
    pg_ctl=$bindir/pg_ctl
    pg_dir=$work/pg
    mkdir -p "$pg_dir"
    [ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
    pg_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_pg "$bindir/initdb" -D "$pg_dir/data" -A trust -U postgres -E UTF8 >"$out/initdb.log"
    as_pg "$pg_ctl" -D "$pg_dir/data" -l "$pg_dir/log" -w start \
        -o "-p $pg_port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$pg_dir" >/dev/null
    pg_url_of() { echo "postgres://postgres@127.0.0.1:$pg_port/$1"; }
    # new_db NAME: a fresh database for one run.
    new_db() { psql -q -h 127.0.0.1 -p "$pg_port" -U postgres -c "CREATE DATABASE $1" postgres; }
    echo "PostgreSQL $("$bindir/postgres" --version | sed 's/.*) //') on 127.0.0.1:$pg_port (fsync on)"
fi

modes=(off sqlite)
[ "$pg" = 1 ] && modes+=(pg)
echo "==> order entry, store ${modes[*]}: bench fix --bots $bots --rate $rate --duration $duration, $repeat runs each, interleaved"
for rep in $(seq 1 "$repeat"); do
    for mode in "${modes[@]}"; do
        case $mode in
        off) store=(--store off) ;;
        sqlite) store=() ;;
        pg) new_db "bench_$rep"; store=(--store "$(pg_url_of "bench_$rep")") ;;
        esac
        f=$out/$mode-$rep
        "$bin" bench fix --bots "$bots" --rate "$rate" --duration "$duration" --warmup 2 \
            --spawn-cmd "$bin serve --listen 127.0.0.1:{port} --market-data-listen off --http-listen off --data-dir {dir} ${store[*]}" \
            --server-log "$f.server.log" >"$f.txt" 2>"$f.err" ||
            { echo "bench fix ($mode, run $rep) failed: $(tail -n 3 "$f.err")" >&2; exit 1; }
        summary=$(tail -n 1 "$f.txt")
        lag=$(grep -o 'journal-to-commit lag per record.*' "$f.server.log" | tail -n 1 || true)
        behind=$(grep -o 'trade store: stopping at record.*' "$f.server.log" | tail -n 1 || true)
        echo "$summary" >>"$out/$mode.summary"
        echo "$mode $rep: $(echo "$summary" | grep -o ' p50_us=[0-9.]* p90_us=[0-9.]* p99_us=[0-9.]*')${lag:+ | $lag}${behind:+ | $behind}"
        [ -n "$lag" ] && echo "$lag" >>"$out/$mode.lag"
    done
done

# The median of the numbers on stdin.
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# field KEY FILE: KEY's value on each summary line of FILE (key=value words).
field() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$2"; }
echo
echo "==> medians over $repeat runs (µs; lag in ms)"
off50=$(field p50_us "$out/off.summary" | median)
printf '%-7s %9s %9s %9s %9s %12s %12s %12s\n' mode p50 p99 p99.9 "p50/off" "lag p50" "lag p99" "lag max"
for mode in "${modes[@]}"; do
    p50=$(field p50_us "$out/$mode.summary" | median)
    p99=$(field p99_us "$out/$mode.summary" | median)
    p999=$(field p999_us "$out/$mode.summary" | median)
    ratio=$(awk -v a="$p50" -v b="$off50" 'BEGIN { printf "%.2f", a / b }')
    l50=- l99=- lmax=-
    if [ -f "$out/$mode.lag" ]; then
        l50=$(sed 's/.*P50 \([0-9.]*\) ms.*/\1/' "$out/$mode.lag" | median)
        l99=$(sed 's/.*P99 \([0-9.]*\) ms.*/\1/' "$out/$mode.lag" | median)
        lmax=$(sed 's/.*max \([0-9.]*\) ms.*/\1/' "$out/$mode.lag" | median)
    fi
    printf '%-7s %9s %9s %9s %9s %12s %12s %12s\n' "$mode" "$p50" "$p99" "$p999" "$ratio" "$l50" "$l99" "$lmax"
done | tee "$out/table.txt"

if [ "$catchup" != 0 ]; then
    echo
    echo "==> catch-up: ${catchup}s of trading at $((bots * rate))/s with the store off, then rialto store rebuild into each"
    data=$work/catchup
    "$bin" serve --data-dir "$data" --listen 127.0.0.1:0 --market-data-listen off --http-listen off \
        --store off >"$out/catchup-serve.log" 2>&1 &
    serve_pid=$!
    addr=
    for _ in $(seq 300); do
        addr=$(grep -m1 -o 'listening for FIX on [0-9.]*:[0-9]*' "$out/catchup-serve.log" | sed 's/.* //' || true)
        [ -n "$addr" ] && break
        sleep 0.1
    done
    [ -n "$addr" ] || { echo "rialto serve did not listen" >&2; exit 1; }
    "$bin" bench fix --port "${addr##*:}" --bots "$bots" --rate "$rate" --duration "$catchup" --warmup 0 \
        >"$out/catchup-bench.txt" 2>&1
    kill -TERM "$serve_pid"
    wait "$serve_pid" || true
    serve_pid=
    "$bin" store rebuild --data-dir "$data" --path "$work/catchup.db" | tee "$out/catchup-sqlite.txt"
    if [ "$pg" = 1 ]; then
        new_db catchup
        "$bin" store rebuild --data-dir "$data" --url "$(pg_url_of catchup)" | tee "$out/catchup-pg.txt"
    fi
fi
echo "every run's output: $out"
