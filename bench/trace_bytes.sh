#!/usr/bin/env bash
# Trace file size, format 1 against format 2, measured on the same traces: every
# operator's default trace (kscope list), then larger ones (im2col every event on the
# GPU bench's mid shape, a filtered deform, a .cu kernel). Prints one row per trace:
# events, events bytes in version 1 (64 an event) and 2, the ratio and bytes an event,
# and the averages over the default traces. Usage: bench/trace_bytes.sh [BUILD]
set -euo pipefail
build=${1:-build}
K="$build/kscope"
here=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$K" ] || { echo "trace_bytes: no $K (make build first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# events and events-section bytes of a trace, from kscope info
row() { # NAME FILE
    local info ev bytes
    info=$("$K" info "$2")
    ev=$(awk '/^events:/{print $2}' <<<"$info")
    bytes=$(awk '/^format:   version 2/{print $4}' <<<"$info")
    printf '%-26s %10s %12s %11s %6.1fx %6.1f\n' "$1" "$ev" $((ev * 64)) "$bytes" \
        "$(awk -v a=$((ev * 64)) -v b="$bytes" 'BEGIN{print a / b}')" \
        "$(awk -v e="$ev" -v b="$bytes" 'BEGIN{print b / e}')"
}

printf '%-26s %10s %12s %11s %7s %6s\n' trace events "v1 bytes" "v2 bytes" smaller "B/ev"
tot_ev=0 tot_b=0 n=0 sum_bpe=0
for op in $("$K" list | awk '/^  [a-z]/{print $1}' | sort -u); do
    "$K" run "$op" --trace "$work/$op.kst" --quiet >/dev/null
    line=$(row "$op (default)" "$work/$op.kst")
    echo "$line"
    ev=$(awk '{print $(NF-4)}' <<<"$line") b=$(awk '{print $(NF-2)}' <<<"$line")
    tot_ev=$((tot_ev + ev)) tot_b=$((tot_b + b)) n=$((n + 1))
    sum_bpe=$(awk -v s="$sum_bpe" -v e="$ev" -v b="$b" 'BEGIN{print s + b / e}')
done
awk -v s="$sum_bpe" -v n=$n -v e=$tot_ev -v b=$tot_b \
    'BEGIN{printf "defaults: %.1f bytes an event on average over %d operators (%.1f over all their events)\n", s / n, n, b / e}'
"$K" run im2col --channels 64 --input-size 56,56 --trace "$work/big.kst" --quiet >/dev/null
row "im2col C64 56x56" "$work/big.kst"
"$K" run deform_conv --channels 8 --input-size 17,17 --trace "$work/deform.kst" --filter every=7 --quiet >/dev/null
row "deform_conv C8 17x17 /7" "$work/deform.kst"
"$K" run "$here/tests/cuda_c/vadd.cu" --kernel vadd --grid 4 --block 64 --arg a=zeros:256 --arg b=zeros:256 \
    --arg c=empty:256 --arg n=256 --trace "$work/cu.kst" --quiet >/dev/null
row "vadd.cu (front end)" "$work/cu.kst"
