#!/usr/bin/env bash
# test_exports.sh BUILD SOURCE - what the libraries export, from a user's side (issue 37):
# - libkscope.so (installed into a temporary prefix) exports exactly the functions its
#   installed headers declare: every declaration, as the C compiler lists them from the
#   headers (gcc -aux-info), is exported, and nothing else is (the objects are compiled
#   with hidden visibility; KS_API marks the API);
# - every symbol the ctypes scripts look up (bench/bench_torch.py, bench/bench_spconv.py
#   in libkscope_ops.so; record/kscope_record.py in libkscope_record.so when built)
#   resolves, and libkscope_ops.so exports only the API and its ks_ops_* set.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_exports: $*"; exit 1; }
command -v nm >/dev/null || { echo "test_exports: no nm: skipped"; exit 77; }
command -v gcc >/dev/null || { echo "test_exports: no gcc: skipped"; exit 77; }
cmake --install "$build" --prefix "$tmp/ks" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "install failed"; }
inc="$tmp/ks/include"
# every installed header in one C file, but the two that only nvcc or a body file can
# compile (ks_cuda.h, ks_variants.h); those must declare nothing to export
: >"$tmp/all.c"
while IFS= read -r h; do
    rel=${h#"$inc/"}
    case "$rel" in
    */ks_cuda.h | ks_cuda.h | */ks_variants.h | ks_variants.h)
        if grep -q 'KS_API' "$h"; then fail "$rel declares an API function but no C compiler can read it"; fi
        continue ;;
    esac
    echo "#include <$rel>" >>"$tmp/all.c"
done < <(find "$inc" -name '*.h' | LC_ALL=C sort)
[ "$(wc -l <"$tmp/all.c")" -ge 20 ] || fail "too few installed headers: $(wc -l <"$tmp/all.c")"
gcc -std=c11 -Wall -Wextra -Werror -I"$inc" -aux-info "$tmp/decl.txt" -fsyntax-only "$tmp/all.c" ||
    fail "the installed headers do not compile together"
# the functions declared in PREFIX/include, not static (inline helpers are not exported)
grep -F "/* $inc/" "$tmp/decl.txt" | grep -v ' static ' | grep -v '^/\*[^*]*\*/ *static ' |
    sed -E 's|^/\*[^*]*\*/ ||; s/ \(.*//; s/.*[ *]//' | LC_ALL=C sort -u >"$tmp/declared.txt"
# the functions the library exports
lib="$tmp/ks/lib/libkscope.so"
nm -D --defined-only "$lib" | awk '{print $3}' | LC_ALL=C sort -u >"$tmp/exported.txt"
nd=$(wc -l <"$tmp/declared.txt")
ne=$(wc -l <"$tmp/exported.txt")
[ "$nd" -ge 80 ] || { cat "$tmp/declared.txt"; fail "only $nd declarations found in the installed headers"; }
missing=$(LC_ALL=C comm -23 "$tmp/declared.txt" "$tmp/exported.txt")
extra=$(LC_ALL=C comm -13 "$tmp/declared.txt" "$tmp/exported.txt")
[ -z "$missing" ] || fail "declared in the installed headers but not exported by libkscope.so: $(echo $missing)"
[ -z "$extra" ] || fail "exported by libkscope.so but declared by no installed header: $(echo $extra)"
nonfn=$(nm -D --defined-only "$lib" | awk '$2 != "T" {print $3}')
[ -z "$nonfn" ] || fail "libkscope.so exports data or other non-function symbols: $nonfn"
echo "test_exports: libkscope.so exports exactly the $ne functions the installed headers declare"

# the ctypes scripts' symbols
ops="$build/libkscope_ops.so"
[ -f "$ops" ] || fail "$ops is not built"
nm -D --defined-only "$ops" | awk '{print $3}' | LC_ALL=C sort -u >"$tmp/ops.txt"
odd=$(LC_ALL=C comm -13 "$tmp/exported.txt" "$tmp/ops.txt" | grep -v '^ks_ops_' || true)
[ -z "$odd" ] || fail "libkscope_ops.so exports more than the API and ks_ops_*: $(echo $odd)"
used() { grep -ohE "(lib\.|\")ks_[a-z0-9_]+" "$@" | sed -E 's/^[^k]*//' | LC_ALL=C sort -u; }
used "$src/bench/bench_torch.py" "$src/bench/bench_spconv.py" >"$tmp/used.txt"
[ "$(wc -l <"$tmp/used.txt")" -ge 20 ] || { cat "$tmp/used.txt"; fail "too few ctypes names found in the bench scripts"; }
unresolved=$(LC_ALL=C comm -23 "$tmp/used.txt" "$tmp/ops.txt")
[ -z "$unresolved" ] || fail "bench scripts call names libkscope_ops.so does not export: $(echo $unresolved)"
if command -v python3 >/dev/null; then # as the scripts do: ctypes.CDLL, then each name
    python3 - "$ops" "$tmp/used.txt" <<'PY' || fail "ctypes does not resolve the bench scripts' names"
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
names = open(sys.argv[2]).read().split()
for n in names:
    getattr(lib, n)
print(f"test_exports: ctypes resolves the {len(names)} names bench_torch.py and bench_spconv.py use")
PY
fi
rec="$build/libkscope_record.so"
if [ -f "$rec" ]; then
    for n in $(grep -oE "lib\.kscope_[a-z_]+" "$src/record/kscope_record.py" | sed 's/^lib\.//' | sort -u); do
        nm -D --defined-only "$rec" | awk '{print $3}' | grep -qx "$n" || fail "libkscope_record.so lacks $n (kscope_record.py)"
    done
    echo "test_exports: libkscope_record.so exports what kscope_record.py calls"
else
    echo "test_exports: libkscope_record.so not built here: kscope_record.py's names not checked"
fi
