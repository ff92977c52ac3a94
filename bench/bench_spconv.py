#!/usr/bin/env python3
"""sparse_conv on the GPU (the C API of kernels/sparse_conv/sparse_conv_body.h, through
libkscope_ops.so with ctypes) against spconv 2.x, in one process on the same tensors:

    python3 bench/bench_spconv.py build-gpu/libkscope_ops.so

A SECOND-like scene: spatial shape 41 x 1600 x 1408 (D, H, W), batch 2, 120k unique
active voxels (a ground of LiDAR-like rings and the vertical faces of box-like objects;
seeded). Rows: subm k3 16->16, regular k3 s2 p1 16->32, subm k3 64->64, fp32,
TF32 off. Times are medians of CUDA events after warm-up. Ours: the rulebook alone (plan
build), the conv alone (forward on a built plan), forward incl. the rulebook (plan +
forward + free), forward + backward incl. the rulebook; the profile splits a forward into
gather, GEMMs, reduce. spconv (when it imports): forward incl. the rulebook (a fresh
SparseConvTensor each time, eval + no_grad), forward + backward (train), and its rulebook
alone through spconv.pytorch.ops where that call works. Each row first checks our sites
and features against spconv's (as sets, 1e-3 of the largest). ratio = spconv / ours."""
import ctypes
import sys

import numpy as np
import torch

SHAPE, BATCH, PER_BATCH = (41, 1600, 1408), 2, 60000
ROWS = [("subm k3 16->16", 1, 16, 16, 1, 0), ("regular k3 s2 p1 16->32", 0, 16, 32, 2, 1),
        ("subm k3 64->64", 1, 64, 64, 1, 0)]  # name, mode (KS_SP_SUBM 1, KS_SP_REGULAR 0), C_in, C_out, stride, pad
vp, i64 = ctypes.c_void_p, ctypes.c_int64
I64x3 = ctypes.c_int64 * 3


def median_ms(fn, reps=20, warm=5):
    """fn() may return a cleanup, run after the end event (not timed)"""
    for _ in range(warm):
        done = fn()
        if done:
            done()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        done = fn()
        b.record()
        b.synchronize()
        if done:
            done()
        times.append(a.elapsed_time(b))
    return sorted(times)[len(times) // 2]


def scene(gen):
    """(n, 4) int32 rows [b, z, y, x], unique, in random order, on the GPU: a ground of 48
    LiDAR-like rings (radii growing geometrically from the sensor at (H/2, 0)) and the
    vertical faces of 40 box-like objects, half the voxels each (about 6 subm pairs a site)"""
    Z, H, W = SHAPE
    keys = []
    for b in range(BATCH):
        ng = no = int(PER_BATCH * 0.85)
        nobj = 40
        r = 25 * 1.062 ** torch.randint(0, 48, (ng,), generator=gen).float() + 2 * torch.rand(ng, generator=gen)
        th = (torch.rand(ng, generator=gen) * 2 - 1) * 0.75
        gy, gx = (H / 2 + r * torch.sin(th)).long(), (r * torch.cos(th)).long()
        gz = (8 + 2 * gx / W + torch.randint(0, 2, (ng,), generator=gen)).long()
        ro = 1200 * torch.rand(nobj, generator=gen) ** 1.5 + 40
        tho = (torch.rand(nobj, generator=gen) * 2 - 1) * 0.7
        cy, cx = H / 2 + ro * torch.sin(tho), ro * torch.cos(tho)
        hy, hx = torch.randint(10, 80, (nobj,), generator=gen), torch.randint(10, 80, (nobj,), generator=gen)
        hz = torch.randint(8, 20, (nobj,), generator=gen)
        o = torch.randint(0, nobj, (no,), generator=gen)
        face, u = torch.randint(0, 4, (no,), generator=gen), torch.rand(no, generator=gen) - 0.5
        side = (face % 2).float() - 0.5
        oy = torch.where(face < 2, cy[o] + side * hy[o], cy[o] + u * hy[o]).long()
        ox = torch.where(face < 2, cx[o] + u * hx[o], cx[o] + side * hx[o]).long()
        oz = (8 + 2 * cx[o] / W + torch.rand(no, generator=gen) * hz[o]).long()
        z, y, x = torch.cat([gz, oz]), torch.cat([gy, oy]), torch.cat([gx, ox])
        ok = (z >= 0) & (z < Z) & (y >= 0) & (y < H) & (x >= 0) & (x < W)
        k = torch.unique(((b * Z + z[ok]) * H + y[ok]) * W + x[ok])
        keys.append(k[torch.randperm(k.numel(), generator=gen)[:PER_BATCH]])
    k = torch.cat(keys)
    k = k[torch.randperm(k.numel(), generator=gen)]
    rows = torch.stack([k // (Z * H * W), k // (H * W) % Z, k // W % H, k % W], 1)
    return rows.int().contiguous().cuda()


def fmt(v):
    return "-" if v is None else f"{v:.3f}"


def ratio(theirs, ours):
    return "-" if theirs is None else f"{theirs / ours:.2f}x"


def site_keys(idx):
    idx = idx.long()
    return ((idx[:, 0] * SHAPE[0] + idx[:, 1]) * SHAPE[1] + idx[:, 2]) * SHAPE[2] + idx[:, 3]


def load(lib_path):
    lib = ctypes.CDLL(lib_path)
    lib.ks_error_message.restype = ctypes.c_char_p
    lib.ks_ops_sparse_geom_size.restype = ctypes.c_size_t
    lib.ks_ops_sparse_geom_init.argtypes = [vp, ctypes.c_int, ctypes.c_int, i64] + [ctypes.POINTER(i64)] * 6 + [
        i64, i64, i64, ctypes.c_int]
    lib.ks_ops_sparse_cuda_plan.argtypes = [vp, vp, ctypes.POINTER(vp)]
    for f in ("ks_ops_sparse_plan_sites", "ks_ops_sparse_plan_pairs"):
        getattr(lib, f).argtypes, getattr(lib, f).restype = [vp], i64
    lib.ks_ops_sparse_plan_out_indices.argtypes, lib.ks_ops_sparse_plan_out_indices.restype = [vp], vp
    lib.ks_ops_sparse_cuda_forward.argtypes = [vp] * 5
    lib.ks_ops_sparse_cuda_backward.argtypes = [vp] * 5
    lib.ks_ops_sparse_cuda_profile.argtypes = [vp] * 5 + [ctypes.POINTER(ctypes.c_float)]
    lib.ks_ops_sparse_cuda_plan_free.argtypes, lib.ks_ops_sparse_cuda_plan_free.restype = [vp], None
    lib.ks_cuda_download.argtypes = [vp, vp, ctypes.c_size_t]
    return lib


def check(lib, rc):
    if rc:
        raise RuntimeError(lib.ks_error_message().decode())


def spconv_weight(mod, w):
    """ours (*k, C_in, C_out) in the module's layout: KRSC (C_out, *k, C_in) in spconv 2.3,
    RSKC (*k, C_out, C_in) for the Native algorithm of older 2.x; told apart by the shape"""
    for cand in (w.permute(4, 0, 1, 2, 3), w.transpose(-1, -2)):
        if cand.shape == mod.weight.shape:
            return cand.contiguous()
    raise ValueError(f"spconv weight shape {tuple(mod.weight.shape)} is neither KRSC nor RSKC")


def main(lib_path):
    lib = load(lib_path)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        import spconv
        import spconv.pytorch as spc
        from spconv.pytorch import ops as spops
        from spconv.core import ConvAlgo
        from spconv import constants as spconst
    except Exception as e:  # noqa: BLE001 - no spconv: ours only
        spc = None
        print(f"spconv not importable ({type(e).__name__}: {e}): ours only")
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(2024)
    idx = scene(gen)
    n = idx.shape[0]
    sp = f", spconv {spconv.__version__} (SPCONV_ALLOW_TF32 {getattr(spconst, 'SPCONV_ALLOW_TF32', '?')})" if spc else ""
    print(f"torch {torch.__version__}{sp} on {torch.cuda.get_device_name()}, fp32, torch TF32 off; "
          f"scene {SHAPE} x batch {BATCH}, {n} voxels")
    table = []
    for name, mode, cin, cout, st, pad in ROWS:
        dev = torch.device("cuda")
        feats = torch.rand((n, cin), device=dev, generator=torch.Generator(device=dev).manual_seed(cin)) * 2 - 1
        w = (torch.rand((3, 3, 3, cin, cout), device=dev) * 2 - 1) / (27 * cin) ** 0.5
        geom = ctypes.create_string_buffer(lib.ks_ops_sparse_geom_size())
        check(lib, lib.ks_ops_sparse_geom_init(geom, 3, mode, BATCH, I64x3(*SHAPE), I64x3(3, 3, 3), I64x3(st, st, st),
                                           I64x3(pad, pad, pad), I64x3(1, 1, 1), I64x3(0, 0, 0), n, cin, cout, 0))

        def plan():
            p = vp()
            check(lib, lib.ks_ops_sparse_cuda_plan(geom, idx.data_ptr(), ctypes.byref(p)))
            return p
        pl = plan()
        m, pairs = lib.ks_ops_sparse_plan_sites(pl), lib.ks_ops_sparse_plan_pairs(pl)
        out = torch.empty((m, cout), device=dev)
        gout = torch.rand((m, cout), device=dev) * 0.4 - 0.2
        gf, gw = torch.empty_like(feats), torch.empty_like(w)
        fwd = lambda p: check(lib, lib.ks_ops_sparse_cuda_forward(p, feats.data_ptr(), w.data_ptr(), None, out.data_ptr()))  # noqa: E731
        bwd = lambda p: check(lib, lib.ks_ops_sparse_cuda_backward(p, gout.data_ptr(), gf.data_ptr(), gw.data_ptr(), None))  # noqa: E731
        fwd(pl)
        torch.cuda.synchronize()
        ours_idx = np.empty((m, 4), dtype=np.int32)
        check(lib, lib.ks_cuda_download(ours_idx.ctypes.data, lib.ks_ops_sparse_plan_out_indices(pl), ours_idx.nbytes))
        ours_idx = torch.from_numpy(ours_idx).cuda()
        print(f"{name}: {n} -> {m} sites, {pairs} pairs ({pairs / n:.1f} per input site)")

        free = lambda p: (lambda: lib.ks_ops_sparse_cuda_plan_free(p))  # noqa: E731
        t_rb = median_ms(lambda: free(plan()))
        t_conv = median_ms(lambda: fwd(pl))

        def ours_fwd():
            p = plan()
            fwd(p)
            return free(p)

        def ours_both():
            p = plan()
            fwd(p)
            bwd(p)
            return free(p)
        t_fwd, t_both = median_ms(ours_fwd), median_ms(ours_both, 10)
        ms, prof = (ctypes.c_float * 3)(), []
        for _ in range(11):
            check(lib, lib.ks_ops_sparse_cuda_profile(pl, feats.data_ptr(), w.data_ptr(), None, out.data_ptr(), ms))
            prof.append(list(ms))
        gather, gemm, reduce = np.median(np.array(prof), axis=0)
        print(f"  ours: rulebook {t_rb:.3f} ms, conv {t_conv:.3f} ms (gather {gather:.3f}, GEMMs {gemm:.3f}, "
              f"reduce {reduce:.3f}), fwd {t_fwd:.3f} ms, fwd+bwd {t_both:.3f} ms")
        lib.ks_ops_sparse_cuda_plan_free(pl)
        s_rb = s_fwd = s_both = None
        if spc:
            cls = spc.SubMConv3d if mode == 1 else spc.SparseConv3d
            kw = {} if mode == 1 else {"stride": st, "padding": pad}
            mod = cls(cin, cout, 3, bias=False, **kw).to(dev)
            with torch.no_grad():
                mod.weight.copy_(spconv_weight(mod, w))
            mod.eval()
            with torch.no_grad():
                ref = mod(spc.SparseConvTensor(feats, idx, list(SHAPE), BATCH))
            ka, kb = site_keys(ours_idx), site_keys(ref.indices)
            oa, ob = torch.argsort(ka), torch.argsort(kb)
            same = ka.numel() == kb.numel() and torch.equal(ka[oa], kb[ob])
            diff = (out[oa] - ref.features[ob]).abs().max().item() if same else float("nan")
            scale = max(1.0, ref.features.abs().max().item())
            verdict = "match" if same and diff <= 1e-3 * scale else "MISMATCH"
            print(f"  spconv ({mod.algo}): {kb.numel()} sites; sites and features {verdict} "
                  f"(max |diff| {diff:.2e}, largest |value| {scale:.2f})")

            def sp_fwd():
                with torch.no_grad():
                    mod(spc.SparseConvTensor(feats, idx, list(SHAPE), BATCH))
            s_fwd = median_ms(sp_fwd)
            mod.train()
            fl = feats.clone().requires_grad_(True)
            g_sp = torch.rand((kb.numel(), cout), device=dev) * 0.4 - 0.2

            def sp_both():
                fl.grad, mod.weight.grad = None, None
                mod(spc.SparseConvTensor(fl, idx, list(SHAPE), BATCH)).features.backward(g_sp)
            s_both = median_ms(sp_both, 10)
            try:  # spconv's rulebook alone, by the algorithm the module uses (is_train False)
                args = (idx, BATCH, list(SHAPE), mod.algo, [3] * 3, [st] * 3, [pad] * 3, [1] * 3, [0] * 3)
                if mod.algo == ConvAlgo.Native:
                    rb = lambda: spops.get_indice_pairs(*args, subm=mode == 1, transpose=False)  # noqa: E731
                else:
                    rb = lambda: spops.get_indice_pairs_implicit_gemm(*args, subm=mode == 1, transpose=False,  # noqa: E731
                                                                      is_train=False)
                s_rb = median_ms(rb)
            except Exception as e:  # noqa: BLE001 - optional
                print(f"  spconv rulebook alone: not measured ({type(e).__name__}: {e})")
            print(f"  spconv: rulebook {fmt(s_rb)} ms, fwd {s_fwd:.3f} ms, fwd+bwd {s_both:.3f} ms")
        table.append((name, t_rb, s_rb, t_conv, t_fwd, s_fwd, t_both, s_both, (gather + reduce) / gemm))

    print("\nms, medians of CUDA events; ratio = spconv / ours (> 1: ours faster)\n")
    print("| row | ours rulebook | spconv rulebook | ours conv | ours fwd (incl rulebook) | spconv fwd | ratio "
          "| ours fwd+bwd | spconv fwd+bwd | ratio | (gather+reduce) / GEMMs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, t_rb, s_rb, t_conv, t_fwd, s_fwd, t_both, s_both, frac in table:
        print(f"| {name} | {fmt(t_rb)} | {fmt(s_rb)} | {fmt(t_conv)} | {fmt(t_fwd)} | {fmt(s_fwd)} | {ratio(s_fwd, t_fwd)} "
              f"| {fmt(t_both)} | {fmt(s_both)} | {ratio(s_both, t_both)} | {frac:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build-gpu/libkscope_ops.so")
