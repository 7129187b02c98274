"""Shared pieces of :mod:`benchmarks.engine` and its device benchmark
(:mod:`benchmarks._engine_device`): the benchmark problem and its data, the per-client
reference loop and the timers."""

from __future__ import annotations

import time

import numpy as np

TAU = 5
LR = 0.1
L2 = 1e-2


def _problem(N, n, d, seed=0):
    """A binary ridge-logistic problem with equal client sizes (optima solved by toys)."""
    from toys.problems.logistic import Logistic

    X, y = _data(N, n, d, seed)
    return Logistic(X, y, np.ones((N, n), dtype=bool), l2=L2, name=f"bench-{N}x{n}x{d}")


def _loop_round(X, y, x, tau, lr, l2):
    """Per-client reference loop: tau GD steps per client, then the p-weighted average."""
    N, n, _ = X.shape
    out = np.zeros_like(x)
    for i in range(N):
        w = x.copy()
        Xi, yi = X[i], y[i]
        for _ in range(tau):
            z = Xi @ w
            r = (1.0 / (1.0 + np.exp(-z)) - yi) / n
            w = w - lr * (Xi.T @ r + l2 * w)
        out += w / N
    return out


def _best(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _engine_time(prob, rounds, repeat, backend, device, dtype, record="none"):
    """Marginal time of one round: (t(1 + rounds) - t(1)) / rounds, the two runs timed back to
    back (the difference removes the per-call setup: validation, seeding, trace allocation);
    the median over ``repeat`` pairs. NaN when the difference is not positive (too noisy)."""
    import toys

    kw = {"seed": 0, "lr": LR, "local_steps": TAU, "record": record, "backend": backend}
    if backend == "torch":
        kw.update(device=device, dtype=dtype)
    toys.run(prob, "fedavg", rounds=1, **kw)  # warm-up (torch: allocations, kernels)
    diffs = []
    for _ in range(repeat):
        t1 = _best(lambda: toys.run(prob, "fedavg", rounds=1, **kw), 1)
        tR = _best(lambda: toys.run(prob, "fedavg", rounds=1 + rounds, **kw), 1)
        diffs.append((tR - t1) / rounds)
    d = float(np.median(diffs))
    return d if d > 0 else float("nan")


def _threads():
    import torch

    return torch.get_num_threads()


def _bandwidth(nbytes, repeat):
    src = np.ones(nbytes // 8)
    dst = np.empty_like(src)
    t_copy = _best(lambda: np.copyto(dst, src), repeat)
    t_read = _best(lambda: src.sum(), repeat)
    return src.nbytes / t_copy, src.nbytes / t_read


def _data(N, n, d, seed=0):
    """The generated arrays of :func:`_problem` (timed apart: they are the user's data)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, n, d)) / np.sqrt(d)
    theta = rng.standard_normal(d)
    y = (rng.random((N, n)) < 1 / (1 + np.exp(-X @ theta))).astype(float)
    return X, y
