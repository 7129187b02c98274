"""Benchmark of client chunking for skewed client sizes (issue 12, item 4, second half).

A logistic problem with log-normal client sizes (N = 2000, mean n = 100, spread sigma = 1.5,
d = 20; ``--quick``: N = 300, mean n = 50) built twice from the same per-client arrays: one block
padded to the largest client (``max_padding=None``, the default) and size buckets
(``max_padding=2``, :class:`toys.problems.bucketed.Bucketed`). For each it prints

* the stored data bytes (the per-row arrays X, y, mask, row weights, offsets of every block);
* the tracemalloc peak (numpy allocations above the baseline) of the construction plus a
  5-round FedAvg run with ``record="round"`` (which solves the exact optima it measures);
* the median time per round (``record="round"``, tau = 5, optima already solved) of
  ``--repeat`` interleaved repeats (padded, bucketed, padded, ...), the load average beside.

Target: the bucketed peak <= 3x the real data bytes (X and y rows of the clients). The
per-client arrays themselves (the user's data) are made before tracing starts.

Run: ``python -m benchmarks._engine_skew [--quick] [--repeat 3]`` (or ``part_skew(args)``
from :mod:`benchmarks.engine`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc

import numpy as np

TAU, LR, L2, SIGMA, MAX_PADDING = 5, 0.1, 1e-2, 1.5, 2.0


def _clients(N, mean, d, seed=0):
    """Per-client arrays (views of one pooled block) with log-normal sizes."""
    from toys.problems.partitions import lognormal_sizes

    rng = np.random.default_rng(seed)
    sizes = lognormal_sizes(N * mean, N, SIGMA, rng)
    X = rng.standard_normal((int(sizes.sum()), d)) / np.sqrt(d)
    theta = rng.standard_normal(d)
    y = (rng.random(len(X)) < 1 / (1 + np.exp(-X @ theta))).astype(float)
    cuts = np.cumsum(sizes)[:-1]
    return np.split(X, cuts), np.split(y, cuts), sizes


def _stored(prob) -> int:
    blocks = [sub for _, sub in prob.parts] if hasattr(prob, "parts") else [prob]
    return int(sum(a.nbytes for b in blocks for a in (b.X, b.y, b.mask, b.row_w, b.offset)
                   if a is not None))


def _run(prob, rounds):
    import toys

    return toys.run(prob, "fedavg", rounds=rounds, seed=0, lr=LR, local_steps=TAU,
                    record="round")


def _build_and_run(Xs, ys, max_padding):
    """(problem, stored bytes, tracemalloc peak of construction + a 5-round run, trace)."""
    import toys

    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    prob = toys.logistic(Xs, ys, l2=L2, max_padding=max_padding, name="skew")
    trace = _run(prob, 5)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return prob, _stored(prob), peak, trace


def part_skew(args) -> bool:
    """Padded vs ``max_padding=2`` on log-normal client sizes: stored bytes, peak memory and
    round time; True when the bucketed peak is <= 3x the real data bytes."""
    N, mean, d = (300, 50, 20) if args.quick else (2000, 100, 20)
    Xs, ys, sizes = _clients(N, mean, d)
    rows = int(sizes.sum())
    real = rows * (d + 1) * 8
    mib = 2.0 ** 20
    print(f"== skew (issue 12 item 4): log-normal client sizes (sigma {SIGMA}), N = {N}, "
          f"mean n = {rows / N:.0f}, n_max = {sizes.max()} ({sizes.max() * N / rows:.1f}x the "
          f"mean), d = {d}, tau = {TAU}; padded vs max_padding = {MAX_PADDING:g}")
    print(f"  real data (X, y rows): {real / mib:.1f} MiB ({rows} rows)")
    for mp in (MAX_PADDING, None):  # warm-up: imports and caches are not the problem's memory
        _build_and_run(*_clients(8, 10, d, seed=1)[:2], mp)
    bk, s_bk, p_bk, t_bk = _build_and_run(Xs, ys, MAX_PADDING)  # the bucketed one first
    pad, s_pad, p_pad, t_pad = _build_and_run(Xs, ys, None)
    n_b = len(bk.parts) if hasattr(bk, "parts") else 1
    for label, s, p in (("padded", s_pad, p_pad), (f"max_padding={MAX_PADDING:g}", s_bk, p_bk)):
        print(f"  {label:15s} stored {s / mib:9.1f} MiB ({s / real:5.2f}x real), peak of "
              f"construction + 5 rounds {p / mib:9.1f} MiB ({p / real:5.2f}x real)")
    diff = float(np.max(np.abs(t_bk.final_model - t_pad.final_model)))
    gap = float(np.nanmax(np.abs(t_bk.state["gap"] - t_pad.state["gap"])))
    print(f"  {n_b} buckets; same run: max |final model difference| {diff:.1e}, max |gap "
          f"difference| {gap:.1e}")
    rounds = 2 if args.quick else 5
    ts_pad, ts_bk = [], []
    for _ in range(args.repeat):  # interleaved: a fluctuating load biases neither side
        for prob, ts in ((pad, ts_pad), (bk, ts_bk)):
            t0 = time.perf_counter()
            _run(prob, rounds)
            ts.append((time.perf_counter() - t0) / rounds)
    a, b = float(np.median(ts_pad)), float(np.median(ts_bk))
    print(f"  round time (record='round', median of {args.repeat} interleaved repeats): padded "
          f"{a * 1e3:.1f} ms, max_padding={MAX_PADDING:g} {b * 1e3:.1f} ms (x{a / b:.1f}); "
          f"load {os.getloadavg()[0]:.2f}")
    ok = p_bk <= 3 * real
    print(f"  target: bucketed peak <= 3x the real data: {p_bk / real:.2f}x "
          f"{'OK' if ok else 'MISSED'}")
    return bool(ok)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks._engine_skew")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    ap.add_argument("--repeat", type=int, default=3)
    return 0 if part_skew(ap.parse_args(argv)) else 1


if __name__ == "__main__":
    sys.exit(main())
