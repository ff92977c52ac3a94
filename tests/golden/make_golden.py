#!/usr/bin/env python3
"""Golden data from the peer implementations: im2col/col2im from torch.nn.functional
unfold and fold, deformable convolution from torchvision.ops.deform_conv2d, RoIAlign from
torchvision.ops.roi_align, max pooling from torch F.max_pool2d (`--only maxpool2d` makes
just that). Run where torch exists (the GPU machine); commits small .npy files:

    python3 tests/golden/make_golden.py tests/golden
    python3 tests/golden/make_golden.py tests/golden --only roi_align   # one operator's data
    python3 tests/golden/make_golden.py --check    # GOLDEN against kernels/ops.def; no torch

Every operator of kernels/ops.def is one entry of GOLDEN: the function that makes its data
with its seed, or why it has none here. Each run checks that first and stops on an operator GOLDEN lacks or one
ops.def lacks (ctest's test_ops_lists runs --check).

For geometry k: g<k>_input.npy (N, C, H, W) -> g<k>_unfold.npy (N, C*kh*kw, L), and
g<k>_cols.npy (random columns) -> g<k>_fold.npy (N, C, H, W). geometries.json lists
them. Geometries keep the output-size numerator >= 0, where torch's floor division and
Caffe's truncation agree (section 2.1 of the operator notes).

For deformable geometry k: d<k>_{input,offset,mask,weight,bias,grad_output}.npy in, and
d<k>_{output,grad_input,grad_offset,grad_mask,grad_weight,grad_bias}.npy out, computed by
torchvision in float64 from the float32 inputs (offsets randn: samples leave the image;
masks randn, negative too, as torchvision's own test). deform.json lists them; "mask"
false means deform_conv2d(mask=None) and no mask files.
"""
import json
import os
import re
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
    import torchvision
    from torchvision.ops import deform_conv2d, roi_align
except ImportError as e:  # --check needs none of them
    PEERS_MISSING = e
else:
    PEERS_MISSING = None

# (N, C, H, W, kernel, padding, stride, dilation), per-axis (h, w)
GEOMETRIES = [
    (1, 1, 4, 4, (3, 3), (1, 1), (2, 2), (1, 1)),
    (2, 3, 7, 6, (3, 3), (1, 1), (2, 2), (2, 2)),
    (1, 2, 5, 4, (3, 2), (1, 0), (2, 1), (2, 1)),
    (3, 2, 9, 11, (2, 4), (3, 0), (3, 1), (1, 3)),
    (1, 4, 13, 8, (5, 1), (4, 2), (1, 3), (2, 1)),
    (2, 1, 6, 9, (1, 1), (0, 2), (4, 5), (1, 1)),
]


# (N, C, O, H, W, kernel, padding, stride, dilation, groups, offset_groups, mask)
DEFORM = [
    (3, 6, 2, 5, 4, (3, 2), (1, 0), (2, 1), (2, 1), 2, 3, True),   # torchvision's test geometry
    (3, 6, 2, 5, 4, (3, 2), (1, 0), (2, 1), (2, 1), 2, 3, False),
    (2, 4, 5, 9, 7, (3, 3), (1, 1), (1, 1), (1, 1), 1, 2, True),
    (5, 3, 4, 8, 11, (2, 3), (2, 1), (2, 3), (1, 2), 1, 1, False),
]


def make_deform(out, gen):
    listing = []
    for k, (n, c, o, h, w, ks, pad, st, dil, grp, og, use_mask) in enumerate(DEFORM):
        ho = (h + 2 * pad[0] - (dil[0] * (ks[0] - 1) + 1)) // st[0] + 1
        wo = (w + 2 * pad[1] - (dil[1] * (ks[1] - 1) + 1)) // st[1] + 1
        taps = ks[0] * ks[1]
        t = {"input": torch.rand((n, c, h, w), generator=gen) * 2 - 1,
             "offset": torch.randn((n, 2 * og * taps, ho, wo), generator=gen) * 1.5,
             "weight": torch.rand((o, c // grp, *ks), generator=gen) * 2 - 1,
             "bias": torch.rand((o,), generator=gen) * 2 - 1,
             "grad_output": torch.rand((n, o, ho, wo), generator=gen) * 2 - 1}
        if use_mask:
            t["mask"] = torch.randn((n, og * taps, ho, wo), generator=gen)
        d = {name: v.double().requires_grad_(name != "grad_output") for name, v in t.items()}
        y = deform_conv2d(d["input"], d["offset"], d["weight"], d["bias"], stride=st, padding=pad,
                          dilation=dil, mask=d.get("mask"))
        (y * d["grad_output"]).sum().backward()
        res = dict(t)
        res["output"] = y.detach()
        for name in ("input", "offset", "weight", "bias") + (("mask",) if use_mask else ()):
            res["grad_" + name] = d[name].grad
        for name, v in res.items():
            np.save(os.path.join(out, f"d{k}_{name}.npy"), v.detach().float().numpy().astype("<f4"))
        listing.append({"id": k, "batch": n, "channels": c, "out_channels": o, "input_size": [h, w],
                        "kernel_size": list(ks), "padding": list(pad), "stride": list(st),
                        "dilation": list(dil), "groups": grp, "offset_groups": og, "mask": use_mask})
    with open(os.path.join(out, "deform.json"), "w") as f:
        json.dump({"source": f"torchvision {torchvision.__version__} deform_conv2d, float64 from float32 inputs",
                   "geometries": listing}, f, indent=1)
    print(f"wrote {len(listing)} deformable geometries to {out}")


# (N, C, H, W, K, PH, PW, spatial_scale, sampling_ratio, aligned)
ROI = [
    (2, 3, 10, 10, 4, 5, 5, 1.0, -1, False),   # torchvision's forward-test geometry, 3 channels
    (2, 3, 10, 10, 4, 5, 5, 1.0, -1, True),
    (1, 2, 12, 9, 6, 3, 2, 0.5, 2, True),
    (2, 2, 8, 11, 5, 2, 4, 0.25, 3, False),
]


def make_roi(out, gen):
    listing = []
    for k, (n, c, h, w, nr, ph, pw, scale, sr, aligned) in enumerate(ROI):
        x = torch.rand((n, c, h, w), generator=gen) * 2 - 1
        x1 = torch.rand((nr,), generator=gen) * 1.1 * w / scale - 0.1 * w / scale
        y1 = torch.rand((nr,), generator=gen) * 1.1 * h / scale - 0.1 * h / scale
        bw = torch.rand((nr,), generator=gen) * 0.8 * w / scale
        bh = torch.rand((nr,), generator=gen) * 0.8 * h / scale
        b = torch.randint(0, n, (nr,), generator=gen).float()
        rois = torch.stack([b, x1, y1, x1 + bw, y1 + bh], 1)
        g = torch.rand((nr, c, ph, pw), generator=gen) * 2 - 1
        xd = x.double().requires_grad_(True)
        y = roi_align(xd, rois.double(), (ph, pw), spatial_scale=scale, sampling_ratio=sr, aligned=aligned)
        (y * g.double()).sum().backward()
        for name, v in (("input", x), ("rois", rois), ("grad_output", g), ("output", y.detach()),
                        ("grad_input", xd.grad)):
            np.save(os.path.join(out, f"r{k}_{name}.npy"), v.detach().float().numpy().astype("<f4"))
        listing.append({"id": k, "batch": n, "channels": c, "input_size": [h, w], "num_rois": nr,
                        "output_size": [ph, pw], "spatial_scale": scale, "sampling_ratio": sr,
                        "aligned": aligned})
    with open(os.path.join(out, "roi_align.json"), "w") as f:
        json.dump({"source": f"torchvision {torchvision.__version__} roi_align, float64 from float32 inputs",
                   "geometries": listing}, f, indent=1)
    print(f"wrote {len(listing)} RoIAlign geometries to {out}")


# (N, C, H, W, kernel, stride, padding, dilation, ceil_mode), per-axis (h, w)
MAXPOOL = [
    (1, 1, 6, 6, (2, 2), (2, 2), (0, 0), (1, 1), False),
    (2, 3, 9, 11, (3, 3), (2, 2), (1, 1), (1, 1), True),
    (1, 2, 13, 8, (3, 2), (1, 2), (1, 1), (2, 1), False),
    (2, 2, 7, 10, (4, 3), (3, 2), (2, 1), (1, 2), True),
]


def make_maxpool(out, gen):
    """m<k>_{input,grad_output}.npy in; m<k>_{output,indices,grad_input}.npy out, from
    F.max_pool2d(return_indices=True) in float64 on inputs rounded to quarters (ties);
    the CUDA float32 result must agree. maxpool2d.json lists them."""
    listing = []
    for k, (n, c, h, w, ks, st, pad, dil, ceil) in enumerate(MAXPOOL):
        x = torch.round((torch.rand((n, c, h, w), generator=gen) * 2 - 1) * 8) / 4
        xd = x.double().requires_grad_(True)
        y, idx = F.max_pool2d(xd, ks, st, pad, dil, ceil_mode=ceil, return_indices=True)
        g = torch.rand(y.shape, generator=gen) * 2 - 1
        (y * g.double()).sum().backward()
        if torch.cuda.is_available():
            yc, ic = F.max_pool2d(x.cuda(), ks, st, pad, dil, ceil_mode=ceil, return_indices=True)
            assert torch.equal(ic.cpu(), idx) and torch.equal(yc.cpu().double(), y.detach()), f"maxpool {k}: CUDA != CPU"
        for name, v in (("input", x), ("grad_output", g), ("output", y.detach()), ("grad_input", xd.grad)):
            np.save(os.path.join(out, f"m{k}_{name}.npy"), v.detach().float().numpy().astype("<f4"))
        np.save(os.path.join(out, f"m{k}_indices.npy"), idx.numpy().astype("<i8"))
        listing.append({"id": k, "batch": n, "channels": c, "input_size": [h, w], "kernel_size": list(ks),
                        "stride": list(st), "padding": list(pad), "dilation": list(dil), "ceil_mode": ceil})
    with open(os.path.join(out, "maxpool2d.json"), "w") as f:
        json.dump({"source": f"torch {torch.__version__} F.max_pool2d(return_indices=True), float64 "
                             "from float32 inputs (CUDA float32 checked equal)", "geometries": listing}, f, indent=1)
    print(f"wrote {len(listing)} max-pooling geometries to {out}")


def make_unfold(out, gen):
    listing = []
    for k, (n, c, h, w, ks, pad, st, dil) in enumerate(GEOMETRIES):
        x = torch.rand((n, c, h, w), generator=gen, dtype=torch.float32) * 2 - 1
        cols = F.unfold(x, kernel_size=ks, dilation=dil, padding=pad, stride=st)
        rand_cols = torch.rand(cols.shape, generator=gen, dtype=torch.float32) * 2 - 1
        img = F.fold(rand_cols, output_size=(h, w), kernel_size=ks, dilation=dil,
                     padding=pad, stride=st)
        for name, t in (("input", x), ("unfold", cols), ("cols", rand_cols), ("fold", img)):
            np.save(os.path.join(out, f"g{k}_{name}.npy"), t.numpy().astype("<f4"))
        listing.append({"id": k, "batch": n, "channels": c, "input_size": [h, w],
                        "kernel_size": list(ks), "padding": list(pad), "stride": list(st),
                        "dilation": list(dil)})
    with open(os.path.join(out, "geometries.json"), "w") as f:
        json.dump({"source": f"torch {torch.__version__} F.unfold / F.fold, float32",
                   "geometries": listing}, f, indent=1)
    print(f"wrote {len(listing)} geometries to {out}")


# Every operator of kernels/ops.def, one entry each: (the generator of its golden data,
# its torch.Generator seed), or a string saying why this file makes none. Golden data for
# a new operator is its entry here (and the generator it names); an operator missing here
# stops every run. Generators run once each, in this table's order.
GOLDEN = {
    "im2col": (make_unfold, 1234),  # F.unfold
    "col2im": (make_unfold, 1234),  # F.fold (one generator makes both: the same geometries)
    "conv2d": "im2col + a teaching GEMM: its im2col is im2col's golden data; test_conv2d checks the "
              "output against the direct convolution in double",
    "deform_im2col": "the sampling step of deform_conv alone (the same body): deform_conv's golden data "
                     "covers it",
    "deform_conv": (make_deform, 4321),  # torchvision deform_conv2d
    "roi_align": (make_roi, 5678),  # torchvision roi_align
    "patchify": "DPVO's patchify has no packaged peer (bench/bench_torch.py writes one with torch "
                "gathers); test_patchify checks it against the double reference",
    "maxpool2d": (make_maxpool, 2468),  # F.max_pool2d(return_indices=True)
    "gemm_tiled": "a teaching GEMM with no peer semantics to match: test_gemm_tiled checks it against "
                  "its double reference",
    "sparse_conv": "tests/golden/make_sparse_golden.py (dense torch convolution, spconv's semantics)",
}


def makers():
    """The generators of GOLDEN with their seeds, each once, in the table's order."""
    out = []
    for entry in GOLDEN.values():
        if not isinstance(entry, str) and entry not in out:
            out.append(entry)
    return out


def ops_def():
    """The operator names of kernels/ops.def, in its order."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels", "ops.def")
    with open(path) as f:
        names = re.findall(r"^KS_OP\((\w+)\)", f.read(), re.M)
    if not names:
        sys.exit(f"make_golden: no KS_OP line in {os.path.normpath(path)}")
    return names


def check_golden():
    """Exits with one line per fault unless GOLDEN covers kernels/ops.def exactly."""
    ops = ops_def()
    faults = [f"make_golden: no golden data for {op} (kernels/ops.def): add a generator to GOLDEN, "
              "or list it there with the reason it has none" for op in ops if op not in GOLDEN]
    faults += [f"make_golden: GOLDEN names {op}, which kernels/ops.def lacks" for op in GOLDEN if op not in ops]
    faults += [f"make_golden: GOLDEN's entry for {op} is neither a reason nor (generator, seed)"
               for op, g in GOLDEN.items()
               if not isinstance(g, str) and not (isinstance(g, tuple) and len(g) == 2 and callable(g[0])
                                                  and isinstance(g[1], int))]
    seeds = {}
    for op, g in GOLDEN.items():
        if isinstance(g, tuple) and seeds.setdefault(g[0], g[1]) != g[1]:
            faults.append(f"make_golden: {op} gives {g[0].__name__} another seed ({g[1]}, not {seeds[g[0]]})")
    if faults:
        sys.exit("\n".join(faults))
    return ops


def main(out, only=None):
    """Every generator's data, or with `only` (an operator) just its generator's."""
    want = GOLDEN[only][0] if only is not None else None
    os.makedirs(out, exist_ok=True)
    for make, seed in makers():
        if want is None or make is want:
            make(out, torch.Generator().manual_seed(seed))


if __name__ == "__main__":
    # make_golden.py [DIR] [--only OP]: one operator's data, the rest untouched; --check
    argv = sys.argv[1:]
    ops = check_golden()
    if "--check" in argv:
        made = [g.__name__ for g, _ in makers()]
        print(f"make_golden: {len(ops)} operators of kernels/ops.def, {len(made)} generators ({', '.join(made)})")
        sys.exit(0)
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    if only is not None and only not in GOLDEN:
        sys.exit(f"make_golden: --only {only}: not an operator of kernels/ops.def ({', '.join(ops)})")
    if only is not None and isinstance(GOLDEN[only], str):
        sys.exit(f"make_golden: no golden data for {only} here: {GOLDEN[only]}")
    if PEERS_MISSING is not None:
        raise PEERS_MISSING
    args = [a for i, a in enumerate(argv) if a != "--only" and (i == 0 or argv[i - 1] != "--only")]
    dest = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    main(dest, only)
