#!/usr/bin/env bash
# `kscope memory` against Nsight Compute on the same launches: the plain CUDA kernel's
# l1tex global load/store sectors and requests (ncu) beside the counts kscope memory
# derives from the simulator's trace of that launch (the same work, the same warps).
#   bench/gpu_memory.sh BUILD OUTDIR        (BUILD: a CUDA build; needs ncu)
#   bench/gpu_memory.sh --check             (only the operator check below; no GPU, no build)
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
# name | kernel name regex | kscope run arguments (the first word: the operator)
cases=(
  "im2col s1|im2col|im2col --channels 16 --input-size 64,64 --kernel-size 3 --padding 1"
  "im2col s2|im2col|im2col --channels 16 --input-size 64,64 --kernel-size 3 --padding 1 --stride 2"
  "col2im|col2im|col2im --channels 16 --output-size 64,64 --kernel-size 3 --padding 1"
  "maxpool2d|maxpool2d_fwd|maxpool2d --channels 16 --input-size 64,64 --kernel-size 3 --stride 2"
)
# operator | why it has no case. Every operator of kernels/ops.def is in cases or here,
# and both name only operators of ops.def (check_ops, before anything runs; ctest's
# test_ops_lists runs --check): a new operator is placed on purpose, not forgotten.
uncompared=(
  "conv2d|two launches: im2col (compared above), then the GEMM its trace records; that GEMM is not compared yet"
  "deform_im2col|bilinear samples (four requests a sample in kscope memory, docs/memory.md): not compared yet"
  "deform_conv|bilinear samples (as deform_im2col) and a GEMM: not compared yet"
  "roi_align|bilinear samples (as deform_im2col): not compared yet"
  "patchify|not compared yet"
  "gemm_tiled|shared-memory tiles: kscope memory counts shared accesses too (docs/cuda-c.md), the l1tex global metrics do not; not compared yet"
  "sparse_conv|a pipeline of data-dependent launches (hash, gather, GEMM, scatter): not compared yet"
)
# 0 when cases and uncompared cover kernels/ops.def exactly, else 1 with a line per fault
check_ops() {
    local ops c op args compared=" " skipped=" " bad=0
    ops=" $(sed -n 's/^KS_OP(\(.*\))/\1/p' "$src/kernels/ops.def" | tr '\n' ' ')"
    [ "$ops" != " " ] || { echo "gpu_memory: no KS_OP line in $src/kernels/ops.def" >&2; return 1; }
    for c in "${cases[@]}"; do
        IFS='|' read -r _ _ args <<<"$c"
        compared+="${args%% *} "
    done
    for c in "${uncompared[@]}"; do skipped+="${c%%|*} "; done
    for op in $compared $skipped; do
        [[ $ops == *" $op "* ]] || { echo "gpu_memory: $op is in cases or uncompared, but kernels/ops.def has no such operator" >&2; bad=1; }
    done
    for op in $ops; do
        if [[ $compared == *" $op "* && $skipped == *" $op "* ]]; then
            echo "gpu_memory: $op has a case and an uncompared line: drop the line" >&2; bad=1
        elif [[ $compared != *" $op "* && $skipped != *" $op "* ]]; then
            echo "gpu_memory: no case for operator $op (kernels/ops.def): add one to cases, or a line to uncompared saying why not" >&2; bad=1
        fi
    done
    return $bad
}
if [ "${1:-}" = --check ]; then check_ops; exit; fi
check_ops || exit 1
build=$(cd "${1:?usage: gpu_memory.sh BUILD OUTDIR}" && pwd)
out=${2:?usage: gpu_memory.sh BUILD OUTDIR}
mkdir -p "$out"
K="$build/kscope"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ -x "$NCU" ] || { echo "gpu_memory: ncu not found"; exit 1; }
M=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
printf '| launch | ncu ld sectors | kscope read sectors | ncu st sectors | kscope write sectors | ncu ld requests | kscope read requests | ncu st requests | kscope write requests |\n|---|---|---|---|---|---|---|---|---|\n' >"$out/memory.md"
for c in "${cases[@]}"; do
    IFS='|' read -r name regex args <<<"$c"
    # shellcheck disable=SC2086
    "$NCU" --metrics "$M" --kernel-name "regex:$regex" -c 1 --csv "$K" run $args --device cuda --quiet \
        >"$out/ncu-${name// /_}.csv" 2>"$out/ncu-${name// /_}.err"
    metric() { grep "\"$1\"" "$out/ncu-${name// /_}.csv" | tail -1 | awk -F'","' '{ gsub(/[",]/, "", $NF); print $NF }'; }
    ld=$(metric l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum) st=$(metric l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum)
    lr=$(metric l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum) sr=$(metric l1tex__t_requests_pipe_lsu_mem_global_op_st.sum)
    # shellcheck disable=SC2086
    "$K" run $args --trace "$out/t.kst" --quiet && "$K" memory "$out/t.kst" --json --worst 0 >"$out/mem-${name// /_}.json"
    sum() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sum(s[sys.argv[3]] for s in d['sites'] if s['kind']==sys.argv[2]))" "$out/mem-${name// /_}.json" "$1" "$2"; }
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "${ld:-?}" "$(sum read sectors)" "${st:-?}" \
        "$(sum write sectors)" "${lr:-?}" "$(sum read requests)" "${sr:-?}" "$(sum write requests)" >>"$out/memory.md"
done
rm -f "$out/t.kst"
cat "$out/memory.md"
