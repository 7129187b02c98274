"""Benchmark: PEP solve times, chained rounds, floors, and the tightness brackets (issue 5).

Targets: one-round 2-client FedAvg PEP with tau <= 10 under 1 s; 50 chained rounds under
30 s. Then the brackets ``[LB/B, UB/B]`` (the worst case relative to the bound, measured / bound
as every ratio of ``verify.schema``: <= 1 holds) of the catalogue bounds at representative points,
and their plots over one parameter.

Run: ``python -m benchmarks tightness [--quick | --full] [--out DIR] [--no-plots] [--cache DIR]``
(timings are of uncached solves: by default a fresh temporary cache directory is used).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import tempfile
import time


def _row(*cols, widths=(28, 12, 12, 12, 10, 10, 8)):
    return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                     for i, (c, w) in enumerate(zip(cols, widths)))


def _g(v, fmt=".4g"):
    return "-" if v is None else format(v, fmt)


def timings(quick: bool) -> None:
    from verify.tightness import fixed_point_floor, wc_fedavg_round, wc_gradient_descent

    wc_gradient_descent(1.0, 0.1, 0.5, 1, cache=False)  # warm-up: imports PEPit, cvxpy, Clarabel
    print("== one FedAvg round, 2 clients, L = 1, mu = 0.1, eta = 0.1, zeta = 0.5 (target < 1 s)")
    print(_row("tau", "worst case", "gap", "seconds", "gram", "status", ""))
    for tau in (1, 2, 5, 10):
        t0 = time.perf_counter()
        r = wc_fedavg_round(1.0, 0.1, 0.1, tau, 0.5, cache=False)
        dt = time.perf_counter() - t0
        print(_row(tau, f"{r.value:.6f}", _g(r.gap, ".1e"), f"{dt:.3f}", r.gram_size,
                   r.status[:10], "ok" if dt < 1 else "SLOW"))
    print("\n== 50 chained rounds, zeta = 1 (target < 30 s)")
    for tau in ((5,) if quick else (5, 10)):
        t0 = time.perf_counter()
        r = wc_fedavg_round(1.0, 0.1, 0.1, tau, 1.0, rounds=50, mode="chain", cache=False)
        dt = time.perf_counter() - t0
        print(f"tau = {tau:2d}: ||x_50 - x*||^2 <= {r.value:.6f}  ({r.n_solves} one-round PEPs, "
              f"{dt:.1f} s {'ok' if dt < 30 else 'SLOW'})")
    print("\n== chained vs full PEP, tau = 5, zeta = 1")
    for R in ((2, 3) if quick else (2, 3, 5)):
        t0 = time.perf_counter()
        full = wc_fedavg_round(1.0, 0.1, 0.1, 5, 1.0, rounds=R, mode="full", cache=False)
        t1 = time.perf_counter()
        chain = wc_fedavg_round(1.0, 0.1, 0.1, 5, 1.0, rounds=R, mode="chain", cache=False)
        t2 = time.perf_counter()
        print(f"R = {R}: full {full.value:.6f} ({t1 - t0:.2f} s, Gram {full.gram_size})  chain "
              f"{chain.value:.6f} ({t2 - t1:.2f} s)  ratio {chain.value / full.value:.5f}")
    t0 = time.perf_counter()
    f = fixed_point_floor("fedavg_round", L=1.0, mu=0.1, eta=0.1, tau=5, zeta=1.0, cache=False)
    print(f"\n== floor (fixed point of the one-round map), tau = 5, zeta = 1: {f.value:.6f} "
          f"({f.n_solves} SDPs, {time.perf_counter() - t0:.1f} s)")


def _cases(quick: bool, full: bool):
    plateau = [("drift.plateau", {"eta": 0.1, "tau": tau, "L": 1.0, "zeta": 1.0}, {})
               for tau in (2, 3, 5)]
    if not quick:
        plateau += [("drift.plateau", {"eta": 0.1, "tau": 10, "L": 1.0, "zeta": 1.0},
                     {"zeta_at": "x*"})]
    if full:  # Gram 61 with zeta at visited points: minutes
        plateau += [("drift.plateau", {"eta": 0.1, "tau": 10, "L": 1.0, "zeta": 1.0}, {})]
    dkr = {"D": 3.037, "eta": 0.2, "sigma": 0.0, "M": 20, "L": 0.201, "zeta": 0.4271}
    convex = [("drift.fedavg_convex", {**dkr, "tau": 2, "T": T}, {}) for T in (1, 3, 6, 50)]
    if full:
        convex += [("drift.fedavg_convex", {**dkr, "tau": 10, "T": 50}, {"zeta_at": "x*"})]
    skew = [("skew.recursion", {"Delta": 1.0, "eta": 0.1, "mu": 0.1, "L": 1.0, "E": E,
                                "G": 1.0, "sigma": 0.0, "Gamma": 0.1, "rho_bar": 1.0,
                                "rho_tilde": 1.0}, {}) for E in (1, 3)]
    bc = {"L": 1.0, "mu": 0.1, "Delta": 1.0, "S": 0.5, "sigma": 0.0, "Gamma": 0.1, "E": 2,
          "G": 1.0}
    prox = [("contraction.fedprox_sc", {**bc, "alpha": 0.5, "t": t}, {}) for t in (1, 3, 20)]
    beta = [("contraction.beta_sc", {**bc, "beta": 0.5, "t": t}, {}) for t in (1, 3, 10)]
    return plateau + convex + skew + prox + beta


def brackets(quick: bool, full: bool) -> None:
    from verify.tightness import bracket

    print("\n== brackets (B = the bound; UB/LB = PEP dual/primal; exact = no relaxed assumption)")
    print(_row("bound @ point", "B", "UB", "LB", "LB/B", "UB/B", "exact", "seconds",
               widths=(44, 10, 11, 11, 9, 9, 6, 8)))
    for bid, params, kw in _cases(quick, full):
        r = bracket(bid, params, **kw)
        key = {"drift.plateau": "tau", "drift.fedavg_convex": "T", "skew.recursion": "E"}.get(
            bid, "t")
        where = f"{bid} {key}={params[key]}"
        if bid == "drift.plateau":
            where += f" etaL={params['eta'] * params['L']:g} zeta@{kw.get('zeta_at', 'visited')}"
        if bid == "drift.fedavg_convex":
            where += f" tau={params['tau']}"
        print(_row(where, _g(r["bound_value"]), _g(r["worst_case_upper"]),
                   _g(r["worst_case_lower"]), _g(r["ratio_lo"]), _g(r["ratio_hi"]),
                   str(r["exact"])[0],
                   f"{r['seconds']:.1f}", widths=(44, 10, 11, 11, 9, 9, 6, 8)))
        if not r["ordering"]["holds"]:
            print(f"   !! {r['verdict']}")


def plots(out: pathlib.Path, quick: bool) -> None:
    from verify.tightness import bracket_grid, plot_brackets

    bc = {"L": 1.0, "mu": 0.1, "Delta": 1.0, "S": 0.5, "sigma": 0.0, "Gamma": 0.1, "E": 2,
          "G": 1.0}
    dkr = {"D": 3.037, "eta": 0.2, "sigma": 0.0, "M": 20, "L": 0.201, "zeta": 0.4271,
           "tau": 2}
    grids = [
        ("drift.plateau", {"eta": 0.1, "L": 1.0, "zeta": 1.0}, "tau", [2, 3, 4, 5]),
        ("drift.fedavg_convex", dkr, "T", [1, 2, 3, 4, 6, 10, 20, 50, 100]),
        ("skew.recursion", {"Delta": 1.0, "eta": 0.1, "mu": 0.1, "L": 1.0, "G": 1.0,
                            "sigma": 0.0, "Gamma": 0.1, "rho_bar": 1.0, "rho_tilde": 1.0},
         "E", [1, 2, 3, 4]),
        ("contraction.fedprox_sc", {**bc, "alpha": 0.5}, "t", [0, 1, 2, 3, 5, 10, 20, 40]),
        ("contraction.beta_sc", {**bc, "beta": 0.5}, "t", [0, 1, 2, 3, 5, 10] if quick
         else [0, 1, 2, 3, 5, 10, 20]),
    ]
    print("\n== plots")
    for bid, base, vary, values in grids:
        t0 = time.perf_counter()
        rows = bracket_grid(bid, base, vary, values)
        path = plot_brackets(rows, vary, out / f"{bid.replace('.', '_')}_vs_{vary}.png")
        print(f"{path}  ({time.perf_counter() - t0:.1f} s)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks tightness")
    ap.add_argument("--quick", action="store_true", help="skip the slowest cases (tau = 10)")
    ap.add_argument("--full", action="store_true",
                    help="add the slowest brackets (tau = 10 with zeta at visited points; "
                         "about 10 minutes more)")
    ap.add_argument("--out", default="boundlab-out/tightness", help="directory of the plots")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--cache", default=None,
                    help="PEP cache root (default: a fresh temporary directory)")
    args = ap.parse_args(argv)
    old = os.environ.get("BOUNDLAB_CACHE")
    tmp = tempfile.TemporaryDirectory() if args.cache is None else None
    os.environ["BOUNDLAB_CACHE"] = args.cache or tmp.name
    try:
        t0 = time.perf_counter()
        timings(args.quick)
        brackets(args.quick, args.full)
        if not args.no_plots:
            plots(pathlib.Path(args.out), args.quick)
        print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    finally:
        if old is None:
            os.environ.pop("BOUNDLAB_CACHE", None)
        else:
            os.environ["BOUNDLAB_CACHE"] = old
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
