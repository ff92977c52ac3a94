#!/usr/bin/env bash
# test_ops_lists.sh KSCOPE SOURCE - every list of operators agrees with kernels/ops.def
# (issue 34). `kscope list` prints the table's operators in its order. The scripts that
# keep a list of their own with per-operator data (bench/gpu_memory.sh,
# bench/bench_torch.py, tests/golden/make_golden.py) pass their --check here, and fail,
# naming the operator, on a copy of them whose ops.def has an operator more (one the list
# does not place) or one fewer (one the list names in vain). bench/gpu_sanitize.sh's
# hand-written cases must run operators of `kscope list`: its --check passes here and fails
# under a kscope whose list lacks gemm_tiled. (The C tests iterate ks_op_at themselves;
# tests/fuzz/make_seeds.sh checks its seeds when it runs.) No GPU, no torch needed.
set -uo pipefail
K=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 checks=0
pass() { checks=$((checks + 1)); }
fail() { checks=$((checks + 1)) failures=$((failures + 1)); echo "test_ops_lists: $*"; }

ops=$(sed -n 's/^KS_OP(\(.*\))/\1/p' "$src/kernels/ops.def")
[ -n "$ops" ] || { echo "test_ops_lists: no KS_OP line in $src/kernels/ops.def"; exit 1; }

# kscope list: the table, in its order
listed=$("$K" list | awk 'NR > 1 && NF { print $1 }')
if [ "$listed" = "$ops" ]; then pass; else fail "kscope list ($(echo $listed)) is not ops.def ($(echo $ops))"; fi

# the scripts' checks, on this tree (python3 for two of them)
have_python=1
command -v python3 >/dev/null || { have_python=0; echo "test_ops_lists: no python3: bench_torch.py and make_golden.py not checked"; }
scripts=("bash bench/gpu_memory.sh --check")
[ $have_python = 1 ] && scripts+=("python3 bench/bench_torch.py --check" "python3 tests/golden/make_golden.py --check")
for s in "${scripts[@]}"; do
    # shellcheck disable=SC2086
    if out=$(cd "$src" && $s 2>&1); then pass; else fail "$s: exit $?: $out"; fi
done

# the same checks on a copy whose ops.def has an operator more, then each one fewer: each
# must fail and name the operator
mkdir -p "$tmp/tree/bench" "$tmp/tree/tests/golden" "$tmp/tree/kernels"
cp "$src/bench/gpu_memory.sh" "$src/bench/bench_torch.py" "$tmp/tree/bench/"
cp "$src/tests/golden/make_golden.py" "$tmp/tree/tests/golden/"
expect_refusal() { # OP: every script fails on $tmp/tree and names OP
    local s out
    for s in "${scripts[@]}"; do
        # shellcheck disable=SC2086
        if out=$(cd "$tmp/tree" && $s 2>&1); then
            fail "$s passes with ops.def $1"
        elif [[ $out != *"$2"* ]]; then
            fail "$s with ops.def $1 fails without naming $2: $out"
        else
            pass
        fi
    done
}
{ cat "$src/kernels/ops.def"; echo "KS_OP(zz_new_op)"; } >"$tmp/tree/kernels/ops.def"
expect_refusal "plus zz_new_op" zz_new_op
for op in $ops; do
    grep -vx "KS_OP($op)" "$src/kernels/ops.def" >"$tmp/tree/kernels/ops.def"
    expect_refusal "less $op" "$op"
done

# gpu_sanitize.sh: its cases against `kscope list`, then against a kscope without gemm_tiled
if out=$(bash "$src/bench/gpu_sanitize.sh" "$(dirname "$K")" --check 2>&1); then pass; else fail "gpu_sanitize.sh --check: $out"; fi
mkdir -p "$tmp/fake"
cat >"$tmp/fake/kscope" <<EOF
#!/usr/bin/env bash
if [ "\$1" = list ] && [ \$# -eq 1 ]; then "$K" list | grep -v '^  gemm_tiled '; else exec "$K" "\$@"; fi
EOF
chmod +x "$tmp/fake/kscope"
if out=$(bash "$src/bench/gpu_sanitize.sh" "$tmp/fake" --check 2>&1); then
    fail "gpu_sanitize.sh --check passes under a kscope without gemm_tiled"
elif [[ $out != *gemm_tiled* ]]; then
    fail "gpu_sanitize.sh --check fails without naming gemm_tiled: $out"
else
    pass
fi

echo "$((checks - failures)) passed, $failures failed"
[ $failures = 0 ]
