#!/usr/bin/env bash
# One GPU call for the speed work of issue 20: unpack the carried Debian packages (as
# gpu_session.sh), build with CUDA (no viewer), then by STEPS (space separated, default
# "test bench"): test = the four GPU suites; bench = bench_gpu and bench_torch's roi,
# patchify and im2col sections (KS_BENCH_TORCH="roi": only bench_torch's roi section);
# ncu = Nsight Compute on one launch of each kernel named in
# KS_NCU (regexes, space separated; default torchvision's and our RoIAlign forward, col2im,
# im2col); sanitize = gpu_sanitize.sh over KS_SANITIZE_ONLY words (KS_SANITIZE_WORDS);
# ab = builds with other compile-time choices, KS_AB="name:-DX=1,-DY=2 ...", each timed
# by bench_gpu and bench_torch's roi section (or bench_torch's KS_BENCH_TORCH sections).
# Logs go to $OUT (or /tmp/ks-out); a summary table is printed last.
set -uo pipefail
OUT=${OUT:-/tmp/ks-out}
STEPS=${STEPS:-test bench}
mkdir -p "$OUT" /tmp/deps
for f in .deps/*.deb; do dpkg -x "$f" /tmp/deps; done
export PKG_CONFIG_SYSROOT_DIR=/tmp/deps PKG_CONFIG_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu CPATH=/tmp/deps/usr/include:/tmp/deps/usr/include/cjson
export LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
if ! { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DKS_WITH_VIEWER=OFF -DKS_WITH_PNG=OFF &&
       cmake --build build-gpu -j16; } >"$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"; exit 1
fi
grep -iE "warning" "$OUT/build.log" | head -5
log=$OUT/run.log
for step in $STEPS; do
    case $step in
    test)
        for t in test_gpu test_gpu_deform test_gpu_ops test_gpu_each_op; do
            ./build-gpu/tests/$t >/tmp/$t.log 2>&1
            echo "$t: exit $? ($(grep -E '^[0-9]+%' /tmp/$t.log | tail -1))" | tee -a "$log"
            cat /tmp/$t.log >>"$OUT/tests.log"
        done ;;
    bench)
        # KS_BENCH_TORCH="roi ...": only those bench_torch sections, no bench_gpu
        [ -z "${KS_BENCH_TORCH:-}" ] && ./build-gpu/bench/bench_gpu 2>&1 | tee -a "$log"
        python3 bench/bench_torch.py build-gpu/libkscope.so ${KS_BENCH_TORCH:-roi patchify im2col} 2>&1 | tee -a "$log" ;;
    ncu)
        NCU=/usr/local/cuda/bin/ncu
        for spec in ${KS_NCU:-roi_align_forward_kernel ks_roi_align_fwd_k ks_col2im_k_plain ks_im2col_k_plain}; do
            # REGEX@ROWS: bench_torch's RoIAlign rows (KS_ROI_SHAPES); REGEX#N: skip N launches
            k=${spec%@*}; k=${k%#*}
            rows=0,1,2; [[ $spec == *@* ]] && rows=${spec#*@}
            skip=0; [[ $spec == *#* ]] && skip=${spec#*#}
            case $k in
            *deform*) cmd=(python3 bench/bench_torch.py build-gpu/libkscope.so deform) ;;
            *im2col*|*col2im*) cmd=(./build-gpu/bench/bench_gpu) ;;
            *) cmd=(python3 bench/bench_torch.py build-gpu/libkscope.so roi) ;;
            esac
            echo "==== ncu $spec" >>"$OUT/ncu.txt"
            KS_ROI_SHAPES=$rows $NCU --set full -k "regex:$k" --launch-skip "$skip" -c 1 "${cmd[@]}" >/tmp/ncu.txt 2>&1
            echo "ncu $spec: exit $?" | tee -a "$log"
            grep -vE "^(torch|N[0-9]|B[0-9]|roi_align|patchify|op |im2col|col2im|bench_gpu|shape)" /tmp/ncu.txt >>"$OUT/ncu.txt"
            grep -E "^  [a-z_]+.*\(|Issued Instructions  |Duration|DRAM Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|Compute \(SM\) Thr|Memory Throughput|Executed Ipc A|L1/TEX Cache Throughput|L2 Cache Throughput" /tmp/ncu.txt | head -17 >>"$OUT/ncu-summary.txt"
        done ;;
    ab)
        for spec in ${KS_AB:-}; do
            name=${spec%%:*} defs=${spec#*:}; defs=${defs//,/ }
            cmake -S . -B "build-$name" -DCMAKE_BUILD_TYPE=Release -DKS_WITH_VIEWER=OFF -DKS_WITH_PNG=OFF \
                -DCMAKE_C_FLAGS="$defs" -DCMAKE_CUDA_FLAGS="$defs" >/dev/null 2>&1 &&
                cmake --build "build-$name" -j16 --target kscope bench_gpu >>"$OUT/build.log" 2>&1 ||
                { echo "ab $name: build failed" | tee -a "$log"; continue; }
            echo "==== ab $name ($defs)" | tee -a "$log"
            # KS_BENCH_TORCH="deform ...": those bench_torch sections, no bench_gpu
            [ -z "${KS_BENCH_TORCH:-}" ] && "./build-$name/bench/bench_gpu" 2>&1 | tee -a "$log"
            python3 bench/bench_torch.py "build-$name/libkscope.so" ${KS_BENCH_TORCH:-roi} 2>&1 | tee -a "$log"
        done ;;
    sanitize)
        for w in ${KS_SANITIZE_WORDS:-roi_align im2col col2im patchify}; do
            # the table grows run by run in $OUT/san-WORD/sanitize.tsv (kept if the call is cut short)
            KS_SANITIZE_ONLY=$w bench/gpu_sanitize.sh build-gpu "$OUT/san-$w" >>"$OUT/sanitize.txt" 2>&1
            echo "sanitize $w: exit $?" | tee -a "$log"; cat "$OUT/san-$w/sanitize.md" | tee -a "$log"
        done ;;
    esac
done
[ -f "$OUT/ncu-summary.txt" ] && cat "$OUT/ncu-summary.txt"
echo "==== summary"
grep -E "exit|==== ab|of copy|x plain|fwd|bwd|tf32|kernels|sanitize" "$log" | grep -v "^ncu" | tail -80
