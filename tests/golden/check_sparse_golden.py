#!/usr/bin/env python3
"""Developer check: runs every case of sparse_conv.json (make_sparse_golden.py) through the
simulator and compares with the golden files: out_indices exactly, out_features,
grad_features, grad_weight (and grad_bias) to 1e-4, the site and pair counts too.

    python3 tests/golden/check_sparse_golden.py build tests/golden

Needs numpy only. One line per case; exits 1 if any case differs."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TOL = 1e-4


def cli_flags(flags):
    args = []
    for name, v in flags.items():
        if isinstance(v, bool):
            args.append(f"--{name}" if v else f"--no-{name}")
        else:
            args += [f"--{name}", str(v)]
    return args


def run_case(kscope, golden, case, save):
    name = case["name"]
    gpath = lambda what: os.path.join(golden, f"{name}_{what}.npy")  # noqa: E731
    cmd = [kscope, "run", "sparse_conv", "--device", "sim", "--quiet",
           "--in", f"features={gpath('features')}", "--in", f"indices={gpath('indices')}",
           "--in", f"weight={gpath('weight')}", "--backward", "--in", f"grad_out_features={gpath('grad_out')}"]
    if case["flags"]["bias"]:
        cmd += ["--in", f"bias={gpath('bias')}"]
    cmd += cli_flags(case["flags"]) + ["--save", save]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        return [f"kscope failed ({p.returncode}): {(p.stderr or p.stdout).strip()}"], ""
    bad, notes = [], []
    want = np.load(gpath("out_indices"))
    got = np.load(os.path.join(save, "out_indices.npy"))
    if got.shape != want.shape or not np.array_equal(got, want):
        bad.append(f"out_indices differ (shape {got.shape} vs {want.shape}"
                   f"{'' if got.shape != want.shape else ', %d rows' % int((got != want).any(1).sum())})")
    pairs = np.load(os.path.join(save, "rulebook.npy")).shape[0]
    if pairs != case["pairs"]:
        bad.append(f"{pairs} rulebook rows, expected {case['pairs']}")
    outs = ["out_features", "grad_features", "grad_weight"] + (["grad_bias"] if case["flags"]["bias"] else [])
    for what in outs:
        want = np.load(gpath(what)).astype(np.float64)
        got = np.load(os.path.join(save, f"{what}.npy")).astype(np.float64)
        if got.shape != want.shape:
            bad.append(f"{what} shape {got.shape}, expected {want.shape}")
            continue
        diff = float(np.abs(got - want).max()) if got.size else 0.0
        notes.append(f"{what} {diff:.1e}")
        if not np.allclose(got, want, rtol=TOL, atol=TOL):
            worst = np.unravel_index(np.argmax(np.abs(got - want) - TOL * np.abs(want)), want.shape)
            bad.append(f"{what} differs: max |diff| {diff:.2e}, at {tuple(int(i) for i in worst)} "
                       f"{got[worst]:.6g} vs {want[worst]:.6g}")
    return bad, ", ".join(notes)


def main(build, golden):
    kscope = os.path.join(build, "kscope")
    with open(os.path.join(golden, "sparse_conv.json")) as f:
        cases = json.load(f)["cases"]
    failed = 0
    for case in cases:
        with tempfile.TemporaryDirectory() as save:
            bad, notes = run_case(kscope, golden, case, save)
        label = f"{case['name']} {case['mode']} {case['ndim']}d (n {case['n']}, m {case['m']}, pairs {case['pairs']})"
        if bad:
            failed += 1
            print(f"{label}: FAIL: " + "; ".join(bad))
        else:
            print(f"{label}: ok, max |diff| {notes}")
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: check_sparse_golden.py BUILD_DIR GOLDEN_DIR")
    sys.exit(main(sys.argv[1], sys.argv[2]))
