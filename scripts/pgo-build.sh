#!/usr/bin/env bash
# A profile-guided (PGO) release build of `rialto` (and of the replay benchmark): build it
# instrumented, run a training load through it (a server taking FIX orders from the load
# generator, then full replays of that journal and the in-process engine benchmark), merge the
# profiles and build again with them. Same code, laid out and inlined by what the load does:
# a full replay of a 10.4 M-record journal took 6-10% less CPU on the applying thread than
# the plain release build (BENCHMARKS.md, "Replay and restart").
#
# Needs `llvm-profdata` of the same LLVM major version as rustc (`rustc -vV`); on Debian:
# `apt-get install llvm-NN` (it provides llvm-profdata-NN). An older one cannot read the
# profiles. Not part of `.ci/run`: the README's build is the plain release build.
#
# Usage: scripts/pgo-build.sh [--out DIR] [--port P] [--rate R] [--seconds S]
#   --out DIR      where the builds and profiles go (default target/pgo)
#   --port P       port of the training server on 127.0.0.1 (default 19878; must be free)
#   --rate R       training orders per second (default 100000)
#   --seconds S    training seconds (default 15: past the 1 M ClOrdIDs a window holds)
# The result: DIR/use/release/rialto and DIR/use/release/examples/replay_bench.
set -euo pipefail
cd "$(dirname "$0")/.."

out=target/pgo
port=19878
rate=100000
seconds=15
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        *) echo "pgo-build: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done

major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
profdata=""
for cand in "llvm-profdata-$major" llvm-profdata; do
    if command -v "$cand" > /dev/null &&
        "$cand" --version 2>/dev/null | grep -q "LLVM version $major\."; then
        profdata=$cand
        break
    fi
done
if [ -z "$profdata" ]; then
    echo "pgo-build: needs llvm-profdata of LLVM $major (rustc's); on Debian: apt-get install llvm-$major" >&2
    exit 2
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
profiles=$out/profiles
rm -rf "$profiles"
mkdir -p "$profiles"

echo "pgo-build: 1/4 instrumented build"
RUSTFLAGS="-Cprofile-generate=$profiles" cargo build --release -q -p rialto --target-dir "$out/gen"
RUSTFLAGS="-Cprofile-generate=$profiles" cargo build --release -q -p server --example replay_bench --target-dir "$out/gen"
gen=$out/gen/release/rialto

echo "pgo-build: 2/4 training: ${seconds} s of FIX orders at ${rate}/s, a full replay, the engine"
data=$(mktemp -d)
server=""
cleanup() {
    if [ -n "$server" ]; then kill -INT "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$data"
}
trap cleanup EXIT
"$gen" serve --data-dir "$data/d" --listen "127.0.0.1:$port" > "$data/serve.log" 2>&1 &
server=$!
for _ in $(seq 200); do
    grep -q "listening" "$data/serve.log" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.05
done
if ! grep -q "listening" "$data/serve.log"; then
    echo "pgo-build: the training server did not start:" >&2
    cat "$data/serve.log" >&2
    exit 1
fi
"$gen" bench fix --port "$port" --bots 10 --rate $((rate / 10)) --duration "$seconds" --warmup 1 \
    2> "$data/bench.log" | grep -E "rate_offered" ||
    { echo "pgo-build: the training load failed:" >&2; tail -5 "$data/bench.log" >&2; exit 1; }
kill -INT "$server"
wait "$server" || true
server=""
"$gen" journal verify "$data/d" | tail -1
# A start-up's replay as `rialto serve` does it (two threads, the resend stores bounded by the
# journal's checkpoints), from the first record.
"$out/gen/release/examples/replay_bench" --dir "$data/d" --full --runs 2 2>&1 | grep -E "start total" | tail -1
"$gen" bench engine > /dev/null

echo "pgo-build: 3/4 merging $(ls "$profiles"/*.profraw | wc -l) profiles with $profdata"
"$profdata" merge -o "$profiles/merged.profdata" "$profiles"/*.profraw

echo "pgo-build: 4/4 optimized build"
RUSTFLAGS="-Cprofile-use=$profiles/merged.profdata" cargo build --release -q -p rialto --target-dir "$out/use"
RUSTFLAGS="-Cprofile-use=$profiles/merged.profdata" cargo build --release -q -p server --example replay_bench --target-dir "$out/use"
echo "pgo-build: built $out/use/release/rialto and $out/use/release/examples/replay_bench"
