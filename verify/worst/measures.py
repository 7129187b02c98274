"""What :func:`verify.worst_instance` measures for each kind of left-hand side (``bound.lhs``).

Each measure fixes the run (algorithm, step size, rounds) and the family's constants from its
defaults and the caller's ``setting``, maps a search point to an instance, runs it with
``toys.run`` and returns the measured LHS, the bound's RHS and their ratio. Instances outside
the bound's preconditions, and runs that diverge, score ``-inf`` (never the worst instance).

Every left-hand side is measured by the registry (:mod:`verify.measures`); ``plateau_gap``
(a limit T -> inf, not a registry quantity) is estimated by the last round of the registry's
``round_avg_gap`` on a run started at x* with identical Hessians (the drift alone builds the
gap).

* ``avg_shadow_gap`` / ``plateau_gap`` / ``max_client_drift`` (DKR, seed 004): FedAvg, full
  participation, ``tau`` local steps; zeta family (identical Hessians); the step size is a
  search variable in ``[eta_max / 20, eta_max]``, ``eta_max = 1/(4L)``; the plateau run starts
  at x* (D = 0) so that only the drift can build the gap.
* ``gap_t`` (BC, seed 003, Theorems 1 / 3): FedProx(alpha) (FedAvg at alpha = 0) with
  gamma = 1/(2E(L + alpha)), or the beta algorithm with gamma = 1/(2LE) on the graph-weighted
  objective (the client weights of each instance are its graph weights p_i); worst round
  t >= 1 (at t = 0 the bound is >= (L/mu) Delta >= the gap by construction); G^2 = max of
  ||g_i||^2 over the gradients the run took.
* ``final_gap`` (BM, seeds 000/001, corollary): FedAvg with eta_t = 1/(mu (t + gamma)),
  gamma from the bound's rule (corrected: max(4L/mu, 1 + 3/(8 p_min), E - 1); printed: 4L/mu).

Example
-------
>>> sorted(MEASURES)[:2]
['avg_shadow_gap', 'final_gap']
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

from ..compare import trace_diverged
from .family import Family, zeta_of

__all__ = ["MEASURES", "zeta_of", "instance_constants", "check_constants"]

_FAIL = {"ratio": -math.inf}


def _registry(name, tr):
    """``(values (1, K), per-round parameters)`` of the left-hand side ``name`` on the trace
    ``tr``: the one definition of :mod:`verify.measures`, on the run arrays
    :func:`verify.falsify.population.quantities` reads from a trace."""
    from .. import measures
    from ..falsify.population import quantities

    return measures.measure(name, quantities(tr))


def _public(cfg):
    return {k: v for k, v in cfg.items() if isinstance(v, (int, float, str, bool))}


def _finish(bound, lhs, params, instance, t_axis=None):
    """LHS / RHS (max over ``t_axis`` where the RHS depends on the round)."""
    names = set(bound.params) | set(bound.extra_params)
    use = {k: v for k, v in params.items() if k in names}
    if bound.violated_preconditions(**{k: v for k, v in use.items()}):
        return dict(_FAIL)
    rhs = np.asarray(bound.evaluate(**use), dtype=float)
    lhs = np.asarray(lhs, dtype=float)
    with np.errstate(all="ignore"):
        ratio = np.where(rhs > 0, lhs / rhs, np.where(lhs > 0, np.inf, 0.0))
    ratio = np.where(np.isfinite(lhs) & np.isfinite(rhs), ratio, -np.inf)
    i = int(np.argmax(ratio)) if ratio.ndim else 0
    pick = (lambda a: float(np.ravel(a)[i]) if np.ndim(a) else float(a))
    out_params = {k: pick(v) for k, v in params.items()}
    return {"ratio": pick(ratio), "lhs": pick(lhs), "rhs": pick(rhs), "params": out_params,
            "instance": instance}


def _instance_record(prob, x0, **run):
    return {"A": prob.A.tolist(), "c": prob.c.tolist(), "weights": prob.p.tolist(),
            "x0": np.asarray(x0).tolist(), "run": run}


#: relative tolerance of a saved instance's constants against its matrices
RTOL = 1e-9


def instance_constants(prob, x0) -> dict:
    """The constants of a quadratic instance, recomputed from its matrices: L (largest
    eigenvalue of the A_i), mu (smallest), Gamma, zeta (None unless every client has the same
    Hessian), D = D0 = ||x_0 - x*||, S = sum p_i^2, M = n_clients, dim."""
    shared = bool(np.all(prob.A == prob.A[:1]))
    D = float(np.linalg.norm(np.asarray(x0, dtype=float) - prob.x_star))
    return {"L": float(prob.eigs.max()), "mu": float(prob.eigs.min()),
            "Gamma": float(prob.Gamma), "zeta": zeta_of(prob.A, prob.c, prob.p) if shared
            else None, "D": D, "D0": D, "S": float(np.sum(prob.p ** 2)),
            "M": prob.n_clients, "n_clients": prob.n_clients, "dim": prob.dim}


def check_constants(data, prob, x0, path, family=None) -> None:
    """Refuse (IntegrityError naming the constant, the claimed and the recomputed value) a
    saved instance whose run setting or parameters claim constants its matrices do not
    have: an exact constant off by more than :data:`RTOL` (relative), an eigenvalue above the
    claimed L or below the claimed mu, or a zeta claimed for clients with different Hessians."""
    from boundlab.errors import IntegrityError

    have = instance_constants(prob, x0)
    claims = [(f"instance.run.cfg.{k}", k, v) for k, v in data["instance"]["run"]["cfg"].items()]
    claims += [(f"params.{k}", k, v) for k, v in data["params"].items()]
    if family is not None:  # what the replay will evaluate the bound at
        claims += [(f"the family's {k}", k, v) for k, v in (
            ("L", family.L), ("mu", family.mu), (family.heterogeneity, family.value),
            ("D", family.D), ("n_clients", family.n_clients), ("dim", family.dim))]
    for field, name, claimed in claims:
        if name not in have or isinstance(claimed, list):
            continue
        real = have[name]
        if real is None:
            raise IntegrityError(path, field, "a zeta claimed for clients with identical "
                                 "Hessians", "the matrices A_i differ")
        tol = RTOL * max(abs(real), abs(claimed))
        if name == "L":
            ok, what = real <= claimed + tol, "its largest eigenvalue"
        elif name == "mu":
            ok, what = real >= claimed - tol, "its smallest eigenvalue"
        else:
            ok, what = abs(real - claimed) <= tol, "recomputed from its matrices"
        if not ok:
            raise IntegrityError(path, field, "constants the instance has",
                                 f"{name} is {claimed!r} in the file, {what} is {real!r}",
                                 header=f"{name} does not match the matrices")


def _rebuild(data, path="saved instance"):
    import toys
    from boundlab.errors import IntegrityError

    inst = data["instance"]
    try:
        prob = toys.Quadratic(np.array(inst["A"], dtype=float), np.array(inst["c"], dtype=float),
                              weights=np.array(inst["weights"], dtype=float),
                              name="replayed instance")
    except DomainError as exc:
        raise IntegrityError(path, "instance", "a valid quadratic instance", str(exc)[:200]) \
            from None
    x0 = np.array(inst["x0"], dtype=float)
    check_constants(data, prob, x0, path)
    return prob, x0, inst["run"]


def _replayed(measure, bound, data, path):
    """(problem, x0, run, cfg) of a saved instance whose constants (as claimed and as the
    replay uses them) are the ones its matrices have."""
    from boundlab.errors import IntegrityError

    prob, x0, run = _rebuild(data, path)
    try:
        cfg = measure.config(bound, run["cfg"])
    except DomainError as exc:
        raise IntegrityError(path, "instance.run.cfg", "a valid run setting",
                             str(exc)[:200]) from None
    check_constants(data, prob, x0, path, cfg["family"])
    return prob, x0, run, cfg


class _Drift:
    how = ("FedAvg, full participation, tau local steps, exact gradients; identical Hessians "
           "(zeta = max_i ||A (c_i - c_bar)||, exact for all x); eta searched in "
           "[eta_max/20, eta_max]")

    def config(self, bound, s):
        L = float(s.get("L", 1.0))
        plateau = bound.lhs == "plateau_gap"
        fam = Family(n_clients=int(s.get("n_clients", 3)), dim=int(s.get("dim", 2)), L=L,
                     mu=float(s.get("mu", 1e-3 * L)), heterogeneity="zeta",
                     value=float(s.get("zeta", s.get("value", 0.5))),
                     D=0.0 if plateau else float(s.get("D", 1.0)), shared_hessian=True)
        rounds = int(s.get("rounds", 3 if bound.lhs == "max_client_drift" else 20))
        cfg = {"family": fam, "extra_vars": 1, "tau": int(s.get("tau", 10)), "rounds": rounds,
               "eta_max": float(s.get("eta_max", 1.0 / (4 * L)))}
        cfg["describe"] = (f"N={fam.n_clients}, d={fam.dim}, L={L:g}, mu={fam.mu:g}, "
                           f"zeta={fam.value:g}, D={fam.D:g}, tau={cfg['tau']}, T={rounds}, "
                           "identical Hessians")
        cfg["public"] = _public({**cfg, "L": L, "mu": fam.mu, "zeta": fam.value, "D": fam.D,
                                 "n_clients": fam.n_clients, "dim": fam.dim})
        return cfg

    def evaluate(self, bound, cfg, z):
        fam = cfg["family"]
        try:
            prob, x0 = fam.instance(z[:-1])
        except DomainError:
            return dict(_FAIL)
        eta = cfg["eta_max"] * 20.0 ** ((float(np.clip(z[-1], -1, 1)) - 1) / 2)
        return self._measure(bound, cfg, prob, x0, eta)

    def _measure(self, bound, cfg, prob, x0, eta):
        import toys

        tau, T = cfg["tau"], cfg["rounds"]
        tr = toys.run(prob, "fedavg", rounds=T, seed=0, lr=eta, local_steps=tau, x0=x0)
        if trace_diverged(tr):
            return dict(_FAIL)
        if bound.lhs == "plateau_gap":  # the plateau's estimate: the last round's shadow gap
            lhs = float(_registry("round_avg_gap", tr)[0][0, -1])
        else:
            lhs = float(_registry(bound.lhs, tr)[0][0, 0])
        fam = cfg["family"]
        params = {"D": fam.D, "eta": eta, "tau": tau, "T": T, "sigma": 0.0,
                  "M": prob.n_clients, "L": fam.L, "zeta": fam.value}
        return _finish(bound, lhs, params, _instance_record(prob, x0, eta=eta, cfg=cfg["public"]))

    def replay(self, bound, data, path="saved instance"):
        prob, x0, run, cfg = _replayed(self, bound, data, path)
        if "eta" not in run:
            from boundlab.errors import IntegrityError

            raise IntegrityError(path, "instance.run.eta", "the step size of the run",
                                 "it is missing")
        return _strip(self._measure(bound, cfg, prob, x0, run["eta"]))


class _Contraction:
    how = ("BC Theorems 1/3 setting: full participation, exact gradients, E local steps with the "
           "theorem's step size; worst round t >= 1; G^2 = max ||g_i||^2 over the gradients the "
           "run took; beta runs on the graph-weighted objective")

    def config(self, bound, s):
        beta = "beta" in bound.params
        fam = Family(n_clients=int(s.get("n_clients", 3)), dim=int(s.get("dim", 2)),
                     L=float(s.get("L", 2.0)), mu=float(s.get("mu", 0.5)), heterogeneity="Gamma",
                     value=float(s.get("Gamma", s.get("value", 0.5))), D=float(s.get("D", 1.0)))
        cfg = {"family": fam, "extra_vars": 0, "E": int(s.get("E", 5)),
               "rounds": int(s.get("rounds", 30)), "beta_algo": beta,
               "beta": float(s.get("beta", 0.5)), "prox": float(s.get("prox", 0.0))}
        algo = f"beta={cfg['beta']:g}" if beta else f"FedProx alpha={cfg['prox']:g}"
        cfg["describe"] = (f"N={fam.n_clients}, d={fam.dim}, L={fam.L:g}, mu={fam.mu:g}, "
                           f"Gamma={fam.value:g}, D={fam.D:g}, E={cfg['E']}, "
                           f"{cfg['rounds']} rounds, {algo}")
        cfg["public"] = _public({**cfg, "L": fam.L, "mu": fam.mu, "Gamma": fam.value,
                                 "D": fam.D, "n_clients": fam.n_clients, "dim": fam.dim})
        return cfg

    def evaluate(self, bound, cfg, z):
        import toys

        fam = cfg["family"]
        try:
            prob, x0 = fam.instance(z)
            if cfg["beta_algo"]:  # the beta algorithm aggregates with its graph weights p_i
                g = toys.run(prob, "beta", rounds=1, seed=0, lr=1e-3, local_steps=1,
                             beta=cfg["beta"], record="none").info["graph"]["p"]
                prob, x0 = fam.instance(z, weights=np.asarray(g, dtype=float))
        except DomainError:
            return dict(_FAIL)
        return self._measure(bound, cfg, prob, x0)

    def _measure(self, bound, cfg, prob, x0):
        import toys

        fam, E, R = cfg["family"], cfg["E"], cfg["rounds"]
        if cfg["beta_algo"]:
            gamma, algo, hyper = 1.0 / (2 * fam.L * E), "beta", {"beta": cfg["beta"]}
        else:
            gamma = 1.0 / (2 * E * (fam.L + cfg["prox"]))
            algo, hyper = ("fedprox", {"prox": cfg["prox"]}) if cfg["prox"] else ("fedavg", {})
        tr = toys.run(prob, algo, rounds=R, seed=0, lr=gamma, local_steps=E, x0=x0, **hyper)
        if trace_diverged(tr):
            return dict(_FAIL)
        if cfg["beta_algo"] and not np.allclose(tr.info["graph"]["p"], prob.p, atol=1e-12):
            return dict(_FAIL)
        gap, per = _registry("gap_t", tr)  # rounds t >= 1 (module docstring)
        t = per["t"][0, 1:]
        params = {"t": t, "L": fam.L, "mu": fam.mu, "alpha": cfg["prox"], "beta": cfg["beta"],
                  "Delta": float(tr.gap[0]), "S": float(np.sum(prob.p ** 2)), "sigma": 0.0,
                  "Gamma": fam.value, "E": E, "G": float(np.sqrt(np.nanmax(tr.g2_max))),
                  "gamma": gamma}
        return _finish(bound, gap[0, 1:], params, _instance_record(prob, x0, cfg=cfg["public"]))

    def replay(self, bound, data, path="saved instance"):
        prob, x0, run, cfg = _replayed(self, bound, data, path)
        return _strip(self._measure(bound, cfg, prob, x0))


class _Corollary:
    how = ("BM corollary setting: FedAvg (alpha = p), full participation, E local steps, "
           "eta_t = 1/(mu (t + gamma)) with the bound's gamma rule; G^2 = max ||g_i||^2 over "
           "the run; rho measured")

    def config(self, bound, s):
        fam = Family(n_clients=int(s.get("n_clients", 3)), dim=int(s.get("dim", 2)),
                     L=float(s.get("L", 4.0)), mu=float(s.get("mu", 1.0)), heterogeneity="Gamma",
                     value=float(s.get("Gamma", s.get("value", 1.0))), D=float(s.get("D", 1.0)))
        cfg = {"family": fam, "extra_vars": 0, "E": int(s.get("E", 2)),
               "rounds": int(s.get("rounds", 30)), "rule": str(s.get("rule", "fedavg"))}
        cfg["describe"] = (f"N={fam.n_clients}, d={fam.dim}, L={fam.L:g}, mu={fam.mu:g}, "
                           f"Gamma={fam.value:g}, D0={fam.D:g}, E={cfg['E']}, "
                           f"{cfg['rounds']} rounds, {cfg['rule']}")
        cfg["public"] = _public({**cfg, "L": fam.L, "mu": fam.mu, "Gamma": fam.value,
                                 "D": fam.D, "n_clients": fam.n_clients, "dim": fam.dim})
        return cfg

    def evaluate(self, bound, cfg, z):
        try:
            prob, x0 = cfg["family"].instance(z)
        except DomainError:
            return dict(_FAIL)
        return self._measure(bound, cfg, prob, x0)

    def _measure(self, bound, cfg, prob, x0):
        import toys

        fam, E, R = cfg["family"], cfg["E"], cfg["rounds"]
        L, mu = fam.L, fam.mu
        if "gamma" in bound.params:
            gamma = max(4 * L / mu, 1 + 3 / (8 * float(prob.p.min())), E - 1)
        else:
            gamma = 4 * L / mu
        tr = toys.run(prob, cfg["rule"], rounds=R, seed=0, local_steps=E, x0=x0,
                      lr=lambda t: 1.0 / (mu * (t + gamma)))
        if trace_diverged(tr):
            return dict(_FAIL)
        params = {"T": R * E, "L": L, "mu": mu, "E": E, "G": float(np.sqrt(np.nanmax(tr.g2_max))),
                  "sigma": 0.0, "Gamma": fam.value, "rho_bar": float(tr.rho_bar),
                  "rho_tilde": float(tr.rho_tilde), "D0": fam.D, "gamma": gamma}
        return _finish(bound, float(_registry("final_gap", tr)[0][0, 0]), params,
                       _instance_record(prob, x0, cfg=cfg["public"]))

    def replay(self, bound, data, path="saved instance"):
        prob, x0, run, cfg = _replayed(self, bound, data, path)
        return _strip(self._measure(bound, cfg, prob, x0))


def _strip(out):
    return {k: out[k] for k in ("ratio", "lhs", "rhs", "params") if k in out}


MEASURES = {"avg_shadow_gap": _Drift(), "plateau_gap": _Drift(), "max_client_drift": _Drift(),
            "gap_t": _Contraction(), "final_gap": _Corollary()}
