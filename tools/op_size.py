#!/usr/bin/env python3
"""Files and lines of each operator folder (kernels/<op>/), at one or more commits, for the
closing notes of layout changes (issue 34):

    python3 tools/op_size.py 3f64101 HEAD     # one column pair per commit

A folder is an operator family (im2col holds im2col and col2im; deform_conv holds
deform_conv and deform_im2col). Lines are every line of every file (comments included),
as `wc -l` counts them; "body" counts the *_body.h files, "test" the *_test.c files kept
in the folder. The core (kernels/core, kernels/cuda_c) and the table's own files are left
out. Reads the commits with git; changes nothing."""
import subprocess
import sys


def files_at(rev):
    """{folder: {path: lines}} of kernels/<folder>/ at rev."""
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "kernels/"], check=True,
                           capture_output=True, text=True).stdout.split()
    out = {}
    for path in names:
        parts = path.split("/")
        if len(parts) != 3 or parts[1] in ("core", "cuda_c"):
            continue
        text = subprocess.run(["git", "show", f"{rev}:{path}"], check=True, capture_output=True).stdout
        out.setdefault(parts[1], {})[path] = text.count(b"\n")
    return out


def main(revs):
    data = [files_at(r) for r in revs]
    folders = sorted(set().union(*data))
    head = f"{'folder':<12}" + "".join(f"  {r[:12]:>12} files  lines   body  test" for r in revs)
    print(head)
    totals = [[0, 0] for _ in revs]
    for f in folders:
        row = f"{f:<12}"
        for i, d in enumerate(data):
            files = d.get(f, {})
            lines = sum(files.values())
            body = sum(n for p, n in files.items() if p.endswith("_body.h"))
            test = sum(n for p, n in files.items() if p.endswith("_test.c"))
            totals[i][0] += len(files)
            totals[i][1] += lines
            row += f"  {'':>12} {len(files):5d} {lines:6d} {body:6d} {test:5d}"
        print(row)
    print(f"{'all':<12}" + "".join(f"  {'':>12} {t[0]:5d} {t[1]:6d}" + " " * 13 for t in totals))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: tools/op_size.py REV [REV...]")
    main(sys.argv[1:])
