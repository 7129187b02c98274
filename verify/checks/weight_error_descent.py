"""Seed 002 (FedAU): Theorem B.4.1 (the reweighted objective h) and Lemma B.5.1 (the expected
one-round descent), judged on runs of the real engine.

Instance: the one-Hessian quadratic of :mod:`verify.checks.weight_error_drift` (8 clients,
d = 3, F_n(x) = 1/2 (x - c_n)^T A (x - c_n), uniform 1/N: the paper's f), full batch
(sigma = 0), independent Bernoulli(pi_n) participation (the analysis' A4) with the known
pi_n = 0.2 .. 0.9, I = 5 local steps, x_0 = x* + 3. L = lambda_max(A) exactly.

* ``weight_error.theorem_b41`` (and its printed constant, ``.printed``): Algorithm 1 with
  time-constant weights omega_n (the real engine: FedAU's client and server pieces with
  :class:`toys.algorithms.fedau.FixedOmega`). h = (1/P) sum_n omega_n pi_n F_n,
  P = sum_n omega_n pi_n, is computed exactly from the known pi_n and omega_n: the quadratic
  with weights phi_n = omega_n pi_n / P, grad h(x) = A_h x - b_h, h* = h(A_h^{-1} b_h). Per
  seed (one participation path each) the sample is (1/T) sum_{t<T} ||grad h(x_t)||^2 with the
  x_t read by a round callback; judged on the mean over seeds (95 % Student-t interval,
  :func:`verify.compare`). The bound's parameters from their definitions on the instance:
  H = h(x_0) - h*, Q = (1/N) sum_n pi_n omega_n^2, deltat = max_n ||grad F_n - grad h||
  (constant in x with one Hessian: exact; Lemma B.3.1's 2 delta is larger). Weights: omega = 1
  (average-all), 1/pi_n (the known-participation weights: h = f) and E[S_n] =
  (1 - (1 - pi_n)^K)/pi_n, K = 3 (the constant FedAU's Algorithm 2 estimates, held fixed).
  FedAU's own omega_t (Algorithm 2) is reported beside them as not-applicable: the theorem
  assumes omega^n_t = omega_n; its h uses the weights E[S_n] its omega_t converge to.
  gamma = 1/2 of 1/(4 sqrt(15) L I); gamma eta at 0.95 of the largest the other two
  preconditions allow.
* ``weight_error.lemma_b51``: states (x_t, omega_t) along a run of FedAU (Algorithm 2,
  K = 3) and of Algorithm 1 with omega = 1/pi_n (weight error 0: the regime where the bound
  promises a descent). From each state the local updates Delta_n of all N clients (the real
  client piece, one full-participation round from x_t read through
  :class:`~verify.checks.contraction_local.Recorded`), then M participation draws
  chi ~ Bernoulli(pi) at once: x_{t+1} = x_t + (eta/N) (chi * omega_t) @ Delta (the server
  step of Algorithm 1), samples f(x_{t+1}) - f(x_t). The verdict is the 95 % interval of their
  mean against the bound (holds / VIOLATED / inconclusive: :func:`verify.compare`, as the
  mean-over-seeds checks). grad_norm2 = ||grad f(x_t)||^2, q_t = (1/N) sum_n pi_n
  (omega^n_t)^2 and werr_t = (1/N) sum_n (pi_n omega^n_t - 1)^2 from the state;
  delta = max_n ||A (c_n - cbar)|| exact. Where the bound is <= 0 (a promised descent) the
  ratio measured / bound measures no tightness (both negative: above 1 when the run descends
  more than promised): it is left undefined there and the slack bound - measured is recorded
  (``setting["slack"]``); the verdict compares the signed values.

Example
-------
>>> from verify.suite import Context
>>> rs = weight_error_one_round_descent(Context(quick=True))
>>> {r.bound_id for r in rs}, sorted({r.verdict for r in rs})
({'weight_error.lemma_b51'}, ['holds'])
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

import boundlab
import toys
from toys import participation
from toys.algorithms.fedau import FixedOmega

from ..compare import CheckResult
from ._common import judge
from ._registry import register
from .contraction_local import recorded_run
from .weight_error_drift import shared_hessian_problem

PI = np.linspace(0.2, 0.9, 8)  # Bernoulli participation probabilities (A4), one per client
I_STEPS, K_CUT, GAMMA_FRAC, ETA_FRAC, X0_SHIFT = 5, 3, 0.5, 0.95, 3.0
B41_IDS = ("weight_error.theorem_b41", "weight_error.theorem_b41.printed")
_PROBLEM = "quadratic, one Hessian (N = 8, d = 3), Bernoulli pi = 0.2 .. 0.9"


class Reweighted(NamedTuple):
    """h = sum_n phi_n F_n, phi_n = omega_n pi_n / P, and the constants Theorem B.4.1 uses."""

    omega: np.ndarray
    phi: np.ndarray
    P: float
    Q: float
    A_h: np.ndarray
    b_h: np.ndarray
    h_star: float
    deltat: float


def cutoff_mean(pi, K) -> np.ndarray:
    """E[S_n] = (1 - (1 - pi_n)^K) / pi_n: the K-cutoff interval mean (Lemma B.6.1), the
    constant FedAU's Algorithm 2 estimates under Bernoulli(pi_n) participation."""
    pi = np.asarray(pi, dtype=float)
    return (1.0 - (1.0 - pi) ** K) / pi


def h_values(prob, rw: Reweighted, X) -> np.ndarray:
    """h at the rows of X: sum_n phi_n F_n(x)."""
    D = np.atleast_2d(X)[:, None, :] - prob.c[None]
    return (0.5 * np.einsum("rni,nij,rnj->rn", D, prob.A, D) + prob.b) @ rw.phi


def grad_h_norm2(rw: Reweighted, X) -> np.ndarray:
    """||grad h(x)||^2 at the rows of X (grad h(x) = A_h x - b_h)."""
    G = np.atleast_2d(X) @ rw.A_h.T - rw.b_h
    return np.einsum("rd,rd->r", G, G)


def reweighted(prob, pi, omega) -> Reweighted:
    """h of the constant weights ``omega`` under participation probabilities ``pi``, exactly
    (a quadratic with one Hessian, so that deltat is exact)."""
    pi, omega = np.asarray(pi, dtype=float), np.asarray(omega, dtype=float)
    w = omega * pi
    P = float(w.sum())
    phi = w / P
    A_h = np.einsum("n,nij->ij", phi, prob.A)
    b_h = np.einsum("n,nij,nj->i", phi, prob.A, prob.c)
    if not np.allclose(prob.A, A_h[None], rtol=1e-12, atol=1e-12):
        raise ValueError("reweighted: deltat is exact only when every client has the same "
                         "Hessian (grad F_n - grad h is then constant in x)")
    deltat = float(np.max(np.linalg.norm(b_h - np.einsum("nij,nj->ni", prob.A, prob.c),
                                         axis=1)))
    rw = Reweighted(omega, phi, P, float(np.mean(pi * omega ** 2)), A_h, b_h, 0.0, deltat)
    return rw._replace(h_star=float(h_values(prob, rw, np.linalg.solve(A_h, b_h))[0]))


def b41_steps(rw: Reweighted, N: int, L: float) -> tuple[float, float]:
    """(gamma, eta): gamma = GAMMA_FRAC / (4 sqrt(15) L I); gamma eta = ETA_FRAC times the
    largest value the theorem's other two preconditions allow."""
    gamma = GAMMA_FRAC / (4.0 * math.sqrt(15.0) * L * I_STEPS)
    slack = 1.0 / 8.0 - 15.0 * (L * I_STEPS * gamma) ** 2
    ge = min(N / (2.0 * L * I_STEPS * rw.P), slack * 16.0 * rw.P / (27.0 * I_STEPS * L * rw.Q))
    return gamma, ETA_FRAC * ge / gamma


def constant_omega(omega) -> toys.Algorithm:
    """Algorithm 1 with time-constant weights omega (FedAU's pieces, FixedOmega weights)."""
    base = toys.algorithms.get("average-all")
    return dataclasses.replace(base, name="alg1-constant-omega",
                               weights=FixedOmega(np.asarray(omega, dtype=float)))


def avg_grad_h(prob, algorithm, rw: Reweighted, chi, *, x0, gamma, eta, **hyper) -> float:
    """(1/T) sum_{t<T} ||grad h(x_t)||^2 along one run on the participation matrix ``chi``
    (T, N) (x_1 .. x_{T-1} read after each round by a callback)."""
    T = int(np.shape(chi)[0])
    models = [np.asarray(x0, dtype=float)]
    toys.run(prob, algorithm, rounds=T, seed=0, participation=chi, x0=x0, lr=gamma,
             local_steps=I_STEPS, server_lr=eta, record="none",
             callbacks=[lambda info: models.append(info.model)], **hyper)
    if len(models) < T:  # the engine stops at a divergence
        return float("nan")
    return float(np.mean(grad_h_norm2(rw, np.stack(models[:T]))))


def _b41_params(prob, rw, L, gamma, eta, T, x0) -> dict:
    return {"H": float(h_values(prob, rw, x0)[0]) - rw.h_star, "N": prob.n_clients,
            "gamma": gamma, "eta": eta, "P": rw.P, "I": I_STEPS, "T": T, "L": L,
            "sigma": 0.0, "deltat": rw.deltat, "Q": rw.Q}


def _b41_cases():
    """(case, algorithm, omega of h, extra hyper, violated hypotheses)."""
    es = cutoff_mean(PI, K_CUT)
    adaptive = (f"FedAU's omega_t (Algorithm 2, K = {K_CUT}) changes with t: the theorem "
                "assumes time-constant weights omega^n_t = omega_n")
    return [("omega = 1 (average-all)", None, np.ones(PI.size), {}, ()),
            ("omega = 1/pi (known participation: h = f)", None, 1.0 / PI, {}, ()),
            (f"omega = E[S_n], K = {K_CUT} (FedAU's limit, held fixed)", None, es, {}, ()),
            (f"FedAU Algorithm 2, K = {K_CUT} (h with omega = E[S_n])", "fedau", es,
             {"K": K_CUT}, (adaptive,))]


@register("weight_error", *B41_IDS)
def weight_error_reweighted_objective(ctx) -> list[CheckResult]:
    """Theorem B.4.1: (1/T) sum_t E||grad h(x_t)||^2 with constant weights vs the bound."""
    prob, _, L = shared_hessian_problem()
    T, R = ctx.pick(300, 60), ctx.n_seeds(20, 6)
    x0 = prob.x_star + X0_SHIFT
    chis = [participation.sample(participation.Bernoulli(PI), T, np.random.default_rng(s))
            for s in range(R)]
    out = []
    for case, algo, omega, hyper, violated in _b41_cases():
        rw = reweighted(prob, PI, omega)
        gamma, eta = b41_steps(rw, prob.n_clients, L)
        run_algo = constant_omega(omega) if algo is None else algo
        samples = [avg_grad_h(prob, run_algo, rw, chi, x0=x0, gamma=gamma, eta=eta, **hyper)
                   for chi in chis]
        prm = _b41_params(prob, rw, L, gamma, eta, T, x0)
        for bid in B41_IDS:
            out.append(judge(
                boundlab.get(bid), samples, prm, check="weight_error_reweighted_objective",
                case=case, problem=_PROBLEM, seeds=list(range(R)), extra_violations=violated,
                setting={"rounds": T, "local_steps": I_STEPS, "x0": f"x* + {X0_SHIFT:g}",
                         "omega": np.round(omega, 4).tolist()},
                note=f"h = (1/P) sum_n omega_n pi_n F_n exact (known pi, omega); samples: "
                     f"(1/T) sum_t ||grad h(x_t)||^2 per participation path ({R} paths, "
                     f"seeds 0..{R - 1}); H = h(x_0) - h* = {prm['H']:.4g}, P = {rw.P:.4g}, "
                     f"Q = {rw.Q:.4g}, deltat = max_n ||grad F_n - grad h|| = "
                     f"{rw.deltat:.4g} (exact); gamma = {GAMMA_FRAC:g}/(4 sqrt(15) L I), "
                     f"gamma eta = {ETA_FRAC:g} x its largest allowed value"))
    return out


# ------------------------------------------------------------------------------ Lemma B.5.1
class State(NamedTuple):
    """A state of the run at round t: the model x_t and the weights omega_t."""

    t: int
    x: np.ndarray
    omega: np.ndarray


def run_states(prob, algorithm, rounds: int, ts, *, gamma, eta, seed: int = 0,
               **hyper) -> list[State]:
    """(x_t, omega_t) at the rounds ``ts`` of one run of ``algorithm`` under Bernoulli(PI)
    participation (omega_t: the weights the engine used in round t, ``Trace.omega``)."""
    models = [prob.x_star + X0_SHIFT]
    tr = toys.run(prob, algorithm, rounds=rounds, seed=seed, x0=models[0],
                  participation=participation.Bernoulli(PI), lr=gamma, local_steps=I_STEPS,
                  server_lr=eta, record="none",
                  callbacks=[lambda info: models.append(info.model)], **hyper)
    return [State(t, models[t], np.asarray(tr.omega[t], dtype=float)) for t in ts]


def local_updates(prob, x, gamma) -> np.ndarray:
    """Delta_n = y^n_{t,I} - x_t of every client (N, d): one full-participation round of the
    real client piece from x, read through Recorded."""
    _, W, _ = recorded_run(prob, "fedau", 1, lr=gamma, local_steps=I_STEPS, x0=x)
    return W[0, -1] - W[0, 0]


def descent_samples(prob, state: State, delta_n, *, eta, M: int, seed: int) -> np.ndarray:
    """f(x_{t+1}) - f(x_t) for M independent draws chi ~ Bernoulli(PI), all at once:
    x_{t+1} = x_t + eta sum_n (1/N) chi_n omega^n_t Delta_n (the engine's server step)."""
    chi = np.random.default_rng(seed).random((M, PI.size)) < PI
    coef = chi * (prob.p * state.omega)[None, :]  # (M, N): p_n = 1/N
    X = state.x[None, :] + eta * coef @ delta_n
    return prob.Fs(X) - prob.F(state.x)


def lemma_params(prob, state: State, *, gamma, eta, L, delta) -> dict:
    """The lemma's parameters at the state, from their definitions."""
    g = prob.grad_F(state.x)
    return {"gamma": gamma, "eta": eta, "I": I_STEPS, "L": L, "sigma": 0.0, "delta": delta,
            "N": prob.n_clients, "grad_norm2": float(g @ g),
            "werr_t": float(np.mean((PI * state.omega - 1.0) ** 2)),
            "q_t": float(np.mean(PI * state.omega ** 2))}


def _lemma_cases():
    """(case, algorithm, extra hyper): FedAU's weights and the known-participation ones."""
    return [(f"FedAU Algorithm 2, K = {K_CUT}", "fedau", {"K": K_CUT}),
            ("omega = 1/pi (known participation)", constant_omega(1.0 / PI), {})]


def _signed_ratio(r: CheckResult) -> CheckResult:
    """A bound <= 0 promises a descent: measured / bound is then no measure of tightness
    (above 1 when the run descends more than promised), so the ratio is left undefined and
    the slack bound - measured is recorded instead."""
    if np.isfinite(r.bound) and r.bound <= 0:
        r.ratio = float("nan")
        r.setting["slack"] = r.bound - r.measured
        r.note += (f"; the bound is {r.bound:.4g} <= 0 (a guaranteed descent): ratio left "
                   f"undefined, slack bound - measured = {r.bound - r.measured:.4g}")
    return r


@register("weight_error", "weight_error.lemma_b51")
def weight_error_one_round_descent(ctx) -> list[CheckResult]:
    """Lemma B.5.1: E_t f(x_{t+1}) - f(x_t) at states of a run (Monte Carlo over chi)."""
    prob, delta, L = shared_hessian_problem()
    M, rounds = ctx.n_seeds(20000, 4000), ctx.pick(80, 40)
    ts = sorted({0, 1, 3, 10, rounds // 2, rounds - 1})
    bound = boundlab.get("weight_error.lemma_b51")
    gamma = GAMMA_FRAC / (4.0 * math.sqrt(15.0) * L * I_STEPS)
    out = []
    for label, algo, hyper in _lemma_cases():
        for frac in (ETA_FRAC, 0.3):
            eta = frac / (2.0 * L * I_STEPS * gamma)
            for st in run_states(prob, algo, rounds, ts, gamma=gamma, eta=eta, **hyper):
                seed = 1000 + st.t
                d = descent_samples(prob, st, local_updates(prob, st.x, gamma), eta=eta, M=M,
                                    seed=seed)
                prm = lemma_params(prob, st, gamma=gamma, eta=eta, L=L, delta=delta)
                out.append(_signed_ratio(judge(
                    bound, d, prm, check="weight_error_one_round_descent",
                    case=f"{label}, gamma eta = {frac:g}/(2 L I), t = {st.t}",
                    problem=_PROBLEM, seeds=[seed],
                    setting={"rounds": rounds, "local_steps": I_STEPS, "t": st.t, "draws": M},
                    note=f"E_t given (x_t, omega_t) of one run (seed 0), {M} Bernoulli "
                         f"participation draws from the state (seed {seed}); gamma = "
                         f"{GAMMA_FRAC:g}/(4 sqrt(15) L I); delta = {delta:.4g} exact, "
                         "sigma = 0 (full batch)")))
    return out
