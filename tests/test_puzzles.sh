#!/usr/bin/env bash
# test_puzzles.sh KSCOPE SOURCE - kscope puzzle from a student's side: every reference
# solution passes its grader without a compiler warning; every planted wrong solution in
# tests/puzzles/NAME.WHAT.c fails (exit 1) with the lines its "expect:" comments quote;
# every stub compiles and fails; --list, --init, --solution and bad input behave.
set -euo pipefail
K=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "test_puzzles: $*"; exit 1; }
# puzzle OUT ARGS...: kscope puzzle ARGS, stdout and stderr into OUT, exit code in $rc
puzzle() {
    local out=$1
    shift
    rc=0
    "$K" puzzle "$@" >"$out" 2>&1 || rc=$?
}
names=$("$K" puzzle --list | awk '$1 ~ /^[0-9]+$/ {print $2}')
[ "$(echo "$names" | wc -l)" -eq 13 ] || fail "--list shows $(echo "$names" | wc -l) puzzles, not 13"

for n in $names; do
    # the reference solution passes, every rule ok, no warning
    puzzle "$n.out" "$n" "$src/lessons/puzzles/solutions/$n.c" --trace "$n.kst"
    [ $rc -eq 0 ] || { cat "$n.out"; fail "$n: the solution exits $rc"; }
    grep -q "^puzzle $n: passed" "$n.out" || { cat "$n.out"; fail "$n: the solution is not passed"; }
    grep -q "warning:" "$n.out" && { cat "$n.out"; fail "$n: the solution compiles with warnings"; }
    "$K" check "$n.kst" >/dev/null 2>&1 || [ "$n" != map ] || fail "map: kscope check rejects the solution's trace"
    # --solution prints the same file
    "$K" puzzle "$n" --solution | cmp -s - "$src/lessons/puzzles/solutions/$n.c" || fail "$n: --solution differs"
    # two planted wrong solutions at least, each failing with its message
    wrong=$(ls "$src/tests/puzzles/$n".*.c 2>/dev/null | wc -l)
    [ "$wrong" -ge 2 ] || fail "$n: $wrong wrong solutions in tests/puzzles, not 2"
    for w in "$src/tests/puzzles/$n".*.c; do
        puzzle w.out "$n" "$w" --trace "$n.kst"
        [ $rc -eq 1 ] || { cat w.out; fail "$(basename "$w"): exit $rc, not 1"; }
        grep -q "^puzzle $n: FAILED" w.out || { cat w.out; fail "$(basename "$w"): no FAILED verdict"; }
        expects=$(sed -n 's/^ *\* expect: //p; s/^\/\* .*expect: //p' "$w" | sed 's/ \*\/$//')
        [ -n "$expects" ] || fail "$(basename "$w") has no expect: line"
        while IFS= read -r e; do
            grep -qF -- "$e" w.out || { cat w.out; fail "$(basename "$w"): the output lacks '$e'"; }
        done <<<"$expects"
    done
    echo "test_puzzles: $n: the solution passes, $wrong wrong solutions fail as expected"
done

# --view without a display says so (and still exits 1 with the verdict)
rc=0
env -u DISPLAY -u WAYLAND_DISPLAY "$K" puzzle guard "$src/tests/puzzles/guard.off_by_one.c" --view >view.out 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q -- "--view: no display here" view.out || { cat view.out; fail "--view without a display: exit $rc"; }

# --init copies the stubs (and only them), keeps what is there; each stub compiles and fails
mkdir mine && echo "/* mine */" >mine/map.c
"$K" puzzle --init mine >init.out || fail "--init failed"
grep -q "12 stubs copied into mine (1 already there, kept)" init.out || { cat init.out; fail "--init said: $(cat init.out)"; }
grep -q "mine" mine/map.c || fail "--init replaced a student's file"
[ "$(ls mine | wc -l)" -eq 13 ] || fail "--init made $(ls mine) "
for n in $names; do
    [ "$n" = map ] || grep -q "TODO" "mine/$n.c" || fail "--init: mine/$n.c has no TODO (not a stub?)"
    cmp -s "mine/$n.c" "$src/lessons/puzzles/solutions/$n.c" && fail "--init copied the solution of $n"
done
cp "$src/lessons/puzzles/stubs/map.c" mine/map.c
for n in $names; do
    rc=0
    (cd mine && "$K" puzzle "$n" >"../stub.out" 2>&1) || rc=$?
    [ $rc -eq 1 ] || { cat stub.out; fail "$n: the stub exits $rc, not 1"; }
    grep -q "warning:" stub.out && { cat stub.out; fail "$n: the stub compiles with warnings"; }
    [ -f "mine/$n.kst" ] || fail "$n: no trace beside the stub (./$n.kst)"
done
echo "test_puzzles: --init copied 12 stubs and kept one; every stub compiles and fails"

# bad input: one line, exit 2
bad() {
    puzzle bad.out "$@"
    [ $rc -eq 2 ] || { cat bad.out; fail "puzzle $*: exit $rc, not 2"; }
    # (a sanitized build's fibers add AddressSanitizer's one-time makecontext warning)
    [ "$(grep -vc "WARNING: ASan doesn't fully support makecontext" bad.out)" -eq 1 ] ||
        { cat bad.out; fail "puzzle $*: not one line"; }
}
bad nosuch
bad map "$tmp/none.c"
bad --frobnicate
bad
bad map --trace
bad map "$src/lessons/puzzles/solutions/map.c" --trace "$tmp/no/such/folder.kst"
printf 'void map_kernel(void) { this is not C }\n' >broken.c
puzzle bad.out map broken.c
[ $rc -eq 2 ] && grep -q "broken.c does not compile" bad.out || { cat bad.out; fail "a file that does not compile: exit $rc"; }
printf '#include "puzzle.h"\nvoid other_kernel(ks_thread *t, const pz_args *p) { (void)t, (void)p; }\n' >other.c
puzzle bad.out map other.c
[ $rc -eq 2 ] && grep -q "no function map_kernel" bad.out || { cat bad.out; fail "a file without map_kernel: exit $rc"; }
printf '#include "puzzle.h"\nvoid map_kernel(ks_thread *t, const pz_args *p) { p->out.data[t->thread_idx.x * 100000000] = 1; }\n' >crash.c
puzzle bad.out map crash.c
[ $rc -eq 2 ] && grep -q "map_kernel crashed" bad.out || { cat bad.out; fail "a crashing kernel: exit $rc"; }
echo "test_puzzles: bad input, a trace that cannot be written, a compile error, a missing function and a crash each give one error and exit 2"

# a body that ends the process itself is an error, never graded on the trace an earlier run left
puzzle ok.out map "$src/lessons/puzzles/solutions/map.c" --trace stale.kst
[ $rc -eq 0 ] && [ -f stale.kst ] || { cat ok.out; fail "the map solution: exit $rc"; }
printf '#include <stdlib.h>\n#include "puzzle.h"\nvoid map_kernel(ks_thread *t, const pz_args *p) { pz_store(t, &p->out, t->thread_idx.x, pz_load(t, &p->a, t->thread_idx.x) + 10); exit(0); }\n' >exits.c
puzzle bad.out map exits.c --trace stale.kst
[ $rc -eq 2 ] && grep -q "map_kernel ended the run itself (exit() or _exit() in the body?)" bad.out && [ ! -e stale.kst ] ||
    { cat bad.out; fail "a body that calls exit(0): exit $rc, or the old trace is still there"; }
# what the body prints reaches a file (the run's child flushes its stdio)
{ echo '#include <stdio.h>'; sed 's/^\(.*pz_store.*\)$/\1 printf("hello from thread %u\\n", t->thread_idx.x);/' "$src/lessons/puzzles/solutions/map.c"; } >hello.c
grep -q "hello from thread" hello.c || fail "could not plant a printf in map"
puzzle ok.out map hello.c
[ $rc -eq 0 ] && grep -q "hello from thread 3" ok.out || { cat ok.out; fail "the body's printf output is lost (exit $rc)"; }
# a shared index past the array is graded (thread and index named), not a crash
puzzle ok.out shared "$src/tests/puzzles/shared.tile_plus_one.c"
[ $rc -eq 1 ] || { cat ok.out; fail "shared tile[local + 1]: exit $rc, not 1"; }
# a frame larger than a fiber's stack: one line naming the thread, not a silent overwrite
printf '#include "puzzle.h"\nvoid map_kernel(ks_thread *t, const pz_args *p) { volatile char buf[600000]; buf[t->thread_idx.x] = 1; pz_store(t, &p->out, t->thread_idx.x, pz_load(t, &p->a, t->thread_idx.x) + 10 + buf[0] * 0); }\n' >deep.c
puzzle bad.out map deep.c
[ $rc -eq 2 ] && grep -q "thread 0 of block 0 overflowed its fiber stack (256 KiB); set KSCOPE_FIBER_STACK=" bad.out ||
    { cat bad.out; fail "a frame past the fiber stack: exit $rc"; }
KSCOPE_FIBER_STACK=2048 "$K" puzzle map deep.c >ok.out 2>&1 || { cat ok.out; fail "KSCOPE_FIBER_STACK=2048 does not hold the frame"; }
# KSCOPE_CC is a command of several words; a compile that hangs is stopped; a stopped
# kscope leaves no temporary folder
printf '#ifndef FROM_KSCOPE_CC\n#error not compiled with the words of KSCOPE_CC\n#endif\n' >words.c
cat "$src/lessons/puzzles/solutions/map.c" >>words.c
KSCOPE_CC="cc -DFROM_KSCOPE_CC  -DTWO=2" "$K" puzzle map words.c >ok.out 2>&1 || { cat ok.out; fail "KSCOPE_CC with options"; }
printf '#!/bin/sh\ntouch "%s/cc.started"\nsleep 30\n' "$tmp" >slowcc && chmod +x slowcc
mkdir tmpd
rc=0
start=$(date +%s)
TMPDIR="$tmp/tmpd" KSCOPE_CC="$tmp/slowcc" KSCOPE_CC_TIMEOUT=1 "$K" puzzle map words.c >bad.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "did not finish in 1 s" bad.out && [ $(($(date +%s) - start)) -lt 10 ] ||
    { cat bad.out; fail "a compile that hangs: exit $rc"; }
[ -z "$(ls tmpd)" ] || fail "a stopped compile left $(ls tmpd)"
rm -f cc.started
TMPDIR="$tmp/tmpd" KSCOPE_CC="$tmp/slowcc" "$K" puzzle map words.c >bad.out 2>&1 &
pid=$!
for _ in $(seq 100); do [ -e cc.started ] && break; sleep 0.1; done
kill -TERM $pid
wait $pid || true
[ -z "$(ls tmpd)" ] || fail "SIGTERM during a compile left $(ls tmpd)"
echo "test_puzzles: exit() in a body, a body's printf, a shared index past its tile, a fiber stack overflow, KSCOPE_CC words, a compile timeout and SIGTERM behave"

# installed: kscope finds the stubs, solutions and headers under its prefix, not the source
cmake --install "$(dirname "$K")" --prefix "$tmp/ks" >install.log 2>&1 || { cat install.log; fail "install failed"; }
for f in share/kscope/puzzles/puzzle.h share/kscope/puzzles/stubs/matmul.c share/kscope/puzzles/solutions/matmul.c \
         include/kscope/kernels/core/ks_shared.h; do
    [ -e "$tmp/ks/$f" ] || fail "the install lacks $f"
done
# marks in the installed copies (only there) show which files the installed kscope uses
chmod u+w "$tmp/ks/share/kscope/puzzles/puzzle.h" "$tmp/ks/share/kscope/puzzles/solutions/dot.c"
echo "#define PZ_INSTALLED_COPY 1" >>"$tmp/ks/share/kscope/puzzles/puzzle.h"
echo "/* installed copy */" >>"$tmp/ks/share/kscope/puzzles/solutions/dot.c"
"$tmp/ks/bin/kscope" puzzle dot --solution | grep -q "installed copy" || fail "the installed kscope's --solution reads elsewhere"
mkdir inst
{ cat "$src/lessons/puzzles/solutions/prefix_sum.c"; echo "#ifndef PZ_INSTALLED_COPY"; echo "#error not the installed puzzle.h"; echo "#endif"; } >inst/prefix_sum.c
(cd inst && "$tmp/ks/bin/kscope" puzzle prefix_sum >inst.out 2>&1) || { cat inst/inst.out; fail "the installed kscope fails a solution with its own puzzle.h"; }
echo "test_puzzles: the installed kscope grades a solution with its own headers"
