#!/usr/bin/env bash
# `kscope memory` against Nsight Compute on the same launches: the plain CUDA kernel's
# l1tex global load/store sectors and requests (ncu) beside the counts kscope memory
# derives from the simulator's trace of that launch (the same work, the same warps).
#   bench/gpu_memory.sh BUILD OUTDIR        (BUILD: a CUDA build; needs ncu)
set -uo pipefail
build=$(cd "${1:?usage: gpu_memory.sh BUILD OUTDIR}" && pwd)
out=${2:?usage: gpu_memory.sh BUILD OUTDIR}
mkdir -p "$out"
K="$build/kscope"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ -x "$NCU" ] || { echo "gpu_memory: ncu not found"; exit 1; }
M=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
# name | kernel name regex | kscope run arguments
cases=(
  "im2col s1|im2col|im2col --channels 16 --input-size 64,64 --kernel-size 3 --padding 1"
  "im2col s2|im2col|im2col --channels 16 --input-size 64,64 --kernel-size 3 --padding 1 --stride 2"
  "col2im|col2im|col2im --channels 16 --output-size 64,64 --kernel-size 3 --padding 1"
  "maxpool2d|maxpool2d_fwd|maxpool2d --channels 16 --input-size 64,64 --kernel-size 3 --stride 2"
)
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
