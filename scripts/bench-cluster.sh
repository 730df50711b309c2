#!/usr/bin/env bash
# Benchmarks Rialto's cluster mode (issue 39) against Kafka's own producer and the single-node
# exchange, all on 127.0.0.1, in one run so that medians compare on the same machine.
#
# Usage:
#   scripts/bench-cluster.sh [--shards "1 2 4"] [--rates "20000"] [--rounds 2] [--bots 20]
#       [--duration 10] [--warmup 5] [--http-shards "1"] [--http-rate 5000]
#       [--http-connections 64] [--snapshot-every 100000] [--kafka-port-base 19192]
#       [--out DIR] [--bin PATH]
#
# Starts a 3-node Kafka (scripts/kafka.sh: replication factor 3, min.insync.replicas 2) once.
# Then, each round, for each total rate R (requests/s over all bots: new orders, cancels and
# replaces of `rialto bench fix`'s mix), one after the other:
#   cluster   for each shard count S: a fresh topic prefix, 2 engines per shard (active and hot
#             standby) and 1 gateway; once `rialto cluster status` shows an active engine in
#             every shard, `rialto bench fix` through the gateway (--bots B at R/B each), then,
#             if S is in --http-shards, `rialto bench http` through the gateway's REST API at
#             --http-rate (an API key per connection); then everything stops.
#   producer  Kafka's ProducerPerformance at R records/s, 100-byte records, acks=all,
#             idempotent, linger.ms=0, on a fresh topic (1 partition, 3 replicas), for W+D
#             seconds of which the first W are warm-up (--warmup-records).
#   single    `rialto bench fix --spawn-server` (one `rialto serve` process) at R, and
#             `rialto bench http --spawn-server` at --http-rate if --http-shards is not empty.
#
# Through a gateway, `bench fix` trades ACME, BOLT, CRNK and DUNE (--symbols, each a quarter of
# the requests): they are spread over the shards round-robin (2 shards: ACME,CRNK | BOLT,DUNE),
# and a shard left without one gets an instrument of its own that no bot trades (EPIC, FUSE,
# ...), so with more than 4 shards only 4 of them carry load. The single-node run trades the
# default contract's three (the spawned server's instruments).
#
# Prints one line per run (mode, shards, offered rate, achieved rate: requests sent a second,
# P50, P99, rejects, shed: answered "exchange busy" or REST 429/503, whose latency is not in
# the percentiles) and, at the end, the medians over the rounds with the cluster's P50 and P99
# over the producer's at the same rate.
# Writes DIR/runs.csv (one row per run), DIR/summary.txt (the medians), DIR/logs/ (every
# process's output, `cluster status` at the end of each cluster run) and DIR/machine.txt.
# DIR defaults to bench-cluster-<UTC time> in the current directory. Every process it starts
# is stopped on exit, on an error and on Ctrl-C.
#
# Needs a release build (`cargo build --release -p rialto`; --bin or RIALTO_BIN for another
# binary), Java 17+ and the Kafka jars (docs/kafka.md).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
kafka_sh=$here/kafka.sh

bin=${RIALTO_BIN:-$root/target/release/rialto}
shard_counts="1 2 4"
rates="20000"
rounds=2
bots=20
duration=10
warmup=5
http_shards="1"
http_rate=5000
http_connections=64
snapshot_every=100000
kafka_port_base=19192
out=""

# The symbols `bench fix` trades through a gateway (--symbols), then idle ones for shards beyond
# them.
traded=(ACME BOLT CRNK DUNE)
idle=(EPIC FUSE GRIT HALO)
max_shards=$((${#traded[@]} + ${#idle[@]}))

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
    exit 2
}

die() {
    echo "bench-cluster.sh: $*" >&2
    exit 1
}

is_uint() {
    [[ $1 =~ ^[0-9]+$ ]]
}

while (($#)); do
    [ $# -ge 2 ] || usage
    case $1 in
    --shards) shard_counts=$2 ;;
    --rates) rates=$2 ;;
    --rounds) rounds=$2 ;;
    --bots) bots=$2 ;;
    --duration) duration=$2 ;;
    --warmup) warmup=$2 ;;
    --http-shards) http_shards=$2 ;;
    --http-rate) http_rate=$2 ;;
    --http-connections) http_connections=$2 ;;
    --snapshot-every) snapshot_every=$2 ;;
    --kafka-port-base) kafka_port_base=$2 ;;
    --out) out=$2 ;;
    --bin) bin=$2 ;;
    *) usage ;;
    esac
    shift 2
done

for v in "$rounds" "$bots" "$duration" "$warmup" "$http_rate" "$http_connections" \
    "$snapshot_every" "$kafka_port_base"; do
    is_uint "$v" || usage
done
if ((rounds < 1 || bots < 1 || bots > 64 || duration < 1)); then
    die "--rounds >= 1, --bots 1 to 64 (the default sessions BOT1..64), --duration >= 1"
fi
if ((http_connections < 1 || http_connections > 64)); then
    die "--http-connections 1 to 64 (an API key each, on the accounts of BOT1..64)"
fi
read -ra shard_counts <<<"$shard_counts"
read -ra rates <<<"$rates"
read -ra http_shards <<<"$http_shards"
if [ ${#shard_counts[@]} -eq 0 ] || [ ${#rates[@]} -eq 0 ]; then
    usage
fi
for s in "${shard_counts[@]}" ${http_shards[@]+"${http_shards[@]}"}; do
    if ! is_uint "$s" || ((s < 1 || s > max_shards)); then
        die "shard count $s: give 1 to $max_shards"
    fi
done
for r in "${rates[@]}"; do
    if ! is_uint "$r" || ((r < bots || r % bots != 0)); then
        die "rate $r: give a multiple of --bots $bots (each bot sends R/B)"
    fi
done
[ -x "$bin" ] || die "$bin not found: cargo build --release -p rialto (or --bin PATH)"

out=${out:-bench-cluster-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
logs=$out/logs
csv=$out/runs.csv
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-cluster.XXXXXX")
stamp=$(date -u +%H%M%S)

# Every process started in the background, stopped by cleanup.
pids=()
kafka_started=""

# SIGTERM to pid $1, SIGKILL after $2 seconds (default 20); waits for it.
stop_pid() {
    local pid=$1 grace=${2:-20} i
    if kill -TERM "$pid" 2>/dev/null; then
        for ((i = 0; i < grace * 10; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            pause 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    local keep=() p
    for p in "${pids[@]}"; do
        [ "$p" = "$pid" ] || keep+=("$p")
    done
    pids=(${keep[@]+"${keep[@]}"})
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    local p
    for p in ${pids[@]+"${pids[@]}"}; do
        stop_pid "$p" 10
    done
    if [ -n "$kafka_started" ]; then
        "$kafka_sh" stop --dir "$work/kafka" >/dev/null 2>&1 || true
        local f
        for f in "$work"/kafka/node*.log; do
            [ -f "$f" ] && cp "$f" "$logs/kafka-$(basename "$f")"
        done
    fi
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Sleeps $1 seconds in the background: a signal runs its trap at once (a foreground command
# that does not die of a SIGINT sent to this script alone makes bash drop that SIGINT).
pause() {
    sleep "$1" &
    wait $!
}

# Runs "$@" in the background, its output in $1 (shifted); sets bg_pid.
bg_pid=""
start_bg() {
    local log=$1
    shift
    "$@" >"$log" 2>&1 &
    bg_pid=$!
    pids+=("$bg_pid")
}

# Runs "$@" in the background (so that Ctrl-C reaches the trap at once), stdout in $1, stderr
# in $2; returns its status.
run_fg() {
    local o=$1 e=$2 rc=0
    shift 2
    "$@" >"$o" 2>"$e" &
    local pid=$!
    pids+=("$pid")
    wait "$pid" || rc=$?
    stop_pid "$pid"
    return "$rc"
}

# The value of key $1 in the `key=value ...` line $2 (empty if absent).
field() {
    tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -n1
}

echo "round,mode,shards,rate_offered,rate_achieved,p50_us,p99_us,p999_us,max_us,rejects,shed,errors,load1,notes" >"$csv"

# One run's line: on stdout and in the CSV, with the 1-minute load average at its end (the
# other processes of the machine show there). Args: round mode shards offered achieved p50 p99
# p999 max rejects shed errors notes.
record() {
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    local IFS=,
    echo "${*:1:12},$load,${13}" >>"$csv"
    printf '%-12s round %s shards %-2s rate %6s: achieved %8s/s  p50 %9s us  p99 %10s us  rejects %s shed %s errors %s load %s %s\n' \
        "$2" "$1" "$3" "$4" "$5" "$6" "$7" "${10}" "${11}" "${12}" "$load" "${13}"
}

# A `bench fix` or `bench http` summary line into the CSV. Args: round mode shards offered
# stdout-file notes.
record_bench() {
    local line
    line=$(grep 'rate_offered=' "$5" | tail -n1 || true)
    if [ -z "$line" ]; then
        record "$1" "$2" "$3" "$4" "" "" "" "" "" "" "" "" "no result${6:+; $6}"
        return
    fi
    local rejects notes=$6
    rejects=$(field rejects "$line")
    # bench http: latency is of the answers that are not shed (429/503); none, no latency.
    if [ "$(field ok "$line")" = 0 ]; then
        notes+="${notes:+; }no request answered ok"
    fi
    record "$1" "$2" "$3" "$4" "$(field rate_achieved "$line")" "$(field p50_us "$line")" \
        "$(field p99_us "$line")" "$(field p999_us "$line")" "$(field max_us "$line")" \
        "${rejects:-0}" "$(field shed "$line")" "$(field errors "$line")" "$notes"
}

# The shards' symbols for S shards: one line per shard, symbols separated by spaces.
shard_symbols() {
    local s=$1 i
    local -a sh=()
    for ((i = 0; i < ${#traded[@]}; i++)); do
        sh[i % s]+="${sh[i % s]:+ }${traded[i]}"
    done
    for ((i = ${#traded[@]}; i < s; i++)); do
        sh[i]=${idle[i - ${#traded[@]}]}
    done
    printf '%s\n' "${sh[@]}"
}

# Writes the engines' config ($1) and the gateway's ($2) for S=$3 shards, topic prefix $4.
write_configs() {
    local cfg=$1 gw=$2 s=$3 prefix=$4 line sym
    local -a syms=() shards=()
    while read -r line; do
        local -a words
        read -ra words <<<"$line"
        syms+=("${words[@]}")
        shards+=("[$(printf '"%s", ' "${words[@]}" | sed 's/, $//')]")
    done < <(shard_symbols "$s")
    {
        for sym in "${traded[@]}" "${syms[@]}"; do
            echo "$sym"
        done | awk '!seen[$0]++' | while read -r sym; do
            printf '[[instruments]]\nsymbol = "%s"\ntick = "0.01"\nlot = 1\n\n' "$sym"
        done
    } >"$work/instruments.toml"
    local cluster
    cluster=$(
        printf '[cluster]\nbrokers = "%s"\ntopic_prefix = "%s"\n' "$bootstrap" "$prefix"
        printf 'replication_factor = 3\nmin_insync_replicas = 2\n'
        local joined
        joined=$(IFS=,; echo "${shards[*]}")
        printf 'shards = [%s]\n' "${joined//,\[/, [}"
        printf 'snapshot_every_commands = %s\n' "$snapshot_every"
    )
    { cat "$work/instruments.toml"; echo "$cluster"; } >"$cfg"
    {
        cat "$work/instruments.toml" "$work/api_keys.toml"
        echo "${cluster/\[cluster\]/[cluster]$'\n'gateway = 1}"
    } >"$gw"
}

# Waits until every one of the S=$2 shards of config $1 has an active engine, for 120 s at
# most, while the pids $3... run.
wait_active() {
    local cfg=$1 s=$2 n p i
    shift 2
    for ((i = 0; i < 600; i++)); do
        for p in "$@"; do
            kill -0 "$p" 2>/dev/null || return 1
        done
        n=$("$bin" cluster status --config "$cfg" 2>/dev/null |
            awk '/^shard /{s=$2} $2=="active"{a[s]=1} END{n=0; for (k in a) n++; print n}' || true)
        [ "${n:-0}" -ge "$s" ] && return 0
        pause 0.2
    done
    return 1
}

# Sets port to the port of the address after "$2" in log $1, waiting for it while pid $3
# runs (60 s at most).
port=""
wait_listen() {
    local log=$1 what=$2 pid=$3 i a
    for ((i = 0; i < 600; i++)); do
        a=$(sed -n "s/.*$what \([0-9.]*:[0-9]*\).*/\1/p" "$log" | head -n1)
        if [ -n "$a" ]; then
            port=${a##*:}
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || return 1
        pause 0.1
    done
    return 1
}

# Problems in the logs $@: lines that say error, panic or fatal (counted), for the notes.
log_problems() {
    local n
    n=$(cat "$@" | grep -ciE 'error|panic|fatal|failed' || true)
    [ "${n:-0}" -gt 0 ] && echo "$n log lines with error/panic/failed"
    return 0
}

# "died: ..." naming those of the gateway $1 and the engines $2... (shard 0 a, shard 0 b, shard
# 1 a, ...) that no longer run; nothing if all run.
dead() {
    local list="" i=0 p
    kill -0 "$1" 2>/dev/null || list+=" gateway"
    shift
    for p in "$@"; do
        kill -0 "$p" 2>/dev/null || list+=" engine $((i / 2))/$([ $((i % 2)) -eq 0 ] && echo a || echo b)"
        i=$((i + 1))
    done
    if [ -n "$list" ]; then echo "died:$list"; fi
}

cluster_run() {
    local round=$1 rate=$2 s=$3
    local tag=r$round-$rate-s$s
    local prefix=bench-$stamp-$tag
    local cfg=$work/$tag.toml gw=$work/$tag-gateway.toml
    write_configs "$cfg" "$gw" "$s" "$prefix"
    cp "$cfg" "$logs/$tag.toml"
    local -a eng=()
    local sh id
    for ((sh = 0; sh < s; sh++)); do
        for id in a b; do
            start_bg "$logs/$tag-engine-$sh-$id.log" \
                "$bin" engine --config "$cfg" --shard "$sh" --id "$id" --data-dir "$work/$tag-engines"
            eng+=("$bg_pid")
        done
    done
    local notes=""
    if ! wait_active "$cfg" "$s" "${eng[@]}"; then
        notes="no active engine in every shard within 120 s"
    fi
    local gpid fix_port="" http_port=""
    start_bg "$logs/$tag-gateway.log" "$bin" gateway --config "$gw" --data-dir "$work/$tag-gateway" \
        --listen 127.0.0.1:0 --http-listen 127.0.0.1:0
    gpid=$bg_pid
    if [ -z "$notes" ]; then
        if wait_listen "$logs/$tag-gateway.log" "listening for FIX on" "$gpid"; then
            fix_port=$port
        else
            notes="the gateway did not start"
        fi
        if [ -z "$notes" ] && wait_listen "$logs/$tag-gateway.log" "listening for HTTP on" "$gpid"; then
            http_port=$port
        fi
    fi
    if [ -z "$notes" ]; then
        run_fg "$logs/$tag-fix.out" "$logs/$tag-fix.err" \
            "$bin" bench fix --port "$fix_port" --bots "$bots" --rate $((rate / bots)) \
            --symbols "$(IFS=,; echo "${traded[*]}")" --duration "$duration" \
            --warmup "$warmup" || notes="bench fix failed"
    fi
    local i d
    d=$(dead "$gpid" "${eng[@]}")
    local fix_notes=${notes}${d:+${notes:+; }$d}
    record_bench "$round" cluster "$s" "$rate" "$logs/$tag-fix.out" "$fix_notes"
    if [[ " ${http_shards[*]} " == *" $s "* ]]; then
        local hnotes=$notes
        if [ -z "$hnotes" ] && [ -n "$http_port" ]; then
            run_fg "$logs/$tag-http.out" "$logs/$tag-http.err" \
                "$bin" bench http --port "$http_port" --token-file "$work/tokens" \
                --connections "$http_connections" --rate "$http_rate" \
                --duration "$duration" --warmup "$warmup" || hnotes="bench http failed"
        else
            hnotes=${hnotes:-the gateway has no HTTP listener}
        fi
        d=$(dead "$gpid" "${eng[@]}")
        record_bench "$round" http-cluster "$s" "$http_rate" "$logs/$tag-http.out" \
            "${hnotes}${d:+${hnotes:+; }$d}"
    fi
    "$bin" cluster status --config "$cfg" >"$logs/$tag-status.txt" 2>&1 || true
    stop_pid "$gpid"
    for i in "${eng[@]}"; do
        stop_pid "$i"
    done
    local p
    p=$(log_problems "$logs/$tag"-engine-*.log "$logs/$tag-gateway.log")
    [ -n "$p" ] && echo "  note: $tag: $p (see $logs/$tag-*.log)"
    rm -rf "$work/$tag-engines" "$work/$tag-gateway"
    return 0
}

ms_to_us() {
    awk -v v="$1" 'BEGIN { if (v == "") print ""; else printf "%d\n", v * 1000 }'
}

producer_run() {
    local round=$1 rate=$2
    local tag=r$round-$rate-producer topic=perf-$stamp-r$round-$rate notes=""
    "$kafka_sh" topics --bootstrap "$bootstrap" --create --topic "$topic" --partitions 1 \
        --replication-factor 3 --config min.insync.replicas=2 >"$logs/$tag-topic.log" 2>&1 ||
        notes="topic creation failed"
    if [ -z "$notes" ]; then
        run_fg "$logs/$tag.out" "$logs/$tag.err" \
            "$kafka_sh" perf-producer --topic "$topic" --num-records $((rate * (warmup + duration))) \
            --warmup-records $((rate * warmup)) --record-size 100 --throughput "$rate" \
            --command-property "bootstrap.servers=$bootstrap" acks=all enable.idempotence=true \
            linger.ms=0 || notes="ProducerPerformance failed"
    fi
    # The steady-state line (after the warm-up records) if there is one, else the last total.
    local line
    line=$(grep -E 'records sent' "$logs/$tag.out" | grep -iE 'steady' | tail -n1 || true)
    [ -n "$line" ] || line=$(grep -E 'records sent' "$logs/$tag.out" | tail -n1 || true)
    if [ -z "$line" ]; then
        record "$round" producer 0 "$rate" "" "" "" "" "" "" "" "" "no result${notes:+; $notes}"
        return 0
    fi
    # "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency, P50 ms
    # 50th, P95 ms 95th, P99 ms 99th, P999 ms 99.9th."
    local achieved p50 p99 p999 max
    achieved=$(sed -n 's/.* \([0-9.]*\) records\/sec.*/\1/p' <<<"$line")
    max=$(sed -n 's/.* \([0-9.]*\) ms max latency.*/\1/p' <<<"$line")
    p50=$(sed -n 's/.* \([0-9.]*\) ms 50th.*/\1/p' <<<"$line")
    p99=$(sed -n 's/.* \([0-9.]*\) ms 99th.*/\1/p' <<<"$line")
    p999=$(sed -n 's/.* \([0-9.]*\) ms 99\.9th.*/\1/p' <<<"$line")
    record "$round" producer 0 "$rate" "$achieved" "$(ms_to_us "$p50")" "$(ms_to_us "$p99")" \
        "$(ms_to_us "$p999")" "$(ms_to_us "$max")" 0 0 0 "${notes:-ms resolution}"
}

single_run() {
    local round=$1 rate=$2
    local tag=r$round-$rate-single notes=""
    run_fg "$logs/$tag-fix.out" "$logs/$tag-fix.err" \
        "$bin" bench fix --spawn-server --server-log "$logs/$tag-server.log" --bots "$bots" \
        --rate $((rate / bots)) --duration "$duration" --warmup "$warmup" ||
        notes="bench fix failed"
    record_bench "$round" single 0 "$rate" "$logs/$tag-fix.out" "$notes"
}

single_http_run() {
    local round=$1 tag=r$1-http-single notes=""
    run_fg "$logs/$tag.out" "$logs/$tag.err" \
        "$bin" bench http --spawn-server --server-log "$logs/$tag-server.log" \
        --connections "$http_connections" --rate "$http_rate" --duration "$duration" \
        --warmup "$warmup" || notes="bench http failed"
    record_bench "$round" http-single 0 "$http_rate" "$logs/$tag.out" "$notes"
}

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
    echo "nproc: $(nproc)"
    echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "args: shards=${shard_counts[*]} rates=${rates[*]} rounds=$rounds bots=$bots duration=$duration warmup=$warmup http_shards=${http_shards[*]} http_rate=$http_rate http_connections=$http_connections snapshot_every=$snapshot_every"
} | tee "$out/machine.txt"

# API keys for the gateways' REST API: one per connection, on BOT1..n's accounts (101..).
: >"$work/tokens"
: >"$work/api_keys.toml"
for ((i = 1; i <= http_connections; i++)); do
    key=$("$bin" apikey new --account $((100 + i)) --name "bench$i")
    head -n1 <<<"$key" >>"$work/tokens"
    { sed -n '/^\[\[api_keys\]\]/,$p' <<<"$key"; echo "requests_per_sec = 1000000"; echo; } \
        >>"$work/api_keys.toml"
done

echo "starting a 3-node Kafka (ports from $kafka_port_base)"
kafka_started=1
run_fg "$work/bootstrap" "$logs/kafka-start.log" \
    "$kafka_sh" start --nodes 3 --dir "$work/kafka" --port-base "$kafka_port_base" --owner $$ ||
    die "Kafka did not start (see $logs/kafka-start.log)"
bootstrap=$(tail -n1 "$work/bootstrap")
echo "brokers: $bootstrap" | tee -a "$out/machine.txt"

for ((round = 1; round <= rounds; round++)); do
    for rate in "${rates[@]}"; do
        for s in "${shard_counts[@]}"; do
            cluster_run "$round" "$rate" "$s"
        done
        producer_run "$round" "$rate"
        single_run "$round" "$rate"
    done
    if [ ${#http_shards[@]} -gt 0 ]; then
        single_http_run "$round"
    fi
done

# Medians over the rounds per (mode, shards, rate); the cluster's over the producer's.
median() {
    sort -n | awk '{v[NR] = $1} END {
        if (NR == 0) print "";
        else if (NR % 2) print v[(NR + 1) / 2];
        else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f\n", a / b }'
}
col() { # rows of mode $1, shards $2, rate $3: column $4's non-empty values
    awk -F, -v m="$1" -v s="$2" -v r="$3" -v c="$4" \
        'NR > 1 && $2 == m && $3 == s && $4 == r && $c != "" {print $c}' "$csv"
}
{
    echo
    echo "medians over $rounds round(s); latency in us; every process shares $(nproc) CPUs"
    printf '%-13s %6s %7s %10s %9s %9s %12s %12s\n' mode shards rate achieved p50 p99 \
        p50/producer p99/producer
    awk -F, 'NR > 1 {print $2 "," $3 "," $4}' "$csv" | awk '!seen[$0]++' |
        while IFS=, read -r m s r; do
            a=$(col "$m" "$s" "$r" 5 | median)
            p50=$(col "$m" "$s" "$r" 6 | median)
            p99=$(col "$m" "$s" "$r" 7 | median)
            pp50=$(col producer 0 "$r" 6 | median)
            pp99=$(col producer 0 "$r" 7 | median)
            r50=-
            r99=-
            if [[ $m != http-* ]]; then
                r50=$(ratio "$p50" "$pp50")
                r99=$(ratio "$p99" "$pp99")
            fi
            printf '%-13s %6s %7s %10s %9s %9s %12s %12s\n' "$m" "$s" "$r" "${a:--}" \
                "${p50:--}" "${p99:--}" "$r50" "$r99"
        done
} | tee "$out/summary.txt"
echo "CSV: $csv; logs: $logs"
