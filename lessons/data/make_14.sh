#!/usr/bin/env bash
# make_14.sh BUILD [OUT] - lesson 14's trace, on a GPU machine with torch and torchvision and
# a kscope built with the recorder: kscope record of make_14.py (torchvision's roi_align as
# it ships, its tensors named) into OUT/14-roi-align-torchvision.kst (OUT: this folder),
# plus our operator's trace of the same inputs, OUT/14-roi-align-ours.kst. Without a GPU
# the committed traces stand; tests/test_lessons.c checks them against the published
# index math and our operator's fresh trace.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: make_14.sh BUILD [OUT]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
K="$(cd "$1" && pwd)/kscope"
out=$(cd "${2:-$here}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$K" record --kernel roi_align_forward --out "$tmp/rec" -- python3 "$here/make_14.py" "$tmp"
mv "$tmp"/rec/*-roi_align_forward_kernel_impl.kst "$out/14-roi-align-torchvision.kst"
"$K" run roi_align --in input="$tmp/input.npy" --in rois="$tmp/rois.npy" --output-size 2,2 \
    --sampling-ratio 2 --aligned --trace "$out/14-roi-align-ours.kst" --quiet
"$K" diff "$out/14-roi-align-torchvision.kst" "$out/14-roi-align-ours.kst" --reads-by output --reads-of input
