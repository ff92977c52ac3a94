#!/usr/bin/env bash
# test_sdk.sh BUILD SOURCE - the SDK from a user's side: install into a temporary prefix,
# configure each example with only -DCMAKE_PREFIX_PATH, build it (no GPU), trace the
# kernel and its planted bug; `kscope check` accepts the good trace, `kscope diff` exits 1
# on the bug naming a work item, and pkg-config alone compiles the simulator-only example;
# lessons/data/make_09.sh makes lesson 09's traces afresh, equal to the committed ones.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_sdk: $*"; exit 1; }
cmake --install "$build" --prefix "$tmp/ks" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "install failed"; }
K="$tmp/ks/bin/kscope"
for f in include/kscope/kscope.h include/kscope/trace/ks_user.h include/kscope/ks_core.h include/kscope/ks_probe.h \
         include/kscope/ks_user.h include/kscope/ks_decl.h include/kscope/ks_variants.h include/kscope/ks_cuda.h \
         include/kscope/ks_trace.h include/kscope/kernels/core/ks_decl.h include/kscope/kernels/core/ks_api.h \
         include/kscope/trace/ks_trace.h include/kscope/trace/kst.h lib/libkscope.so lib/pkgconfig/kscope.pc \
         lib/cmake/KernelScope/KernelScopeConfig.cmake bin/kscope; do
    [ -e "$tmp/ks/$f" ] || fail "the install lacks $f"
done
# (what the library exports against what the headers declare: tests/test_exports.sh)
# the SONAME carries the minor version (0.x: a minor version may change the ABI)
if command -v objdump >/dev/null; then
    soname=$(objdump -p "$tmp/ks/lib/libkscope.so" | awk '$1 == "SONAME" {print $2}')
    [ "$soname" = "libkscope.so.0.4" ] || fail "libkscope.so's SONAME is '$soname', not libkscope.so.0.4"
fi
# the flat headers compile with only PREFIX/include on the path, in C and C++
printf '#include <kscope/ks_core.h>\n#include <kscope/ks_decl.h>\n#include <kscope/ks_user.h>\n#include <kscope/ks_trace.h>\n#include <kscope/kscope.h>\nint main(void) { return KS_DECL_SITES != KS_MAX_SITES; }\n' >"$tmp/flat.c"
cc -Wall -Wextra -Werror -I"$tmp/ks/include" -c "$tmp/flat.c" -o "$tmp/flat.o" || fail "the flat headers do not compile in C"
if command -v c++ >/dev/null; then
    c++ -Wall -Wextra -Werror -x c++ -I"$tmp/ks/include" -c "$tmp/flat.c" -o "$tmp/flat.o" || fail "the flat headers do not compile in C++"
fi
# 0.3's way of holding a descriptor (a struct of the caller's) no longer compiles: the
# handle is opaque (docs/your-own-kernel.md: what changed in 0.4)
printf '#include <kscope/kscope.h>\nks_user_trace d;\nint main(void) { return 0; }\n' >"$tmp/old.c"
if cc -I"$tmp/ks/include" -c "$tmp/old.c" -o "$tmp/old.o" 2>"$tmp/old.txt"; then
    fail "a ks_user_trace of the caller's still compiles: the handle is not opaque"
fi
# the names deprecated for 0.4 compile, with a warning naming the replacement (silenced by
# KS_NO_DEPRECATED)
printf '#include <kscope/kscope.h>\nint f(ks_user_trace *d, float *x) { const int64_t s[1] = {1}; return ks_user_tensor(d, "x", KS_F32, 1, s, x, 0); }\n' >"$tmp/dep.c"
cc -Wall -I"$tmp/ks/include" -c "$tmp/dep.c" -o "$tmp/dep.o" 2>"$tmp/dep.txt" || { cat "$tmp/dep.txt"; fail "a deprecated name does not compile"; }
grep -q "ks_user_add_tensor" "$tmp/dep.txt" || { cat "$tmp/dep.txt"; fail "ks_user_tensor's deprecation warning does not name ks_user_add_tensor"; }
cc -Wall -Werror -DKS_NO_DEPRECATED -I"$tmp/ks/include" -c "$tmp/dep.c" -o "$tmp/dep.o" || fail "KS_NO_DEPRECATED does not silence the warning"
# the library says the version its headers say (ks_version() against KS_VERSION_STRING)
printf '#include <stdio.h>\n#include <string.h>\n#include <kscope/kscope.h>\nint main(void) { puts(ks_version()); return strcmp(ks_version(), KS_VERSION_STRING) != 0; }\n' >"$tmp/ver.c"
cc -Wall -Wextra -Werror -I"$tmp/ks/include" -I"$tmp/ks/include/kscope" "$tmp/ver.c" -L"$tmp/ks/lib" -Wl,-rpath,"$tmp/ks/lib" -lkscope -o "$tmp/ver" &&
    "$tmp/ver" >"$tmp/ver.txt" || fail "ks_version() is $(cat "$tmp/ver.txt" 2>/dev/null), the headers say another"
for ex in upsample transpose; do
    b="$tmp/build-$ex"
    cmake -S "$src/examples/$ex" -B "$b" -DCMAKE_PREFIX_PATH="$tmp/ks" >"$b.log" 2>&1 || { cat "$b.log"; fail "$ex: configure failed"; }
    cmake --build "$b" -j4 >>"$b.log" 2>&1 || { cat "$b.log"; fail "$ex: build failed"; }
    grep -qi "warning" "$b.log" && { grep -i warning "$b.log"; fail "$ex: warnings"; }
    (cd "$b" && "./$ex" good.kst >/dev/null && "./$ex" --bug bad.kst >/dev/null) || fail "$ex: the example did not run"
    "$K" check "$b/good.kst" >/dev/null || fail "$ex: kscope check rejects the good trace"
    set +e
    "$K" diff "$b/good.kst" "$b/bad.kst" --max 1 >"$b/diff.txt" 2>&1
    rc=$?
    set -e
    [ $rc -eq 1 ] || { cat "$b/diff.txt"; fail "$ex: kscope diff exited $rc on the planted bug, not 1"; }
    grep -q "^work item [0-9]*: first difference" "$b/diff.txt" || { cat "$b/diff.txt"; fail "$ex: diff names no work item"; }
    echo "test_sdk: $ex: built against the install, check ok, diff: $(head -1 "$b/diff.txt")"
done
# a TARGET that is not a C identifier: the generated include guard is sanitised
h="$tmp/hyphen"
mkdir -p "$h"
cp "$src/examples/upsample/main.c" "$src/examples/upsample/upsample_body.h" "$h/"
sed 's/upsample_kernel/upsample-kernel/g' "$src/examples/upsample/CMakeLists.txt" >"$h/CMakeLists.txt"
sed -i 's/"upsample_kernel.h"/"upsample-kernel.h"/' "$h/main.c"
{ cmake -S "$h" -B "$h/b" -DCMAKE_PREFIX_PATH="$tmp/ks" && cmake --build "$h/b"; } >"$h.log" 2>&1 ||
    { cat "$h.log"; fail "a TARGET with '-' does not build"; }
grep -q "^#ifndef KS_GEN_UPSAMPLE_KERNEL_H" "$h/b/kscope_upsample-kernel/upsample-kernel.h" ||
    fail "the guard of TARGET upsample-kernel is not KS_GEN_UPSAMPLE_KERNEL_H"
# the upsample bug breaks a declared formula: check finds it; the transpose bug does not
"$K" check "$tmp/build-upsample/bad.kst" >/dev/null && fail "check accepts upsample's planted bug"
"$K" check "$tmp/build-transpose/bad.kst" >/dev/null || fail "check rejects transpose's bug (it cannot see it)"
# pkg-config, one compiler line
# (a sysroot set for other packages, as on the GPU machine, would prefix this prefix's paths)
flags=$(PKG_CONFIG_PATH="$tmp/ks/lib/pkgconfig" env -u PKG_CONFIG_SYSROOT_DIR pkg-config --cflags --libs kscope) ||
    fail "pkg-config does not find kscope.pc"
(cd "$src/examples/transpose" && cc -Wall -Wextra -Werror -I. sim_only.c $flags -o "$tmp/pc") ||
    fail "pkg-config: sim_only.c does not compile"
"$tmp/pc" "$tmp/pc.kst" >/dev/null || fail "pkg-config: the program did not run"
"$K" diff "$tmp/pc.kst" "$tmp/build-transpose/good.kst" >/dev/null || fail "pkg-config: its trace differs from the CMake build's"
echo "test_sdk: pkg-config build ok, its trace equals the CMake build's"
# lesson 09's committed traces are the transpose example's, made by lessons/data/make_09.sh
# (itself an install and an out-of-tree build): fresh ones equal them, so they cannot drift
mkdir "$tmp/l09"
"$src/lessons/data/make_09.sh" "$build" "$tmp/l09" >"$tmp/l09.log" 2>&1 || { cat "$tmp/l09.log"; fail "make_09.sh failed"; }
for t in good bug; do
    "$K" diff "$src/lessons/data/09-transpose-$t.kst" "$tmp/l09/09-transpose-$t.kst" >"$tmp/l09/diff-$t.txt" 2>&1 ||
        { cat "$tmp/l09/diff-$t.txt"; fail "lessons/data/09-transpose-$t.kst differs from a fresh one (run lessons/data/make_09.sh BUILD)"; }
done
cmp -s "$tmp/l09/09-transpose-bug.kst" "$tmp/build-transpose/bad.kst" || fail "make_09.sh's trace with the bug is not the example's"
echo "test_sdk: lesson 09's traces equal fresh ones from make_09.sh"
