"""Benchmark: ``Bound.evaluate`` throughput and ``import boundlab`` time.

Targets (issue 2): >= 1e6 parameter points per second for drift.fedavg_convex and
contraction.beta_sc on numpy arrays; ``import boundlab`` < 1 s.

Run: ``python -m benchmarks bounds [--points N] [--repeat R]``
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time

import numpy as np

IDS = ("drift.fedavg_convex", "contraction.beta_sc", "skew.corollary", "weight_error.average")


def _points(bound, n, rng):
    out = {}
    for name, p in bound.params.items():
        d = p.domain
        lo = d.lo if math.isfinite(d.lo) else 0.0
        hi = d.hi if math.isfinite(d.hi) else lo + 10.0
        if d.integer:
            out[name] = rng.integers(int(lo), int(lo) + 100, size=n).astype(float)
        else:
            out[name] = rng.uniform(lo + 1e-3 * (hi - lo), hi - 1e-3 * (hi - lo), size=n)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks bounds")
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    code = ("import time; t = time.perf_counter(); import boundlab; "
            "print(time.perf_counter() - t)")
    imp = min(float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                   text=True, check=True).stdout) for _ in range(3))
    code_all = ("import time; t = time.perf_counter(); import boundlab; boundlab.catalogue(); "
                "print(time.perf_counter() - t)")
    cat = float(subprocess.run([sys.executable, "-c", code_all], capture_output=True,
                               text=True, check=True).stdout)
    code_one = ("import time; t = time.perf_counter(); import boundlab; "
                "boundlab.get('drift.fedavg_convex'); print(time.perf_counter() - t)")
    one = min(float(subprocess.run([sys.executable, "-c", code_one], capture_output=True,
                                   text=True, check=True).stdout) for _ in range(3))
    print(f"import boundlab: {imp * 1e3:.1f} ms (target < 1000 ms; sympy loads on first use); "
          f"import + first get (sympy + one family): {one * 1e3:.0f} ms; "
          f"import + the whole catalogue: {cat * 1e3:.0f} ms")

    import boundlab

    rng = np.random.default_rng(0)
    print(f"Bound.evaluate on {args.points:,} points (best of {args.repeat}, validation included)")
    for bid in IDS:
        try:
            b = boundlab.get(bid)
        except Exception as exc:  # noqa: BLE001 - report and go on
            print(f"  {bid:28s} unavailable: {exc}")
            continue
        pts = _points(b, args.points, rng)
        b.evaluate(**pts)  # build the lambdified function once
        best = math.inf
        for _ in range(args.repeat):
            t = time.perf_counter()
            b.evaluate(**pts)
            best = min(best, time.perf_counter() - t)
        rate = args.points / best
        flag = "ok" if rate >= 1e6 else "BELOW TARGET"
        print(f"  {bid:28s} {rate / 1e6:7.1f} M points/s  ({best * 1e3:.1f} ms)  {flag}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
