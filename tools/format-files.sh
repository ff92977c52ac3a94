#!/usr/bin/env bash
# format-files.sh - the files clang-format keeps in shape (make format, make format-check):
# every C, CUDA and header file of the project, one a line, relative to the repository
# root. The list is git's (tracked files plus new ones not ignored), or without a git
# checkout every such file outside build folders (any folder holding a CMakeCache.txt).
#
# Left out: the .cu files that are kernel source as a user or student writes it, input to
# `kscope run FILE.cu` and `kscope puzzle`. Their traces record sites as file:line:column
# with the text of the line, and lessons, puzzle messages and tests quote those lines and
# columns (lessons/data/13-transpose.kst, tests/test_lessons.c, tests/test_puzzles.sh,
# tests/test_cuda_c.c), so reformatting them would change expected outputs:
#   examples/cuda_c/   lessons/data/   lessons/puzzles/solutions/   lessons/puzzles/stubs/
#   tests/cuda_c/      tests/puzzles/
set -euo pipefail
cd "$(dirname "$0")/.."
exclude='^(examples/cuda_c|lessons/data|lessons/puzzles/solutions|lessons/puzzles/stubs|tests/cuda_c|tests/puzzles)/'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard -- '*.c' '*.h' '*.cu' '*.cuh'
else
    find . -type d \( -name .git -o -exec test -e '{}/CMakeCache.txt' \; \) -prune -o \
        -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print | sed 's|^\./||'
fi | LC_ALL=C sort -u | while IFS= read -r f; do
    # a tracked file deleted in the work tree is not there to format
    if [ -f "$f" ] && ! [[ $f =~ $exclude ]]; then printf '%s\n' "$f"; fi
done
