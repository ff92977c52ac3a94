"""make_14.py - the program lesson 14 records: torchvision's roi_align on a tiny input, its
tensors named for the trace (run by make_14.sh under kscope record on a GPU machine).
input: (1, 2, 8, 8), element i = i; two RoIs (batch, x1, y1, x2, y2): one inside the
image, one past its bottom-right corner (the clamp); a 2 x 2 output, sampling ratio 2,
aligned=True. Also writes input.npy and rois.npy for our operator's run of the same."""
import sys

import numpy as np
import torch
import torchvision

import kscope_record

out_dir = sys.argv[1]
x = np.arange(2 * 8 * 8, dtype=np.float32).reshape(1, 2, 8, 8)
rois = np.array([[0, 1.25, 0.75, 5.25, 4.25], [0, 4.5, 5.0, 8.75, 9.0]], np.float32)
np.save(out_dir + "/input.npy", x)
np.save(out_dir + "/rois.npy", rois)
xt, rt = torch.from_numpy(x).cuda(), torch.from_numpy(rois).cuda()
nxt = kscope_record.Next((2, 2, 2, 2))
with kscope_record.names(input=xt, rois=rt, output=nxt):
    y = torchvision.ops.roi_align(xt, rt, (2, 2), spatial_scale=1.0, sampling_ratio=2, aligned=True)
    torch.cuda.synchronize()
if not nxt.placed(y):
    sys.exit("make_14: roi_align's output was not allocated where it was named")
np.save(out_dir + "/output.npy", y.cpu().numpy())
