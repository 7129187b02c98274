"""Benchmark: instance evaluations per second of the falsification search (issue 21, item 5).

Before: :func:`verify.worst_instance` (one ``toys.run`` per instance). After: the batched
engine of :func:`verify.falsify` (a whole population per run), at the same sizes (3 clients,
dimension 2, tau = 10 local steps, T = 20 rounds: the worst-instance search of
``drift.fedavg_convex``), then :func:`verify.falsify` end to end on a user bound of gradient
descent. Then the two ways of running the same populations (issue 30): the toys engine's
population axis (toys.run_many, what falsify searches on; the old hand-written batched engine
of verify/falsify/engine.py is gone) and FedAvg written out in plain numpy (the floor). Prints
the load average: timings on a loaded machine are not comparable.

Run: ``python -m benchmarks falsify [--quick]``
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np


def _load() -> str:
    try:
        return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:  # pragma: no cover - no getloadavg on this platform
        return "load average n/a"


def before(budget: int) -> float:
    import verify

    verify.worst_instance("drift.fedavg_convex", budget=10)  # warm-up: imports
    t0 = time.perf_counter()
    w = verify.worst_instance("drift.fedavg_convex", budget=budget, seed=1)
    rate = w.evaluations / (time.perf_counter() - t0)
    print(f"before  worst_instance(drift.fedavg_convex)  {w.evaluations:6d} evaluations  "
          f"{rate:9.1f} / s")
    return rate


def after(population: int, repeats: int) -> float:
    import boundlab
    from verify.falsify.families import Spec, get_family
    from verify.falsify.judge import judge

    bound = boundlab.get("drift.fedavg_convex")
    spec = Spec(L=1.0, mu=0.0, D=1.0, n_clients=3, dim=2)
    fam = get_family("quadratic")
    rng = np.random.default_rng(0)
    scal = {"D": 1.0, "tau": 10, "T": 20, "sigma": 0.0, "M": 3, "L": 1.0, "zeta": 0.5}
    n, t0 = 0, time.perf_counter()
    for _ in range(repeats):
        Z = rng.uniform(-1, 1, (population, fam.n_vars(spec)))
        eta = 0.25 * 20.0 ** (-rng.uniform(0, 1, population))
        q = _new(fam.stack(Z, spec), eta)  # T_B = 20 rounds of TAU_B = 10 local steps
        judge(bound, q, scal, {"eta": eta})
        n += population
    rate = n / (time.perf_counter() - t0)
    print(f"after   toys.run_many, population {population:5d}        {n:6d} evaluations  "
          f"{rate:9.1f} / s")
    return rate


T_B, TAU_B = 20, 10


def _population(population, rng):
    from verify.falsify.families import Spec, get_family

    spec = Spec(L=1.0, mu=0.0, D=1.0, n_clients=3, dim=2)
    fam = get_family("quadratic")
    Z = rng.uniform(-1, 1, (population, fam.n_vars(spec)))
    eta = 0.25 * 20.0 ** (-rng.uniform(0, 1, population))
    return fam.stack(Z, spec), eta


def _new(st, eta):
    import toys
    from verify.falsify.population import FamilyPopulation, quantities

    pop = FamilyPopulation(st)
    res = toys.run_many(pop, "fedavg", rounds=T_B, seeds=0, local_steps=TAU_B,
                        vary={"lr": eta}, measure=NEEDED)
    return quantities(res, pop.p)


#: what falsify's population run measures for drift.fedavg_convex (its judge's reads,
#: :func:`verify.falsify.population.needed`: an avg_shadow_gap bound without G)
NEEDED = ("loss", "gap", "dist2", "shadow_gap")


def _plain(st, eta):
    """FedAvg written out on the stacked arrays with the shadow gaps the bound's left-hand
    side needs (the floor numpy allows for this search)."""
    p, x = np.asarray(st.p, dtype=float), np.array(st.x0, dtype=float)
    P, N = x.shape[0], p.shape[-1]
    shadow = np.zeros(P)
    for _ in range(T_B):
        X = np.repeat(x[:, None, :], N, axis=1)
        W, xbar = X, x
        for _ in range(TAU_B):
            W = W - eta[:, None, None] * st.grads(W)
            xbar = x + np.matmul(p, W - X)
            shadow += st.losses(np.repeat(xbar[:, None, :], N, axis=1)) @ p - st.F_star
        x = xbar
    return {"avg_shadow_gap": shadow / (T_B * TAU_B)}


def engines(population: int, repeats: int) -> dict:
    """Instance evaluations per second of the two ways on the same populations, the
    measured side judged by ``drift.fedavg_convex``; interleaved, medians."""
    import boundlab
    from verify.falsify.judge import judge

    bound = boundlab.get("drift.fedavg_convex")
    scal = {"D": 1.0, "tau": TAU_B, "T": T_B, "sigma": 0.0, "M": 3, "L": 1.0, "zeta": 0.5}
    rng = np.random.default_rng(0)
    rates = {"toys.run_many": [], "plain numpy": []}
    for _ in range(repeats):
        st, eta = _population(population, rng)
        for name, fn in zip(rates, (_new, _plain)):
            t0 = time.perf_counter()
            q = fn(st, eta)
            if "gap" in q:
                judge(bound, q, scal, {"eta": eta})
            else:
                bound.evaluate(**scal, eta=eta)
            rates[name].append(population / (time.perf_counter() - t0))
    out = {k: float(np.median(v)) for k, v in rates.items()}
    for k, v in out.items():
        print(f"engines  {k:38s} population {population:5d}  {v:9.1f} / s")
    return out


def end_to_end(budget: int) -> float:
    import boundlab
    import verify
    from boundlab import Bound, make_params, sym

    L, D, T = sym("L"), sym("D"), sym("T")
    b = Bound(id="bench.gd_last", source="benchmark", expr=L * D**2 / (8 * T),
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    boundlab.register(b, algorithm="gd", function_class="smooth-convex")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = verify.falsify(b.id, budget=budget, eta=1.0, exact=False,
                               families=["quadratic", "huber", "softplus"])
    finally:
        boundlab.unregister(b.id)
    rate = r.evaluations / r.seconds
    print(f"after   falsify(GD L D^2/(8T)), batched families {r.evaluations:6d} evaluations  "
          f"{rate:9.1f} / s  ({r.verdict}, worst ratio {r.worst_ratio:.4f})")
    return rate


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks falsify")
    ap.add_argument("--quick", action="store_true", help="small budgets (a smoke run)")
    ap.add_argument("--repeat", type=int, default=None,
                    help="interleaved repeats of before / after (default 3; --quick: 1); the "
                         "medians are reported")
    args = ap.parse_args(argv)
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    if repeat < 1:
        print(f"error: --repeat = {repeat} is outside its domain: integer >= 1")
        return 2
    print(f"== falsify search speed ({_load()}, {os.cpu_count()} CPUs), {repeat} interleaved "
          f"repeats")
    befores, afters = [], []
    for _ in range(repeat):  # interleaved, so a change of machine load hits both alike
        befores.append(before(40 if args.quick else 200))
        afters.append(after(256 if args.quick else 1024, 1 if args.quick else 4))
    two = engines(256 if args.quick else 1024, repeat)
    end_to_end(200 if args.quick else 4000)
    b, a = float(np.median(befores)), float(np.median(afters))
    print(f"medians: before {b:.1f} / s, after {a:.1f} / s; speed-up of toys.run_many: "
          f"{a / b:.0f}x (target 50x)   {_load()}")
    new, plain = two.values()
    print(f"engines: plain numpy {plain / new:.2f}x toys.run_many's rate (target <= 3)   "
          f"{_load()}")
    return 0
