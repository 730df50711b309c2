#!/usr/bin/env bash
# Runs every test of the repository: formatting, lints, the workspace's tests, and a short run
# of each fuzz target. This is the README's test command; .ci/run calls it on a fresh machine.
#
# Environment:
#   FUZZ_SECONDS   seconds per fuzz target (default 20; 0 skips fuzzing)
#
# Usage: scripts/test.sh            every step
#        scripts/test.sh fuzz clippy only the named steps (names as in STEPS below)
#
# Steps are plain functions run in order; to add one, write a function and append it to STEPS.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-20}
FUZZ_TARGETS=(csv_reader engine)

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
        fmt_check=(cargo fmt --check)
        step "fuzz: ${fmt_check[*]}"
        "${fmt_check[@]}"
        for target in "${FUZZ_TARGETS[@]}"; do
            step "fuzz: $target for ${FUZZ_SECONDS}s"
            mkdir -p "corpus/$target"
            "${cargo[@]}" fuzz run --sanitizer none "$target" \
                "corpus/$target" "../crates/rialto/tests/fuzz_regressions/$target" \
                -- -max_total_time="$FUZZ_SECONDS" -max_len=4096 -print_final_stats=1
        done
    )
}

STEPS=(check_tools fmt clippy unit_and_integration_tests fuzz)
if [ $# -gt 0 ]; then
    STEPS=("$@")
fi

start=$(date +%s)
for s in "${STEPS[@]}"; do
    "$s"
done
echo
echo "==> all tests passed in $(($(date +%s) - start))s"
