#!/usr/bin/env bash
# The SDK's examples on the GPU: install a CUDA build into a temporary prefix, build each
# example with -DKS_EXAMPLE_CUDA=ON against it, trace the kernel (and its planted bug) on
# the simulator and on the GPU, and compare the two traces with kscope diff (exit 0: every
# read, sample and write equal, work item by work item).
#   bench/gpu_sdk.sh BUILD        (BUILD: a CUDA build, e.g. build-gpu)
set -uo pipefail
build=$(cd "${1:?usage: gpu_sdk.sh BUILD}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/ks" >/dev/null || exit 1
K="$tmp/ks/bin/kscope"
bad=0
for ex in upsample transpose; do
    b="$tmp/build-$ex"
    if ! { cmake -S "$src/examples/$ex" -B "$b" -DCMAKE_PREFIX_PATH="$tmp/ks" -DKS_EXAMPLE_CUDA=ON &&
           cmake --build "$b" -j8; } >"$b.log" 2>&1; then
        tail -20 "$b.log"; echo "gpu_sdk: $ex: build failed"; bad=1; continue
    fi
    for variant in "" --bug; do
        (cd "$b" && "./$ex" $variant sim.kst >/dev/null && "./$ex" $variant --device cuda cuda.kst) || { bad=1; continue; }
        "$K" check "$b/cuda.kst" >/dev/null; check=$?
        "$K" diff "$b/sim.kst" "$b/cuda.kst" >"$b/diff.txt"; rc=$?
        echo "gpu_sdk: $ex ${variant:-good}: check on the GPU trace exit $check; diff sim vs cuda: $(head -1 "$b/diff.txt") (exit $rc)"
        [ $rc -eq 0 ] || bad=1
    done
done
exit $bad
