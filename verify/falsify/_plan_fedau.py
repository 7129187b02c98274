"""FedAU's plan (:func:`verify.falsify.plan.make_plan` for ``algorithm="fedau"``): what the
search of :mod:`verify.falsify.fedau_paths` runs, from the bound's setting.

>>> import boundlab
>>> from verify.falsify.plan import make_plan
>>> make_plan(boundlab.get("weight_error.theorem2_opt2"), {"n_clients": 2}).T_grid
(1, 2, 3, 4, 5)
"""

from __future__ import annotations

from .fedau_paths import K_GRID, MAX_PATH_BITS, MEASURED, P_LO, t_grid

__all__ = ["plan_fields"]


def plan_fields(s: dict, spec, names: set, zeta_default: float, participation, given,
                bound_id, lhs: str = "avg_grad_norm2") -> dict:
    """What :func:`verify.falsify.plan.make_plan` builds a FedAU plan from (keyword arguments
    of :class:`~verify.falsify.plan.Plan` beyond the bound and its class), popping the
    setting ``s``; NotApplicable with the reason when a parameter cannot be given (``given``:
    the names the plan gives every bound; ``lhs`` the bound's left-hand side)."""
    import dataclasses

    from . import fedau_lhs
    from ._plan_parts import LOCAL_NAMES, NotApplicable, step_of

    if participation not in (None, "full", "bernoulli"):
        raise NotApplicable(f"participation={participation!r}: FedAU's theorems assume "
                            "Bernoulli participation (A4), which the search always draws, "
                            "its probabilities searched")
    if "eta" in s:
        raise NotApplicable("eta (FedAU's global step) is chosen per instance inside the "
                            "range its preconditions allow at the instance's F and Q; it "
                            "cannot be given")
    K = s.pop("K", None)
    if K is not None and (float(K) != int(K) or K < 1):
        raise NotApplicable(f"K = {K}: Algorithm 2's cutoff is an integer >= 1")
    if "N" in s:
        spec = dataclasses.replace(spec, n_clients=int(s.pop("N")))
    zeta = _pop_delta(s, zeta_default * spec.L * spec.D)
    G = {"G", "PsiG"} & names
    if G and spec.mu > 0:
        raise NotApplicable("G / PsiG bound ||grad f(x)|| for all x (A5 option 2): a strongly "
                            "convex f has unbounded gradients")
    reg = fedau_lhs.regime(lhs, names)
    notes = _notes(spec, zeta, G, K) + _lhs_notes(lhs, reg)
    if "T" in s:
        T_grid = (int(s.pop("T")),)
        if spec.n_clients * (T_grid[0] - 1) > MAX_PATH_BITS:
            raise NotApplicable(f"T = {T_grid[0]} with N = {spec.n_clients}: the exact "
                                f"expectation enumerates 2^(N (T-1)) participation paths, at "
                                f"most 2^{MAX_PATH_BITS}")
    else:
        T_grid = t_grid(spec.n_clients)
    if lhs == "one_round_descent":  # the rounds t <= T - 2 (round T - 1 is not enumerated)
        T_grid = tuple(T for T in T_grid if T >= 2)
        if not T_grid:
            raise NotApplicable("one_round_descent: E_t f(x_{t+1}) is enumerated for t <= "
                                "T - 2; give T >= 2")
    tau_names = [k for k in LOCAL_NAMES if k in s]
    tau_grid = (int(s.pop(tau_names[0])),) if tau_names else (1, 2, 5)
    step_name, step_fixed, step_notes, step_given = step_of(names - {"eta"}, s, spec.L)
    if step_name is None and not step_given:
        raise NotApplicable("FedAU's local step gamma is not a parameter of the bound")
    grid = ({"K": float(K)},) if K is not None else tuple({"K": k} for k in K_GRID)
    if reg == "known":  # omega = 1/p_n: Algorithm 2's cutoff plays no part
        grid = ({"K": float("inf")},)
    measured = tuple(k for k in MEASURED if k in names) + fedau_lhs.measured(lhs, names)
    fixed = {k: float(v) for k, v in s.items() if k in names}
    fixed.update({step_name or "gamma": step_fixed} if step_given else {})
    missing = sorted(names - set(given) - {"delta"} - set(measured) - set(fixed)
                     - set(_gives(lhs)))
    if missing:
        raise NotApplicable(f"parameter(s) {', '.join(missing)} of {bound_id} are not measured "
                            "by falsify for algorithm=fedau: give them as name=value")
    return {"spec": dataclasses.replace(spec, zeta=zeta), "T_grid": T_grid,
            "tau_grid": tau_grid, "step_name": step_name, "step_fixed": step_fixed,
            "notes": tuple(notes + step_notes), "hyper_grid": grid, "measured": measured,
            "step_given": step_given, "fixed": fixed}


def _gives(lhs: str) -> tuple:
    """The per-round parameters the measure of ``lhs`` gives (none for an unknown name)."""
    from .. import measures

    return measures.get(lhs).gives if lhs in measures.names() else ()


def _lhs_notes(lhs: str, reg: str) -> list:
    """What the search runs for FedAU's other left-hand sides (:mod:`~.fedau_lhs`)."""
    notes = {"h": "Theorem B.4.1: Algorithm 1 with constant omega_n = E[S_n] (cutoff K: 1 -> "
                  "omega = 1, inf -> 1/p_n); h, P, Q, deltat exact (quadratics: one Hessian), "
                  "H = h(x0) - h*; the run on the quadratic weighted phi_n = omega_n p_n / P",
             "known": "equiprobable sampling: p_n = S/N, S = S_sampled searched in 1..N, "
                      "omega_n = 1/p_n (W = 0)"}
    out = [notes[reg]] if reg in notes else []
    if lhs == "one_round_descent":
        out.append("E_t f(x_{t+1}) - f(x_t) exact over round t's 2^N outcomes, at every state "
                   "(t <= T - 2, path prefix); judged where it is > 0 (a ratio)")
    if lhs == "local_drift":
        out.append("local drift: max over participants and local steps of ||y - x_t||^2 at "
                   "every state and path; f~ = f, deltat = delta (the tilts)")
    return out


def _pop_delta(s, default):
    """delta held fixed by tilts (module docstring): the setting's delta (or zeta)."""
    given = [k for k in ("delta", "zeta") if k in s]
    if len(given) > 1:
        raise ValueError("delta and zeta both give the tilts' norm: give one")
    if given:
        return float(s.pop(given[0]))
    return default


def _notes(spec, zeta, G, K):
    out = [f"FedAU: Bernoulli participation, p_n searched in [{P_LO:g}, 1]; lhs, W exact "
           "expectations over every participation path (2^(N (T-1)), T <= "
           f"{t_grid(spec.n_clients)[-1]} at N = {spec.n_clients}); Q = max over rounds and "
           "paths (deterministic)",
           f"delta = {zeta:g}: clients = one function + tilts t_n, sum t_n = 0, max ||t_n|| = "
           "delta, so ||grad F_n - grad f|| <= delta for all x, with equality",
           "F = f(x0) - f* exactly; sigma = 0 (exact gradients); eta (global) in [max(lo, "
           "hi/20), hi], the range every precondition allows at the instance's F, Q"]
    if G:
        out.append("G^2 = PsiG = sup_x ||grad f(x)||^2 (A5 option 2): ridge families with "
                   "bounded gradients only (quadratics have none)")
    if K is None:
        out.append("Algorithm 2's cutoff K searched over {1, 2, inf} (pass K=)")
    return out
