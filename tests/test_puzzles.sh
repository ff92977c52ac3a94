#!/usr/bin/env bash
# test_puzzles.sh KSCOPE SOURCE - kscope puzzle from a student's side: every reference
# solution (CUDA C, lessons/puzzles/solutions/NAME.cu) passes its grader without a
# compiler warning; every planted wrong solution in tests/puzzles/NAME.WHAT.cu fails
# (exit 1) with the lines its "expect:" comments quote (source lines included); every stub
# compiles and fails; --list, --init, --solution, --trace and bad input behave; a crash, a
# fault, a hanging compiler and a stop are errors that leave nothing behind.
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
[ "$(echo "$names" | wc -l)" -eq 14 ] || fail "--list shows $(echo "$names" | wc -l) puzzles, not 14"
for n in map zip guard map2d broadcast blocks blocks2d shared pooling dot conv1d prefix_sum axis_sum matmul; do
    echo "$names" | grep -qx "$n" || fail "--list lacks $n"
done

for n in $names; do
    # the reference solution passes, every rule ok, no warning
    puzzle "$n.out" "$n" "$src/lessons/puzzles/solutions/$n.cu" --trace "$n.kst"
    [ $rc -eq 0 ] || { cat "$n.out"; fail "$n: the solution exits $rc"; }
    grep -q "^puzzle $n: passed" "$n.out" || { cat "$n.out"; fail "$n: the solution is not passed"; }
    grep -q "warning:" "$n.out" && { cat "$n.out"; fail "$n: the solution compiles with warnings"; }
    "$K" check "$n.kst" >/dev/null 2>&1 || [ "$n" != map ] || fail "map: kscope check rejects the solution's trace"
    # --solution prints the same file
    "$K" puzzle "$n" --solution | cmp -s - "$src/lessons/puzzles/solutions/$n.cu" || fail "$n: --solution differs"
    # two planted wrong solutions at least, each failing with its message
    wrong=$(ls "$src/tests/puzzles/$n".*.cu 2>/dev/null | wc -l)
    [ "$wrong" -ge 2 ] || fail "$n: $wrong wrong solutions in tests/puzzles, not 2"
    for w in "$src/tests/puzzles/$n".*.cu; do
        puzzle w.out "$n" "$w" --trace "$n.kst"
        [ $rc -eq 1 ] || { cat w.out; fail "$(basename "$w"): exit $rc, not 1"; }
        grep -q "^puzzle $n: FAILED" w.out || { cat w.out; fail "$(basename "$w"): no FAILED verdict"; }
        expects=$(sed -n 's/^ *\* expect: //p; s/^\/\* .*expect: //p' "$w" | sed 's/ \*\/$//')
        [ -n "$expects" ] || fail "$(basename "$w") has no expect: line"
        while IFS= read -r e; do
            grep -qF -- "$e" w.out || { cat w.out; fail "$(basename "$w"): the output lacks '$e'"; }
        done <<<"$expects"
        # every failed rule that points at an access names its source line
        grep -q "^         at $(basename "$w"):[0-9]*: " w.out ||
            grep -q "^  FAIL uses shared memory" w.out || { cat w.out; fail "$(basename "$w"): no source line named"; }
    done
    echo "test_puzzles: $n: the solution passes, $wrong wrong solutions fail as expected"
done

# --view without a display says so (and still exits 1 with the verdict)
rc=0
env -u DISPLAY -u WAYLAND_DISPLAY "$K" puzzle guard "$src/tests/puzzles/guard.off_by_one.cu" --view >view.out 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q -- "--view: no display here" view.out || { cat view.out; fail "--view without a display: exit $rc"; }

# --init copies the stubs (and only them), keeps what is there; each stub compiles and fails
mkdir mine && echo "/* mine */" >mine/map.cu
"$K" puzzle --init mine >init.out || fail "--init failed"
grep -q "13 stubs copied into mine (1 already there, kept)" init.out || { cat init.out; fail "--init said: $(cat init.out)"; }
grep -q "mine" mine/map.cu || fail "--init replaced a student's file"
[ "$(ls mine | wc -l)" -eq 14 ] || fail "--init made $(ls mine) "
for n in $names; do
    [ "$n" = map ] || grep -q "TODO" "mine/$n.cu" || fail "--init: mine/$n.cu has no TODO (not a stub?)"
    [ "$n" = map ] || grep -q "__global__ void $n(" "mine/$n.cu" || fail "--init: mine/$n.cu has no __global__ $n"
    cmp -s "mine/$n.cu" "$src/lessons/puzzles/solutions/$n.cu" && fail "--init copied the solution of $n"
done
cp "$src/lessons/puzzles/stubs/map.cu" mine/map.cu
for n in $names; do
    rc=0
    (cd mine && "$K" puzzle "$n" >"../stub.out" 2>&1) || rc=$?
    [ $rc -eq 1 ] || { cat stub.out; fail "$n: the stub exits $rc, not 1"; }
    grep -q "warning:" stub.out && { cat stub.out; fail "$n: the stub compiles with warnings"; }
    [ -f "mine/$n.kst" ] || fail "$n: no trace beside the stub (./$n.kst)"
done
echo "test_puzzles: --init copied 13 stubs and kept one; every stub compiles and fails"

# N9: --init never writes through a link planted in the folder: not at a stub's name
# (dangling or not), nor at a name it might use for a temporary (the old DIR/NAME.cu.tmp)
mkdir trap
echo precious >victim
echo precious >victim3
ln -s "$tmp/victim" trap/map.cu.tmp
ln -s "$tmp/victim" trap/map.c.tmp
ln -s "$tmp/victim2" trap/zip.cu
ln -s "$tmp/victim3" trap/guard.cu
"$K" puzzle --init trap >init.out 2>&1 || { cat init.out; fail "--init into a folder with links failed"; }
grep -q "12 stubs copied into trap (2 already there, kept)" init.out || { cat init.out; fail "--init with links said: $(cat init.out)"; }
[ "$(cat victim)" = precious ] && [ "$(cat victim3)" = precious ] || fail "--init wrote through a planted link"
[ ! -e victim2 ] && [ -L trap/zip.cu ] && [ -L trap/guard.cu ] || fail "--init replaced or followed a link at a stub's name"
[ -z "$(find trap -name '*.tmp' -type f)" ] && [ -f trap/map.cu ] || fail "--init left a temporary or missed map.cu"
echo "test_puzzles: --init never follows a planted link (N9)"

# N1: --trace OUT is checked before anything runs and written whole at the end: never the
# graded file (by name, link or hard link), never a FIFO, device or folder
cp "$src/lessons/puzzles/solutions/map.cu" mymap.cu
cp mymap.cu mymap.orig
ln -s mymap.cu maplink.kst
ln mymap.cu maphard.kst
for out in mymap.cu maplink.kst maphard.kst "$tmp/mymap.cu"; do
    puzzle bad.out map mymap.cu --trace "$out"
    [ $rc -eq 2 ] && grep -q "is the file being graded" bad.out || { cat bad.out; fail "--trace $out (the source): exit $rc"; }
    cmp -s mymap.cu mymap.orig || fail "--trace $out replaced the student's source"
done
[ -L maplink.kst ] || fail "--trace replaced a link to the source"
mkfifo pipe.kst
mkdir folder.kst
for out in pipe.kst folder.kst; do
    rc=0
    timeout 60 "$K" puzzle map mymap.cu --trace "$out" >bad.out 2>&1 || rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <bad.out)" -eq 1 ] || { cat bad.out; fail "--trace $out: exit $rc"; }
done
[ -p pipe.kst ] && [ -d folder.kst ] || fail "--trace replaced a FIFO or a folder"
[ -z "$(ls -A folder.kst)" ] || fail "--trace wrote into a folder"
[ -z "$(ls -a | grep '^\..*kst\.')" ] || fail "a staged trace was left behind: $(ls -a)"
echo "test_puzzles: --trace refuses the source, a FIFO and a folder, and replaces nothing (N1)"

# bad input: one line, exit 2
bad() {
    puzzle bad.out "$@"
    [ $rc -eq 2 ] || { cat bad.out; fail "puzzle $*: exit $rc, not 2"; }
    # (a sanitized build's fibers add AddressSanitizer's one-time makecontext warning)
    [ "$(grep -vc "WARNING: ASan doesn't fully support makecontext" bad.out)" -eq 1 ] ||
        { cat bad.out; fail "puzzle $*: not one line"; }
}
bad nosuch
bad map "$tmp/none.cu"
bad map "$tmp"
bad --frobnicate
bad
bad map --trace
bad map "$src/lessons/puzzles/solutions/map.cu" --trace "$tmp/no/such/folder.kst"
printf '__global__ void map(const float *a, float *out, int size) { this is not C }\n' >broken.cu
puzzle bad.out map broken.cu
[ $rc -eq 2 ] && grep -q "^kscope: puzzle: broken.cu: .*failed" bad.out || { cat bad.out; fail "a file that does not compile: exit $rc"; }
printf '__global__ void other(const float *a, float *out, int size) {}\n' >other.cu
puzzle bad.out map other.cu
[ $rc -eq 2 ] && grep -q "no __global__ function 'map'" bad.out && grep -qF "keep the stub's kernel: __global__ void map(const float *a, float *out, int size)" bad.out ||
    { cat bad.out; fail "a file without the kernel map: exit $rc"; }
printf '__global__ void map(const float *x, float *out, int size) { out[threadIdx.x] = x[threadIdx.x]; }\n' >renamed.cu
puzzle bad.out map renamed.cu
[ $rc -eq 2 ] && grep -qF "map takes (x, out, size); the puzzle passes (a, out, size)" bad.out ||
    { cat bad.out; fail "a kernel with a renamed parameter: exit $rc"; }
printf '__global__ void map(const double *a, float *out, int size) { out[threadIdx.x] = a[threadIdx.x]; }\n' >typed.cu
puzzle bad.out map typed.cu
[ $rc -eq 2 ] && grep -qF "keep the stub's signature" bad.out || { cat bad.out; fail "a kernel with a parameter of another type: exit $rc"; }
echo "test_puzzles: bad input, a trace that cannot be written, a compile error, a missing kernel and a changed signature each give one error and exit 2"

# a run that stops as a whole (an integer division by zero) is an error naming the thread
# and the line, with the trace up to there; an access far outside is graded, not a crash
printf '__global__ void map(const float *a, float *out, int size)\n{\n    int zero = size - 5;\n    out[threadIdx.x] = a[threadIdx.x] + 10 / zero;\n}\n' >crash.cu
puzzle bad.out map crash.cu --trace crash.kst
[ $rc -eq 2 ] && grep -q "divided an integer by zero at crash.cu:4" bad.out && [ -f crash.kst ] ||
    { cat bad.out; fail "a kernel dividing by zero: exit $rc"; }
printf '__global__ void map(const float *a, float *out, int size)\n{\n    out[threadIdx.x * 100000000] = a[threadIdx.x] + 10;\n}\n' >wild.cu
puzzle ok.out map wild.cu
[ $rc -eq 1 ] && grep -q "FAIL no access outside an array: thread 1 of block 0 (work item 1) wrote out\[100000000\]" ok.out ||
    { cat ok.out; fail "a wild store: exit $rc"; }
# a kernel that ends the process itself is an error; the trace an earlier run left stays as it was
puzzle ok.out map "$src/lessons/puzzles/solutions/map.cu" --trace stale.kst
[ $rc -eq 0 ] && [ -f stale.kst ] || { cat ok.out; fail "the map solution: exit $rc"; }
cp stale.kst stale.orig
printf '#include <cstdlib>\n__global__ void map(const float *a, float *out, int size)\n{\n    out[threadIdx.x] = a[threadIdx.x] + 10;\n    if (threadIdx.x == 2) exit(0);\n}\n' >exits.cu
puzzle bad.out map exits.cu --trace stale.kst
[ $rc -eq 2 ] && grep -q "called exit() inside the kernel" bad.out ||
    { cat bad.out; fail "a kernel that calls exit(0): exit $rc"; }
# what the kernel prints reaches a file
{ sed 's/^\( *out\[i\] = a\[i\] + 10;\)$/\1 printf("hello from thread %d\\n", i);/' "$src/lessons/puzzles/solutions/map.cu"; } >hello.cu
grep -q "hello from thread" hello.cu || fail "could not plant a printf in map"
puzzle ok.out map hello.cu
[ $rc -eq 0 ] && grep -q "hello from thread 3" ok.out || { cat ok.out; fail "the kernel's printf output is lost (exit $rc)"; }
# a frame larger than a thread's stack: one line naming the thread and the line (the front
# end compiles with -fstack-clash-protection: the frame's probes meet the guard at the
# function's entry, line 2, or at the store, line 4)
printf '__global__ void map(const float *a, float *out, int size)\n{\n    volatile char buf[600000];\n    buf[threadIdx.x] = 1;\n    out[threadIdx.x] = a[threadIdx.x] + 10 + buf[0] * 0;\n}\n' >deep.cu
puzzle bad.out map deep.cu
[ $rc -eq 2 ] && grep -Eq "of block \(0,0,0\) overflowed its stack at deep.cu:[24]" bad.out ||
    { cat bad.out; fail "a frame past the thread's stack: exit $rc"; }
echo "test_puzzles: a division by zero, a wild store, exit() in a kernel, printf and a stack overflow behave"

# KSCOPE_CLANG names the compiler; a compile that hangs is stopped; a stop during the
# compile or the run leaves no temporary folder and no staged trace
real=""
for c in clang++-20 clang++-19 clang++-18 clang++-17 clang++-16 clang++; do
    command -v "$c" >/dev/null && real=$(command -v "$c") && break
done
printf '#!/bin/sh\nexec "%s" -DFROM_KSCOPE_CLANG "$@"\n' "$real" >myclang && chmod +x myclang
{ printf '#ifndef FROM_KSCOPE_CLANG\n#error not compiled by KSCOPE_CLANG\n#endif\n'; cat "$src/lessons/puzzles/solutions/map.cu"; } >words.cu
KSCOPE_CLANG="$tmp/myclang" "$K" puzzle map words.cu >ok.out 2>&1 || { cat ok.out; fail "KSCOPE_CLANG"; }
printf '#!/bin/sh\ncase "$*" in *--version*) echo "clang version 16.0.6"; exit 0;; esac\ntouch "%s/cc.started"\nsleep 30\n' "$tmp" >slowcc && chmod +x slowcc
mkdir tmpd
rc=0
start=$(date +%s)
TMPDIR="$tmp/tmpd" KSCOPE_CLANG="$tmp/slowcc" KSCOPE_CC_TIMEOUT=1 "$K" puzzle map words.cu >bad.out 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "did not finish in 1 s" bad.out && [ $(($(date +%s) - start)) -lt 10 ] ||
    { cat bad.out; fail "a compile that hangs: exit $rc"; }
[ -z "$(ls tmpd)" ] || fail "a stopped compile left $(ls tmpd)"
rm -f cc.started
TMPDIR="$tmp/tmpd" KSCOPE_CLANG="$tmp/slowcc" "$K" puzzle map words.cu --trace sig.kst >bad.out 2>&1 &
pid=$!
for _ in $(seq 100); do [ -e cc.started ] && break; sleep 0.1; done
kill -TERM $pid
rc=0
{ wait $pid; } 2>/dev/null || rc=$?
[ $rc -eq 143 ] || fail "SIGTERM during a compile: exit $rc, not 143"
[ -z "$(ls tmpd)" ] || fail "SIGTERM during a compile left $(ls tmpd)"
printf '__global__ void map(const float *a, float *out, int size)\n{\n    volatile int spin = 1;\n    while (spin) {\n    }\n}\n' >spin.cu
TMPDIR="$tmp/tmpd" "$K" puzzle map spin.cu --trace sig.kst >bad.out 2>&1 &
pid=$!
for _ in $(seq 200); do [ -n "$(find tmpd -name kernel.so 2>/dev/null)" ] && break; sleep 0.1; done
sleep 0.5
kill -HUP $pid # (a background job of a script ignores SIGINT)
rc=0
{ wait $pid; } 2>/dev/null || rc=$?
[ $rc -eq 129 ] || fail "SIGHUP during a run: exit $rc, not 129"
[ -z "$(ls tmpd)" ] || fail "SIGHUP during a run left $(ls tmpd)"
[ ! -e sig.kst ] && [ -z "$(ls -a | grep '^\.sig\.kst')" ] || fail "SIGHUP during a run left a trace: $(ls -a)"
# the real compiler stopped anywhere (issue 39 N15): its own temporaries (clang's
# kernel-*.o, made in TMPDIR) and kscope's go with it, and no output appears
for d in 0.05 0.15 0.25 0.35 0.45 0.6; do
    TMPDIR="$tmp/tmpd" "$K" run "$src/tests/cuda_c/vadd.cu" --kernel vadd --grid 1 --block 32 --arg a=zeros:40 \
        --arg b=zeros:40 --arg c=empty:40 --arg n=40 --trace stop.kst --save stopdir >/dev/null 2>&1 &
    pid=$!
    sleep $d
    kill -TERM $pid 2>/dev/null || true
    rc=0
    { wait $pid; } 2>/dev/null || rc=$?
    [ -z "$(ls -A tmpd)" ] || fail "SIGTERM after ${d} s of kscope run FILE.cu left $(ls -A tmpd) in TMPDIR"
    # stopped or not, no temporary stays beside the outputs, and an output there is whole
    # (a stop between committing the trace and the --save folder keeps the trace)
    [ -z "$(ls -A | grep '^\.stop')" ] || fail "SIGTERM after ${d} s left a temporary: $(ls -A | grep '^\.stop')"
    if [ -e stop.kst ]; then "$K" info stop.kst >/dev/null || fail "SIGTERM after ${d} s left a broken trace"; fi
    rm -rf stop.kst stopdir
done
echo "test_puzzles: KSCOPE_CLANG, a compile timeout, SIGTERM during a compile and SIGHUP during a run behave"

# issue 39 N5: a hostile kernel. The wall limit is kscope's (an alarm(0) and blocked
# signals change nothing); no process of the run outlives it (forked children, a setsid
# daemon holding the output pipe, on a normal end and on SIGTERM); no descriptor is
# inherited; a relative write lands in the run's own folder; with Landlock, nothing is
# written outside it; the heap is limited (not under a sanitizer, whose shadow counts)
gone() { # gone OUT: every pid the kernel printed as "pid N" has ended
    local p
    for p in $(sed -n 's/.*pid \([0-9][0-9]*\).*/\1/p' "$1"); do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || continue 2; sleep 0.1; done
        fail "process $p the kernel made outlived kscope: $(ps -o pid,ppid,pgid,sid,args -p "$p" | tail -1)"
    done
}
hostile() { # hostile NAME BODY: a map kernel whose thread 0 runs BODY first
    { printf '#include <fcntl.h>\n#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\n'
      printf '#include <string.h>\n#include <sys/stat.h>\n#include <sys/syscall.h>\n#include <unistd.h>\n'
      printf 'static void say(const char *w) { char b[64]; int n = snprintf(b, sizeof b, "%%s pid %%ld\\n", w, (long)syscall(SYS_getpid)); (void)!write(1, b, n); }\n'
      printf '__global__ void map(const float *a, float *out, int size)\n{\n    int i = threadIdx.x;\n'
      printf '    if (i == 0) {\n%s\n    }\n    out[i] = a[i] + 10;\n}\n' "$2"; } >"$1.cu"
}
hostile daemon '        if (syscall(SYS_fork) == 0) { syscall(SYS_setsid); if (syscall(SYS_fork) == 0) { say("daemon"); for (;;) sleep(1); } _exit(0); }
        usleep(100000);'
rc=0 # (through a pipe, whose reader waits for every writer: the daemon too)
{ "$K" puzzle map daemon.cu 2>&1; echo "kscope exit $?"; } | timeout 30 cat >daemon.out || rc=$?
[ $rc -eq 0 ] && grep -q "^kscope exit 0" daemon.out && grep -q "daemon pid" daemon.out ||
    { cat daemon.out; fail "a kernel leaving a daemon on the output pipe: exit $rc (124: the pipe stayed open)"; }
gone daemon.out
hostile bomb '        for (int k = 0; k < 16; ++k) if (syscall(SYS_fork) == 0) { syscall(SYS_fork); say("child"); for (;;) pause(); }
        usleep(100000);'
puzzle bomb.out map bomb.cu
[ $rc -eq 0 ] && [ "$(grep -c "child pid" bomb.out)" -ge 16 ] || { cat bomb.out; fail "a kernel forking 32 processes: exit $rc"; }
gone bomb.out
hostile sleeper '        syscall(SYS_alarm, 0);
        sigset_t s;
        sigfillset(&s);
        sigprocmask(SIG_BLOCK, &s, 0);
        for (;;) syscall(SYS_pause);'
start=$(date +%s)
puzzle sleeper.out map sleeper.cu
[ $rc -eq 2 ] && grep -q "was running when the time limit passed" sleeper.out && [ $(($(date +%s) - start)) -lt 40 ] ||
    { cat sleeper.out; fail "a kernel blocking every signal and sleeping: exit $rc after $(($(date +%s) - start)) s"; }
echo keep >leak.txt
hostile writer "        int fd = openat(AT_FDCWD, \"$tmp/outside.txt\", O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) (void)!write(fd, \"x\", 1);
        fd = openat(AT_FDCWD, \"relative.txt\", O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) (void)!write(fd, \"x\", 1);
        (void)!write(9, \"leak\", 4);"
rc=0
"$K" puzzle map writer.cu >writer.out 2>&1 9>>leak.txt || rc=$?
[ $rc -eq 0 ] || { cat writer.out; fail "a kernel writing files: exit $rc"; }
[ "$(cat leak.txt)" = keep ] || fail "the kernel wrote to a descriptor kscope inherited"
[ ! -e relative.txt ] || fail "the kernel's relative write landed in the caller's folder"
printf '#define _GNU_SOURCE\n#include <sys/syscall.h>\n#include <unistd.h>\nint main(void) { return syscall(SYS_landlock_create_ruleset, 0, 0, 1) > 0 ? 0 : 1; }\n' >ll.c
if "$real" -x c ll.c -o ll 2>/dev/null && ./ll; then
    [ ! -e outside.txt ] || fail "the kernel wrote outside the run's folder although Landlock is there"
    confined="Landlock: no write outside the run's folder"
else
    rm -f outside.txt
    confined="skipped the write outside the folder: this kernel has no Landlock"
fi
if grep -q __asan_init "$K"; then
    heap="skipped the heap limit: a sanitized build"
else
    hostile hog '        void *volatile p = malloc(3ull << 30);
        if (p) out[0] = 1; /* written twice: failed */'
    puzzle hog.out map hog.cu
    [ $rc -eq 0 ] || { cat hog.out; fail "a kernel allocating 3 GiB got it (exit $rc)"; }
    heap="no 3 GiB heap"
fi
# a fork bomb: at most PZ_PROCESSES (64) more processes than the user has (the kernel
# does not hold root to RLIMIT_NPROC: as root the bomb runs as nobody)
hostile forks '        int made = 0;
        for (int k = 0; k < 300; ++k) { long p = syscall(SYS_fork); if (p == 0) { for (;;) pause(); } made += p > 0; }
        if (mkdirat(AT_FDCWD, "locked", 0700) == 0) { close(openat(AT_FDCWD, "locked/f", O_WRONLY | O_CREAT, 0600)); fchmodat(AT_FDCWD, "locked", 0, 0); }
        char b[64];
        (void)!write(1, b, snprintf(b, sizeof b, "made %d\n", made));'
as=""
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    as="setpriv --reuid=65534 --regid=65534 --clear-groups"
    mkdir -m 777 nobody && cp forks.cu nobody/ && chmod 755 "$tmp" && chmod 644 nobody/forks.cu
fi
if [ "$(id -u)" != 0 ] || [ -n "$as" ]; then
    rc=0 # (the kernel also leaves a folder it made unreadable: kscope removes it all the same)
    mkdir -m 777 tmpn
    (cd "$([ -n "$as" ] && echo nobody || echo .)" && TMPDIR="$tmp/tmpn" $as "$K" puzzle map forks.cu) >forks.out 2>&1 || rc=$?
    [ -z "$(ls -A tmpn)" ] || fail "a run that locked a folder of its own left $(ls -A tmpn) in TMPDIR"
    made=$(sed -n 's/^made \([0-9]*\)$/\1/p' forks.out)
    [ $rc -eq 0 ] && [ -n "$made" ] && [ "$made" -le 64 ] || { cat forks.out; fail "a fork bomb made ${made:-?} processes (exit $rc)"; }
    [ -z "$(pgrep -f "$K puzzle map forks.cu")" ] || fail "the fork bomb's processes outlived kscope"
    bomb="a fork bomb made $made of 300 processes"
else
    bomb="skipped the fork bomb: root without setpriv"
fi
# a stop while a daemon and the kernel run: both go, with the folder
hostile stopped '        if (syscall(SYS_fork) == 0) { syscall(SYS_setsid); say("daemon"); for (;;) sleep(1); }
        say("kernel");
        for (;;) usleep(1000);'
TMPDIR="$tmp/tmpd" "$K" puzzle map stopped.cu --trace sig.kst >stopped.out 2>&1 &
pid=$!
for _ in $(seq 200); do [ "$(grep -c "pid" stopped.out)" -ge 2 ] && break; sleep 0.1; done
kill -TERM $pid
rc=0
{ wait $pid; } 2>/dev/null || rc=$?
[ $rc -eq 143 ] || { cat stopped.out; fail "SIGTERM during a run with a daemon: exit $rc, not 143"; }
gone stopped.out
[ -z "$(ls tmpd)" ] || fail "SIGTERM during a run with a daemon left $(ls tmpd)"
echo "test_puzzles: a daemon, 32 forks, a sleeper blocking signals, writes and a stop leave nothing running or written; $confined; $heap; $bomb (N5)"

# installed: kscope finds the stubs and solutions under its prefix, not the source
cmake --install "$(dirname "$K")" --prefix "$tmp/ks" >install.log 2>&1 || { cat install.log; fail "install failed"; }
for f in share/kscope/puzzles/stubs/matmul.cu share/kscope/puzzles/stubs/blocks2d.cu share/kscope/puzzles/solutions/matmul.cu; do
    [ -e "$tmp/ks/$f" ] || fail "the install lacks $f"
done
# marks in the installed copies (only there) show which files the installed kscope uses
chmod u+w "$tmp/ks/share/kscope/puzzles/stubs/zip.cu" "$tmp/ks/share/kscope/puzzles/solutions/dot.cu"
echo "/* installed copy */" >>"$tmp/ks/share/kscope/puzzles/stubs/zip.cu"
echo "/* installed copy */" >>"$tmp/ks/share/kscope/puzzles/solutions/dot.cu"
"$tmp/ks/bin/kscope" puzzle dot --solution | grep -q "installed copy" || fail "the installed kscope's --solution reads elsewhere"
"$tmp/ks/bin/kscope" puzzle --init inst >/dev/null || fail "the installed kscope's --init failed"
grep -q "installed copy" inst/zip.cu || fail "the installed kscope's --init copies other stubs"
cp "$src/lessons/puzzles/solutions/prefix_sum.cu" inst/prefix_sum.cu
(cd inst && "$tmp/ks/bin/kscope" puzzle prefix_sum >inst.out 2>&1) || { cat inst/inst.out; fail "the installed kscope fails a solution"; }
echo "test_puzzles: the installed kscope uses its own stubs and solutions and grades a solution"
