#!/usr/bin/env bash
# Rialto beside the QuickFIX/J reference exchange, in one go on the same machine: the FIXEdge
# single-session echo (seed 003: one session, NewOrderSingle -> ExecutionReport at a fixed rate)
# against Rialto in `process` and `fsync` durability and against the QuickFIX/J peer, run
# interleaved (process, fsync, QFJ, process, ...) so machine noise falls on all three alike,
# then one table of medians over the repetitions with the ratios Rialto/QFJ. Optionally a
# latency-vs-load sweep of each (`--sweep`) and a chart of the three.
#
# Usage: scripts/bench-side-by-side.sh [options]
#   --count N          measured round trips per echo run (default 200000, the seed's)
#   --rate R           echo messages per second (default 2000, the seed's)
#   --repeat N         echo runs per exchange, interleaved; the table shows medians (default 3)
#   --warmup S         unmeasured seconds before each echo run, same for all (default 2)
#   --sweep            also sweep each exchange (rialto bench sweep) and chart them together
#   --sweep-rates L    Rialto's sweep rates (default 10k,20k,50k,100k,150k,200k,250k,300k)
#   --qfj-sweep-rates L  the reference exchange's (default 500,1k,2k,5k,10k)
#   --duration S       measured seconds per sweep point (default 10)
#   --sweep-repeat N   runs per sweep point, medians (default 1)
#   --bots N           bot sessions in the sweeps (default 10)
#   --qfj-port P       port for the reference exchange (default 9879; must be free)
#   --rialto-idle M    Rialto's event loop when idle: park (default) or spin (busy-polls one
#                      core: lower latency; the generator and the JVM share the other)
#   --rialto-cpu N     pin Rialto's event loop to CPU N (`rialto serve --cpu N`: its other
#                      threads stay off it; default 0; `none`: unpinned)
#   --gen-cpu N        pin the load generator (one thread) to CPU N in Rialto's runs (default
#                      0, the loop's CPU: the generator's write hands the CPU to the loop
#                      without waking another vCPU; `none`: unpinned)
#   --gen-nice N       the generator's nice value in Rialto's runs (default 10: sharing the
#                      loop's CPU, it does not preempt the loop mid-iteration; 0: as the loop)
#   --gen-spin-us N    the generator busy-polls when its next request is due within N µs
#                      (`bench --spin-us`; default 0: it sleeps on a timer and spins only the
#                      last few µs)
#                      The reference exchange's runs keep the generator unpinned at nice 0
#                      (the JVM's threads are unpinned); see BENCHMARKS.md for why this
#                      placement is Rialto's best on a 2-vCPU VM.
#   --noise S          first measure the machine's scheduling gaps for S seconds
#                      (`rialto bench noise`, the floor under every figure; default 10, 0: skip)
#   --jvm-warmup S     an unrecorded echo run of S seconds against the fresh JVM first, so its
#                      JIT has compiled the hot paths before anything is measured (default 20)
#   --out DIR          where results go (default bench-out/side-by-side-UTCDATE)
#   --no-build         use the existing builds
#   --short            a quick look: --count 20000 --repeat 1 --warmup 1 --duration 3
#
# Builds: `cargo build --release -p rialto` (honours CARGO_TARGET_DIR) and
# `mvn -q -B -f java/refexchange/pom.xml package` (Java 17 and Maven, as java/run-interop.sh and
# scripts/test.sh's interop step use). Rialto runs are `rialto bench echo|sweep --spawn-server`
# (a fresh `rialto serve` and data dir per run); the reference exchange is one warm JVM
# (`java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -jar java/refexchange/target/refexchange.jar`, file
# store in a temporary dir) for the whole script, stopped on exit. Every run's output, its
# parseable summary line included, is kept in DIR. Exit status 0 when every run finished, 1 when
# one failed, 2 on bad arguments or missing tools.
set -euo pipefail
cd "$(dirname "$0")/.."

count=200000
rate=2000
repeat=3
warmup=2
sweep=0
sweep_rates=10k,20k,50k,100k,150k,200k,250k,300k
qfj_sweep_rates=500,1k,2k,5k,10k
duration=10
sweep_repeat=1
bots=10
qfj_port=9879
out=""
build=1
jvm_warmup=20
rialto_idle=park
rialto_cpu=0
gen_cpu=0
gen_nice=10
gen_spin_us=0
noise=10

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

need_value() {
    [ $# -ge 2 ] && [ -n "$2" ] || { echo "$1 needs a value" >&2; exit 2; }
}

while [ $# -gt 0 ]; do
    case "$1" in
        --count) need_value "$@"; count=$2; shift 2 ;;
        --rate) need_value "$@"; rate=$2; shift 2 ;;
        --repeat) need_value "$@"; repeat=$2; shift 2 ;;
        --warmup) need_value "$@"; warmup=$2; shift 2 ;;
        --sweep) sweep=1; shift ;;
        --sweep-rates) need_value "$@"; sweep_rates=$2; shift 2 ;;
        --qfj-sweep-rates) need_value "$@"; qfj_sweep_rates=$2; shift 2 ;;
        --duration) need_value "$@"; duration=$2; shift 2 ;;
        --sweep-repeat) need_value "$@"; sweep_repeat=$2; shift 2 ;;
        --bots) need_value "$@"; bots=$2; shift 2 ;;
        --qfj-port) need_value "$@"; qfj_port=$2; shift 2 ;;
        --rialto-idle) need_value "$@"; rialto_idle=$2; shift 2 ;;
        --rialto-cpu) need_value "$@"; rialto_cpu=$2; shift 2 ;;
        --gen-cpu) need_value "$@"; gen_cpu=$2; shift 2 ;;
        --gen-spin-us) need_value "$@"; gen_spin_us=$2; shift 2 ;;
        --gen-nice) need_value "$@"; gen_nice=$2; shift 2 ;;
        --noise) need_value "$@"; noise=$2; shift 2 ;;
        --out) need_value "$@"; out=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --jvm-warmup) need_value "$@"; jvm_warmup=$2; shift 2 ;;
        --short) count=20000; repeat=1; warmup=1; duration=3; jvm_warmup=5; shift ;;
        -h | --help) usage ;;
        *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
for v in count rate repeat sweep_repeat bots qfj_port; do
    if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
        echo "--${v//_/-} ${!v}: give a positive whole number" >&2
        exit 2
    fi
done
case "$rialto_idle" in park | spin) ;; *) echo "--rialto-idle $rialto_idle: use park or spin" >&2; exit 2 ;; esac
if ! [[ $gen_nice =~ ^[0-9]+$ ]] || [ "$gen_nice" -gt 19 ]; then
    echo "--gen-nice $gen_nice: give 0 to 19" >&2
    exit 2
fi
if ! [[ $gen_spin_us =~ ^[0-9]+$ ]]; then
    echo "--gen-spin-us $gen_spin_us: give whole µs" >&2
    exit 2
fi
for v in rialto_cpu gen_cpu; do
    if [ "${!v}" != none ] && ! [[ ${!v} =~ ^[0-9]+$ ]]; then
        echo "--${v//_/-} ${!v}: give a CPU number or none" >&2
        exit 2
    fi
done
# Placement options of Rialto's runs: the spawned server's and the generator's.
rialto_place=(--spin-us "$gen_spin_us" --nice "$gen_nice")
[ "$rialto_cpu" != none ] && rialto_place+=(--server-cpu "$rialto_cpu")
[ "$gen_cpu" != none ] && rialto_place+=(--cpu "$gen_cpu")
for v in warmup duration jvm_warmup noise; do
    if ! [[ ${!v} =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
        echo "--$v ${!v}: give seconds" >&2
        exit 2
    fi
done
for t in cargo java mvn awk; do
    command -v "$t" >/dev/null 2>&1 || { echo "$t is missing (Java 17 and Maven for the peer)" >&2; exit 2; }
done
if (exec 3<>"/dev/tcp/127.0.0.1/$qfj_port") 2>/dev/null; then
    echo "port $qfj_port is in use: stop what listens there or pass --qfj-port" >&2
    exit 2
fi

out=${out:-bench-out/side-by-side-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
rialto="${CARGO_TARGET_DIR:-target}/release/rialto"
jar=java/refexchange/target/refexchange.jar

if [ "$build" = 1 ]; then
    echo "==> building: cargo build --release -p rialto; mvn package (java/refexchange)"
    cargo build --release -p rialto
    mvn -q -B -f java/refexchange/pom.xml package
fi
[ -x "$rialto" ] || { echo "$rialto is missing (drop --no-build)" >&2; exit 2; }
[ -f "$jar" ] || { echo "$jar is missing (drop --no-build)" >&2; exit 2; }

qfj_dir=$(mktemp -d)
qfj_pid=""
stop_qfj() {
    if [ -n "$qfj_pid" ] && kill -0 "$qfj_pid" 2>/dev/null; then
        kill -TERM "$qfj_pid" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$qfj_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$qfj_pid" 2>/dev/null || true
        wait "$qfj_pid" 2>/dev/null || true
    fi
    qfj_pid=""
    rm -rf "$qfj_dir"
}
trap stop_qfj EXIT

echo "==> starting the QuickFIX/J reference exchange on 127.0.0.1:$qfj_port"
java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -jar "$jar" --port "$qfj_port" \
    --data-dir "$qfj_dir/data" >"$out/refexchange.log" 2>&1 &
qfj_pid=$!
for i in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$qfj_port") 2>/dev/null; then
        break
    fi
    if ! kill -0 "$qfj_pid" 2>/dev/null || [ "$i" = 600 ]; then
        echo "the reference exchange did not start; its log:" >&2
        cat "$out/refexchange.log" >&2
        exit 1
    fi
    sleep 0.1
done

uptime_line() { uptime | sed 's/.*load average/load average/'; }
echo "# side by side, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uptime_line), Rialto idle=$rialto_idle, Rialto loop CPU $rialto_cpu, generator (Rialto runs) CPU $gen_cpu nice $gen_nice spin ${gen_spin_us} µs" | tee "$out/README.txt"
if [ "$noise" != 0 ]; then
    # Before the JVM warms up and while nothing else runs: the machine's own scheduling gaps.
    echo "==> the machine's scheduling gaps (rialto bench noise --seconds $noise)"
    "$rialto" bench noise --seconds "$noise" 2>/dev/null | tee "$out/noise.txt" | tee -a "$out/README.txt"
fi

failed=0
# One echo run: NAME then the bench echo target options. Output in $out/echo-NAME-REP.txt; the
# summary line (the last) is appended to $out/echo-NAME.summary.
echo_run() {
    local name=$1 rep=$2
    shift 2
    local f="$out/echo-$name-$rep.txt"
    echo "==> echo $name (run $rep of $repeat): $count at $rate/s, warm-up ${warmup}s; $(uptime_line)"
    if "$rialto" bench echo --rate "$rate" --count "$count" --warmup "$warmup" "$@" >"$f" 2>"$f.log"; then
        tail -n 1 "$f" | tee -a "$out/echo-$name.summary"
    else
        echo "echo $name failed; see $f.log" >&2
        tail -n 5 "$f.log" >&2
        failed=1
    fi
}

jvm_count=$(awk -v s="$jvm_warmup" -v r="$rate" 'BEGIN { printf "%d", s * r }')
if [ "$jvm_count" -gt 0 ]; then
    echo "==> warming the JVM up: $jvm_count echo round trips at $rate/s, not recorded"
    if ! "$rialto" bench echo --rate "$rate" --count "$jvm_count" --port "$qfj_port" \
        >"$out/jvm-warmup.txt" 2>"$out/jvm-warmup.log"; then
        echo "the JVM warm-up run failed; see $out/jvm-warmup.log" >&2
        tail -n 5 "$out/jvm-warmup.log" >&2
        exit 1
    fi
fi

for rep in $(seq 1 "$repeat"); do
    echo_run process "$rep" --spawn-server --durability process --server-idle "$rialto_idle" "${rialto_place[@]}"
    echo_run fsync "$rep" --spawn-server --durability fsync --server-idle "$rialto_idle" "${rialto_place[@]}"
    echo_run qfj "$rep" --port "$qfj_port"
done

# Medians of each percentile over the runs of each exchange, and Rialto / QFJ ratios.
table() {
    awk -v runs="$repeat" -v rate="$rate" -v count="$count" '
    function median(name, key,    n, i, j, t, a) {
        n = cnt[name]
        if (n == 0) return ""
        for (i = 1; i <= n; i++) a[i] = v[name, key, i]
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    FNR == 1 { name = FILENAME; sub(/.*echo-/, "", name); sub(/\.summary$/, "", name) }
    {
        cnt[name]++
        for (i = 1; i <= NF; i++) {
            split($i, kv, "=")
            v[name, kv[1], cnt[name]] = kv[2]
        }
    }
    END {
        split("p50_us p90_us p99_us p999_us p9999_us", keys, " ")
        label["process"] = "Rialto, process"; label["fsync"] = "Rialto, fsync"; label["qfj"] = "QuickFIX/J reference"
        printf "FIXEdge echo: %d NewOrderSingle at %d/s, one session; median over %d run(s) per exchange\n\n", count, rate, runs
        print "| exchange | P50 µs | P90 µs | P99 µs | P99.9 µs | P99.99 µs | errors (max) |"
        print "|---|---|---|---|---|---|---|"
        split("process fsync qfj", names, " ")
        for (n = 1; n <= 3; n++) {
            x = names[n]
            if (!cnt[x]) { printf "| %s | (no run finished) |||||| \n", label[x]; continue }
            line = "| " label[x]
            for (k = 1; k <= 5; k++) { m[x, k] = median(x, keys[k]); line = line sprintf(" | %.1f", m[x, k]) }
            e = 0; for (i = 1; i <= cnt[x]; i++) if (v[x, "errors", i] > e) e = v[x, "errors", i]
            print line sprintf(" | %d |", e)
        }
        for (n = 1; n <= 2; n++) {
            x = names[n]
            if (!cnt[x] || !cnt["qfj"]) continue
            line = "| " label[x] " / QFJ"
            for (k = 1; k <= 5; k++) line = line (m["qfj", k] > 0 ? sprintf(" | %.3gx", m[x, k] / m["qfj", k]) : " | -")
            print line " | |"
        }
    }' "$out"/echo-process.summary "$out"/echo-fsync.summary "$out"/echo-qfj.summary 2>/dev/null
}

if [ "$sweep" = 1 ]; then
    # Rialto gets a fresh server per point; the peer is the warm JVM above (a JVM per point
    # would measure its warm-up), with 5 s of warm-up per point.
    sweep_run() {
        local name=$1 rates=$2 warm=$3
        shift 3
        echo "==> sweep $name: $rates with $bots bots, ${duration}s each; $(uptime_line)"
        if "$rialto" bench sweep --bots "$bots" --rates "$rates" --duration "$duration" \
            --warmup "$warm" --repeat "$sweep_repeat" --stop-after-overloads 0 \
            --out "$out/sweep-$name" "$@" >"$out/sweep-$name.txt" 2>"$out/sweep-$name.log"; then
            sed -n '/^$/,$p' "$out/sweep-$name.txt"
        else
            echo "sweep $name failed; see $out/sweep-$name.log" >&2
            tail -n 5 "$out/sweep-$name.log" >&2
            failed=1
        fi
    }
    sweep_run process "$sweep_rates" 2 --spawn-server --durability process --server-idle "$rialto_idle" "${rialto_place[@]}"
    sweep_run fsync "$sweep_rates" 2 --spawn-server --durability fsync --server-idle "$rialto_idle" "${rialto_place[@]}"
    sweep_run qfj "$qfj_sweep_rates" 5 --port "$qfj_port"
    charts=()
    for n in process fsync qfj; do
        [ -f "$out/sweep-$n/sweep.csv" ] && charts+=(--csv "$n=$out/sweep-$n/sweep.csv")
    done
    if [ ${#charts[@]} -gt 0 ]; then
        "$rialto" bench chart "${charts[@]}" --percentiles p50,p99 \
            --title "Latency vs load: Rialto (process, fsync) and QuickFIX/J, $bots bots" \
            --out "$out/sweeps.svg"
    fi
    # Highest offered rate below each knee, and Rialto's as a multiple of the peer's.
    below() {
        sed -n 's/^highest rate below the knee: \([0-9.]*\) K rps offered$/\1/p' "$out/sweep-$1.txt" 2>/dev/null | head -n 1
    }
    qk=$(below qfj)
    for n in process fsync qfj; do
        k=$(below "$n")
        if [ -z "$k" ]; then
            if grep -q "knee: not reached" "$out/sweep-$n.txt" 2>/dev/null; then
                echo "$n: knee not reached within its rates"
            else
                echo "$n: overloaded at its lowest rate (no rate below the knee)"
            fi
        elif [ -n "$qk" ] && [ "$n" != qfj ]; then
            awk -v n="$n" -v k="$k" -v q="$qk" 'BEGIN { printf "%s: highest rate below the knee %s K rps = %.1fx the reference exchange (%s K)\n", n, k, k / q, q }'
        else
            echo "$n: highest rate below the knee $k K rps"
        fi
    done | tee "$out/knees.txt"
fi

echo
table | tee "$out/echo-table.md"
echo "$(uptime_line) at the end; results in $out"
exit "$failed"
