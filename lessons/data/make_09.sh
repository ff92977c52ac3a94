#!/usr/bin/env bash
# make_09.sh BUILD [OUT] - the traces of lesson 09 (the bug hunt), made as a user of the SDK
# makes them: install the SDK from the build folder BUILD into a temporary prefix, build
# examples/transpose against it (cmake, -DCMAKE_PREFIX_PATH only), run it with and without
# its planted bug, and write OUT/09-transpose-good.kst and OUT/09-transpose-bug.kst (OUT:
# this folder). tests/test_sdk.sh runs it and checks the committed traces equal fresh ones.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: make_09.sh BUILD [OUT]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
out=$(cd "${2:-$here}" && pwd)
src=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "make_09: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$tmp/ks" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "install failed"; }
cmake -S "$src/examples/transpose" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/ks" >"$tmp/b.log" 2>&1 ||
    { cat "$tmp/b.log" >&2; fail "configure failed"; }
cmake --build "$tmp/b" -j4 >>"$tmp/b.log" 2>&1 || { cat "$tmp/b.log" >&2; fail "build failed"; }
"$tmp/b/transpose" "$out/09-transpose-good.kst" >/dev/null || fail "the good run failed"
"$tmp/b/transpose" --bug "$out/09-transpose-bug.kst" >/dev/null || fail "the run with the bug failed"
echo "make_09: $out/09-transpose-good.kst $out/09-transpose-bug.kst"
