#!/usr/bin/env bash
# Seed corpora for the fuzz targets, made from real outputs of the kscope in BUILD:
# traces of every operator and kernel (small launches, one filtered, one capped so
# threads loop), the .npy files those runs save, the pictures and lessons in the tree,
# and command lines; the crafted traces of tests/test_crafted.c (BUILD's fz_crafted);
# pairs of traces for diff; the formulas traces hold.
# Usage: tests/fuzz/make_seeds.sh BUILD OUT  (OUT/<target>/...)
set -euo pipefail
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
K="$build/kscope"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the operators, from the table (kernels/ops.def): every one gets a .kst seed below
ops=" $(sed -n 's/^KS_OP(\(.*\))/\1/p' "$src/kernels/ops.def" | tr '\n' ' ')"
[ "$ops" != " " ] || { echo "make_seeds: no KS_OP line in $src/kernels/ops.def" >&2; exit 1; }
mkdir -p "$out"/{fuzz_kst,fuzz_npy,fuzz_image,fuzz_lesson,fuzz_args,fuzz_diff,fuzz_memory,fuzz_perfetto,fuzz_formula,fuzz_cuscan,fuzz_pages}

# traces: one per operator and kernel, small; outputs saved as .npy
n=0
trace() {
    n=$((n + 1))
    "$K" run "$@" --trace "$work/t$n.kst" --save "$work/s$n" --quiet
    for f in "$work/s$n"/*.npy; do cp "$f" "$out/fuzz_npy/s$n-$(basename "$f")"; done
}
trace im2col --channels 2 --input-size 4,5 --kernel-size 3 --padding 1
trace im2col --channels 1 --input-size 5,5 --kernel-size 2,3 --stride 2,1 --dilation 1,2 --threads 4 --block-cap 2
trace im2col --channels 2 --input-size 6,6 --filter index=3:40,every=3
trace col2im --channels 1 --output-size 4,4 --kernel-size 3 --padding 1
trace roi_align --input-size 6,6 --num-rois 2
trace roi_align --input-size 6,6 --num-rois 2 --pool-mode max --no-aligned
trace roi_align --input-size 5,5 --num-rois 1 --backward
trace deform_conv --input-size 4,4 --channels 1 --out-channels 1
trace deform_conv --input-size 4,4 --channels 2 --mask --backward --trace-kernel col2im
trace deform_conv --input-size 4,4 --channels 1 --out-channels 1 --backward --trace-kernel coord
trace patchify --input-size 5,5 --num-points 2
trace patchify --input-size 5,5 --num-points 2 --trace-kernel bilinear_backward --backward
trace conv2d --channels 1 --input-size 4,4
head -c 3000 "$work/t1.kst" >"$out/fuzz_kst/cut.kst"
"$K" export "$work/t1.kst" --npy "$work/ex" >/dev/null
for f in "$work/ex"/*.npy; do cp "$f" "$out/fuzz_npy/ex-$(basename "$f")"; done

# the .kst targets read at most 16 KiB a trace (tests/fuzz/fuzz_kst.c): small launches,
# complete where they fit, else the first work items (--filter); every operator, a .cu
# kernel with shared memory and barriers, schedules for export --perfetto
small() { # NAME OP ARGS...: $work/small/NAME.kst of at most 16 KiB (none if no filter fits)
    local name=$1 f
    shift
    [[ $ops == *" $1 "* ]] || { echo "make_seeds: small $name runs $1, which kernels/ops.def lacks" >&2; exit 1; }
    mkdir -p "$work/small"
    for f in "" index=0:8 index=0:2 index=0:1; do
        rm -f "$work/small/$name.kst"
        "$K" run "$@" --trace "$work/small/$name.kst" --quiet ${f:+--filter $f} >/dev/null 2>&1 || continue
        [ "$(stat -c %s "$work/small/$name.kst")" -le 16384 ] && return 0
    done
    rm -f "$work/small/$name.kst"
}
small im2col im2col --channels 1 --input-size 3,3 --kernel-size 2
small im2col_pad im2col --channels 2 --input-size 4,4 --kernel-size 3 --padding 1 --threads 4 --block-cap 2
small col2im col2im --channels 1 --output-size 3,3 --kernel-size 2
small col2im_scatter col2im --channels 1 --output-size 3,3 --kernel-size 2 --algorithm scatter
small conv2d conv2d --channels 1 --input-size 3,3 --kernel-size 2
small maxpool2d maxpool2d --input-size 4,4
small maxpool2d_bwd maxpool2d --input-size 4,4 --backward
small gemm_tiled gemm_tiled
small gemm_plant gemm_tiled --plant
small sparse_conv sparse_conv --spatial-shape 4,4
small sparse_insert sparse_conv --spatial-shape 4,4 --subm --trace-kernel insert
small sparse_gather sparse_conv --spatial-shape 3,4,4 --trace-kernel gather
small sparse_reduce sparse_conv --spatial-shape 4,4 --transposed --stride 2 --trace-kernel reduce
small sparse_empty sparse_conv --spatial-shape 1,1 --kernel-size 1
small patchify patchify --input-size 4,4 --num-points 1
small patchify_bilinear patchify --input-size 4,4 --num-points 1 --trace-kernel bilinear
small roi_align roi_align --input-size 4,4 --num-rois 1 --output-size 2
small roi_align_bwd roi_align --input-size 4,4 --num-rois 1 --output-size 2 --backward
small deform_conv deform_conv --input-size 3,3 --channels 1 --out-channels 1 --kernel-size 2
small deform_im2col deform_im2col --input-size 3,3 --channels 1 --kernel-size 2
small sched_im2col im2col --channels 1 --input-size 3,3 --kernel-size 2 --threads 2 --schedule
small sched_roi roi_align --input-size 4,4 --num-rois 2 --output-size 2 --threads 4 --schedule
small threads_im2col im2col --channels 1 --input-size 3,3 --kernel-size 2 --threads 3 --block-cap 1
small pattern_im2col im2col --channels 1 --input-size 3,3 --kernel-size 2 --pattern random --seed 3
# every operator of ops.def has a seed named after it: one the lines above did not make is
# its defaults (filtered to fit); an operator with none at all stops the script
for op in $ops; do
    [ -f "$work/small/$op.kst" ] || small "$op" "$op"
    [ -f "$work/small/$op.kst" ] || { echo "make_seeds: no .kst seed of at most 16 KiB for operator $op (kernels/ops.def): add a small line for it" >&2; exit 1; }
done
"$K" run "$src/tests/cuda_c/vadd.cu" --kernel vadd --grid 1 --block 32 --arg a=zeros:40 --arg b=zeros:40 \
    --arg c=empty:40 --arg n=40 --trace "$work/small/cu_vadd.kst" --quiet >/dev/null 2>&1 || true
"$K" run "$src/tests/cuda_c/reduce_sum.cu" --kernel reduce_sum --grid 1 --block 32 --arg in=zeros:32 \
    --arg out=empty:1 --arg n=32 --filter index=0:8 --trace "$work/small/cu_reduce.kst" --quiet >/dev/null 2>&1 || true
# the crafted traces of the reliability tests (tests/test_crafted.c, built here as
# fz_crafted): huge launches, overflowing formulas, ids outside the header, NaN, odd names
if [ -x "$build/tests/fuzz/fz_crafted" ]; then
    mkdir -p "$work/crafted"
    KS_CRAFTED_SEEDS="$work/crafted" CK_VERBOSITY=silent "$build/tests/fuzz/fz_crafted" >/dev/null 2>&1 || true
    for f in "$work/crafted"/*.kst; do [ -f "$f" ] && cp "$f" "$work/small/crafted-$(basename "$f")"; done
fi
# version 1 copies (writers make version 2; readers take both) and copies with zstd
# chunks ("kst2+zstd"): those that fit 16 KiB
for f in "$work/small"/*.kst; do
    "$K" convert "$f" "${f%.kst}-v1.kst" --version 1 >/dev/null 2>&1 || true
    "$K" convert "$f" "${f%.kst}-zstd.kst" --compress >/dev/null 2>&1 || true
done
for f in "$work/small"/*.kst; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 16384 ] || continue
    for t in fuzz_kst fuzz_memory fuzz_perfetto; do cp "$f" "$out/$t/$(basename "$f")"; done
done
# fuzz_diff: a 4-byte little-endian length, trace A, trace B: pairs of the same work
# (another launch, another input pattern, filtered, itself) and of other work
pair() { # A B OUT
    local n
    n=$(stat -c %s "$1")
    printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((n & 255)) $((n >> 8 & 255)) $((n >> 16 & 255)) $((n >> 24 & 255)))" >"$3"
    cat "$1" "$2" >>"$3"
}
S="$work/small"
n=0
for ab in "im2col threads_im2col" "im2col pattern_im2col" "im2col im2col" "im2col col2im" "sparse_conv sparse_conv" \
          "roi_align roi_align_bwd" "cu_vadd cu_vadd" "cu_reduce cu_vadd" "sched_im2col im2col"; do
    set -- $ab
    [ -f "$S/$1.kst" ] && [ -f "$S/$2.kst" ] && pair "$S/$1.kst" "$S/$2.kst" "$out/fuzz_diff/p$((++n))"
done
for a in "$S"/crafted-*ids_a.kst; do
    [ -f "$a" ] && pair "$a" "${a%ids_a.kst}ids_b.kst" "$out/fuzz_diff/p$((++n))"
done
# fuzz_formula: 32 bytes of field values, then a formula: the formulas of the traces'
# derived fields, and the overflowing ones of the tests
{
    grep -aoh '"expr":[[:space:]]*"[^"]*"' "$S"/*.kst 2>/dev/null | sed 's/^"expr":[[:space:]]*"//; s/"$//' | sort -u
    printf '%s\n' '(0 - 9223372036854775807 - 1) / -1' '9223372036854775807 * 2' 'min(i, k) + max(h_im, 3)' \
        'i < 3 ? 0 : (i - 3) / 2 + 1' 'kh * 0x7fffffff % (kw - 1)' '-(-(-(n)))' 'c == 1 != (n >= 2)'
} | head -200 | while IFS= read -r e; do
    n=$((n + 1))
    { head -c 32 /dev/urandom; printf '%s' "$e"; } >"$out/fuzz_formula/f$n"
    { printf '\001\000\000\000\002\000\000\000\003\000\000\000\377\377\377\377'; head -c 16 /dev/zero; printf '%s' "$e"; } >"$out/fuzz_formula/g$n"
done

# pictures: the tree's PGM, a PPM, a small PNG rendered by the viewer when built with it
cp "$src/lessons/images/shapes.pgm" "$out/fuzz_image/shapes.pgm"
printf 'P6\n# a comment\n3 2\n255\n' >"$out/fuzz_image/rgb.ppm"
head -c 18 /dev/urandom >>"$out/fuzz_image/rgb.ppm"
printf 'P5\n2 2\n65535\n\001\002\003\004\005\006\007\010' >"$out/fuzz_image/deep.pgm"
if "$K" view "$work/t1.kst" --png "$work/v.png" --size 640x480 >/dev/null 2>&1; then
    cp "$work/v.png" "$out/fuzz_image/view.png"
fi
# fuzz_image reads its last byte as the mode (grey, resample size): append one
for f in "$out"/fuzz_image/*; do printf '\045' >>"$f"; done

# .cu text: the test kernels and puzzle stubs as written, and preprocessed the way the
# front end sees them after its header: __global__ and __shared__ as the attributes it
# scans for
for f in "$src"/tests/cuda_c/*.cu "$src"/lessons/puzzles/stubs/*.cu; do
    b=$(basename "$f" .cu)
    cp "$f" "$out/fuzz_cuscan/$b.cu"
    sed 's/__global__/__attribute__((annotate("ks_global")))/g; s/__shared__/static __attribute__((section("ks_cu_shared")))/g' "$f" \
        >"$out/fuzz_cuscan/$b.pp"
done

# record pages: programs of records (fuzz_pages.c's opcodes), random bytes from fixed seeds
for k in 1 2 3 4 5 6 7 8; do
    LC_ALL=C awk -v k=$k 'BEGIN { srand(k); for (i = 0; i < k * 300; i++) printf "%c", int(rand() * 256) }' >"$out/fuzz_pages/p$k"
done

# lessons: every lesson of the tree and the docs' minimal one
cp "$src"/lessons/*.json "$out/fuzz_lesson/"
awk '/^A minimal lesson:/{on=1} on&&/^```json/{grab=1;next} grab&&/^```/{exit} grab{print}' \
    "$src/docs/lessons.md" >"$out/fuzz_lesson/minimal.json"

# command lines: first byte the command (run list info step check export view lesson),
# then NUL-separated arguments
args() { printf "$@" >"$out/fuzz_args/a$((++n))"; }
args '\000im2col\000--kernel-size\0003,2\000--padding\0001\000--filter\000index=1:9,every=2\000--trace\000t.kst'
args '\000roi_align\000--spatial-scale\0000.5,1\000--pool-mode\000max\000--no-aligned\000--in\000rois=r.npy'
args '\000patchify\000--radius=2\000--trace-kernel\000bilinear\000--image\000p.pgm\000--image-size\0004,4'
args '\000deform_conv\000--mask\000--offset-pattern\000rotate\000--offset-amount\00030\000--semantics\000mmcv'
args '\001im2col'
args '\002t.kst'
args '\003t.kst\000--thread\0003'
args '\004t.kst'
args '\005t.kst\000--npy\000ex'
args '\006t.kst\000--goto\000index=7\000--keys\000Right,type:12,click:3:4,wait:2\000--png\000v.png'
args '\007--check\000missing.json'
args '\00702\000--auto'
