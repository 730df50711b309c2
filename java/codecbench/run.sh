#!/usr/bin/env bash
# Rialto's FIX codec beside QuickFIX/J's in one run (BENCHMARKS.md, "FIX codec"): builds the
# release `rialto` and the QuickFIX/J harness, then `rialto bench codec --with-quickfixj`, which
# alternates the two each round and prints the medians and the ratio QuickFIX/J / Rialto per figure.
#
#   java/codecbench/run.sh [more `rialto bench codec` options; default --rounds 3]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
cargo build --release -q -p rialto 1>&2
(cd java && mvn -q -B package -DskipTests -pl codecbench -am) 1>&2
[ $# -eq 0 ] && set -- --rounds 3
exec target/release/rialto bench codec --with-quickfixj \
    --quickfixj-jar java/codecbench/target/codecbench.jar "$@"
