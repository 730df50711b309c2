#!/usr/bin/env bash
# Runs every test of the repository: formatting, lints, the workspace's tests, the QuickFIX/J
# interop run, the fuzz targets and the web dashboard's (its unit tests; its browser test is
# one of the workspace's). This is the README's test command; .ci/run calls it on a
# fresh machine. It needs nothing done first: user-level tools it lacks (cargo-nextest,
# cargo-fuzz) it installs with `cargo install --locked`, saying so.
#
# Environment:
#   FUZZ_SECONDS           seconds per fuzz target whose code changed lately (default 8; 0
#                          skips fuzzing)
#   FUZZ_JOBS              fuzz targets run at once (default 2; each is one thread)
#   FUZZ_SECONDS_UNCHANGED seconds per other fuzz target (default 3: its seeds, saved inputs and
#                          a short run)
#   FUZZ_SINCE             what "lately" means: commits after this date (`git log --since`
#                          syntax; default: 8 hours before HEAD's commit, about one change's
#                          commits), and uncommitted work
#   INTEROP                0 skips the QuickFIX/J interop step (default 1; needs java 17 and mvn)
#   VENV                   the Python venv with schemathesis (default target/venv, which .ci/run
#                          makes); without it the schemathesis step skips itself, except in CI
#   SCHEMATHESIS_SEED      the schemathesis step's seed (default 1: the same cases each run)
#
# Usage: scripts/test.sh            every step, independent ones side by side (below)
#        scripts/test.sh fuzz clippy only the named steps, one after the other
#
# The plan (PLAN below): fmt; then the dashboard's front end (the binaries embed it), then the
# builds side by side (the workspace's tests and binaries, linted by clippy as they compile;
# the Java programs), then the tests beside the interop run, schemathesis and the front end's
# unit tests; beside all that, the fuzz targets' build, then their runs at a lower priority. The machine has
# 2 cores: the builds dominate, and running them together fills the cores each leaves idle; the
# tests and the interop run mostly wait, and the fuzz runs take what they leave.
#
# Output: one line per step with its result, time and CPU time (user + system), one per fuzz
# target (executions, executions per second, crashes), and the slowest tests. Each step's full output goes to
# target/test-logs/<step>.log (each fuzz target's to fuzz-<target>.log, the interop servers' to
# interop-serve-*.log); a failing step prints the last 60 lines of its log and the log's path,
# and the script exits with that step's status once the steps beside it are done.
#
# Steps are plain functions; to add one, write a function and put it in PLAN. Each runs in a
# subshell with `set -euo pipefail`, its stdout and stderr in its log; fd 3 is the terminal
# (for the fuzz targets' lines), fd 4 the script's stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

log_dir=target/test-logs

FUZZ_SECONDS=${FUZZ_SECONDS:-8}
FUZZ_SECONDS_UNCHANGED=${FUZZ_SECONDS_UNCHANGED:-3}
FUZZ_SINCE=${FUZZ_SINCE:-}
INTEROP=${INTEROP:-1}
VENV=${VENV:-target/venv}
SCHEMATHESIS_SEED=${SCHEMATHESIS_SEED:-1}

# Each fuzz target and the paths whose change makes it "changed" (besides its own source and
# saved inputs): what it parses or replays.
declare -A FUZZ_PATHS=(
    [csv_reader]="crates/offline/src/orders_csv.rs crates/offline/src/fuzzing.rs"
    [engine]="crates/engine crates/types crates/offline/src/fuzzing.rs"
    [exchange_resolve]="crates/exchange crates/server/src/resolve_check.rs"
    [fix_adapt]="crates/fix crates/fix_gateway/src/adapter.rs"
    [fix_decode]="crates/fix/src/decode.rs crates/fix/src/app.rs crates/fix/src/decimal.rs crates/fix/src/time.rs"
    [fix_dict]="crates/fix/src/dict.rs crates/fix/src/dict crates/fix/dictionary crates/fix/build.rs"
    [fix_md]="crates/fix/src/md.rs crates/fix/src/md"
    [fix_scan]="crates/fix/src/scan.rs"
    [fix_session]="crates/fix/src/session crates/fix/src/decode.rs"
    [fix_session_script]="crates/fix/src/session"
    [journal_input]="crates/fix_gateway/src/record.rs crates/fix_gateway/src/record crates/server/src/record.rs crates/exchange/src/codec.rs"
    [journal_recover]="crates/journal"
    [cluster_wire]="crates/exchange/src/wire.rs crates/exchange/src/wire crates/exchange/src/codec.rs"
    [md_edge]="crates/fix_gateway/src/md.rs crates/fix_gateway/src/md crates/server/src/market_data.rs crates/server/src/market_data"
)
FUZZ_TARGETS=(csv_reader engine fix_decode fix_session fix_session_script journal_recover fix_adapt journal_input exchange_resolve fix_scan fix_md md_edge fix_dict cluster_wire)

# Tests build with the `ci` profile (Cargo.toml: quick to build, debug assertions on); its
# artifacts live in target/ci, apart from real release builds.
#
# C without optimization or debug info: librdkafka (rdkafka-sys) compiles its C at -O2 -g
# whatever the profile, in 190 CPU-s of which -O0 -g0 saves half; the other C (ring, SQLite,
# zlib, through the cc crate) is at -O0 already (the profile's dependencies), so nothing else
# changes. Every cargo step sees the same flags, or the tests' build would redo the C.
export CFLAGS="-O0 -g0${CFLAGS:+ $CFLAGS}"

step() {
    echo
    echo "==> $*"
}

# have TOOL: the command exists.
have() { command -v "$1" >/dev/null 2>&1; }

# cargo_tool SUBCOMMAND CRATE: `cargo SUBCOMMAND` works, or CRATE is installed (said on the
# terminal: a first run on a fresh machine spends a few minutes on it).
cargo_tool() {
    local sub=$1 crate=$2
    if ! cargo "$sub" --version >/dev/null 2>&1; then
        report "  installing $crate (cargo install --locked $crate): needed once, a few minutes"
        cargo install --locked "$crate"
    fi
}

# disk_room: warns when the filesystem of the checkout has less free space than a first run
# writes (about 2.5 GiB: target/ 1.1, fuzz/target 0.5, crate downloads 0.6, the dashboard's
# packages, the tests' throwaway clusters), so that a later "No space left on device" has its
# cause on the first lines.
disk_room() {
    local free_kib
    free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
    if [ -n "$free_kib" ] && [ "$free_kib" -lt $((3 * 1024 * 1024)) ]; then
        report "  warning: $((free_kib / 1024)) MiB free on the filesystem of $PWD; a first run writes about 2.5 GiB"
    fi
}

check_tools() {
    step "tools"
    disk_room
    cargo_tool nextest cargo-nextest
    if [ "$FUZZ_SECONDS" != 0 ] && planned fuzz_build fuzz; then
        cargo_tool fuzz cargo-fuzz
        have c++ || { echo "a C++ compiler (libFuzzer) is missing: install g++ (or FUZZ_SECONDS=0)" >&2; exit 1; }
    fi
    if [ "$INTEROP" != 0 ] && planned java_build interop; then
        local t
        for t in java mvn openssl keytool; do
            if ! have "$t"; then
                echo "$t is missing: install Java 17, Maven and openssl (or INTEROP=0)" >&2
                exit 1
            fi
        done
    fi
    if planned web_build web_test tests; then
        have node && have npm || { echo "Node.js 20+ and npm are missing (the web dashboard's build and tests)" >&2; exit 1; }
        [ -x "${CHROMIUM:-/usr/bin/chromium}" ] || { echo "Chromium is missing (the dashboard's browser test): apt-get install chromium, or set CHROMIUM" >&2; exit 1; }
    fi
}

# The web dashboard's front end (crates/dashboard/web: TypeScript, packages pinned by npm's
# lockfile): its packages and its build (dist/, which the `dashboard` crate embeds, so before
# `build`), then its unit tests (vitest) beside the workspace's.
web_build() {
    step "web dashboard: npm ci, tsc and vite build"
    cd crates/dashboard/web
    npm ci --no-audit --no-fund
    npm run build
}

web_test() {
    step "web dashboard: vitest"
    cd crates/dashboard/web
    npm test
}

fmt() {
    step "cargo fmt --all --check"
    cargo fmt --all --check
    (cd fuzz && cargo fmt --check)
}

# The workspace's tests, examples and binaries (the interop step's `rialto` among them), linted
# as they compile: `cargo clippy --workspace --all-targets -- -D warnings`'s lints, run by
# clippy-driver in place of rustc for the workspace's crates (RUSTC_WORKSPACE_WRAPPER, which is
# how `cargo clippy` runs them; the dependencies build with rustc as always). One pass instead
# of a build and a separate check: clippy's own pass re-checked every dependency, a third of
# the test command's CPU on 2 cores.
build() {
    step "cargo build --workspace --all-targets --profile ci, with clippy's lints (-D warnings)"
    ci_build
}

# The build every step uses: after `build`, only a check that all is fresh. The steps that run
# the `rialto` binary build it this way too, not with `-p rialto`: that would build it with the
# features of its own dependencies alone, without the tests' (dev-dependencies'), and so build
# tokio, axum, server and more a second time (a minute of CPU). Every cargo command of the
# workspace runs under the same RUSTC_WORKSPACE_WRAPPER (set below), or cargo would see the
# crates as changed and build them again.
ci_build() {
    cargo build --workspace --all-targets --profile ci
}

# `cargo clippy` itself (not in the plan: `build` runs its lints); `scripts/test.sh clippy`
# runs it alone, in a target dir of its own.
clippy() {
    step "cargo clippy --workspace --all-targets -- -D warnings"
    env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS CARGO_TARGET_DIR=target/clippy \
        cargo clippy --workspace --all-targets --profile ci -- -D warnings
}

# The tests, on what `build` built, three at a time (.config/nextest.toml; cargo-nextest: each test in a process of its
# own), then the slowest of them.
tests() {
    step "cargo nextest run --workspace"
    local status=0
    cargo nextest run --workspace --cargo-profile ci --no-fail-fast --final-status-level slow \
        --status-level pass 2>&1 | tee "$log_dir/tests-nextest.out" || status=$?
    # Each test's line: "        PASS [   1.234s] crate::binary name" (FAIL, SLOW... alike).
    report "  slowest tests:"
    sed -n 's/^ *\(PASS\|FAIL\|SIGSEGV\|TIMEOUT\|SIGABRT\|SIGKILL\) \[ *\([0-9.]*\)s\] *\(.*\)$/\2 \1 \3/p' \
        "$log_dir/tests-nextest.out" | sort -rn | head -n 10 |
        while read -r secs result name; do
            report "$(printf '    %8.2fs %-5s %s' "$secs" "$result" "$name")"
        done
    return "$status"
}

# The JVMs of the Java steps (Maven, the interop clients, the JUnit tests' fork) are short-lived
# and many: the client compiler only (C1) and the serial collector take about a third less CPU
# than the defaults' JIT and GC threads, on 2 cores shared with the builds.
JVM_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
export MAVEN_OPTS="${MAVEN_OPTS:-$JVM_OPTS}"

# The Java programs (QuickFIX/J from Maven Central): the interop step's jars.
java_build() {
    if [ "$INTEROP" = 0 ]; then
        step "java_build: skipped (INTEROP=0)"
        return
    fi
    step "mvn package (java/)"
    (cd java && mvn -q -B -Dstyle.color=never package -DskipTests)
}

# The fuzz targets' build flags (the same for `build` and `run`, or `run` builds again).
FUZZ_FLAGS=(--sanitizer none)

# cargo-fuzz's flags need nightly, or stable with RUSTC_BOOTSTRAP=1. The fuzz crate is
# another workspace, built without clippy-driver. cargo-fuzz turns debug info on (`--config
# profile.release.debug=true`) and appends RUSTFLAGS to its own: `-Cdebuginfo=0` turns it off
# again (fuzz/Cargo.toml says why), and CXXFLAGS=-g0 for libFuzzer's C++ (51 CPU-s with debug
# info, 34 without; its optimization stays).
fuzz_cargo() {
    local flags="-Cdebuginfo=0${RUSTFLAGS:+ $RUSTFLAGS}" cxx="-g0${CXXFLAGS:+ $CXXFLAGS}"
    if cargo +nightly --version >/dev/null 2>&1; then
        env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS RUSTFLAGS="$flags" CXXFLAGS="$cxx" cargo +nightly "$@"
    else
        env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS RUSTC_BOOTSTRAP=1 RUSTFLAGS="$flags" CXXFLAGS="$cxx" cargo "$@"
    fi
}

# Every fuzz target, built once (fuzz/target) for `fuzz`. No sanitizer: the code is safe Rust,
# and the targets assert their own properties.
fuzz_build() {
    if [ "$FUZZ_SECONDS" = 0 ]; then
        step "fuzz_build: skipped (FUZZ_SECONDS=0)"
        return
    fi
    step "cargo fuzz build"
    (cd fuzz && fuzz_cargo fuzz build "${FUZZ_FLAGS[@]}")
}

# fuzz_changed TARGET: its code changed lately (FUZZ_SINCE), or is changed in the work tree.
fuzz_changed() {
    local target=$1 since=$FUZZ_SINCE
    # shellcheck disable=SC2206 # the paths are words
    local paths=(fuzz/fuzz_targets/"$target".rs "crates/rialto/tests/fuzz_regressions/$target" ${FUZZ_PATHS[$target]})
    if [ -z "$since" ]; then
        since="@$(( $(git log -1 --format=%ct HEAD 2>/dev/null || date +%s) - 8 * 3600 ))"
    fi
    [ -n "$(git log --since="$since" --format=%h -- "${paths[@]}" 2>/dev/null | head -n 1)" ] ||
        [ -n "$(git status --porcelain -- "${paths[@]}" 2>/dev/null | head -n 1)" ]
}

# fuzz_target TARGET: one fuzz target's run (FUZZ_SECONDS if its code changed lately, else
# FUZZ_SECONDS_UNCHANGED), its line on the terminal; in fuzz/.
fuzz_target() {
    local target=$1 flog="../$log_dir/fuzz-$1.log" secs=$FUZZ_SECONDS_UNCHANGED d
    if (cd .. && fuzz_changed "$target"); then
        secs=$FUZZ_SECONDS
    fi
    step "fuzz: $target for ${secs}s (output: ${flog#../})"
    mkdir -p "corpus/$target"
    # Seed corpora: saved regressions (crates/rialto/tests/fuzz_regressions/<target>/) and
    # hand-made real messages (fuzz/seeds/<target>/), whichever exist.
    local seeds=()
    for d in "../crates/rialto/tests/fuzz_regressions/$target" "seeds/$target"; do
        if [ -d "$d" ]; then
            seeds+=("$d")
        fi
    done
    local t0=$SECONDS status=0
    fuzz_cargo fuzz run "${FUZZ_FLAGS[@]}" "$target" "corpus/$target" "${seeds[@]}" \
        -- -max_total_time="$secs" -max_len=4096 -print_final_stats=1 >"$flog" 2>&1 || status=$?
    fuzz_line "$target" "$status" $((SECONDS - t0)) "$flog"
    if [ "$status" != 0 ]; then
        echo "fuzz target $target failed (exit status $status); the last 60 lines of ${flog#../}:"
        tail -n 60 "$flog"
    fi
    return "$status"
}

# Every fuzz target, FUZZ_JOBS (2) at a time: each is one thread.
fuzz() {
    if [ "$FUZZ_SECONDS" = 0 ]; then
        step "fuzz: skipped (FUZZ_SECONDS=0)"
        return
    fi
    cd fuzz
    # journal_recover writes a journal per input under the temporary directory; on tmpfs it
    # runs about twice as many inputs per second as on a disk.
    if [ -d /dev/shm ] && [ -w /dev/shm ]; then
        export TMPDIR=/dev/shm
    fi
    local jobs=${FUZZ_JOBS:-2} running=() failed=0 target
    for target in "${FUZZ_TARGETS[@]}"; do
        if [ ${#running[@]} -ge "$jobs" ]; then
            wait "${running[0]}" || failed=$?
            running=("${running[@]:1}")
        fi
        fuzz_target "$target" &
        running+=($!)
    done
    for p in "${running[@]}"; do
        wait "$p" || failed=$?
    done
    return "$failed"
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
    ci_build
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
    # The scenario as java/run-interop.sh runs it (the jars are built: java_build).
    # shellcheck disable=SC2206 # JVM_OPTS is words
    local java=(java $JVM_OPTS)
    local scenario=("${java[@]}" -jar java/interop/target/interop.jar --store-dir "$store" --timeout-ms "$wait_ms")
    start_server "$bin" "$root/data" 127.0.0.1:0 "$log_dir/interop-serve-1.log"
    local host=${server_addr%:*} port=${server_addr##*:}
    # The JUnit tests run against this server (-Dfix.port): the scenario twice and a short
    # latency run; the client's sequence numbers persist in $store, which every run shares.
    (cd java && mvn -q -B -Dstyle.color=never test -DargLine="$JVM_OPTS" -Dfix.host="$host" -Dfix.port="$port" -Dfix.store="$store" \
        -Dfix.timeout.ms="$wait_ms")
    "${scenario[@]}" --host "$host" --port "$port"
    # The market-data check (java/README.md): CLIENT6 subscribes at the market-data port while
    # CLIENT5 and CLIENT7 trade CRNK at the order-entry port; sessions the runs above do not use,
    # with ResetSeqNumFlag=Y (the server keeps market-data sessions in memory only). It cleans up
    # after itself, so it runs again after the restart.
    local md_check=("${java[@]}" -jar java/interop/target/interop.jar --market-data --timeout-ms "$wait_ms")
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
    "${scenario[@]}" --host "$host" --port "$port"
    "${md_check[@]}" --host "$host" --port "$port" --md-port "${server_md_addr##*:}" --fix-version 4.4
    stop_server
    # FIX 4.2 and FIXT.1.1 (FIX 5.0SP2): a server with three sessions of each
    # (java/interop/rialto-versions.toml), its own data dir and port; the scenario in each
    # version, validated by QuickFIX/J against the standard dictionaries, then the market-data
    # check in both (FIX42C4..6, FIX50C4..6); a restart; again, resuming the sequence numbers.
    # --keep-going: a failed step does not hide the
    # next ones (the exit status is still 1).
    # shellcheck disable=SC2054 # 4.2,5.0sp2 is one argument
    local versions=("${java[@]}" -jar java/interop/target/interop.jar --fix-version 4.2,5.0sp2 --keep-going --store-dir "$store" --timeout-ms "$wait_ms")
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
    local tls=("${java[@]}" -Dfix.tls.truststore="$root/tls/trust.p12" -Dfix.tls.keystore="$root/tls/client.p12")
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

# schemathesis (from PyPI, in $VENV) against `rialto serve`'s REST API with an API key: it
# reads the served OpenAPI document and sends generated requests, valid and not, to every
# operation; every answer must be no 5xx and conform to the document (status, content type,
# headers, body schema). Bounded: 20 cases an operation, about 20 s.
schemathesis() {
    local st="$VENV/bin/schemathesis"
    if [ ! -x "$st" ]; then
        if [ "${CI:-}" = true ]; then
            echo "no $st: .ci/run makes the venv (python3 -m venv; pip install schemathesis)" >&2
            exit 1
        fi
        step "schemathesis: skipped (no $st: run .ci/run, or make the venv and pip install schemathesis there)"
        return
    fi
    step "schemathesis: the REST API against its OpenAPI document"
    ci_build
    local bin="${CARGO_TARGET_DIR:-target}/ci/rialto" root token http_addr=
    root=$(mktemp -d)
    # shellcheck disable=SC2064 # expand root now
    trap "stop_server || true; rm -rf '$root'" EXIT
    "$bin" apikey new --account 1 --name schemathesis >"$root/key"
    token=$(head -n 1 "$root/key")
    { sed -n '/^\[\[api_keys\]\]/,$p' "$root/key"; echo "requests_per_sec = 1000000"; } >"$root/rialto.toml"
    start_server "$bin" "$root/data" 127.0.0.1:0 "$log_dir/schemathesis-serve.log" \
        --config "$root/rialto.toml" --http-listen 127.0.0.1:0
    local deadline=$((SECONDS + 30))
    while [ -z "$http_addr" ]; do
        http_addr=$(grep -m1 -o 'listening for HTTP on [0-9.]*:[0-9]*' "$server_log" | sed 's/.* //' || true)
        [ $SECONDS -lt $deadline ] || { echo "rialto serve did not serve HTTP within 30s" >&2; exit 1; }
        [ -n "$http_addr" ] || sleep 0.1
    done
    # In $root: schemathesis leaves its state (.schemathesis/) in the current directory.
    local abs_st=$st
    [[ $st == /* ]] || abs_st="$PWD/$st"
    (cd "$root" && timeout 300 "$abs_st" run "http://$http_addr/api/v1/openapi.json" \
        -H "Authorization: Bearer $token" \
        --checks not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance,response_headers_conformance \
        --max-examples 20 --seed "$SCHEMATHESIS_SEED" --request-timeout 10 \
        --generation-database none --no-color)
    stop_server
    rm -rf "$root"
    trap - EXIT
}

# The plan: stages one after the other. A stage is branches side by side (` | `); a branch is
# groups one after the other (`+`); a group is steps side by side (`,`). A step named in NICE
# runs at that lower priority. The fuzz targets build beside the rest, below the workspace's
# build (which the tests wait for: the critical path); the tests, the interop run and the fuzz
# runs (at a lower priority) then share what CPU is left.
PLAN=(
    "check_tools"
    "fmt"
    "web_build+build,java_build+tests,interop,schemathesis,web_test | fuzz_build+fuzz"
)
# The workspace's build and the tests (the critical path) come first; the fuzz build and runs
# take the CPU they leave (nice 19: about 1.5% of a core they want), mostly while tests wait.
declare -A NICE=([fuzz_build]=19 [fuzz]=19)
if [ $# -gt 0 ]; then
    PLAN=("$@")
fi

# planned STEP...: one of the steps is in the plan.
planned() {
    local words=" ${PLAN[*]//[|+,]/ } " s
    for s in "$@"; do
        [[ $words == *" $s "* ]] && return 0
    done
    return 1
}

# report LINE: a line on the terminal (over the progress line, if any).
report() {
    if [ -t 3 ] && [ -z "${parallel:-}" ]; then
        printf '\r\033[K' >&3
    fi
    printf '%s\n' "$1" >&3
}

# progress NAME: on a terminal, what is running now (the next report overwrites it); not while
# steps run side by side.
progress() {
    if [ -t 3 ] && [ -z "${parallel:-}" ]; then
        printf '  %-30s ...\r' "$1" >&3
    fi
}

# run_step STEP: runs it with its output in its log and reports its line; returns its status
# (after printing the end of its log if it failed).
run_step() {
    local s=$1 log="$log_dir/$1.log" t0=$SECONDS status result skipped cpu TIMEFORMAT='%U %S'
    progress "$s"
    # Not `if "$s"` or `"$s" || ...`: bash ignores set -e inside a function called there. The
    # step's CPU time (user + system, its processes included) goes to $log_dir/STEP.cpu.
    set +e
    # `time` times the braces, whose stderr is the .cpu file; the step's own output is
    # redirected inside them.
    {
        time {
            (
                set -e
                if [ -n "${NICE[$s]:-}" ]; then
                    renice -n "${NICE[$s]}" -p "$BASHPID" >/dev/null
                fi
                "$s"
            ) >"$log" 2>&1
        }
    } 2>"$log_dir/$s.cpu"
    status=$?
    set -e
    cpu=$(awk '{ printf "%.0f", $1 + $2 }' "$log_dir/$s.cpu" 2>/dev/null || echo '?')
    result=ok
    if [ "$status" != 0 ]; then
        result=FAILED
    else
        # A step that skips itself says so in its header line: "==> fuzz: skipped (...)".
        skipped=$(sed -n 's/^==> [a-z_]*: \(skipped (.*)\)$/\1/p' "$log" | head -n 1)
        result=${skipped:-ok}
    fi
    report "$(printf '  %-30s %5ss  %-6s cpu %ss' "$s" $((SECONDS - t0)) "$result" "$cpu")"
    if [ "$status" != 0 ]; then
        {
            echo "--- the last 60 lines of $log:"
            tail -n 60 "$log"
            echo "--- step $s failed (exit status $status); its full output: $log"
        } >&2
    fi
    return "$status"
}

# side_by_side FUNCTION ARG...: FUNCTION ARG for every ARG at once (at once in this shell if
# there is one); returns the status of a failed one, if any.
side_by_side() {
    local f=$1 pids=() failed=0 a p
    shift
    if [ $# = 1 ]; then
        "$f" "$1"
        return
    fi
    local was=${parallel:-}
    parallel=1
    for a in "$@"; do
        "$f" "$a" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do
        wait "$p" || failed=$?
    done
    parallel=$was
    return "$failed"
}

# run_group "STEP,STEP...": the steps side by side.
run_group() {
    local steps
    IFS=, read -r -a steps <<<"${1// /}"
    side_by_side run_step "${steps[@]}"
}

# run_branch "GROUP+GROUP...": the groups one after the other, up to the first that fails.
run_branch() {
    local groups g
    IFS=+ read -r -a groups <<<"${1// /}"
    for g in "${groups[@]}"; do
        run_group "$g" || return
    done
}

# run_stage "BRANCH | BRANCH...": the branches side by side.
run_stage() {
    local branches
    IFS='|' read -r -a branches <<<"$1"
    side_by_side run_branch "${branches[@]}"
}

# clippy's lints in every build of the workspace (`build`): clippy-driver as the workspace's
# rustc wrapper, with `cargo clippy -- -D warnings`'s arguments.
if planned build tests interop schemathesis; then
    if ! clippy_driver=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver); then
        echo "clippy-driver is missing: rustup component add clippy" >&2
        exit 1
    fi
    export RUSTC_WORKSPACE_WRAPPER=$clippy_driver
    export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
fi

exec 3>&1 4>&2
rm -rf "$log_dir"
mkdir -p "$log_dir"
echo "scripts/test.sh: ${PLAN[*]}"
echo "each step's full output: $log_dir/<step>.log (fuzz targets: $log_dir/fuzz-<target>.log)"
start=$SECONDS
for stage in "${PLAN[@]}"; do
    run_stage "$stage" || exit
done
echo "all steps passed in $((SECONDS - start))s; logs in $log_dir/"
