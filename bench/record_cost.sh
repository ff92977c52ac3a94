#!/usr/bin/env bash
# record_cost.sh BUILD [OUTDIR]: issue 36's cost goals, end to end on a GPU machine. The
# program is kscope itself running an operator's plain CUDA kernels (`kscope run OP
# --device cuda`: an ordinary CUDA program as far as the tools are concerned), at an
# im2col-sized launch (N1 C64 56x56, 3x3) and a RoIAlign-sized one (N2 C64 56x56, 128
# RoIs, 7x7, sampling ratio 2). Each is timed (wall clock of the whole program, best of 3):
#   plain         the program alone
#   memcheck      under compute-sanitizer --tool memcheck
#   record all    under kscope record, every access of the operator's launches
#   record block  under kscope record --filter block=0:1
# Goals: record all <= memcheck; record block <= 3x plain. Prints a table (also OUTDIR/record_cost.md).
set -uo pipefail
B=${1:?usage: record_cost.sh BUILD [OUTDIR]}
OUT=${2:-/tmp/record-cost}
mkdir -p "$OUT"
K=$B/kscope
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/compute-sanitizer/compute-sanitizer)}
best() { # best wall seconds of 3 runs of "$@" (ms resolution); a failing run counts as failed
    local b= t0 t1 ms
    for _ in 1 2 3; do
        rm -rf "$OUT/rec" # each run's traces only
        t0=$(date +%s%N)
        "$@" >"$OUT/last.log" 2>&1 || { echo fail; return; }
        t1=$(date +%s%N); ms=$(((t1 - t0) / 1000000))
        if [ -z "$b" ] || [ "$ms" -lt "$b" ]; then b=$ms; fi
    done
    echo "$b"
}
ratio() { [[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ && $2 -gt 0 ]] && echo "$((100 * $1 / $2))" | sed -E 's/(..)$/.\1/; s/^\./0./' || echo -; }
{
echo "| workload | plain ms | memcheck ms | record all ms | record block ms | all / memcheck | block / plain | accesses |"
echo "|---|---|---|---|---|---|---|---|"
for w in "im2col:im2col --batch 1 --channels 64 --input-size 56,56" \
         "roi_align:roi_align --batch 2 --channels 64 --input-size 56,56 --num-rois 128 --output-size 7,7 --sampling-ratio 2"; do
    name=${w%%:*}; args=${w#*:}
    run=("$K" run $args --device cuda --quiet)
    p=$(best "${run[@]}")
    m=$(best "$SAN" --tool memcheck --print-limit 1 "${run[@]}")
    a=$(best "$K" record --kernel "$name" --launch all --out "$OUT/rec" -- "${run[@]}")
    acc=$(grep -oE "[0-9]+ accesses" "$OUT/last.log" | awk '{s += $1} END {print s + 0}')
    o=$(best "$K" record --kernel "$name" --launch all --filter block=0:1 --out "$OUT/rec" -- "${run[@]}")
    echo "| $name | $p | $m | $a | $o | $(ratio "$a" "$m") | $(ratio "$o" "$p") | $acc |"
done
} | tee "$OUT/record_cost.md"
