"""FedAU (seed 002, Wang & Ji, Algorithms 1 and 2) in :func:`verify.falsify`, judged in
expectation over its Bernoulli participation.

The algorithm (``toys.run(..., "fedau")``, :mod:`toys.algorithms.fedau`): every round t the
participants (chi_t^n = 1) run I local steps ``y <- y - gamma grad F_n(y)`` from x_t, and
``x_{t+1} = x_t + eta sum_n p_n omega_t^n chi_t^n (y_n - x_t)`` (p_n = 1/N, the paper's 1/N;
eta the global step). omega_t^n is Algorithm 2's online estimate of 1/P(participate): the mean
of client n's completed participation intervals, an interval ending at a participation or
when it reaches the cutoff K (omega = 1 before the first one). omega_t depends on
chi_0..chi_{t-1} only; here it is computed in closed form, ``omega_t = (t - S_t) / M_t`` (M_t
intervals completed, S_t rounds of the open one: the completed intervals cover the other
t - S_t rounds), not by toys' running mean (the tests compare the two).

**Expectation, exactly.** Theorems 2 / Corollary 4 bound (1/T) sum_t E ||grad f(x_t)||^2, the
expectation over the participation (A4: chi_t^n ~ Bernoulli(p_n), independent); one path
above the bound is no counterexample. The search therefore runs, for every instance, *every*
participation path of rounds 0..T-2 (x_0..x_{T-1} do not depend on round T-1's; its mask is
all True), 2^(N (T-1)) of them, as one batch of the engine, and weighs them by their
probabilities: the left-hand side is the exact expectation. Horizons are limited to
N (T - 1) <= :data:`MAX_PATH_BITS` (:func:`t_grid`). The replay does the same on ``toys.run``
(one run per path of positive probability).

**Parameters, per instance** (all known before the run):

* the participation probabilities p_n in [:data:`P_LO`, 1] are search variables (the last
  N + 1 variables of z: N probabilities, then the position of eta in its feasible range);
* ``W`` = (1/(N T)) sum_{t<T} sum_n E (p_n omega_t^n - 1)^2: the expectation over the paths,
  exactly (the theorem's W is an expectation);
* ``Q``: the theorem needs a *deterministic* bound on max_t (1/N) sum_n p_n (omega_t^n)^2;
  the smallest one, the maximum over t < T and every path of positive probability, is used;
* ``F`` = f(x0) - f* exactly (the family's exact f*), ``sigma`` = 0 (exact gradients);
* ``delta``: A3, ||grad F_n(x) - grad f(x)|| <= delta for all x, n, held fixed by tilts
  (:mod:`verify.falsify.families.tilt`): F_n = h + t_n^T (x - x*) with sum_n t_n / N = 0, so
  grad F_n(x) - grad f(x) = t_n for every x and the smallest valid delta is max_n ||t_n|| =
  zeta exactly (not 2 zeta: the 2 delta of Lemma B.3.1 is for a reweighted objective);
* ``G`` / ``PsiG`` (A5 option 2, ||grad f(x)||^2 <= G^2 for all x; PsiG = G^2): only families
  with bounded gradients give it (ridge sums with mu = 0: ``_ridge.grad_sup2``, the supremum
  exactly for independent ridge directions, a valid upper bound otherwise); quadratics have
  none and are not searched for such bounds. Option 1 (PsiG = 0) is not used (its condition
  fails at t = 0 for Algorithm 2 unless every p_n >= ~0.89);
* the local step ``gamma`` is searched in the range its own preconditions allow (the plan's
  step), the global ``eta`` in [max(lo, hi/20), hi], [lo, hi] the values at which every
  precondition holds at the instance's gamma, F, Q, delta (:func:`eta_interval`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .algorithms import LocalRule

__all__ = ["K_GRID", "P_LO", "MAX_PATH_BITS", "t_grid", "extra_vars", "probabilities",
           "paths", "omegas", "weight_stats", "FedAURule", "evaluate", "replay",
           "eta_interval", "MEASURED"]

#: Algorithm 2's cutoffs searched (inf: no cutoff)
K_GRID = (1.0, 2.0, math.inf)
#: the smallest participation probability searched
P_LO = 0.1
#: at most 2^MAX_PATH_BITS participation paths per instance
MAX_PATH_BITS = 9
#: the horizons tried (those with N (T - 1) <= MAX_PATH_BITS)
T_CANDIDATES = (1, 2, 3, 4, 5, 6, 8, 10)
#: the bound parameters this module gives per instance
MEASURED = ("F", "W", "Q", "G", "PsiG", "eta")
_CHUNK = 200_000  # engine rows per batch


def t_grid(n_clients: int) -> tuple:
    """The horizons whose 2^(N (T - 1)) paths are enumerated.

    >>> t_grid(2), t_grid(3)
    ((1, 2, 3, 4, 5), (1, 2, 3, 4))
    """
    return tuple(T for T in T_CANDIDATES if int(n_clients) * (T - 1) <= MAX_PATH_BITS)


def extra_vars(n_clients: int) -> int:
    """Search variables after the family's: N probabilities and eta's position."""
    return int(n_clients) + 1


def probabilities(zp) -> np.ndarray:
    """Participation probabilities in [P_LO, 1] from variables in [-1, 1]."""
    return P_LO + (1.0 - P_LO) * (np.clip(np.asarray(zp, dtype=float), -1, 1) + 1.0) / 2.0


def paths(p, T: int):
    """``(masks (B, T, N), prob (P, B))``: every participation path of rounds 0..T-2 (round
    T-1 all True) and its probability under Bernoulli(p) (p (P, N)).

    >>> m, w = paths(np.array([[0.5, 0.25]]), 2)
    >>> m.shape, w.round(4).tolist()
    ((4, 2, 2), [[0.375, 0.375, 0.125, 0.125]])
    """
    p = np.atleast_2d(np.asarray(p, dtype=float))
    N = p.shape[1]
    bits = N * (int(T) - 1)
    codes = np.arange(2 ** bits)
    flat = ((codes[:, None] >> np.arange(bits)[None, :]) & 1).astype(bool)  # (B, bits)
    masks = np.ones((codes.size, int(T), N), dtype=bool)
    masks[:, :T - 1] = flat.reshape(codes.size, T - 1, N)
    pm = flat.reshape(codes.size, T - 1, N)
    with np.errstate(divide="ignore"):
        lp = np.where(pm[None], np.log(p)[:, None, None, :], np.log1p(-p)[:, None, None, :])
    return masks, np.exp(np.sum(lp, axis=(2, 3)))


def omegas(masks, K: float) -> np.ndarray:
    """Algorithm 2's omega_t (..., T, N) used in round t, from the masks (..., T, N) and the
    cutoff K: omega_t = (t - S_t) / M_t, 1 before the first completed interval.

    >>> omegas(np.array([[True, False], [False, False], [True, True]]), math.inf).tolist()
    [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    >>> omegas(np.array([[False], [False], [False], [True]]), 2.0)[:, 0].tolist()
    [1.0, 1.0, 2.0, 2.0]
    """
    chi = np.asarray(masks, dtype=bool)
    T = chi.shape[-2]
    M = np.zeros(chi.shape[:-2] + chi.shape[-1:])
    S = np.zeros_like(M)
    out = np.ones(chi.shape, dtype=float)
    for t in range(1, T):
        S = S + 1.0
        end = chi[..., t - 1, :] | (S == K)
        M = M + end
        S = np.where(end, 0.0, S)
        out[..., t, :] = np.where(M > 0, (t - S) / np.maximum(M, 1.0), 1.0)
    return out


def weight_stats(p, omega, prob):
    """``(W (P,), Q (P,))``: the expected weight error over the paths and the largest
    (1/N) sum_n p_n omega^2 over rounds and paths of positive probability (module doc).
    ``p`` (P, N), ``omega`` (B, T, N), ``prob`` (P, B)."""
    p = np.asarray(p, dtype=float)
    err = (p[:, None, None, :] * omega[None] - 1.0) ** 2  # (P, B, T, N)
    W = np.einsum("pb,pb->p", prob, err.mean(axis=(2, 3)))
    q = np.einsum("pn,btn->pbt", p, omega ** 2) / p.shape[1]
    Q = np.max(np.where(prob[:, :, None] > 0, q, -np.inf), axis=(1, 2))
    return W, Q


class FedAURule(LocalRule):
    """The engine rule of FedAU: FedAvg's local steps, round r's coefficients ``coef[:, r]``
    = eta p omega_r chi_r (the server step x + sum_n coef_n (y_n - x))."""

    def __init__(self, coef):
        super().__init__("fedau")
        object.__setattr__(self, "coef", np.asarray(coef, dtype=float))

    def round_weights(self, p, losses, F_star_i, mask, r=None):
        return self.coef[:, r]


def _use(plan, T, tau, per):
    """The bound's parameters of a population: plan scalars, then per-instance ones."""
    names = set(plan.bound.params) | set(plan.bound.extra_params)
    P = len(next(iter(per.values())))
    full = {**plan.scalars(T, tau), **per}
    return {k: np.broadcast_to(np.asarray(v, dtype=float), (P,)).copy()
            for k, v in full.items() if k in names}


def eta_interval(bound, use: dict, gamma):
    """(lo, hi) (P,) of the global step eta at which every precondition of ``bound`` holds
    (each is monotone in eta: a bisection per precondition); NaN where none does."""
    gamma = np.asarray(gamma, dtype=float)
    L = use.get("L", np.ones_like(gamma))
    a, b = 1e-9 / (gamma * L), 1e6 / (gamma * L)
    lo, hi = np.zeros_like(gamma), np.full_like(gamma, np.inf)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for pc in bound.preconditions:
            if "eta" not in pc.names:
                continue
            def ok(e, pc=pc):
                return np.asarray(pc.holds({**use, "eta": e}), dtype=bool)
            at_a, at_b = ok(a), ok(b)
            x, y = np.log(a), np.log(b)  # feasible end first, then the other one
            upper = at_a & ~at_b
            f, g = np.where(upper, x, y), np.where(upper, y, x)
            for _ in range(80):
                mid = (f + g) / 2
                good = ok(np.exp(mid))
                f, g = np.where(good, mid, f), np.where(good, g, mid)
            edge = np.exp(f)
            hi = np.where(upper, np.minimum(hi, edge), np.where(~at_a & ~at_b, -np.inf, hi))
            lo = np.where(~at_a & at_b, np.maximum(lo, edge), lo)
    hi = np.where(np.isinf(hi) & (hi > 0), b, hi)
    bad = ~(hi >= lo) | ~(hi > 0)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def _pick_eta(lo, hi, z):
    """eta log-uniform in [max(lo, hi/20), hi] at the position z in [-1, 1]."""
    a = np.maximum(lo, hi / 20.0)
    return a * (hi / a) ** ((np.clip(z, -1, 1) + 1.0) / 2.0)


def instance_params(plan, fam_or_none, Zx, T, tau, gamma, F, G2):
    """``(per-instance parameters, p (P, N), masks, prob, omega)`` for the extra variables
    ``Zx`` (P, N + 1), the measured F (P,) and sup ||grad f||^2 G2 (P,) (NaN: not bounded)."""
    N = plan.spec.n_clients
    p = probabilities(Zx[:, :N])
    masks, prob = paths(p, T)
    om = omegas(masks, float(plan.hyper["K"]))
    W, Q = weight_stats(p, om, prob)
    per = {"F": F, "W": W, "Q": Q, "G": np.sqrt(G2), "PsiG": G2,
           plan.step_name: np.asarray(gamma, dtype=float)}
    lo, hi = eta_interval(plan.bound, _use(plan, T, tau, per), gamma)
    per["eta"] = _pick_eta(lo, hi, Zx[:, N])
    return per, p, masks, prob, om


def _grad_sup2(arrays_of, p, n) -> np.ndarray:
    """sup_x ||grad f(x)||^2 (n,) of a ridge population (``arrays_of()`` its arrays); NaN for
    a population without bounded gradients (quadratic, logistic)."""
    from .families import _ridge

    try:
        arr = arrays_of()
    except AttributeError:
        return np.full(n, np.nan)
    return np.atleast_1d(_ridge.grad_sup2(arr, p))


def evaluate(plan, fam, Z, T, tau, gamma):
    """``(ratio, lhs, rhs)`` (P,) of the search points Z (P, n_vars + N + 1) with local steps
    ``gamma`` (P,): every path of every instance through the batched engine."""
    from .engine import run_batched
    from .judge import judge

    N = plan.spec.n_clients
    Z = np.atleast_2d(Z)
    stacked = fam.stack(Z, plan.spec)
    P = Z.shape[0]
    F = np.asarray(stacked.losses(np.repeat(stacked.x0[:, None], N, 1)) @ stacked.p
                   - stacked.F_star, dtype=float)
    G2 = _grad_sup2(lambda: stacked.base.arr, stacked.p, P)
    per, p, masks, prob, om = instance_params(plan, fam, Z[:, -(N + 1):], T, tau, gamma, F,
                                              G2)
    B = masks.shape[0]
    q = {}
    rows = max(1, _CHUNK // B)
    for s in range(0, P, rows):
        idx = np.arange(s, min(P, s + rows))
        sub = fam.stack(np.repeat(Z[idx], B, axis=0), plan.spec)  # row k b: path b of k
        coef = per["eta"][idx, None, None, None] * stacked.p * om[None] * masks[None]
        qq = run_batched(sub, sub.x0, np.repeat(gamma[idx], B), rounds=T, tau=tau,
                         rule=FedAURule(coef.reshape(idx.size * B, T, N)),
                         masks=np.tile(masks, (idx.size, 1, 1)))
        for key, v in _expect(qq, prob[idx], B).items():
            q.setdefault(key, []).append(v)
    q = {k: np.concatenate(v) for k, v in q.items()}
    r, lhs, rhs, _ = judge(plan.bound, q, plan.scalars(T, tau), per)
    return r, lhs, rhs


def _expect(q, prob, B):
    """Probability-weighted means over each instance's B paths of the state arrays."""
    out = {}
    for key in ("gap", "dist2", "grad_norm2", "loss"):
        v = q[key].reshape(prob.shape[0], B, -1)
        out[key] = np.einsum("pb,pbt->pt", prob, np.where(prob[:, :, None] > 0, v, 0.0))
    return out


def replay(plan, prob, x0, T, tau, gamma, z):
    """One instance on ``toys.run``, every path of positive probability: ``(ratio, lhs,
    rhs)``, with the expectation and parameters of :func:`evaluate`."""
    import toys

    from .engine import quantities_of_trace
    from .judge import judge

    N = plan.spec.n_clients
    z = np.asarray(z, dtype=float)
    F = np.array([float(prob.F(x0) - prob.F_star)])
    G2 = _grad_sup2(lambda: {k: (v[None] if isinstance(v, np.ndarray) else v)
                             for k, v in prob.base.arr.items()}, prob.p, 1)
    per, _, masks, w, _ = instance_params(plan, None, z[None, -(N + 1):], T, tau,
                                          np.array([float(gamma)]), F, G2)
    K = float(plan.hyper["K"])
    acc = {}
    for b in np.flatnonzero(w[0] > 0):
        tr = toys.run(prob, "fedau", rounds=int(T), seed=0, lr=float(gamma),
                      server_lr=float(per["eta"][0]), local_steps=int(tau), x0=x0,
                      participation=masks[b], K=None if math.isinf(K) else int(K))
        for key, v in quantities_of_trace(tr).items():
            if key in ("gap", "dist2", "grad_norm2", "loss"):
                acc[key] = acc.get(key, 0.0) + w[0, b] * v
    r, lhs, rhs, _ = judge(plan.bound, acc, plan.scalars(T, tau), per)
    return float(r[0]), float(lhs[0]), float(rhs[0])


def plan_fields(s: dict, spec, names: set, zeta_default: float, participation, given,
                bound_id) -> dict:
    """What :func:`verify.falsify.plan.make_plan` builds a FedAU plan from (keyword arguments
    of :class:`~verify.falsify.plan.Plan` beyond the bound and its class), popping the
    setting ``s``; NotApplicable with the reason when a parameter cannot be given (``given``:
    the names the plan gives every bound)."""
    import dataclasses

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
    notes = _notes(spec, zeta, G, K)
    if "T" in s:
        T_grid = (int(s.pop("T")),)
        if spec.n_clients * (T_grid[0] - 1) > MAX_PATH_BITS:
            raise NotApplicable(f"T = {T_grid[0]} with N = {spec.n_clients}: the exact "
                                f"expectation enumerates 2^(N (T-1)) participation paths, at "
                                f"most 2^{MAX_PATH_BITS}")
    else:
        T_grid = t_grid(spec.n_clients)
    tau_names = [k for k in LOCAL_NAMES if k in s]
    tau_grid = (int(s.pop(tau_names[0])),) if tau_names else (1, 2, 5)
    step_name, step_fixed, step_notes, step_given = step_of(names - {"eta"}, s, spec.L)
    if step_name is None and not step_given:
        raise NotApplicable("FedAU's local step gamma is not a parameter of the bound")
    grid = ({"K": float(K)},) if K is not None else tuple({"K": k} for k in K_GRID)
    measured = tuple(k for k in MEASURED if k in names)
    fixed = {k: float(v) for k, v in s.items() if k in names}
    fixed.update({step_name or "gamma": step_fixed} if step_given else {})
    missing = sorted(names - set(given) - {"delta"} - set(measured) - set(fixed))
    if missing:
        raise NotApplicable(f"parameter(s) {', '.join(missing)} of {bound_id} are not measured "
                            "by falsify for algorithm=fedau: give them as name=value")
    return {"spec": dataclasses.replace(spec, zeta=zeta), "T_grid": T_grid,
            "tau_grid": tau_grid, "step_name": step_name, "step_fixed": step_fixed,
            "notes": tuple(notes + step_notes), "hyper_grid": grid, "measured": measured,
            "step_given": step_given, "fixed": fixed}


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
