#!/usr/bin/env python3
"""im2col/col2im (plain CUDA, through libkscope.so with ctypes) against the peer
implementation, torch F.unfold / F.fold, in one process on the same tensors.

    python3 bench/bench_torch.py build-gpu/libkscope.so

Checks the results first (unfold bitwise, fold to 1e-5), then times each op: median of
50 runs with CUDA events after warm-up. Prints a table; ratio = torch time / ours."""
import ctypes
import sys

import torch
import torch.nn.functional as F


class Params(ctypes.Structure):  # ks_im2col_params: 12 x int64
    _fields_ = [(n, ctypes.c_int64) for n in (
        "batch", "channels", "height", "width", "kernel_h", "kernel_w", "pad_h", "pad_w",
        "stride_h", "stride_w", "dilation_h", "dilation_w")]


class Launch(ctypes.Structure):  # ks_launch
    _fields_ = [("threads", ctypes.c_int), ("block_cap", ctypes.c_int64)]


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


def main(lib_path):
    lib = ctypes.CDLL(lib_path)
    for name in ("ks_im2col_cuda", "ks_col2im_cuda"):
        getattr(lib, name).argtypes = [ctypes.POINTER(Params), ctypes.c_void_p, ctypes.c_void_p,
                                       ctypes.POINTER(Launch), ctypes.c_void_p, ctypes.c_void_p]
    lib.ks_error_message.restype = ctypes.c_char_p
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}, fp32")
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
        ours_unfold = ours(lib.ks_im2col_cuda, x, cols)
        ours_fold = ours(lib.ks_col2im_cuda, ref, img)
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


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build-gpu/libkscope.so")
