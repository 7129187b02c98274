"""``python -m benchmarks population [--quick] [--instances B] [--repeats K]``: instances per
second of ``toys.run_many`` against a loop of ``toys.run`` and a plain numpy batch.

The workload is falsify's kind of instance: random quadratics (N = 3 clients, d = 2), FedAvg
with tau = 5 local steps, T = 8 rounds, full participation, each instance its own step size.
Three ways, interleaved repeats, medians, the load average beside them:

* ``run_many``: one population of B instances (``record="state"``: the state metrics;
  ``run_many loss``: ``measure=("loss",)``, only F(x_r) (and the gap, which divergence reads),
  what the plain batch computes; ``run_many round``: also the per-step measurements);
* ``toys.run`` loop: B separate runs (``record="sync"``);
* plain numpy: the same FedAvg rounds written directly on (B, N, d) arrays, with the same state
  metrics (the floor numpy allows; its final models are checked equal to run_many's).

Example: ``python -m benchmarks population --quick``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

N, D, TAU, T = 3, 2, 5, 8


def _problems(B):
    import toys

    return [toys.quadratic(n_clients=N, dim=D, L=2.0, mu=0.1, seed=s) for s in range(B)]


def _plain(pop, lrs):
    """FedAvg on the stacked arrays, written out (the numpy floor)."""
    A, c, p = pop.A, pop.c, pop.p
    x = pop.x0.copy()
    out = np.empty((T + 1, x.shape[0]))
    for r in range(T + 1):
        Dx = x[:, None, :] - c
        G = np.matmul(A, Dx[..., None])[..., 0]
        out[r] = np.sum(p * (0.5 * np.sum(Dx * G, axis=-1)), axis=-1)
        if r == T:
            break
        W = np.repeat(x[:, None, :], N, axis=1)
        for _ in range(TAU):
            W = W - lrs[:, None, None] * np.matmul(A, (W - c)[..., None])[..., 0]
        x = x + np.matmul(p[:, None, :], W - x[:, None, :])[:, 0, :]
    return x, out


def _time(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv=None) -> int:
    import toys
    from toys._array import one_blas_thread

    ap = argparse.ArgumentParser(prog="python -m benchmarks population")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--instances", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None)
    a = ap.parse_args(argv)
    B = a.instances or (300 if a.quick else 3000)
    K = a.repeats or (3 if a.quick else 5)
    probs = _problems(B)
    pop = toys.stack(probs)
    lrs = np.random.default_rng(0).uniform(0.05, 0.9, B)
    loop_n = min(B, 100 if a.quick else 300)

    def many(record="state", measure=None):
        return toys.run_many(pop, "fedavg", rounds=T, seeds=0, local_steps=TAU,
                             vary={"lr": lrs}, record=record, measure=measure)

    def loop():
        for b in range(loop_n):
            toys.run(probs[b], "fedavg", rounds=T, seed=0, lr=lrs[b], local_steps=TAU,
                     record="sync")

    x_plain, F_plain = _plain(pop, lrs)
    tr, lean = many(), many(measure=("loss",))
    same = all(np.array_equal(tr[b].final_model, x_plain[b]) for b in range(B))
    close = bool(np.allclose(lean.loss, F_plain.T, rtol=1e-12, atol=0.0))
    times = {"run_many": [], "run_many loss": [], "run_many round": [], "toys.run loop": [],
             "plain numpy": []}
    with one_blas_thread():
        for _ in range(K):
            times["run_many"].append(B / _time(many))
            times["run_many loss"].append(B / _time(lambda: many(measure=("loss",))))
            times["run_many round"].append(B / _time(lambda: many("round")))
            times["toys.run loop"].append(loop_n / _time(loop))
            times["plain numpy"].append(B / _time(lambda: _plain(pop, lrs)))
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"== population: B = {B} quadratics (N = {N}, d = {D}), FedAvg tau = {TAU}, "
          f"T = {T}; instances per second, median of {K} interleaved repeats "
          f"[load average {load}]")
    for k, v in times.items():
        print(f"{k:>15}: {statistics.median(v):12,.0f} /s")
    plain = statistics.median(times["plain numpy"])
    ratio, lean_ratio = (plain / statistics.median(times[k]) for k in ("run_many",
                                                                        "run_many loss"))
    print(f"run_many is {ratio:.2f}x slower than plain numpy ({lean_ratio:.2f}x measuring only "
          f"the loss); final models equal to plain numpy's: {same}; losses within 1e-12: "
          f"{close}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
