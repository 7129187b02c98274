"""FedAU (seed 002, Wang & Ji, Algorithms 1 and 2) in :func:`verify.falsify`, judged in
expectation over its Bernoulli participation paths, on the toys engine.

The algorithm is toys' own (``"fedau"`` of :mod:`toys.algorithms`: FedAvg's local steps, the
weight rule p_n omega_t^n chi_t^n of Algorithm 2 and the server step x + eta sum_n w_n Delta_n);
nothing of it is written here. Every round t the participants (chi_t^n = 1) run I local steps
of size gamma from x_t; omega_t^n is Algorithm 2's online estimate of 1/P(participate), which
depends on chi_0..chi_{t-1} only (:func:`omegas` runs toys' estimator,
:func:`toys.algorithms.fedau.fedau_update`, over the paths).

**Expectation, exactly.** Theorems 2 / Corollary 4 bound (1/T) sum_t E ||grad f(x_t)||^2, the
expectation over the participation (A4: chi_t^n ~ Bernoulli(p_n), independent); one path
above the bound is no counterexample. The search therefore runs, for every instance, *every*
participation path of rounds 0..T-2 (x_0..x_{T-1} do not depend on round T-1's; its mask is
all True), 2^(N (T-1)) of them, as one population of :func:`toys.run_many` (participation: the
(B, T, N) path masks), and weighs them by their probabilities: the left-hand side is the exact
expectation. Horizons are limited to N (T - 1) <= :data:`MAX_PATH_BITS` (:func:`t_grid`). The
replay does the same on ``toys.run`` (one run per path of positive probability).
``toys.run_many`` varies only the local step per instance (``vary={"lr": ...}``), and each
instance has its own global step eta, so each instance's paths are one ``run_many`` call.

**Parameters, per instance** (all known before the run):

* the participation probabilities p_n in [:data:`P_LO`, 1] are search variables (the last
  N + 1 variables of z: N probabilities, then the position of eta in its feasible range);
* ``W`` = (1/(N T)) sum_{t<T} sum_n E (p_n omega_t^n - 1)^2: the expectation over the paths,
  exactly (the theorem's W is an expectation);
* ``Q``: the theorem needs a *deterministic* bound on max_t (1/N) sum_n p_n (omega_t^n)^2;
  the smallest one, the maximum over t < T and every path of positive probability, is used;
* ``F`` = f(x0) - f* exactly (the family's exact f*), ``sigma`` = 0 (exact gradients);
* ``delta``: A3, ||grad F_n(x) - grad f(x)|| <= delta for all x, n, held fixed by tilts
  (:mod:`verify.falsify.families.tilt`): grad F_n(x) - grad f(x) = t_n for every x and the
  smallest valid delta is max_n ||t_n|| = zeta exactly;
* ``G`` / ``PsiG`` (A5 option 2, ||grad f(x)||^2 <= G^2 for all x; PsiG = G^2): only families
  with bounded gradients give it (ridge sums with mu = 0: ``_ridge.grad_sup2``);
* the local step ``gamma`` is searched in the range its own preconditions allow (the plan's
  step), the global ``eta`` in [max(lo, hi/20), hi], [lo, hi] the values at which every
  precondition holds at the instance's gamma, F, Q, delta (:func:`eta_interval`).

**Other left-hand sides** (:mod:`verify.falsify.fedau_lhs`, on the same paths): Theorem
B.4.1's ``avg_grad_norm2_h`` (Algorithm 1 with constant omega_n = E[S_n], H, P, Q, deltat),
Lemma B.5.1's ``one_round_descent`` and Lemma B.3.2's ``local_drift`` (judged at every state:
round and path), and Corollary 4's equiprobable sampling (``S_sampled``: p_n = S/N,
omega = 1/p_n). :func:`instance_arrays` gives one instance's run arrays and parameters.

>>> m, w = paths(np.array([[0.5, 0.25]]), 2)
>>> m.shape, w.round(4).tolist()
((4, 2, 2), [[0.375, 0.375, 0.125, 0.125]])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

__all__ = ["K_GRID", "P_LO", "MAX_PATH_BITS", "t_grid", "extra_vars", "probabilities",
           "paths", "omegas", "weight_stats", "evaluate", "replay", "instance_arrays",
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
MEASURED = ("F", "W", "Q", "G", "PsiG", "eta")  # (+ fedau_lhs.measured)
_STATE = ("gap", "dist2", "grad_norm2", "loss")  # the arrays whose expectation is taken


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
    T-1 all True) and its probability under Bernoulli(p) (p (P, N))."""
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
    """Algorithm 2's omega_t (B, T, N) used in round t of every path ``masks`` (B, T, N), by
    toys' estimator (:func:`toys.algorithms.fedau.fedau_update`, all paths at once).

    >>> omegas(np.array([[[False], [False], [False], [True]]]), 2.0)[0, :, 0].tolist()
    [1.0, 1.0, 2.0, 2.0]
    """
    from toys.algorithms.fedau import fedau_init, fedau_update

    chi = np.asarray(masks, dtype=bool)
    state = fedau_init(chi.shape[-1])
    out = np.empty(chi.shape, dtype=float)
    for t in range(chi.shape[-2]):  # the rounds (a path's state depends on its past)
        out[..., t, :] = state.omega
        state = fedau_update(state, chi[..., t, :], K)
    return out


def weight_stats(p, omega, prob):
    """``(W (P,), Q (P,))``: the expected weight error over the paths and the largest
    (1/N) sum_n p_n omega^2 over rounds and paths of positive probability (module doc).
    ``p`` (P, N), ``omega`` (B, T, N), ``prob`` (P, B)."""
    from .fedau_lhs import round_stats

    werr, q = round_stats(p, omega)  # (P, B, T)
    W = np.einsum("pb,pb->p", prob, werr.mean(axis=2))
    Q = np.max(np.where(prob[:, :, None] > 0, q, -np.inf), axis=(1, 2))
    return W, Q


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


def instance_params(plan, Zx, T, tau, gamma, F, G2, problem_of=None):
    """``(per-instance parameters, masks (B, T, N), prob (P, B), ctx)`` for the extra
    variables ``Zx`` (P, N + 1), the measured F (P,) and sup ||grad f||^2 G2 (P,) (NaN: not
    bounded); ``ctx``: the probabilities ``p`` (P, N), Algorithm 2's ``omega`` (B, T, N) and
    the constant weights' runs (:mod:`verify.falsify.fedau_lhs`; ``problem_of(k) -> (problem,
    x0)`` of instance k gives Theorem B.4.1's h)."""
    from . import fedau_lhs

    N = plan.spec.n_clients
    names = set(plan.bound.params) | set(plan.bound.extra_params)
    reg = fedau_lhs.regime(plan.lhs, names)
    K = cutoff(plan)
    gamma = np.asarray(gamma, dtype=float)
    per = {plan.step_name: gamma}
    if reg == "known":  # p_n = S/N, omega = 1/p_n (W = 0)
        S, p = fedau_lhs.sampled_probabilities(Zx[:, :N], N)
        per.update({"F": F, "S_sampled": S})
    else:
        p = probabilities(Zx[:, :N])
    masks, prob = paths(p, T)
    ctx = {"regime": reg, "p": p, "omega": None, "setups": None}
    if reg == "alg2":
        ctx["omega"] = omegas(masks, K)
        W, Q = weight_stats(p, ctx["omega"], prob)
        per.update({"F": F, "W": W, "Q": Q, "G": np.sqrt(G2), "PsiG": G2})
        if "deltat" in names:  # Lemma B.3.2 with f~ = f: deltat = delta (the tilts)
            per["deltat"] = np.full(p.shape[0], float(plan.spec.zeta))
    elif reg == "h":
        ctx["setups"] = [fedau_lhs.h_setup(*problem_of(k), p[k], K) for k in range(p.shape[0])]
        per.update({k: np.array([s[k] for s in ctx["setups"]]) for k in ("H", "P", "Q",
                                                                         "deltat")})
    lo, hi = eta_interval(plan.bound, _use(plan, T, tau, per), gamma)
    if "eta" not in names:  # eta is the run's only: gamma eta in [1/(40 L I), 1/(2 L I)]
        lo, hi = np.zeros_like(gamma), 1.0 / (2.0 * plan.spec.L * tau * gamma)
    per["eta"] = _pick_eta(lo, hi, Zx[:, N])
    return per, masks, prob, ctx


def _grad_sup2(arrays_of, p, n) -> np.ndarray:
    """sup_x ||grad f(x)||^2 (n,) of a ridge population (``arrays_of()`` its arrays); NaN for
    a population without bounded gradients (quadratic, logistic)."""
    from .families import _ridge

    try:
        arr = arrays_of()
    except AttributeError:
        return np.full(n, np.nan)
    return np.atleast_1d(_ridge.grad_sup2(arr, p))


def cutoff(plan) -> float:
    """Algorithm 2's cutoff K of the plan's grid point (``math.inf``: none; a saved file
    writes it as null).

    >>> from types import SimpleNamespace
    >>> cutoff(SimpleNamespace(hyper={"K": None})), cutoff(SimpleNamespace(hyper={"K": 2}))
    (inf, 2.0)
    """
    K = plan.hyper.get("K")
    return math.inf if K is None else float(K)


def _fedau_kw(plan) -> dict:
    K = cutoff(plan)
    return {"K": None if math.isinf(K) else int(K)}


def evaluate(plan, fam, Z, T, tau, gamma):
    """``(ratio, lhs, rhs)`` (P,) of the search points Z (P, n_vars + N + 1) with local steps
    ``gamma`` (P,): every path of an instance as one population of :func:`toys.run_many`."""
    from .judge import judge
    from .population import FamilyPopulation

    N = plan.spec.n_clients
    Z = np.atleast_2d(Z)
    stacked = fam.stack(Z, plan.spec)
    P = Z.shape[0]
    F = np.asarray(stacked.losses(np.repeat(stacked.x0[:, None], N, 1)) @ stacked.p
                   - stacked.F_star, dtype=float)
    G2 = _grad_sup2(lambda: stacked.base.arr, stacked.p, P)
    per, masks, prob, ctx = instance_params(plan, Z[:, -(N + 1):], T, tau, gamma, F, G2,
                                            problem_of=lambda k: fam.build(Z[k], plan.spec))
    B = masks.shape[0]
    q = {}
    for k in np.flatnonzero(np.isfinite(per["eta"]) & np.isfinite(gamma)):
        if ctx["regime"] == "h":
            pop, x0 = [ctx["setups"][k]["problem"]] * B, np.repeat(stacked.x0[k:k + 1], B, 0)
        else:
            pop = FamilyPopulation(fam.stack(np.repeat(Z[k:k + 1], B, axis=0), plan.spec))
            x0 = None
        qq = _run_paths(plan, ctx, k, pop, x0, masks, T, tau, gamma[k], per["eta"][k])
        _fill(q, k, P, _path_summary(plan, ctx, k, qq, masks, prob[k]))
    if not q:
        return np.full((3, P), -np.inf)
    r, lhs, rhs, _ = judge(plan.bound, q, plan.scalars(T, tau), per)
    return r, lhs, rhs


def _run_paths(plan, ctx, k, pop, x0, masks, T, tau, gamma, eta):
    """The path quantities ({name: (B, ...)}) of instance ``k`` on :func:`toys.run_many`
    (``pop``: B copies of the instance, one per path)."""
    import toys

    from .population import quantities

    algo, kw = _algorithm(plan, ctx, k)
    drift = plan.lhs == "local_drift"
    rec = {"record": "step", "measure": ("gap", "dist2", "grad_norm2", "loss",
                                         "local_deviation")} if drift else {"record": "state"}
    res = toys.run_many(pop, algo, rounds=int(T), seeds=0, participation=masks, x0=x0,
                        local_steps=int(tau), server_lr=float(eta),
                        vary={"lr": np.full(masks.shape[0], float(gamma))}, **rec, **kw)
    return quantities(res)


def _algorithm(plan, ctx, k):
    """``(algorithm, keyword arguments)`` of instance k: toys' FedAU (Algorithm 2) or
    Algorithm 1 with constant weights (:func:`verify.checks.weight_error_descent.
    constant_omega`: 1/p_n, or Theorem B.4.1's run weights)."""
    from ..checks.weight_error_descent import constant_omega

    if ctx["regime"] == "alg2":
        return "fedau", _fedau_kw(plan)
    if ctx["regime"] == "known":
        return constant_omega(1.0 / ctx["p"][k]), {}
    return constant_omega(ctx["setups"][k]["omega_run"]), {}


def _path_summary(plan, ctx, k, qq, masks, w) -> dict:
    """The run arrays of one instance (rows (1, ...)) from its path quantities ``qq``: the
    expectations over the paths (weights ``w`` (B,)) and the per-state arrays."""
    from .fedau_lhs import STATE_LHS, state_arrays

    out = {key: _expect(np.asarray(qq[key], dtype=float), w)[None] for key in _STATE}
    if ctx["regime"] == "h":  # the run's F is h: its grad_norm2 is ||grad h||^2
        out["grad_norm2_h"] = out["grad_norm2"]
    if plan.lhs in STATE_LHS:
        out.update(state_arrays(plan.lhs, qq, masks, ctx["p"][k], ctx["omega"]))
    return out


def _fill(q, k, P, row):
    """Row k of the population's run arrays (NaN rows where no instance ran)."""
    for key, v in row.items():
        if key not in q:
            q[key] = np.full((P, v.shape[1]), np.nan)
        q[key][k] = v[0]


def _expect(v, prob):
    """The probability-weighted mean over the paths (rows of ``v`` (B, K)); paths of
    probability 0 (an instance at p_n = 1) are left out, whatever they hold."""
    return np.einsum("b,bt->t", prob, np.where(prob[:, None] > 0, v, 0.0))


def replay(plan, prob, x0, T, tau, gamma, z):
    """One instance on ``toys.run``, path by path: ``(ratio, lhs, rhs)``, with the
    expectations, states and parameters of :func:`evaluate`."""
    from .judge import judge

    q, per = instance_arrays(plan, prob, x0, T, tau, gamma, z)
    if q is None:
        return -math.inf, math.nan, math.nan
    r, lhs, rhs, _ = judge(plan.bound, q, plan.scalars(T, tau), per)
    return float(r[0]), float(lhs[0]), float(rhs[0])


def instance_arrays(plan, prob, x0, T, tau, gamma, z):
    """``(run arrays {name: (1, K)}, per-instance parameters {name: (1,)})`` of one instance
    on ``toys.run``, one run per participation path (``(None, parameters)`` where no global
    step satisfies the preconditions): what :func:`replay` judges."""
    import toys

    from .population import quantities

    N = plan.spec.n_clients
    z = np.asarray(z, dtype=float)
    F = np.array([float(prob.F(x0) - prob.F_star)])
    G2 = _grad_sup2(lambda: {k: (v[None] if isinstance(v, np.ndarray) else v)
                             for k, v in prob.base.arr.items()}, prob.p, 1)
    per, masks, w, ctx = instance_params(plan, z[None, -(N + 1):], T, tau,
                                         np.array([float(gamma)]), F, G2,
                                         problem_of=lambda k: (prob, x0))
    if not np.isfinite(per["eta"][0]):
        return None, per
    algo, kw = _algorithm(plan, ctx, 0)
    run_prob = ctx["setups"][0]["problem"] if ctx["regime"] == "h" else prob
    rec = {"record": "step", "extra_steps": ("local_deviation",)} \
        if plan.lhs == "local_drift" else {}
    rows = [quantities(toys.run(run_prob, algo, rounds=int(T), seed=0, lr=float(gamma),
                                server_lr=float(per["eta"][0]), local_steps=int(tau), x0=x0,
                                participation=masks[b], **rec, **kw))
            for b in range(masks.shape[0])]
    qq = {key: np.concatenate([r[key] for r in rows]) for key in rows[0]}
    q = {}
    _fill(q, 0, 1, _path_summary(plan, ctx, 0, qq, masks, w[0]))
    return q, per
