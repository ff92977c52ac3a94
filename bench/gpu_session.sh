#!/usr/bin/env bash
# One call on the GPU machine (see DEVELOPERS notes in README): unpack the carried Debian
# packages, build with CUDA (no viewer), make the torch golden data, run every ctest suite
# (the GPU suite included), the GPU benchmark, then compute-sanitizer over every operator
# (bench/gpu_sanitize.sh). Logs go to $OUT (or /tmp/ks-out).
set -uo pipefail
OUT=${OUT:-/tmp/ks-out}
mkdir -p "$OUT" /tmp/deps
for f in .deps/*.deb; do dpkg -x "$f" /tmp/deps; done
export PKG_CONFIG_SYSROOT_DIR=/tmp/deps PKG_CONFIG_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu CPATH=/tmp/deps/usr/include:/tmp/deps/usr/include/cjson
export LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DKS_WITH_VIEWER=OFF -DKS_WITH_PNG=OFF &&
       cmake --build build-gpu -j16; } >"$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"; exit 1
fi
grep -iE "warning" "$OUT/build.log" | head -5
python3 tests/golden/make_golden.py tests/golden ${KS_GOLDEN_ONLY:+--only $KS_GOLDEN_ONLY} 2>&1 | tee "$OUT/golden.log"
tar -cf "$OUT/golden.tar" tests/golden
(cd build-gpu && ctest --output-on-failure -j4) >"$OUT/ctest.log" 2>&1
tail -12 "$OUT/ctest.log"
./build-gpu/tests/test_gpu 2>&1 | tee "$OUT/test_gpu.log"
./build-gpu/tests/test_gpu_deform 2>&1 | tee "$OUT/gpu_deform.txt"
./build-gpu/tests/test_gpu_ops 2>&1 | tee "$OUT/gpu_ops.txt"
./build-gpu/tests/test_gpu_each_op 2>&1 | tee "$OUT/gpu_each_op.txt"
./build-gpu/tests/test_gpu_props 2>&1 | tee "$OUT/gpu_props.txt"
./build-gpu/bench/bench_gpu 2>&1 | tee "$OUT/bench_gpu.log"
python3 bench/bench_torch.py build-gpu/libkscope_ops.so 2>&1 | tee "$OUT/bench_torch.log"
# compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over every operator, plain
# and traced, forward and backward, and the trace-overflow path: OUT/sanitize.md is the
# table for bench/RESULTS.md (docs/reliability.md)
bench/gpu_sanitize.sh build-gpu "$OUT" 2>&1 | tee "$OUT/gpu_sanitize.txt"
