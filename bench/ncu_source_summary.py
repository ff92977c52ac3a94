#!/usr/bin/env python3
"""Summarize one kernel's Nsight Compute source page (SASS) by opcode and by hottest line.

    ncu --set full --import-source yes -k regex:KERNEL -c 1 -o rep APP...
    ncu -i rep.ncu-rep --page source --csv --print-source sass > src.csv
    python3 bench/ncu_source_summary.py src.csv

Prints the share of executed instructions and of warp stall samples per opcode, then the
25 lines with the most stall samples (how often each ran): where a kernel's
instructions go (bench/RESULTS.md, issue 19, used it on grad_tile)."""
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
# find header
hi = next(i for i, r in enumerate(rows) if any("Source" == c.strip() or "Address" in c for c in r))
h = [c.strip() for c in rows[hi]]
print("columns:", h[:30])
def col(name):
    for i, c in enumerate(h):
        if c.startswith(name): return i
    return None
src = col("Source"); ex = col("Instructions Executed"); st = col("Warp Stall Sampling (All")
data = []
for r in rows[hi + 1:]:
    if len(r) <= max(x for x in (src, ex, st) if x is not None): continue
    try:
        e = float(r[ex].replace(",", "")) if ex is not None else 0
        s = float(r[st].replace(",", "")) if st is not None else 0
    except ValueError:
        continue
    data.append((e, s, r[src].strip()))
tot_e = sum(d[0] for d in data) or 1; tot_s = sum(d[1] for d in data) or 1
print("instructions", tot_e, "samples", tot_s)
kinds = collections.Counter(); kinds_s = collections.Counter()
for e, s, t in data:
    op = t.split()[0] if t else "?"
    if op.startswith("@"): op = t.split()[1] if len(t.split()) > 1 else op
    op = op.split(".")[0]
    kinds[op] += e; kinds_s[op] += s
print("by opcode (executed %, stall %):")
for op, e in kinds.most_common(25):
    print(f"  {op:10s} {100*e/tot_e:5.1f}% {100*kinds_s[op]/tot_s:5.1f}%")
print("top stall lines:")
for e, s, t in sorted(data, key=lambda d: -d[1])[:25]:
    print(f"  {100*s/tot_s:5.1f}% ex {int(e):>10d}  {t[:90]}")
