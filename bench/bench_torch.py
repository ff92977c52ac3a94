#!/usr/bin/env python3
"""im2col/col2im and deformable convolution (plain CUDA, through libkscope_ops.so with
ctypes) against the peer implementations, torch F.unfold / F.fold and torchvision
deform_conv2d, in one process on the same tensors.

    python3 bench/bench_torch.py build-gpu/libkscope_ops.so [SECTION...]
    python3 bench/bench_torch.py --check     # SECTIONS against kernels/ops.def; no torch

SECTION (default all): im2col, deform, roi, maxpool, patchify.
Checks the results first (unfold bitwise, fold to 1e-5), then times each op: median of
50 runs with CUDA events after warm-up. Prints a table; ratio = torch time / ours.
Every operator of kernels/ops.def is in a section or in NO_PEER with the reason; each run
checks that first (ctest's test_ops_lists runs --check).
libkscope_ops.so (cli/ops/kscope_ops.c, built beside libkscope.so) exports each operator
entry point used here as ks_ops_<name>; libkscope.so exports the SDK's API only."""
import ctypes
import os
import re
import sys

try:
    import torch
    import torch.nn.functional as F
    from torchvision.ops import deform_conv2d, roi_align
except ImportError as e:  # --check needs neither
    PEERS_MISSING = e
else:
    PEERS_MISSING = None


class Params(ctypes.Structure):  # ks_im2col_params: 12 x int64
    _fields_ = [(n, ctypes.c_int64) for n in (
        "batch", "channels", "height", "width", "kernel_h", "kernel_w", "pad_h", "pad_w",
        "stride_h", "stride_w", "dilation_h", "dilation_w")]


class Launch(ctypes.Structure):  # ks_launch
    _fields_ = [("threads", ctypes.c_int), ("block_cap", ctypes.c_int64)]


class DeformParams(ctypes.Structure):  # ks_deform_params
    _fields_ = [(n, ctypes.c_int64) for n in (
        "batch", "channels", "height", "width", "out_channels", "kernel_h", "kernel_w", "pad_h",
        "pad_w", "stride_h", "stride_w", "dilation_h", "dilation_w", "groups", "offset_groups",
        "im2col_step")] + [(n, ctypes.c_int) for n in (
        "use_mask", "use_bias", "semantics", "math",
        # the kernel choices (0: the defaults; kscope run deform_conv's --fused, --grad-kernel,
        # --grad-columns, --grad-tile, --gather-tile)
        "fused", "grad_kernel", "grad_columns", "tile_positions", "tile_windows", "gather_positions",
        "gather_channels")]


class DeformTensors(ctypes.Structure):  # ks_deform_tensors: 13 pointers
    _fields_ = [(n, ctypes.c_void_p) for n in (
        "input", "offset", "mask", "weight", "bias", "output", "grad_output", "grad_input",
        "grad_offset", "grad_mask", "grad_weight", "grad_bias", "columns0")]


def median_ms(fn, reps=50):
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


# section -> the operators of kernels/ops.def it times against their peer
SECTIONS = {"im2col": ("im2col", "col2im"), "deform": ("deform_conv",), "roi": ("roi_align",),
            "maxpool": ("maxpool2d",), "patchify": ("patchify",)}
# Every other operator of kernels/ops.def, with why no section times it. A new operator
# stops every run until it is in a section or here.
NO_PEER = {
    "conv2d": "im2col + a teaching GEMM: its im2col is the im2col section's kernel; its GEMM makes no "
              "speed claim against cuBLAS or cuDNN",
    "deform_im2col": "torchvision does not expose deform_conv2d's im2col: the deform section times ours "
                     "alone (its kernels line)",
    "gemm_tiled": "a teaching kernel (shared-memory tiles, barriers): no speed claim against cuBLAS",
    "sparse_conv": "timed against spconv by bench/bench_spconv.py",
}


def ops_def():
    """The operator names of kernels/ops.def, in its order."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels", "ops.def")
    with open(path) as f:
        names = re.findall(r"^KS_OP\((\w+)\)", f.read(), re.M)
    if not names:
        sys.exit(f"bench_torch: no KS_OP line in {os.path.normpath(path)}")
    return names


def check_sections():
    """Exits with one line per fault unless SECTIONS and NO_PEER cover kernels/ops.def
    exactly, each operator once."""
    ops = ops_def()
    timed = [op for covered in SECTIONS.values() for op in covered]
    faults = [f"bench_torch: no benchmark for {op} (kernels/ops.def): add it to a section of SECTIONS, or "
              "to NO_PEER with the reason" for op in ops if op not in timed and op not in NO_PEER]
    faults += [f"bench_torch: {op} is in SECTIONS or NO_PEER, but kernels/ops.def has no such operator"
               for op in timed + list(NO_PEER) if op not in ops]
    faults += [f"bench_torch: {op} is named {(timed + list(NO_PEER)).count(op)} times in SECTIONS and NO_PEER"
               for op in ops if (timed + list(NO_PEER)).count(op) > 1]
    if faults:
        sys.exit("\n".join(faults))
    return ops


def main(lib_path, sections):
    lib = ctypes.CDLL(lib_path)
    lib.ks_error_message.restype = ctypes.c_char_p
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, fp32")
    if "im2col" in sections:
        bench_im2col(lib)
    if "deform" in sections:
        bench_deform(lib)
    if "roi" in sections:
        bench_roi_align(lib)
    if "maxpool" in sections:
        bench_maxpool(lib)
    if "patchify" in sections:
        bench_patchify(lib)


def bench_im2col(lib):
    for name in ("ks_ops_im2col_cuda", "ks_ops_col2im_cuda"):
        getattr(lib, name).argtypes = [ctypes.POINTER(Params), ctypes.c_void_p, ctypes.c_void_p,
                                       ctypes.POINTER(Launch), ctypes.c_void_p, ctypes.c_void_p]
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    print(f"{'shape':<34} {'op':<7} {'torch ms':>9} {'kscope ms':>10} {'torch/kscope':>13}")
    shapes = [(8, 64, 128, 128, 3, 1, 1, 1), (16, 128, 56, 56, 3, 1, 1, 1),
              (8, 256, 64, 64, 3, 1, 1, 1), (4, 64, 97, 101, 3, 2, 2, 2)]
    for (n, c, h, w, k, pad, st, dil) in shapes:
        x = torch.rand((n, c, h, w), device=dev) * 2 - 1
        p = Params(n, c, h, w, k, k, pad, pad, st, st, dil, dil)
        launch = Launch(0, 0)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        ref = F.unfold(x, k, dilation=dil, padding=pad, stride=st)
        cols, img = torch.empty_like(ref), torch.empty_like(x)

        def ours(fn, src, dst):
            def call():
                if fn(ctypes.byref(p), src.data_ptr(), dst.data_ptr(), ctypes.byref(launch),
                      None, stream):
                    raise RuntimeError(lib.ks_error_message().decode())
            return call
        ours_unfold = ours(lib.ks_ops_im2col_cuda, x, cols)
        ours_fold = ours(lib.ks_ops_col2im_cuda, ref, img)
        ours_unfold()
        torch.cuda.synchronize()
        assert torch.equal(cols, ref), "im2col differs from F.unfold"
        ours_fold()
        torch.cuda.synchronize()
        fold_ref = F.fold(ref, (h, w), k, dilation=dil, padding=pad, stride=st)
        assert torch.allclose(img, fold_ref, atol=1e-5, rtol=1e-5), "col2im differs from F.fold"
        name = f"N{n} C{c} {h}x{w} k{k} p{pad} s{st} d{dil}"
        t_unfold = median_ms(lambda: F.unfold(x, k, dilation=dil, padding=pad, stride=st))
        t_ours = median_ms(ours_unfold)
        print(f"{name:<34} {'im2col':<7} {t_unfold:9.3f} {t_ours:10.3f} {t_unfold / t_ours:12.2f}x")
        t_fold = median_ms(lambda: F.fold(ref, (h, w), k, dilation=dil, padding=pad, stride=st))
        t_ours = median_ms(ours_fold)
        print(f"{name:<34} {'col2im':<7} {t_fold:9.3f} {t_ours:10.3f} {t_fold / t_ours:12.2f}x")



class DeformChunk(ctypes.Structure):  # ks_deform_chunk
    _fields_ = [("im2col_step", ctypes.c_int64)] + [(n, ctypes.c_void_p) for n in (
        "input", "offset", "mask", "columns_in", "columns", "grad_input", "grad_offset", "grad_mask")] + [
        ("write_columns", ctypes.c_int)]


DEFORM_SHAPES = [(8, 256, 256, 64, 64), (16, 128, 128, 56, 56)]
# the sweep of issue 19: C in {64, 128, 256}, H=W in {28, 56, 64, 128}, N in {1, 8, 16}
DEFORM_SWEEP = [(n, c, c, h, h) for c in (64, 128, 256) for h in (28, 56, 64, 128) for n in (1, 8, 16)]


def bench_deform(lib):
    """forward, and forward + backward, against torchvision deform_conv2d (v2, with mask
    and bias), fp32, TF32 off on both sides; ratio = torchvision time / ours. Then, on
    the two main shapes, --math tf32 (ours; torchvision with TF32 allowed beside it), and
    each kernel of ours alone. KS_DEFORM_SWEEP=1 adds the 36-shape sweep;
    KS_DEFORM_SHAPES="N:C:H,..." runs only those shapes (C in and out, H = W), each in full."""
    for name in ("ks_ops_deform_forward_cuda", "ks_ops_deform_backward_cuda"):
        getattr(lib, name).argtypes = [ctypes.POINTER(DeformParams), ctypes.POINTER(DeformTensors),
                                       ctypes.c_void_p, ctypes.POINTER(Launch), ctypes.c_int,
                                       ctypes.c_void_p, ctypes.c_void_p]
    lib.ks_ops_deform_kernel_cuda.argtypes = [ctypes.POINTER(DeformParams), ctypes.c_int, ctypes.POINTER(DeformChunk),
                                          ctypes.POINTER(Launch), ctypes.c_void_p, ctypes.c_void_p]
    lib.ks_ops_deform_workspace_floats.argtypes = [ctypes.POINTER(DeformParams)]
    lib.ks_ops_deform_workspace_floats.restype = ctypes.c_int64
    print(f"\n{'deform_conv2d (mask, bias)':<34} {'pass':<7} {'tv ms':>9} {'kscope ms':>10} {'tv/kscope':>13}")
    shapes = DEFORM_SHAPES + (DEFORM_SWEEP if os.environ.get("KS_DEFORM_SWEEP") else [])
    main = len(DEFORM_SHAPES)
    if os.environ.get("KS_DEFORM_SHAPES"):  # "N:C:H,...": only these, each as a main shape
        shapes = [(n, c, c, h, h) for n, c, h in (map(int, t.split(":")) for t in os.environ["KS_DEFORM_SHAPES"].split(","))]
        main = len(shapes)
    for i, shape in enumerate(shapes):
        try:
            deform_case(lib, shape, main=i < main)
        except (AssertionError, RuntimeError, torch.cuda.OutOfMemoryError) as e:
            print(f"N{shape[0]} C{shape[1]}->{shape[2]} {shape[3]}x{shape[4]} k3: FAILED: {e}")
        torch.cuda.empty_cache()


def deform_case(lib, shape, main):
    n, c, o, h, w = shape
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(7)
    x = torch.rand((n, c, h, w), device=dev, generator=gen) * 2 - 1
    off = torch.randn((n, 18, h, w), device=dev, generator=gen) * 2
    mask = torch.rand((n, 9, h, w), device=dev, generator=gen)
    wt = (torch.rand((o, c, 3, 3), device=dev, generator=gen) * 2 - 1) / (c * 9) ** 0.5
    bias = torch.rand((o,), device=dev, generator=gen)
    gout = torch.rand((n, o, h, w), device=dev, generator=gen) * 2 - 1
    p = DeformParams(n, c, h, w, o, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, 1, 1, 1, 0)
    out = torch.empty((n, o, h, w), device=dev)
    grads = [torch.empty_like(t) for t in (x, off, mask, wt, bias)]
    ws = torch.empty(lib.ks_ops_deform_workspace_floats(ctypes.byref(p)), device=dev)
    t = DeformTensors(x.data_ptr(), off.data_ptr(), mask.data_ptr(), wt.data_ptr(), bias.data_ptr(),
                      out.data_ptr(), gout.data_ptr(), grads[0].data_ptr(), grads[1].data_ptr(),
                      grads[2].data_ptr(), grads[3].data_ptr(), grads[4].data_ptr(), None)
    launch = Launch(0, 0)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def call(fn):
        if fn(ctypes.byref(p), ctypes.byref(t), ws.data_ptr(), ctypes.byref(launch), -1, None, stream):
            raise RuntimeError(lib.ks_error_message().decode())

    def ours_fwd():
        call(lib.ks_ops_deform_forward_cuda)

    def ours_both():
        call(lib.ks_ops_deform_forward_cuda)
        call(lib.ks_ops_deform_backward_cuda)

    leaves = [v.clone().requires_grad_(True) for v in (x, off, mask, wt, bias)]

    def tv_fwd():
        with torch.no_grad():
            deform_conv2d(x, off, wt, bias, padding=1, mask=mask)

    def tv_both():
        y = deform_conv2d(leaves[0], leaves[1], leaves[3], leaves[4], padding=1, mask=leaves[2])
        y.backward(gout)

    ours_both()
    tv_both()
    torch.cuda.synchronize()
    ref = deform_conv2d(x, off, wt, bias, padding=1, mask=mask)
    assert torch.allclose(out, ref, atol=1e-3, rtol=1e-3), "output differs from torchvision"
    for mine, leaf, name in zip(grads, leaves, ("input", "offset", "mask", "weight", "bias")):
        scale = leaf.grad.abs().max().item() + 1e-6
        err = (mine - leaf.grad).abs().max().item() / scale
        assert err < 1e-3, f"grad_{name} differs from torchvision (max error {err:.2e} of the largest)"
    label = f"N{n} C{c}->{o} {h}x{w} k3"
    reps = (20, 10) if main else (10, 5)
    t_tv, t_ours = median_ms(tv_fwd, reps[0]), median_ms(ours_fwd, reps[0])
    print(f"{label:<34} {'fwd':<7} {t_tv:9.3f} {t_ours:10.3f} {t_tv / t_ours:12.2f}x")
    t_tv, t_ours = median_ms(tv_both, reps[1]), median_ms(ours_both, reps[1])
    print(f"{label:<34} {'fwd+bwd':<7} {t_tv:9.3f} {t_ours:10.3f} {t_tv / t_ours:12.2f}x")
    if main:
        # the backward with a separate im2col pass for the columns (as the references), and
        # with grad_tile or grad_tap in place of grad_gather
        for field, value, tag in (("grad_columns", 1, "fb/im2c"), ("grad_kernel", 1, "fb/tile"),
                                  ("grad_kernel", 2, "fb/tap")):
            setattr(p, field, value)
            try:
                t_v = median_ms(ours_both, reps[1])
            finally:
                setattr(p, field, 0)
            print(f"{label:<34} {tag:<7} {t_tv:9.3f} {t_v:10.3f} {t_tv / t_v:12.2f}x")
        # --math tf32: ours against fp32 torchvision's output; torchvision with TF32 beside it
        p.math = 1
        call(lib.ks_ops_deform_forward_cuda)
        torch.cuda.synchronize()
        err = (out - ref).abs().max().item() / ref.abs().max().item()
        t_ours = median_ms(ours_fwd, 20)
        torch.backends.cuda.matmul.allow_tf32 = True
        t_tv = median_ms(tv_fwd, 20)
        torch.backends.cuda.matmul.allow_tf32 = False
        print(f"{label:<34} {'tf32':<7} {t_tv:9.3f} {t_ours:10.3f} {t_tv / t_ours:12.2f}x"
              f"   (max error {err:.1e} of the largest output)")
        # the TF32 forward's fused kernel (opt-in: params.fused) in its tile shapes
        # (M x N warps; 422: 42 at two blocks an SM); the row above is im2col + cuBLAS
        for v in (24, 42, 422, 44):
            p.fused = v
            try:
                call(lib.ks_ops_deform_forward_cuda)
                torch.cuda.synchronize()
                err = (out - ref).abs().max().item() / ref.abs().max().item()
                t_v = median_ms(ours_fwd, 20)
            finally:
                p.fused = 0
            print(f"{label:<34} {'fused' + str(v):<7} {'':9} {t_v:10.3f} {t_tv / t_v:12.2f}x   (max error {err:.1e})")
        t_ours = median_ms(ours_both, 10)
        print(f"{label:<34} {'tf32 fb':<7} {'':9} {t_ours:10.3f}")
        p.math = 0
        deform_kernels(lib, p, x, off, mask, ws, launch, stream, label)
    del ws


def deform_kernels(lib, p, x, off, mask, ws, launch, stream, label):
    """each of our kernels alone on the first chunk, and a device copy of the columns'
    size (the bandwidth floor of im2col)"""
    n = p.batch
    step = max(d for d in range(1, min(n, 32) + 1) if n % d == 0)
    rows = p.channels * 9
    cols = torch.empty(rows * step * p.height * p.width, device=x.device)
    gcols = torch.rand_like(cols)
    gi, go, gm = torch.empty_like(x), torch.empty_like(off), torch.empty_like(mask)
    ch = DeformChunk(step, x.data_ptr(), off.data_ptr(), mask.data_ptr(), gcols.data_ptr(), cols.data_ptr(),
                     gi.data_ptr(), go.data_ptr(), gm.data_ptr(), 0)
    parts = []
    # grad_tile: positions per tile, windows per phase; grad_gather: positions per tile,
    # channels per block; +cols: the columns written over the gradient (write_columns)
    tile = [(5, f"grad_tile{t}w{w}{'+cols' if wc else ''}", {"tile_positions": t, "tile_windows": w}, wc)
            for t, w, wc in ((16, 4, 0), (16, 4, 1), (32, 4, 0))]
    gather = [(6, f"grad_gather{t}c{c}{'+cols' if wc else ''}", {"gather_positions": t, "gather_channels": c}, wc)
              for t, c, wc in ((32, 32, 0), (32, 32, 1), (16, 32, 0), (32, 16, 0), (64, 16, 0), (8, 32, 0))]
    kernels = [(0, "im2col", {}, 0), (3, "im2col_tap", {}, 0), (1, "col2im", {}, 0), (2, "coord", {}, 0),
               (4, "grad_tap", {}, 0)] + tile + gather
    for k, name, fields, wc in kernels:
        def run(k=k):
            if lib.ks_ops_deform_kernel_cuda(ctypes.byref(p), k, ctypes.byref(ch), ctypes.byref(launch), None, stream):
                raise RuntimeError(lib.ks_error_message().decode())
        for f, v in fields.items():  # the tile choices: params fields (0: the default)
            setattr(p, f, v)
        ch.write_columns = wc
        try:
            parts.append(f"{name} {median_ms(run, 10):.3f}")
        finally:
            ch.write_columns = 0
            for f in fields:
                setattr(p, f, 0)
    parts.append(f"copy {median_ms(lambda: gcols.copy_(cols), 10):.3f}")
    # the forward's GEMM alone, as torch runs it: one GEMM over the chunk, and one per image
    wt = torch.rand((p.out_channels, rows), device=x.device)
    c2 = cols.view(rows, step, p.height * p.width)
    parts.append(f"gemm {median_ms(lambda: torch.mm(wt, cols.view(rows, -1)), 10):.3f}")
    parts.append(f"gemm/image {median_ms(lambda: torch.matmul(wt, c2.transpose(0, 1)), 10):.3f}")
    print(f"{label:<34} kernels (ms, one chunk of {step}): " + ", ".join(parts))



class RoiParams(ctypes.Structure):  # ks_roi_align_params
    _fields_ = [(n, ctypes.c_int64) for n in ("batch", "channels", "height", "width", "num_rois",
                                               "pooled_h", "pooled_w")] + [
        ("spatial_scale", ctypes.c_float), ("sampling_ratio", ctypes.c_int64), ("aligned", ctypes.c_int),
        ("pool_mode", ctypes.c_int), ("forward", ctypes.c_int)]


ROI_FORWARD = {"auto": 0, "slot": 1, "samples": 2, "plane": 3, "cl": 4}  # enum ks_roi_forward


def bench_roi_align(lib):
    """forward, and forward + backward, against torchvision roi_align (avg, aligned, spatial
    scale 0.25): 2x256x200x272 with 1000 RoIs at sampling ratio 2, 7x7 and 14x14, and
    8x256x100x136 with 4000 RoIs, 7x7, adaptive sampling (ratio 0); ratio = torchvision / ours"""
    lib.ks_ops_roi_align_forward_cuda.argtypes = [ctypes.POINTER(RoiParams)] + [ctypes.c_void_p] * 5 + [
        ctypes.POINTER(Launch), ctypes.c_void_p, ctypes.c_void_p]
    lib.ks_ops_roi_align_backward_cuda.argtypes = [ctypes.POINTER(RoiParams)] + [ctypes.c_void_p] * 5 + [
        ctypes.POINTER(Launch), ctypes.c_void_p, ctypes.c_void_p]
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(11)
    print(f"\n{'roi_align (avg)':<34} {'pass':<7} {'tv ms':>9} {'kscope ms':>10} {'tv/kscope':>13}")
    shapes = ((2, 256, 200, 272, 1000, 7, 2), (2, 256, 200, 272, 1000, 14, 2), (8, 256, 100, 136, 4000, 7, 0))
    # KS_ROI_SHAPES=0,2: only those rows (to profile one shape's launches)
    pick = [int(i) for i in os.environ.get("KS_ROI_SHAPES", "0,1,2").split(",")]
    for n, c, h, w, k, ph, sr in (shapes[i] for i in pick):
        x = torch.rand((n, c, h, w), device=dev, generator=gen)
        # boxes in image coordinates (x4): corners anywhere, sides 8 px to 0.3 of the image
        xy = torch.rand((k, 2), device=dev, generator=gen) * torch.tensor([w * 4.0, h * 4.0], device=dev) * 0.9
        wh = torch.rand((k, 2), device=dev, generator=gen) * torch.tensor([w * 4.0, h * 4.0], device=dev) * 0.3 + 8
        b = torch.randint(0, n, (k, 1), device=dev, generator=gen).float()
        rois = torch.cat([b, xy, xy + wh], 1).contiguous()
        p = RoiParams(n, c, h, w, k, ph, ph, 0.25, sr, 1, 0)
        out = torch.empty((k, c, ph, ph), device=dev)
        g = torch.rand((k, c, ph, ph), device=dev, generator=gen)
        gin = torch.empty_like(x)
        launch = Launch(0, 0)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

        def ours_fwd():
            if lib.ks_ops_roi_align_forward_cuda(ctypes.byref(p), x.data_ptr(), rois.data_ptr(), out.data_ptr(), None,
                                             None, ctypes.byref(launch), None, stream):
                raise RuntimeError(lib.ks_error_message().decode())

        def ours_both():
            ours_fwd()
            gin.zero_()
            if lib.ks_ops_roi_align_backward_cuda(ctypes.byref(p), g.data_ptr(), rois.data_ptr(), None, None,
                                              gin.data_ptr(), ctypes.byref(launch), None, stream):
                raise RuntimeError(lib.ks_error_message().decode())

        xl = x.clone().requires_grad_(True)

        def tv_fwd():
            with torch.no_grad():
                roi_align(x, rois, (ph, ph), 0.25, sr, True)

        def tv_both():
            roi_align(xl, rois, (ph, ph), 0.25, sr, True).backward(g)

        out.fill_(float("nan"))
        ours_both()
        xl.grad = None
        tv_both()
        torch.cuda.synchronize()
        ref = roi_align(x, rois, (ph, ph), 0.25, sr, True)
        assert torch.allclose(out, ref, atol=1e-5, rtol=1e-5), "roi_align output differs from torchvision"
        assert torch.allclose(gin, xl.grad, atol=1e-3, rtol=1e-3), "roi_align grad differs from torchvision"
        label = f"N{n} C{c} {h}x{w} K{k} {ph}x{ph} sr{sr}"
        t_tv, t_ours = median_ms(tv_fwd, 20), median_ms(ours_fwd, 20)
        print(f"{label:<34} {'fwd':<7} {t_tv:9.3f} {t_ours:10.3f} {t_tv / t_ours:12.2f}x")
        # other forwards (docs/roi-align.md; the params' forward field, kscope's --forward),
        # each checked first: the slot kernel on the NCHW input (slot, row "fwd-slt"; "fwd" is
        # the default: the channels-last kernel with its transpose), the plane kernel (plane,
        # row "fwd-pln") and for adaptive grids the slot kernel's sample-by-sample sums
        # (samples, "fwd-smp")
        variants = [("slot", "fwd-slt"), ("plane", "fwd-pln")] + ([("samples", "fwd-smp")] if sr <= 0 else [])
        for word, row in variants:
            p.forward = ROI_FORWARD[word]
            try:
                out.fill_(float("nan"))
                ours_fwd()
                torch.cuda.synchronize()
                assert torch.allclose(out, ref, atol=1e-5, rtol=1e-5), f"roi_align (--forward {word}) differs from torchvision"
                t_var = median_ms(ours_fwd, 20)
            finally:
                p.forward = 0
            print(f"{label:<34} {row:<7} {t_tv:9.3f} {t_var:10.3f} {t_tv / t_var:12.2f}x")
        t_tv, t_ours = median_ms(tv_both, 10), median_ms(ours_both, 10)
        print(f"{label:<34} {'fwd+bwd':<7} {t_tv:9.3f} {t_ours:10.3f} {t_tv / t_ours:12.2f}x")


class PatchParams(ctypes.Structure):  # ks_patchify_params
    _fields_ = [(n, ctypes.c_int64) for n in ("batch", "channels", "height", "width", "num_points", "radius")]


class PatchTensors(ctypes.Structure):  # ks_patchify_tensors
    _fields_ = [(n, ctypes.c_void_p) for n in (
        "input", "coords", "patches", "output", "grad_output", "grad_patches", "grad_input")]


def torch_patchify(x, coords, r):
    """The peer: DPVO's patchify written with torch gathers. patches [B, M, C, D, D] (D = 2r+2,
    0 outside the image) and their bilinear blend [B, M, C, 2r+1, 2r+1]."""
    bsz, c, h, w = x.shape
    m, d = coords.shape[1], 2 * r + 2
    fl = coords.floor()
    step = torch.arange(d, device=x.device) - r
    iy = fl[..., 1].long()[..., None] + step  # [B, M, D] rows
    ix = fl[..., 0].long()[..., None] + step  # [B, M, D] columns
    valid = ((iy >= 0) & (iy < h))[..., :, None] & ((ix >= 0) & (ix < w))[..., None, :]
    flat = iy.clamp(0, h - 1)[..., :, None] * w + ix.clamp(0, w - 1)[..., None, :]  # [B, M, D, D]
    g = x.reshape(bsz, c, h * w).gather(2, flat.reshape(bsz, 1, m * d * d).expand(bsz, c, m * d * d))
    patches = (g.reshape(bsz, c, m, d, d) * valid[:, None]).permute(0, 2, 1, 3, 4).contiguous()
    dy, dx = (coords[..., 1] - fl[..., 1])[..., None, None, None], (coords[..., 0] - fl[..., 0])[..., None, None, None]
    out = ((1 - dy) * (1 - dx) * patches[..., :-1, :-1] + (1 - dy) * dx * patches[..., :-1, 1:] +
           dy * (1 - dx) * patches[..., 1:, :-1] + dy * dx * patches[..., 1:, 1:])
    return patches, out


def bench_patchify(lib):
    """the forward (patches, then their bilinear blend) against the torch gather peer above;
    ratio = peer / ours"""
    lib.ks_ops_patchify_kernel_cuda.argtypes = [ctypes.POINTER(PatchParams), ctypes.c_int, ctypes.POINTER(PatchTensors),
                                            ctypes.POINTER(Launch), ctypes.c_void_p, ctypes.c_void_p]
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(17)
    print(f"\n{'patchify (patches + bilinear)':<34} {'pass':<7} {'peer ms':>9} {'kscope ms':>10} {'peer/kscope':>13}")
    # DPVO's gmap (1 x 128 at 1/4 of 528x960, 96 patches of 3x3) and a batch of larger patches
    for bsz, c, h, w, m, r in ((1, 128, 132, 240, 96, 1), (4, 128, 120, 160, 1024, 3)):
        x = torch.rand((bsz, c, h, w), device=dev, generator=gen)
        coords = torch.rand((bsz, m, 2), device=dev, generator=gen) * torch.tensor([w + 4.0, h + 4.0], device=dev) - 2
        d = 2 * r + 2
        patches = torch.empty((bsz, m, c, d, d), device=dev)
        out = torch.empty((bsz, m, c, d - 1, d - 1), device=dev)
        p = PatchParams(bsz, c, h, w, m, r)
        t = PatchTensors(x.data_ptr(), coords.data_ptr(), patches.data_ptr(), out.data_ptr(), None, None, None)
        launch = Launch(0, 0)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

        def ours():
            for kernel in (0, 1):  # KS_PATCH_PATCHES, KS_PATCH_BILINEAR
                if lib.ks_ops_patchify_kernel_cuda(ctypes.byref(p), kernel, ctypes.byref(t), ctypes.byref(launch), None,
                                               stream):
                    raise RuntimeError(lib.ks_error_message().decode())

        patches.fill_(float("nan"))
        out.fill_(float("nan"))
        ours()
        torch.cuda.synchronize()
        ref_p, ref_o = torch_patchify(x, coords, r)
        assert torch.equal(patches, ref_p), "patchify patches differ from the torch peer"
        assert torch.allclose(out, ref_o, atol=1e-5, rtol=1e-5), "patchify output differs from the torch peer"
        label = f"B{bsz} C{c} {h}x{w} M{m} R{r}"
        t_peer, t_ours = median_ms(lambda: torch_patchify(x, coords, r)), median_ms(ours)
        print(f"{label:<34} {'fwd':<7} {t_peer:9.3f} {t_ours:10.3f} {t_peer / t_ours:12.2f}x")


class MaxpoolArgs(ctypes.Structure):  # ks_maxpool2d_args
    _fields_ = [(n, ctypes.c_int64) for n in (
        "batch", "channels", "height", "width", "out_h", "out_w", "kernel_h", "kernel_w", "stride_h", "stride_w",
        "pad_h", "pad_w", "dilation_h", "dilation_w")] + [("ceil_mode", ctypes.c_int)] + [
        (n, ctypes.c_void_p) for n in ("input", "output", "indices", "grad_output", "grad_input")]


def bench_maxpool(lib):
    """forward (output and indices) and backward against torch F.max_pool2d(return_indices=True)
    and aten max_pool2d_with_indices_backward; ratio = torch / ours"""
    lib.ks_ops_maxpool2d_cuda.argtypes = [ctypes.POINTER(MaxpoolArgs), ctypes.c_int, ctypes.POINTER(Launch), ctypes.c_void_p]
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(13)
    print(f"\n{'maxpool2d':<34} {'pass':<7} {'torch ms':>9} {'kscope ms':>10} {'torch/kscope':>13}")
    for n, c, h, w, k, s, p in ((32, 64, 112, 112, 3, 2, 1), (32, 256, 56, 56, 2, 2, 0)):
        x = torch.rand((n, c, h, w), device=dev, generator=gen)
        ref, ref_idx = F.max_pool2d(x, k, s, p, return_indices=True)
        ho, wo = ref.shape[2], ref.shape[3]
        out, idx = torch.empty_like(ref), torch.empty_like(ref_idx)
        g = torch.rand(ref.shape, device=dev, generator=gen)
        gin = torch.empty_like(x)
        a = MaxpoolArgs(n, c, h, w, ho, wo, k, k, s, s, p, p, 1, 1, 0, x.data_ptr(), out.data_ptr(), idx.data_ptr(),
                        g.data_ptr(), gin.data_ptr())
        launch = Launch(0, 0)

        def ours(backward):
            if lib.ks_ops_maxpool2d_cuda(ctypes.byref(a), backward, ctypes.byref(launch), None):
                raise RuntimeError(lib.ks_error_message().decode())

        def ours_bwd():
            gin.zero_()
            ours(1)

        def torch_fwd():
            F.max_pool2d(x, k, s, p, return_indices=True)

        def torch_bwd():
            torch.ops.aten.max_pool2d_with_indices_backward(g, x, [k, k], [s, s], [p, p], [1, 1], False, ref_idx)

        ours(0)
        ours_bwd()
        torch.cuda.synchronize()
        assert torch.equal(out, ref) and torch.equal(idx, ref_idx), "maxpool2d forward differs from torch"
        want = torch.ops.aten.max_pool2d_with_indices_backward(g, x, [k, k], [s, s], [p, p], [1, 1], False, ref_idx)
        assert torch.allclose(gin, want, atol=1e-5, rtol=1e-5), "maxpool2d backward differs from torch"
        label = f"N{n} C{c} {h}x{w} k{k} s{s} p{p}"
        t_t, t_o = median_ms(torch_fwd), median_ms(lambda: ours(0))
        print(f"{label:<34} {'fwd':<7} {t_t:9.3f} {t_o:10.3f} {t_t / t_o:12.2f}x")
        t_t, t_o = median_ms(torch_bwd), median_ms(ours_bwd)
        print(f"{label:<34} {'bwd':<7} {t_t:9.3f} {t_o:10.3f} {t_t / t_o:12.2f}x")


if __name__ == "__main__":
    ops = check_sections()
    if sys.argv[1:2] == ["--check"]:
        print(f"bench_torch: {len(ops)} operators of kernels/ops.def, {len(SECTIONS)} sections, "
              f"{len(NO_PEER)} without a peer here ({', '.join(NO_PEER)})")
        sys.exit(0)
    wanted = sys.argv[2:] or list(SECTIONS)
    unknown = [w for w in wanted if w not in SECTIONS]
    if unknown:
        sys.exit(f"bench_torch: unknown section {unknown[0]!r} (one of {', '.join(SECTIONS)})")
    if PEERS_MISSING is not None:
        raise PEERS_MISSING
    main(sys.argv[1] if len(sys.argv) > 1 else "build-gpu/libkscope_ops.so", wanted)
