#!/usr/bin/env bash
# Runs every fuzz target of BUILD (a KS_FUZZ=ON build) for SECONDS each, all at once, on
# a corpus seeded from real outputs (make_seeds.sh) and kept in BUILD/fuzz-corpus/ between
# runs. Fails (exit 1) on any crash, timeout, leak or out-of-memory, naming the target and
# the artifact that reproduces it (BUILD/fuzz-artifacts/TARGET/). Prints the executions
# of each target. libFuzzer's seed is KS_FUZZ_SEED (default 1): a CI run is repeatable;
# explore with other seeds and longer runs locally.
# Usage: tests/fuzz/run.sh BUILD SECONDS [TARGET...]
set -uo pipefail
build=$(cd "$1" && pwd)
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_kst fuzz_lesson fuzz_npy fuzz_image fuzz_args fuzz_diff fuzz_memory
                                     fuzz_perfetto fuzz_formula fuzz_cuscan fuzz_pages)
seeds="$build/fuzz-seeds"
rm -rf "$seeds"
"$here/make_seeds.sh" "$build" "$seeds" || { echo "fuzz: cannot make the seed corpora"; exit 1; }
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:allocator_may_return_null=1:abort_on_error=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$here/../lsan.supp:print_suppressions=0"
unset DISPLAY WAYLAND_DISPLAY
pids=()
for t in "${targets[@]}"; do
    mkdir -p "$build/fuzz-corpus/$t" "$build/fuzz-artifacts/$t"
    # -timeout: one input may take 30 s at most; -rss_limit_mb: 2 GiB (also the largest
    # single allocation); -close_fd_mask=3: the commands' own output is dropped, the
    # sanitizers' and libFuzzer's reports are kept
    # -max_len: the .kst targets read at most 16 KiB a trace (two for diff), so longer
    # inputs would only be skipped; formulas are short
    case $t in
        fuzz_kst | fuzz_memory | fuzz_perfetto) len=(-max_len=16384) ;;
        fuzz_diff) len=(-max_len=32772) ;;
        fuzz_formula) len=(-max_len=1024) ;;
        *) len=() ;;
    esac
    "$build/tests/fuzz/$t" -seed="${KS_FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 "${len[@]}" \
        -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$t/" \
        "$build/fuzz-corpus/$t" "$seeds/$t" >"$build/fuzz-$t.log" 2>&1 &
    pids+=($!)
done
bad=0
for i in "${!targets[@]}"; do
    t=${targets[$i]}
    wait "${pids[$i]}"
    rc=$?
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/fuzz-$t.log" | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]*' "$build/fuzz-$t.log" | tail -1)
    if [ $rc -ne 0 ]; then
        bad=1
        echo "fuzz: $t FAILED (exit $rc) after ${execs:-?} executions; log $build/fuzz-$t.log:"
        grep -E 'ERROR|SUMMARY|artifact|Test unit written' "$build/fuzz-$t.log" | head -8
    else
        echo "fuzz: $t ok: ${execs:-?} executions in ${seconds}s ($(( ${execs:-0} / seconds ))/s), $cov, corpus $(ls "$build/fuzz-corpus/$t" | wc -l) files"
    fi
done
exit $bad
