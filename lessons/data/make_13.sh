#!/usr/bin/env bash
# make_13.sh BUILD [OUT] - the traces of lesson 13 (a race in an unmodified kernel), made as
# a user makes them: BUILD/kscope run (clang 16 or newer) on the ordinary CUDA files
# 13-transpose.cu (the kernel as written: no barrier between its two loops) and
# 13-transpose-fix.cu (the same file with the __syncthreads()), a 2 x 2 grid of 16 x 4
# threads on a 27 x 21 input whose element i is i. Writes OUT/13-transpose.kst and
# OUT/13-transpose-fix.kst (OUT: this folder). tests/test_lessons.c runs it and checks
# the committed traces equal fresh ones.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: make_13.sh BUILD [OUT]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
out=$(cd "${2:-$here}" && pwd)
K="$build/kscope"
fail() { echo "make_13: $*" >&2; exit 1; }
[ -x "$K" ] || fail "no kscope in $build"
diff <(grep -v "__syncthreads();" "$here/13-transpose-fix.cu") "$here/13-transpose.cu" >/dev/null ||
    fail "13-transpose.cu is not 13-transpose-fix.cu without its __syncthreads() line"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows=27 cols=21

# in.npy: float32, rows x cols, element i = i (npy format 1.0; no Python needed). The
# float32 bits of an integer 0 < i < 2^24 with highest bit e: (127 + e) << 23 | (i - 2^e) << (23 - e)
header="{'descr': '<f4', 'fortran_order': False, 'shape': ($rows, $cols), }"
while [ $(((10 + ${#header} + 1) % 64)) -ne 0 ]; do header+=" "; done
{
    printf '\x93NUMPY\x01\x00'
    n=$((${#header} + 1))
    printf -v b '\\x%02x\\x%02x' $((n & 255)) $((n >> 8))
    printf "$b%s\n" "$header"
    bytes=""
    for ((i = 0; i < rows * cols; ++i)); do
        bits=0
        if ((i > 0)); then
            e=0
            while (((i >> (e + 1)) > 0)); do e=$((e + 1)); done
            bits=$(((127 + e) << 23 | (i - (1 << e)) << (23 - e)))
        fi
        printf -v b '\\x%02x\\x%02x\\x%02x\\x%02x' $((bits & 255)) $((bits >> 8 & 255)) $((bits >> 16 & 255)) $((bits >> 24))
        bytes+=$b
    done
    printf "$bytes"
} >"$tmp/in.npy"

# run from the input's folder, so that the traces record "@in.npy", not a temporary path
# (they record the .cu file by its name alone; a site by the name's first 20 characters)
cd "$tmp"
for v in "" -fix; do
    "$K" run "$here/13-transpose$v.cu" --kernel transpose --grid 2,2 --block 16,4 --arg in=@in.npy \
        --arg out=empty:${cols}x${rows} --arg rows=$rows --arg cols=$cols --trace "$tmp/13-transpose$v.kst" \
        --quiet >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log" >&2; fail "kscope run 13-transpose$v.cu failed"; }
done
mv "$tmp/13-transpose.kst" "$tmp/13-transpose-fix.kst" "$out/"
echo "make_13: $out/13-transpose.kst $out/13-transpose-fix.kst"
