#!/usr/bin/env bash
# Seed corpora for the fuzz targets, made from real outputs of the kscope in BUILD:
# traces of every operator and kernel (small launches, one filtered, one capped so
# threads loop), the .npy files those runs save, the pictures and lessons in the tree,
# and command lines. Usage: tests/fuzz/make_seeds.sh BUILD OUT  (OUT/<target>/...)
set -euo pipefail
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
K="$build/kscope"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"/{fuzz_kst,fuzz_npy,fuzz_image,fuzz_lesson,fuzz_args}

# traces: one per operator and kernel, small; outputs saved as .npy
n=0
trace() {
    n=$((n + 1))
    "$K" run "$@" --trace "$out/fuzz_kst/t$n.kst" --save "$work/s$n" --quiet
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
trace patchify --input-size 5,5 --num-points 2 --trace-kernel bilinear --backward
trace conv2d --channels 1 --input-size 4,4
head -c 3000 "$out/fuzz_kst/t1.kst" >"$out/fuzz_kst/cut.kst"
"$K" export "$out/fuzz_kst/t1.kst" --npy "$work/ex" >/dev/null
for f in "$work/ex"/*.npy; do cp "$f" "$out/fuzz_npy/ex-$(basename "$f")"; done

# pictures: the tree's PGM, a PPM, a small PNG rendered by the viewer when built with it
cp "$src/lessons/images/shapes.pgm" "$out/fuzz_image/shapes.pgm"
printf 'P6\n# a comment\n3 2\n255\n' >"$out/fuzz_image/rgb.ppm"
head -c 18 /dev/urandom >>"$out/fuzz_image/rgb.ppm"
printf 'P5\n2 2\n65535\n\001\002\003\004\005\006\007\010' >"$out/fuzz_image/deep.pgm"
if "$K" view "$out/fuzz_kst/t1.kst" --png "$work/v.png" --size 640x480 >/dev/null 2>&1; then
    cp "$work/v.png" "$out/fuzz_image/view.png"
fi
# fuzz_image reads its last byte as the mode (grey, resample size): append one
for f in "$out"/fuzz_image/*; do printf '\045' >>"$f"; done

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
