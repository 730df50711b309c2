#!/usr/bin/env bash
# Runs every test of the repository: formatting, lints, the workspace's tests, and a short run
# of each fuzz target. This is the README's test command; .ci/run calls it on a fresh machine.
#
# Environment:
#   FUZZ_SECONDS   seconds per fuzz target (default 20; 0 skips fuzzing)
#   INTEROP        0 skips the QuickFIX/J interop step (default 1; needs java 17 and mvn)
#
# Usage: scripts/test.sh            every step
#        scripts/test.sh fuzz clippy only the named steps (names as in STEPS below)
#
# Output: one line per step with its result and time, and one per fuzz target with its
# executions, executions per second and crashes. Each step's full output goes to
# target/test-logs/<step>.log (each fuzz target's to fuzz-<target>.log, the interop servers' to
# interop-serve-*.log); a failing step prints the last 60 lines of its log and the log's path,
# and the script exits with that step's status.
#
# Steps are plain functions run in order; to add one, write a function and append it to STEPS.
# Each runs in a subshell with `set -euo pipefail`, its stdout and stderr in its log; fd 3 is
# the terminal (for the fuzz targets' lines), fd 4 the script's stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

log_dir=target/test-logs

FUZZ_SECONDS=${FUZZ_SECONDS:-20}
FUZZ_TARGETS=(csv_reader engine fix_decode fix_session fix_session_script journal_recover fix_adapt journal_input exchange_resolve fix_scan fix_md md_edge fix_dict)
INTEROP=${INTEROP:-1}

# Tests build with the `ci` profile: optimized like release (property tests and benchmark smoke
# runs stay fast) but without fat LTO (quick to link on 2 cores), and with debug assertions and
# overflow checks on. Its artifacts live in target/ci, apart from real release builds.
export CARGO_PROFILE_CI_INHERITS=release
export CARGO_PROFILE_CI_LTO=false
export CARGO_PROFILE_CI_CODEGEN_UNITS=16
export CARGO_PROFILE_CI_DEBUG=0
export CARGO_PROFILE_CI_DEBUG_ASSERTIONS=true
export CARGO_PROFILE_CI_OVERFLOW_CHECKS=true
export CARGO_PROFILE_CI_INCREMENTAL=false

step() {
    echo
    echo "==> $*"
}

check_tools() {
    if [ "$FUZZ_SECONDS" != 0 ] && ! cargo fuzz --version >/dev/null 2>&1; then
        echo "cargo-fuzz is missing: cargo install --locked cargo-fuzz (or FUZZ_SECONDS=0)" >&2
        exit 1
    fi
    if [ "$INTEROP" != 0 ] && [[ " ${STEPS[*]} " == *" interop "* ]]; then
        local t
        for t in java mvn openssl keytool; do
            if ! command -v "$t" >/dev/null 2>&1; then
                echo "$t is missing: install Java 17, Maven and openssl (or INTEROP=0)" >&2
                exit 1
            fi
        done
    fi
}

fmt() {
    step "cargo fmt --all --check"
    cargo fmt --all --check
}

clippy() {
    step "cargo clippy --workspace --all-targets -- -D warnings"
    cargo clippy --workspace --all-targets --profile ci -- -D warnings
}

unit_and_integration_tests() {
    step "cargo test --workspace"
    cargo test --workspace --profile ci
}

fuzz() {
    if [ "$FUZZ_SECONDS" = 0 ]; then
        step "fuzz: skipped (FUZZ_SECONDS=0)"
        return
    fi
    # Nightly if installed; otherwise stable with RUSTC_BOOTSTRAP=1, which cargo-fuzz's flags
    # need. No sanitizer: the code is safe Rust, and the targets assert their own properties.
    local cargo=(cargo)
    if cargo +nightly --version >/dev/null 2>&1; then
        cargo=(cargo +nightly)
    else
        export RUSTC_BOOTSTRAP=1
    fi
    (
        cd fuzz
        # journal_recover writes a journal per input under the temporary directory; on tmpfs
        # it runs about twice as many inputs per second as on a disk.
        if [ -d /dev/shm ] && [ -w /dev/shm ]; then
            export TMPDIR=/dev/shm
        fi
        fmt_check=(cargo fmt --check)
        step "fuzz: ${fmt_check[*]}"
        "${fmt_check[@]}"
        for target in "${FUZZ_TARGETS[@]}"; do
            local flog="../$log_dir/fuzz-$target.log"
            step "fuzz: $target for ${FUZZ_SECONDS}s (output: ${flog#../})"
            progress "fuzz $target"
            mkdir -p "corpus/$target"
            # Seed corpora: saved regressions (crates/rialto/tests/fuzz_regressions/<target>/)
            # and hand-made real messages (fuzz/seeds/<target>/), whichever exist.
            local seeds=()
            for d in "../crates/rialto/tests/fuzz_regressions/$target" "seeds/$target"; do
                if [ -d "$d" ]; then
                    seeds+=("$d")
                fi
            done
            local t0=$SECONDS status=0
            "${cargo[@]}" fuzz run --sanitizer none "$target" "corpus/$target" "${seeds[@]}" \
                -- -max_total_time="$FUZZ_SECONDS" -max_len=4096 -print_final_stats=1 \
                >"$flog" 2>&1 || status=$?
            fuzz_line "$target" "$status" $((SECONDS - t0)) "$flog"
            if [ "$status" != 0 ]; then
                echo "fuzz target $target failed (exit status $status); the last 60 lines of ${flog#../}:"
                tail -n 60 "$flog"
                exit "$status"
            fi
        done
    )
}

# fuzz_line TARGET STATUS SECONDS LOG: the target's line on the terminal and in the step's log,
# from libFuzzer's -print_final_stats=1 lines (printed at the end of a run and on a crash) and
# the test units it wrote (one per crash, leak, timeout or out-of-memory).
fuzz_line() {
    local target=$1 status=$2 secs=$3 flog=$4 runs per_s crashes result=ok line
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$flog" | tail -n 1)
    per_s=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$flog" | tail -n 1)
    crashes=$(grep -c 'Test unit written to' "$flog" || true)
    if [ "$status" != 0 ]; then
        result=FAILED
    fi
    line=$(printf '  %-30s %5ss  %-6s  executions %s  execs/s %s  crashes %s' \
        "fuzz $target" "$secs" "$result" "${runs:--}" "${per_s:--}" "$crashes")
    report "$line"
    echo "$line"
}

# The server of the interop step: started by start_server, stopped by stop_server (also on exit).
server_pid=
server_log=
server_addr=
server_md_addr=

# start_server BIN DATA_DIR LISTEN LOG [SERVE_OPTION...]: runs `rialto serve` in the background
# and waits (bounded) until it logs its order-entry and market-data addresses, which it leaves in
# server_addr and server_md_addr (every server of the interop step serves market data, on an
# ephemeral port: LISTEN 127.0.0.1:0, or --market-data-listen 127.0.0.1:0 with a fixed LISTEN).
start_server() {
    local bin=$1 data=$2 listen=$3
    server_log=$4
    shift 4
    "$bin" serve --data-dir "$data" --listen "$listen" "$@" >"$server_log" 2>&1 &
    server_pid=$!
    local deadline=$((SECONDS + 60)) line md_line
    while :; do
        line=$(grep -m1 -o 'listening for FIX on [0-9.]*:[0-9]*' "$server_log" || true)
        md_line=$(grep -m1 -o 'listening for market data on [0-9.]*:[0-9]*' "$server_log" || true)
        if [ -n "$line" ] && [ -n "$md_line" ]; then
            server_addr=${line##* }
            server_md_addr=${md_line##* }
            echo "rialto serve (pid $server_pid) listens on $server_addr, market data on $server_md_addr"
            return
        fi
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "rialto serve exited before listening:" >&2
            cat "$server_log" >&2
            server_pid=
            return 1
        fi
        if [ $SECONDS -ge $deadline ]; then
            echo "rialto serve did not listen within 60s:" >&2
            cat "$server_log" >&2
            return 1
        fi
        sleep 0.1
    done
}

# stop_server: SIGTERM, then waits (bounded) for a clean exit; status 0 only for exit status 0.
stop_server() {
    [ -n "$server_pid" ] || return 0
    local pid=$server_pid status=0 deadline=$((SECONDS + 60))
    server_pid=
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "rialto serve (pid $pid) ignored SIGTERM for 60s; killing it" >&2
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        return 1
    fi
    wait "$pid" || status=$?
    if [ "$status" != 0 ]; then
        echo "rialto serve exited with status $status:" >&2
        cat "$server_log" >&2
    fi
    return "$status"
}

interop() {
    if [ "$INTEROP" = 0 ]; then
        step "interop: skipped (INTEROP=0)"
        return
    fi
    step "interop: QuickFIX/J against rialto serve (build, java unit tests, scenario and market-data check, a tiny bench codec beside QuickFIX/J, restart, both again; then FIX 4.2 and FIXT.1.1/FIX 5.0SP2 the same way; then the scenario over TLS 1.3 and 1.2 with client certificates)"
    # Same profile as the tests; only the crates whose features differ without the dev
    # dependencies are compiled again (seconds), the rest is reused.
    cargo build --profile ci -p rialto
    local bin="${CARGO_TARGET_DIR:-target}/ci/rialto"
    local root
    root=$(mktemp -d)
    # Runs on any exit (a failed step ends the step's subshell under set -e): the server never
    # outlives it, and a failure shows the end of the server's log (its slow-iteration and steal
    # lines say whether the loop or the host stalled) on the script's stderr, apart from the
    # step's log, whose own tail shows what failed. The servers' logs stay in $log_dir.
    # shellcheck disable=SC2064,SC2154 # expand root now; interop_status is set by the trap
    trap "interop_status=\$?; if [ \$interop_status != 0 ] && [ -n \"\$server_log\" ] && [ -f \"\$server_log\" ]; then echo \"--- the last 60 lines of \$server_log:\" >&4; tail -n 60 \"\$server_log\" >&4; fi; stop_server || true; rm -rf '$root'" EXIT
    local store="$root/fix-store"
    # How long the scenario waits for each expected message: 3x its interactive default, as
    # this VM's host has taken seconds of CPU away at a time (a 5 s wait once timed out in CI
    # and passed on a rerun); a timeout's message says how much the host stole meanwhile.
    local wait_ms=15000
    start_server "$bin" "$root/data" 127.0.0.1:0 "$log_dir/interop-serve-1.log"
    local host=${server_addr%:*} port=${server_addr##*:}
    # The JUnit tests run against this server (-Dfix.port): the scenario twice and a short
    # latency run; the client's sequence numbers persist in $store, which every run shares.
    (cd java && mvn -q -B -Dstyle.color=never test -Dfix.host="$host" -Dfix.port="$port" -Dfix.store="$store" \
        -Dfix.timeout.ms="$wait_ms")
    FIX_STORE_DIR="$store" java/run-interop.sh "$host" "$port" --timeout-ms "$wait_ms"
    # The market-data check (java/README.md): CLIENT6 subscribes at the market-data port while
    # CLIENT5 and CLIENT7 trade CRNK at the order-entry port; sessions the runs above do not use,
    # with ResetSeqNumFlag=Y (the server keeps market-data sessions in memory only). It cleans up
    # after itself, so it runs again after the restart. The jar was built by run-interop.sh.
    local md_check=(java -jar java/interop/target/interop.jar --market-data --timeout-ms "$wait_ms")
    "${md_check[@]}" --host "$host" --port "$port" --md-port "${server_md_addr##*:}" --fix-version 4.4
    # The codec benchmark's two sides together, tiny (a few seconds): every figure both measured
    # must give a ratio line, with validation off and on (BENCHMARKS.md, "FIX codec").
    local ratios
    ratios=$("$bin" bench codec --with-quickfixj --quickfixj-jar java/codecbench/target/codecbench.jar \
        --messages 2000 --warmup 2000 --seconds 0.2 | grep -c '^codec-ratio ')
    [ "$ratios" = 12 ] || { echo "bench codec --with-quickfixj: $ratios ratio lines, expected 12" >&2; exit 1; }
    stop_server
    # Same data dir and port: the sessions resume their sequence numbers without a reset.
    start_server "$bin" "$root/data" "$server_addr" "$log_dir/interop-serve-2.log" --market-data-listen 127.0.0.1:0
    FIX_STORE_DIR="$store" java/run-interop.sh "$host" "$port" --timeout-ms "$wait_ms"
    "${md_check[@]}" --host "$host" --port "$port" --md-port "${server_md_addr##*:}" --fix-version 4.4
    stop_server
    # FIX 4.2 and FIXT.1.1 (FIX 5.0SP2): a server with three sessions of each
    # (java/interop/rialto-versions.toml), its own data dir and port; the scenario in each
    # version, validated by QuickFIX/J against the standard dictionaries, then the market-data
    # check in both (FIX42C4..6, FIX50C4..6); a restart; again, resuming the sequence numbers.
    # The jar was built by run-interop.sh above. --keep-going: a failed step does not hide the
    # next ones (the exit status is still 1).
    # shellcheck disable=SC2054 # 4.2,5.0sp2 is one argument
    local versions=(java -jar java/interop/target/interop.jar --fix-version 4.2,5.0sp2 --keep-going --store-dir "$store" --timeout-ms "$wait_ms")
    start_server "$bin" "$root/data-versions" 127.0.0.1:0 "$log_dir/interop-serve-versions-1.log" \
        --config java/interop/rialto-versions.toml
    host=${server_addr%:*} port=${server_addr##*:}
    "${versions[@]}" --host "$host" --port "$port"
    "${md_check[@]}" --host "$host" --port "$port" --md-port "${server_md_addr##*:}" --fix-version 4.2,5.0sp2
    stop_server
    start_server "$bin" "$root/data-versions" "$server_addr" "$log_dir/interop-serve-versions-2.log" \
        --config java/interop/rialto-versions.toml --market-data-listen 127.0.0.1:0
    "${versions[@]}" --host "$host" --port "$port"
    "${md_check[@]}" --host "$host" --port "$port" --md-port "${server_md_addr##*:}" --fix-version 4.2,5.0sp2
    stop_server
    # TLS (docs/fix-clients.md, "TLS"): certificates made now (one client certificate naming
    # CLIENT1..3), a server with [tls] and client certificates required, its own data dir; the
    # scenario over TLS 1.3 (the JDK's choice), then again over TLS 1.2, resuming the sequence
    # numbers. The server's log must show both versions.
    scripts/tls-test-certs.sh "$root/tls"
    start_server "$bin" "$root/data-tls" 127.0.0.1:0 "$log_dir/interop-serve-tls.log" \
        --config "$root/tls/rialto.toml"
    host=${server_addr%:*} port=${server_addr##*:}
    local tls=(java -Dfix.tls.truststore="$root/tls/trust.p12" -Dfix.tls.keystore="$root/tls/client.p12")
    local over_tls=(-jar java/interop/target/interop.jar --host "$host" --port "$port" --store-dir "$root/fix-store-tls" --timeout-ms "$wait_ms")
    "${tls[@]}" "${over_tls[@]}"
    "${tls[@]}" -Dfix.tls.protocols=TLSv1.2 "${over_tls[@]}"
    stop_server
    for v in TLSv1_3 TLSv1_2; do
        grep -q "TLS: connection up.*version=\"\?$v" "$log_dir/interop-serve-tls.log" ||
            { echo "no QuickFIX/J connection over $v in interop-serve-tls.log" >&2; exit 1; }
    done
    rm -rf "$root"
    trap - EXIT
}

STEPS=(check_tools fmt clippy unit_and_integration_tests interop fuzz)
if [ $# -gt 0 ]; then
    STEPS=("$@")
fi

# report LINE: a line on the terminal (over the progress line, if any).
report() {
    if [ -t 3 ]; then
        printf '\r\033[K' >&3
    fi
    printf '%s\n' "$1" >&3
}

# progress NAME: on a terminal, what is running now (the next report overwrites it).
progress() {
    if [ -t 3 ]; then
        printf '  %-30s ...\r' "$1" >&3
    fi
}

exec 3>&1 4>&2
rm -rf "$log_dir"
mkdir -p "$log_dir"
echo "scripts/test.sh: ${STEPS[*]}"
echo "each step's full output: $log_dir/<step>.log (fuzz targets: $log_dir/fuzz-<target>.log)"
start=$SECONDS
for s in "${STEPS[@]}"; do
    log="$log_dir/$s.log"
    progress "$s"
    t0=$SECONDS
    # Not `if "$s"` or `"$s" || ...`: bash ignores set -e inside a function called there.
    set +e
    (
        set -e
        "$s"
    ) >"$log" 2>&1
    status=$?
    set -e
    result=ok
    if [ "$status" != 0 ]; then
        result=FAILED
    else
        # A step that skips itself says so in its header line: "==> fuzz: skipped (...)".
        skipped=$(sed -n 's/^==> [a-z_]*: \(skipped (.*)\)$/\1/p' "$log" | head -n 1)
        result=${skipped:-ok}
    fi
    report "$(printf '  %-30s %5ss  %s' "$s" $((SECONDS - t0)) "$result")"
    if [ "$status" != 0 ]; then
        {
            echo "--- the last 60 lines of $log:"
            tail -n 60 "$log"
            echo "--- step $s failed (exit status $status); its full output: $log"
        } >&2
        exit "$status"
    fi
done
echo "all steps passed in $((SECONDS - start))s; logs in $log_dir/"
