#!/usr/bin/env bash
# compute-sanitizer over every operator on the GPU: memcheck (with leak check), racecheck,
# initcheck and synccheck, each over `kscope run OP --device cuda` plain, traced, and
# traced into a buffer of 10 events (--trace-limit 640: the device trace-overflow path),
# forward and backward, plus the GPU suite's overflow test and a traced launch of 20 M
# events. Called by bench/gpu_session.sh; runs alone as well:
#   bench/gpu_sanitize.sh BUILD OUTDIR      (BUILD: a CUDA build, e.g. build-gpu)
#   bench/gpu_sanitize.sh BUILD --check     (only the case table against `kscope list`; no GPU)
# Writes OUTDIR/sanitize/*.log (one per run), OUTDIR/sanitize.tsv (tool, case, variant,
# exit code, errors) and OUTDIR/sanitize.md (the table for bench/RESULTS.md). Exit 0 when
# every run is clean, 1 otherwise (every run still happens).
set -uo pipefail
build=$(cd "${1:?usage: gpu_sanitize.sh BUILD OUTDIR}" && pwd)
out=${2:?usage: gpu_sanitize.sh BUILD OUTDIR}
K="$build/kscope"
if [ ! -x "$K" ]; then
    echo "gpu_sanitize: $K cannot run on the GPU (a CUDA build and a GPU are needed)"; exit 1
fi

# name | kscope run arguments: every operator of the table (`kscope list`) at its defaults
# with random inputs, and with --backward where it has one; then small odd sizes with
# looping threads and the other trace kernels
ops=" $("$K" list | awk 'NR > 1 && NF { print $1 }' | tr '\n' ' ')"
[ "$ops" != " " ] || { echo "gpu_sanitize: $K list names no operator"; exit 1; }
cases=()
for op in $ops; do
    cases+=("$op|$op --pattern random")
    "$K" list "$op" | grep -q -- "--\[no-\]backward" && cases+=("$op-bwd|$op --pattern random --backward")
done
cases+=(
    "im2col-loop|im2col --channels 3 --input-size 9,11 --kernel-size 3,2 --dilation 2,1 --stride 2 --threads 32 --block-cap 2"
    "col2im-loop|col2im --channels 2 --output-size 7,9 --kernel-size 3 --threads 32 --block-cap 1"
    "deform_conv-mask|deform_conv --channels 4 --input-size 9,9 --offset-groups 2 --mask --semantics torchvision"
    "deform_conv-bwd-col2im|deform_conv --channels 4 --input-size 9,9 --mask --backward --trace-kernel col2im"
    "deform_conv-bwd-coord|deform_conv --channels 4 --input-size 9,9 --backward --trace-kernel coord --threads 64 --block-cap 2"
    "deform_conv-tap-chunks|deform_conv --batch 3 --im2col-step 1 --channels 19 --out-channels 5 --input-size 13,11 --offset-groups 1 --mask --bias --backward --offset-amount 3 --threads 64 --block-cap 3"
    "deform_conv-gather-vec4|deform_conv --batch 2 --channels 40 --out-channels 8 --input-size 20,24 --offset-groups 2 --mask --backward --offset-amount 6"
    "deform_conv-gather-dilated|deform_conv --batch 2 --im2col-step 1 --channels 3 --input-size 13,97 --dilation 45 --padding 45 --mask --backward --offset-amount 3"
    "deform_conv-tile-chunks|deform_conv --batch 3 --im2col-step 1 --channels 19 --out-channels 5 --input-size 13,11 --offset-groups 1 --mask --bias --backward --offset-amount 3 --threads 64 --block-cap 3"
    "deform_conv-tap-tf32|deform_conv --batch 2 --channels 24 --out-channels 6 --groups 2 --offset-groups 3 --input-size 12,10 --stride 2 --dilation 2 --mask --backward --math tf32"
    "deform_conv-fused-tf32|deform_conv --batch 3 --im2col-step 1 --channels 64 --out-channels 37 --offset-groups 2 --input-size 13,11 --mask --bias --backward --offset-amount 3 --math tf32"
    "deform_conv-fused-tf32-wide|deform_conv --batch 3 --im2col-step 1 --channels 64 --out-channels 320 --groups 2 --input-size 9,10 --stride 2 --dilation 2 --mask --math tf32"
    "roi_align-max-bwd|roi_align --channels 3 --input-size 13,11 --num-rois 5 --backward --pool-mode max --no-aligned"
    "roi_align-adaptive-loop|roi_align --channels 5 --input-size 37,29 --num-rois 9 --output-size 3,5 --spatial-scale 0.5 --threads 64 --block-cap 2"
    "roi_align-cl4|roi_align --channels 68 --input-size 37,29 --num-rois 9 --output-size 7 --sampling-ratio 2 --spatial-scale 0.5"
    "roi_align-cl1-loop|roi_align --channels 37 --input-size 23,31 --num-rois 30 --output-size 14,15 --spatial-scale 0.5 --threads 48 --block-cap 3"
    "patchify-bilinear-bwd|patchify --channels 2 --input-size 9,9 --num-points 5 --backward --trace-kernel bilinear_backward --threads 32 --block-cap 1"
    "sparse_conv-3d-reduce|sparse_conv --spatial-shape 4,9,11 --stride 2 --padding 1 --in-channels 3 --out-channels 5 --bias --backward --trace-kernel reduce"
    "sparse_conv-subm-collide|sparse_conv --subm --hash-slots 32 --trace-kernel insert --threads 32 --block-cap 1"
    "sparse_conv-transposed-gather|sparse_conv --transposed --stride 2 --output-padding 1 --in-channels 2 --backward --trace-kernel gather"
    "gemm_tiled-loop|gemm_tiled --m 37 --k 41 --n 29 --tile 32 --block-cap 1 --pattern random"
)
# each case runs an operator of the table: a case of one that ops.def lost stops here
for c in "${cases[@]}"; do
    args=${c#*|}
    [[ $ops == *" ${args%% *} "* ]] || { echo "gpu_sanitize: case ${c%%|*} runs ${args%% *}, which $K list (kernels/ops.def) lacks"; exit 1; }
done
[ "$out" = --check ] && { echo "gpu_sanitize: ${#cases[@]} cases over${ops% }"; exit 0; }
mkdir -p "$out/sanitize"
out=$(cd "$out" && pwd)
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -z "$CS" ] || [ ! -x "$CS" ]; then
    echo "gpu_sanitize: compute-sanitizer not found (it ships with the CUDA toolkit)"; exit 1
fi
if ! "$K" run im2col --device cuda --quiet >/dev/null 2>&1; then
    echo "gpu_sanitize: $K cannot run on the GPU (a CUDA build and a GPU are needed)"; exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# KS_SANITIZE_ONLY=WORD: only the cases whose name contains WORD (and no suite or big runs)
if [ -n "${KS_SANITIZE_ONLY:-}" ]; then
    kept=()
    for c in "${cases[@]}"; do [[ ${c%%|*} == *"$KS_SANITIZE_ONLY"* ]] && kept+=("$c"); done
    cases=("${kept[@]}")
fi
tools=(memcheck racecheck initcheck synccheck)
# KS_SANITIZE_TOOLS="memcheck racecheck": only those tools
[ -n "${KS_SANITIZE_TOOLS:-}" ] && read -r -a tools <<<"$KS_SANITIZE_TOOLS"
printf 'tool\tcase\tvariant\texit\terrors\n' >"$out/sanitize.tsv"
bad=0

# one sanitizer run; $1 tool, $2 case name, $3 variant, the rest the command
sanitize() {
    local tool=$1 name=$2 variant=$3
    shift 3
    local log="$out/sanitize/$tool-$name-$variant.log" extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    timeout 600 "$CS" --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 20 "$@" >"$log" 2>&1
    local rc=$?
    local errors
    errors=$(grep -o 'ERROR SUMMARY: [0-9]* error' "$log" | tail -1 | grep -o '[0-9]*')
    # racecheck reports "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"
    [ -z "$errors" ] && errors=$(grep -o 'RACECHECK SUMMARY: [0-9]* hazard' "$log" | tail -1 | grep -o '[0-9]*')
    printf '%s\t%s\t%s\t%s\t%s\n' "$tool" "$name" "$variant" "$rc" "${errors:-?}" >>"$out/sanitize.tsv"
    if [ $rc -ne 0 ] || [ "${errors:-1}" != 0 ]; then
        bad=1
        echo "gpu_sanitize: $tool $name $variant: exit $rc, ${errors:-?} errors ($log)"
    fi
}

for tool in "${tools[@]}"; do
    for c in "${cases[@]}"; do
        name=${c%%|*}
        read -r -a args <<<"${c#*|}"
        # the fused TF32 forward is opt-in (--fused): on for its cases only
        [[ $name == *fused* ]] && args+=(--fused on)
        # the channels-last RoIAlign forward (the default on adaptive grids): on fixed ones too
        [[ $name == *-cl* ]] && args+=(--forward cl)
        # the backward's tap pass is grad_gather; grad_tile for its cases
        [[ $name == deform_conv-tile* ]] && args+=(--grad-kernel tile)
        sanitize "$tool" "$name" plain "$K" run "${args[@]}" --device cuda --quiet
        rm -f "$work/t.kst"
        sanitize "$tool" "$name" traced "$K" run "${args[@]}" --device cuda --quiet --trace "$work/t.kst"
        # the device buffer overflowing: room for 10 events, every other one counted
        rm -f "$work/t.kst"
        sanitize "$tool" "$name" overflow "$K" run "${args[@]}" --device cuda --quiet --trace "$work/t.kst" \
            --trace-limit 640
    done
    # the device sink overflowing: the GPU suite's overflow test (capacities of a few
    # events, every drop counted), in one process so the sanitizer sees the kernels
    [ -z "${KS_SANITIZE_ONLY:-}" ] && sanitize "$tool" gpu-suite-overflow traced env CK_FORK=no "$build/tests/test_gpu"
done
# a big traced launch (64 x 128 x 128 items x 19 events) under a 16 MiB limit: memcheck
if [ -z "${KS_SANITIZE_ONLY:-}" ]; then
    rm -f "$work/big.kst"
    sanitize memcheck im2col-big-overflow traced "$K" run im2col --channels 64 --input-size 128,128 \
        --device cuda --quiet --trace "$work/big.kst" --trace-limit 16M
    if [ -f "$work/big.kst" ] && ! "$K" info "$work/big.kst" | grep -q 'dropped [1-9]'; then
        bad=1
        echo "gpu_sanitize: im2col-big-overflow: the trace does not report dropped events"
    fi
fi

{
    echo "| tool | runs | clean | not clean |"
    echo "|---|---|---|---|"
    for tool in "${tools[@]}"; do
        awk -F'\t' -v t="$tool" '$1 == t { n++; if ($4 == 0 && $5 == 0) ok++; else { bad = bad sep $2 "/" $3; sep = ", " } }
            END { printf "| %s | %d | %d | %s |\n", t, n, ok, bad == "" ? "-" : bad }' "$out/sanitize.tsv"
    done
} >"$out/sanitize.md"
cat "$out/sanitize.md"
exit $bad
