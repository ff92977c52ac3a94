#!/usr/bin/env python3
"""Golden data for im2col/col2im from the peer implementation, torch.nn.functional
unfold and fold. Run where torch exists (the GPU machine); commits small .npy files:

    python3 tests/golden/make_golden.py tests/golden

For geometry k: g<k>_input.npy (N, C, H, W) -> g<k>_unfold.npy (N, C*kh*kw, L), and
g<k>_cols.npy (random columns) -> g<k>_fold.npy (N, C, H, W). geometries.json lists
them. Geometries keep the output-size numerator >= 0, where torch's floor division and
Caffe's truncation agree (section 2.1 of the operator notes).
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

# (N, C, H, W, kernel, padding, stride, dilation), per-axis (h, w)
GEOMETRIES = [
    (1, 1, 4, 4, (3, 3), (1, 1), (2, 2), (1, 1)),
    (2, 3, 7, 6, (3, 3), (1, 1), (2, 2), (2, 2)),
    (1, 2, 5, 4, (3, 2), (1, 0), (2, 1), (2, 1)),
    (3, 2, 9, 11, (2, 4), (3, 0), (3, 1), (1, 3)),
    (1, 4, 13, 8, (5, 1), (4, 2), (1, 3), (2, 1)),
    (2, 1, 6, 9, (1, 1), (0, 2), (4, 5), (1, 1)),
]


def main(out):
    os.makedirs(out, exist_ok=True)
    gen = torch.Generator().manual_seed(1234)
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


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
