#!/usr/bin/env python3
"""Upstream kernels against ours, element by element (issue 36 item 4; docs/record.md).

    upstream_reads.py KSCOPE OUTDIR        run every case, print the table, exit 0 when
                                           every case's reads are equal, 1 when some differ,
                                           77 (skipped) without a GPU, torch or the recorder

For each case the same random inputs (numpy, fixed seeds, odd sizes) go to
  - the upstream op on the GPU, recorded by `kscope record` with its tensors named
    (torchvision's roi_align, aligned or not, sampling ratio 2 or adaptive; deform_conv2d
    with a mask; ATen's im2col and col2im, the kernels of F.unfold / F.fold; max_pool2d),
  - KernelScope's operator, traced on the simulator (`kscope run OP --in ... --trace`),
and `kscope diff UP OURS --reads-by OUTPUT --reads-of INPUTS` compares, for each output
element, the multiset of input elements read to compute it (deform: for each work item;
torchvision's columns buffer is internal and unnamed, its thread index is our item's).
Writes OUTDIR/upstream_reads.md (the table) and OUTDIR/CASE/diff.txt.
"""
import os
import subprocess
import sys

import numpy as np

KERNELS = "roi_align_forward|im2col_kernel|col2im|max_pool_forward_nchw|deformable_im2col"
H, W = 11, 13


def cases():
    """(name, upstream kernel, our op args, diff args, inputs {name: array}, call spec)"""
    rng = np.random.RandomState(36)
    x = rng.uniform(-1, 1, (2, 3, H, W)).astype(np.float32)
    rois = []
    for k in range(7):  # boxes from 2 pixels before the image to 2 past it
        x1, y1 = rng.uniform(-2, W - 2), rng.uniform(-2, H - 2)
        rois.append([k % 2, x1, y1, x1 + rng.uniform(0.1, W / 2), y1 + rng.uniform(0.1, H / 2)])
    rois = np.array(rois, np.float32)
    out = []
    for sr in (2, 0):
        for aligned in (True, False):
            out.append(("roi_align_sr%d_%s" % (sr, "aligned" if aligned else "legacy"), "roi_align_forward",
                        ["roi_align", "--output-size", "3,2", "--sampling-ratio", str(sr),
                         "--aligned" if aligned else "--no-aligned"],
                        ["--reads-by", "output", "--reads-of", "input"],
                        {"input": x, "rois": rois}, ("roi_align", sr, aligned)))
    x1 = x[:1]  # ATen's im2col and col2im launch once per image
    geo = ["--kernel-size", "3,2", "--padding", "1,0", "--stride", "2,1", "--dilation", "1,2"]
    out.append(("unfold_im2col", "im2col_kernel", ["im2col"] + geo, ["--reads-by", "columns"], {"input": x1},
                ("unfold",)))
    ho, wo = (H + 2 - 2 - 1) // 2 + 1, (W - 2 - 1) // 1 + 1
    cols = rng.uniform(-1, 1, (1, 3 * 3 * 2, ho * wo)).astype(np.float32)
    out.append(("fold_col2im", "col2im", ["col2im", "--output-size", "%d,%d" % (H, W)] + geo,
                ["--reads-by", "output"], {"columns": cols}, ("fold",)))
    out.append(("max_pool2d", "max_pool_forward_nchw",
                ["maxpool2d", "--kernel-size", "3,3", "--stride", "2,2", "--padding", "1,1", "--ceil-mode"],
                ["--reads-by", "output", "--reads-of", "input"], {"input": x}, ("max_pool2d",)))
    xd = rng.uniform(-1, 1, (2, 3, 9, 11)).astype(np.float32)
    off = (rng.randn(2, 18, 9, 11) * 2).astype(np.float32)
    mask = rng.uniform(-0.5, 1.5, (2, 9, 9, 11)).astype(np.float32)
    out.append(("deform_conv2d_im2col", "deformable_im2col",
                ["deform_im2col", "--kernel-size", "3,3", "--padding", "1,1", "--mask"],
                ["--reads-by", "item", "--reads-of", "input,offset,mask"],
                {"input": xd, "offset": off, "mask": mask}, ("deform",)))
    return out


def child(outdir):
    """Under kscope record: each case's upstream call on the GPU, tensors named."""
    import torch
    import torch.nn.functional  # noqa: F401
    import torchvision
    import kscope_record

    assert kscope_record.active(), "not under kscope record"
    for name, _, _, _, inputs, spec in cases():
        t = {k: torch.from_numpy(v).cuda() for k, v in inputs.items()}
        torch.cuda.synchronize()
        op = spec[0]
        if op == "roi_align":
            x, r = t["input"], t["rois"]
            nxt = kscope_record.Next((r.shape[0], x.shape[1], 3, 2))
            with kscope_record.names(input=x, rois=r, output=nxt):
                y = torchvision.ops.roi_align(x, r, (3, 2), 1.0, spec[1], spec[2])
                torch.cuda.synchronize()
            if not nxt.placed(y):
                sys.exit("upstream_reads: %s: the output was not allocated where it was named" % name)
        elif op == "unfold":
            x = t["input"]
            y = torch.empty((1, 3 * 3 * 2, ((H + 2 - 2 - 1) // 2 + 1) * (W - 2)), device="cuda")
            with kscope_record.names(input=x, columns=y):
                torch.ops.aten.im2col.out(x, [3, 2], [1, 2], [1, 0], [2, 1], out=y)
                torch.cuda.synchronize()
        elif op == "fold":
            c = t["columns"]
            y = torch.empty((1, 3, H, W), device="cuda")
            with kscope_record.names(columns=c, output=y):
                torch.ops.aten.col2im.out(c, [H, W], [3, 2], [1, 2], [1, 0], [2, 1], out=y)
                torch.cuda.synchronize()
        elif op == "max_pool2d":
            x = t["input"]
            ho, wo = -(-(H + 2 - 3) // 2) + 1, -(-(W + 2 - 3) // 2) + 1
            y = torch.empty((2, 3, ho, wo), device="cuda")
            i = torch.empty((2, 3, ho, wo), dtype=torch.int64, device="cuda")
            with kscope_record.names(input=x, output=y, indices=i):
                torch.ops.aten.max_pool2d_with_indices.out(x, [3, 3], [2, 2], [1, 1], [1, 1], True, out=y, indices=i)
                torch.cuda.synchronize()
        elif op == "deform":
            x, o, m = t["input"], t["offset"], t["mask"]
            w = torch.from_numpy(np.random.RandomState(1).uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)).cuda()
            with kscope_record.names(input=x, offset=o, mask=m):
                torchvision.ops.deform_conv2d(x, o, w, padding=(1, 1), mask=m)
                torch.cuda.synchronize()
    return 0


def run(cmd, log):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(log, "a") as f:
        f.write("$ %s\n%s\n" % (" ".join(cmd), p.stdout))
    return p.returncode, p.stdout


def main(kscope, outdir):
    try:
        import torch
        import torchvision  # noqa: F401
    except ImportError as e:
        print("upstream_reads: skipped: %s" % e)
        return 77
    if not torch.cuda.is_available():
        print("upstream_reads: skipped: no GPU")
        return 77
    os.makedirs(outdir, exist_ok=True)
    log = os.path.join(outdir, "upstream_reads.log")
    rec = os.path.join(outdir, "rec")
    rc, text = run([kscope, "record", "--kernel", KERNELS, "--launch", "all", "--out", rec, "--",
                    sys.executable, os.path.abspath(__file__), "--child", outdir], log)
    if rc != 0:
        if "Sanitizer" in text or "recorder" in text:
            print("upstream_reads: skipped: kscope record cannot run here: %s" % text.strip().splitlines()[-1])
            return 77
        print("upstream_reads: kscope record failed (%d):\n%s" % (rc, text[-2000:]))
        return 2
    traces = sorted(f for f in os.listdir(rec) if f.endswith(".kst"))
    rows, bad = [], 0
    all_cases = cases()
    if len(traces) != len(all_cases):
        print("upstream_reads: %d recorded launches for %d cases: %s" % (len(traces), len(all_cases), traces))
        return 2
    for (name, kernel, op, diff_args, inputs, _), up in zip(all_cases, traces):
        if kernel not in up:
            print("upstream_reads: %s: launch %s is not %s" % (name, up, kernel))
            return 2
        d = os.path.join(outdir, name)
        os.makedirs(d, exist_ok=True)
        ins = []
        for k, v in inputs.items():
            np.save(os.path.join(d, k + ".npy"), v)
            ins += ["--in", "%s=%s" % (k, os.path.join(d, k + ".npy"))]
        ours = os.path.join(d, "ours.kst")
        rc, text = run([kscope, "run"] + op[:1] + ins + op[1:] + ["--trace", ours, "--quiet"], log)
        if rc != 0:
            print("upstream_reads: %s: kscope run failed:\n%s" % (name, text))
            return 2
        rc, text = run([kscope, "diff", os.path.join(rec, up), ours] + diff_args + ["--max", "5"], log)
        with open(os.path.join(d, "diff.txt"), "w") as f:
            f.write(text)
        if rc not in (0, 1):
            print("upstream_reads: %s: kscope diff failed:\n%s" % (name, text))
            return 2
        first = text.splitlines()[0] if text else ""
        reads = text.splitlines()[1].strip() if len(text.splitlines()) > 1 else ""
        bad += rc
        rows.append((name, up[5:-4], first.split(": ", 1)[-1], reads, "equal" if rc == 0 else "DIFFERENT"))
    table = ["| case | upstream kernel recorded | compared | reads | result |", "|---|---|---|---|---|"]
    table += ["| %s | `%s` | %s | %s | %s |" % r for r in rows]
    with open(os.path.join(outdir, "upstream_reads.md"), "w") as f:
        f.write("\n".join(table) + "\n")
    print("\n".join(table))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.exit(child(sys.argv[2]))
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
