#!/usr/bin/env bash
# compute-sanitizer over every operator of the table (`kscope list`), on the GPU: plain
# and traced, forward and (where the operator has it) --backward; memcheck for all, and
# every tool for the operators named in $KS_SANITIZE_ALL (default: maxpool2d). Prints one
# line per run and exits non-zero if any run reports an error. Usage: sanitize_ops.sh KSCOPE
set -uo pipefail
KSCOPE=${1:-build-gpu/kscope}
ALL=${KS_SANITIZE_ALL:-maxpool2d}
fail=0
for op in $("$KSCOPE" list | awk 'NR > 1 && NF { print $1 }'); do
    modes=("")
    "$KSCOPE" list "$op" | grep -q -- "--\[no-\]backward" && modes+=("--backward")
    tools="memcheck"
    [[ " $ALL " == *" $op "* ]] && tools="memcheck racecheck initcheck synccheck"
    for mode in "${modes[@]}"; do
        for variant in plain traced; do
            trace=()
            [ "$variant" = traced ] && trace=(--trace /tmp/ks-sanitize.kst)
            for tool in $tools; do
                log=$(compute-sanitizer --tool "$tool" --error-exitcode 9 "$KSCOPE" run "$op" --device cuda \
                      --pattern random $mode "${trace[@]}" --quiet 2>&1)
                rc=$?
                summary=$(echo "$log" | grep -m1 "SUMMARY" || echo "rc $rc")
                printf '%-14s %-11s %-7s %-10s %s\n' "$op" "${mode:-forward}" "$variant" "$tool" "$summary"
                [ $rc -ne 0 ] && { fail=1; echo "$log" | tail -20; }
            done
        done
    done
done
exit $fail
