#!/usr/bin/env bash
# One GPU call for the speed work of issue 20: unpack the carried Debian packages (as
# gpu_session.sh), build with CUDA (no viewer), then by STEPS (space separated, default
# "test bench"): test = the five GPU suites; bench = bench_gpu and bench_torch's roi,
# patchify and im2col sections (KS_BENCH_TORCH="roi gpu": only bench_torch's roi section
# and bench_gpu);
# ncu = Nsight Compute on one launch of each kernel named in
# KS_NCU (regexes, space separated; default torchvision's and our RoIAlign forward, col2im,
# im2col); sanitize = gpu_sanitize.sh over KS_SANITIZE_ONLY words (KS_SANITIZE_WORDS);
# ab = builds with other compile-time choices, KS_AB="name:-DX=1,-DY=2 ...", each timed
# by bench_gpu and bench_torch's roi section (or the KS_BENCH_TORCH sections).
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
# benches BUILD DEFAULT: bench_gpu and bench_torch's DEFAULT sections; KS_BENCH_TORCH="roi
# deform ..." runs only the sections it names, where the word gpu names bench_gpu
benches() {
    local words=${KS_BENCH_TORCH:-gpu $2} torch=() w
    for w in $words; do [ "$w" = gpu ] && "./$1/bench/bench_gpu" 2>&1 | tee -a "$log"; [ "$w" != gpu ] && torch+=("$w"); done
    [ ${#torch[@]} -gt 0 ] && python3 bench/bench_torch.py "$1/libkscope_ops.so" "${torch[@]}" 2>&1 | tee -a "$log"
    return 0
}
for step in $STEPS; do
    case $step in
    test)
        for t in test_gpu test_gpu_deform test_gpu_ops test_gpu_each_op test_gpu_props test_gpu_record; do
            ./build-gpu/tests/$t >/tmp/$t.log 2>&1
            echo "$t: exit $? ($(grep -E '^[0-9]+%' /tmp/$t.log | tail -1))" | tee -a "$log"
            cat /tmp/$t.log >>"$OUT/tests.log"
        done ;;
    bench) benches build-gpu "roi patchify im2col" ;;
    ncu)
        NCU=/usr/local/cuda/bin/ncu
        for spec in ${KS_NCU:-roi_align_forward_kernel ks_roi_align_fwd_k ks_col2im_k_plain ks_im2col_k_plain}; do
            # REGEX#N: skip N launches of it. REGEX@WHICH: RoIAlign: bench_torch's rows
            # (KS_ROI_SHAPES, default 0,1,2); im2col/col2im: bench_gpu's shape, big or mid
            # (KS_BENCH_GPU_SHAPE); deform or gemm (cuBLAS): bench_torch's N:C:H (KS_DEFORM_SHAPES)
            k=${spec%@*}; k=${k%#*}
            which=; [[ $spec == *@* ]] && which=${spec#*@} && which=${which%#*}
            skip=0; [[ $spec == *#* ]] && skip=${spec#*#}
            envs=()
            case $k in
            *deform*|*gemm*) cmd=(python3 bench/bench_torch.py build-gpu/libkscope_ops.so deform)
                envs=(KS_DEFORM_SHAPES=${which:-8:256:64}) ;;
            *im2col*|*col2im*) cmd=(./build-gpu/bench/bench_gpu); [ -n "$which" ] && envs=(KS_BENCH_GPU_SHAPE=$which) ;;
            *) cmd=(python3 bench/bench_torch.py build-gpu/libkscope_ops.so roi); envs=(KS_ROI_SHAPES=${which:-0,1,2}) ;;
            esac
            echo "==== ncu $spec" >>"$OUT/ncu.txt"
            env "${envs[@]}" $NCU --set full -k "regex:$k" --launch-skip "$skip" -c 1 "${cmd[@]}" >/tmp/ncu.txt 2>&1
            echo "ncu $spec: exit $?" | tee -a "$log"
            grep -vE "^(torch|N[0-9]|B[0-9]|roi_align|patchify|op |im2col|col2im|bench_gpu|shape)" /tmp/ncu.txt >>"$OUT/ncu.txt"
            { echo "==== $spec"
              grep -E "^  [a-zA-Z_].*\(|Issued Instructions  |Duration|DRAM Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|Compute \(SM\) Thr|Memory Throughput|Executed Ipc A|L1/TEX Cache Throughput|L2 Cache Throughput|Warp Cycles Per Issued|No Eligible" /tmp/ncu.txt | head -20
              # the stall reasons ncu names (its rule text: "... stalled waiting for ...")
              grep -oE "[^.]*(stall|Stall)[^.]*\.[^.]*\." /tmp/ncu.txt | head -4; } >>"$OUT/ncu-summary.txt"
        done ;;
    ab)
        for spec in ${KS_AB:-}; do
            name=${spec%%:*} defs=${spec#*:}; defs=${defs//,/ }
            cmake -S . -B "build-$name" -DCMAKE_BUILD_TYPE=Release -DKS_WITH_VIEWER=OFF -DKS_WITH_PNG=OFF \
                -DCMAKE_C_FLAGS="$defs" -DCMAKE_CUDA_FLAGS="$defs" >/dev/null 2>&1 &&
                cmake --build "build-$name" -j16 --target kscope bench_gpu >>"$OUT/build.log" 2>&1 ||
                { echo "ab $name: build failed" | tee -a "$log"; continue; }
            echo "==== ab $name ($defs)" | tee -a "$log"
            benches "build-$name" roi
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
