"""FedAU's weight error E[(p omega_t - 1)^2] of one client, exactly: every participation path.

Seed 002 (Wang & Ji), Section 3.1.6-3.1.7 of the spec: a client participates in each round
with probability p, independently (A4, Bernoulli), and Algorithm 2 estimates 1/p by omega_t,
the running mean of its completed participation intervals (each cut off at K rounds). omega_t
depends on chi_0..chi_{t-1} only, so the expectation over rounds t < T is a finite sum over the
2^(T-1) paths of rounds 0..T-2, each weighted by p^k (1-p)^(T-1-k) (k its participations).

Nothing of the estimator is written here: the paths and their omega_t come from
:func:`verify.falsify.fedau_paths.paths` and :func:`~verify.falsify.fedau_paths.omegas`, which
run toys' own :func:`toys.algorithms.fedau.fedau_update` on all paths at once.

* :func:`expected_errors` -- float64, (P, T) for P probabilities at one (K, T), vectorized over
  instances and paths (the omega table of (K, T) is computed once and cached);
* :func:`exact_errors` -- the same expectation in exact rationals (``fractions.Fraction``): p is
  the float's exact rational, each omega_t (a mean of integer interval lengths, denominator at
  most T) is read back as the fraction nearest the estimator's float (:func:`rational`), and
  the paths are summed by groups of equal (participations, omega_t);
* :func:`dp_errors` -- the same expectation for T up to :data:`T_DP`, the paths summed by
  Algorithm 2's state (M, S^◇) (toys' estimator moves the states), in float64 or in 256-bit
  fixed point within a proved error (the search and its certificate beyond T_MAX).

A cutoff K >= T never acts within T rounds (an interval is at most T - 1 rounds long when
omega_{T-1} is formed), so K is clipped to T (:func:`effective_k`).

>>> expected_errors(np.array([0.5]), K=1, T=3).tolist()   # K = 1: omega = 1, error (1-p)^2
[[0.25, 0.25, 0.25]]
>>> [str(v) for v in exact_errors(Fraction(1, 2), K=3, T=3)]
['1/4', '1/4', '3/16']
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from boundlab.errors import DomainError

from .fedau_paths import omegas, paths

__all__ = ["T_MAX", "T_DP", "effective_k", "omega_table", "expected_errors", "exact_errors",
           "rational", "dp_errors"]

#: the longest horizon enumerated (2^(T_MAX - 1) paths)
T_MAX = 14
#: the longest horizon of the dynamic programme (:func:`dp_errors`)
T_DP = 100


def _check(K, T, hi=T_MAX) -> tuple:
    if isinstance(T, bool) or not float(T).is_integer() or not 1 <= T <= hi:
        raise DomainError("T", T, f"an integer in 1..{hi} (participation paths enumerated "
                          "or summed by the estimator's state)")
    if isinstance(K, bool) or not (math.isinf(K) or float(K).is_integer()) or not K >= 1:
        raise DomainError("K", K, "an integer >= 1 (or inf: no cutoff)")
    return K, int(T)


def effective_k(K, T: int) -> int:
    """The cutoff acting within T rounds: min(K, T) (K = inf: T).

    >>> effective_k(5, 3), effective_k(math.inf, 4), effective_k(2, 9)
    (3, 4, 2)
    """
    K, T = _check(K, T, T_DP)
    return int(min(K, T))


@functools.lru_cache(maxsize=256)
def _table(K: int, T: int):
    _check(K, T)
    masks, _ = paths(np.array([[0.5]]), T)
    om = omegas(masks, float(K))[:, :, 0]
    k = masks[:, :T - 1, 0].sum(axis=1)
    om.setflags(write=False)
    k.setflags(write=False)
    return k, om


def omega_table(K, T: int) -> tuple:
    """``(k (B,), omega (B, T))``: every path of rounds 0..T-2, its number of participations
    and Algorithm 2's omega_t (t < T) on it, by toys' estimator (cached, read-only)."""
    return _table(effective_k(K, T), int(T))


def _check_p(p) -> np.ndarray:
    p = np.atleast_1d(np.asarray(p, dtype=float))
    if p.ndim != 1 or not np.all((p > 0) & (p <= 1)):
        raise DomainError("p", p, "participation probabilities in (0, 1] (a 1-d array)")
    return p


def expected_errors(p, K, T: int) -> np.ndarray:
    """(P, T) E[(p omega_t - 1)^2] for t < T, for each probability of ``p`` (P,), cutoff K.

    >>> expected_errors([1.0], K=2, T=4).tolist()   # p = 1: every interval is 1 round
    [[0.0, 0.0, 0.0, 0.0]]
    """
    p = _check_p(p)
    _, om = omega_table(K, T)
    _, prob = paths(p[:, None], int(T))  # (P, B): the path probabilities
    err = (p[:, None, None] * om[None] - 1.0) ** 2  # (P, B, T)
    return np.einsum("pb,pbt->pt", prob, err)


def rational(w: float, T: int) -> Fraction:
    """The exact omega (a mean of at most T - 1 integer lengths) the float ``w`` of the
    estimator stands for: the nearest fraction of denominator <= T (they are >= 1/T^2 apart,
    the float is within a few ulps). ArithmeticError if it is not that close.

    >>> rational(2.0 / 3.0 + 1e-16, 5)
    Fraction(2, 3)
    """
    fr = Fraction(float(w)).limit_denominator(max(int(T), 1))
    if abs(float(fr) - float(w)) > 1e-9 * max(1.0, abs(float(w))):
        raise ArithmeticError(f"omega {w!r} is not a fraction of denominator <= {T}")
    return fr


def exact_errors(p, K, T: int) -> list:
    """E[(p omega_t - 1)^2], t < T, as exact fractions at the probability ``p`` (a float is
    taken as its exact rational): the paths summed by groups of equal (k, omega_t)."""
    p = Fraction(p) if not isinstance(p, Fraction) else p
    if not 0 < p <= 1:
        raise DomainError("p", p, "a participation probability in (0, 1]")
    k, om = omega_table(K, T)
    T = int(T)
    out = []
    for t in range(T):  # the rounds; the paths are grouped, not looped over
        keys, counts = np.unique(np.stack([k.astype(float), om[:, t]], axis=1), axis=0,
                                 return_counts=True)
        s = Fraction(0)
        for (kk, w), c in zip(keys.tolist(), counts.tolist()):
            kk = int(kk)
            s += c * p ** kk * (1 - p) ** (T - 1 - kk) * (p * rational(w, T) - 1) ** 2
        out.append(s)
    return out


def dp_errors(p, K, T: int, bits=None):
    """E[(p omega_t - 1)^2], t < T, by a dynamic programme over Algorithm 2's state: (P, T)
    float64 for the probabilities ``p`` (P,); with ``bits``, ``(values, error)`` for one p in
    fixed point: ``values`` (T,) Fractions of denominator 2^bits, each within ``error`` (a
    Fraction, a proved bound) of the exact expectation at p's exact rational.

    After t rounds a path's state is (M, S^◇, omega) with M completed intervals totalling
    t - S^◇ rounds, so omega_t = (t - S^◇) / M (1 before the first) is a function of
    (t, M, S^◇): the paths are summed by (M, S^◇), at most K (t + 1) states instead of 2^t
    paths. Each round moves every state by toys' own
    :func:`toys.algorithms.fedau.fedau_update` (chi = 1 with probability p, chi = 0 with
    1 - p) and merges the states that agree; the test suite checks it equals the
    enumeration of every path (:func:`expected_errors`, :func:`exact_errors`).

    Fixed point (Python integers, units of 2^-bits, every product rounded down): all terms are
    non-negative, a weight's rounding is at most one unit per round and state, an error term
    (p omega - 1)^2 <= T^2 is off by at most one unit, so each expectation is low by at most
    (2 S T^3 + S + 2) units, S the most states of a round.

    >>> dp_errors([0.5], K=3, T=3).tolist()
    [[0.25, 0.25, 0.1875]]
    >>> [str(v) for v in dp_errors([0.5], K=3, T=3, bits=64)[0]]
    ['1/4', '1/4', '3/16']
    """
    K, T = effective_k(K, T), int(T)
    pc = _check_p(p)[:, None]
    if bits is None:
        return _dp(pc, K, T, None)
    if pc.shape[0] != 1 or isinstance(bits, bool) or not isinstance(bits, int) or bits < 64:
        raise DomainError("bits", bits, "an integer >= 64, with one probability p")
    fr = Fraction(float(pc[0, 0]))
    p_int = (fr.numerator << bits) // fr.denominator  # exact when p >= 2^(53 - bits)
    vals, smax = _dp(np.array([[p_int]], dtype=object), K, T, bits)
    err = Fraction(2 * smax * T ** 3 + smax + 2 + (p_int * fr.denominator != fr.numerator
                                                     << bits) * 4 * T ** 3, 1 << bits)
    return [Fraction(int(v), 1 << bits) for v in vals[0]], err


def _dp(pc, K, T, bits):
    """The programme of :func:`dp_errors` on (P, 1) probabilities: floats, or (``bits``) one
    fixed-point integer; returns (P, T), or ((1, T) integers, most states) in fixed point."""
    from toys.algorithms.fedau import FedAUState, fedau_init, fedau_update

    one = None if bits is None else 1 << bits
    qc = 1 - pc if bits is None else one - pc
    w = np.ones((pc.shape[0], 1)) if bits is None else np.array([[one]], dtype=object)
    st, out, smax = fedau_init(1), [], 1
    for _ in range(T):  # the rounds; the paths are summed by state
        if bits is None:
            e = (pc * st.omega[None] - 1) ** 2
            out.append(np.sum(w * e, axis=1))
        else:
            a, m = _fraction_omega(st)
            e = (pc * a[None] - m[None] * one) ** 2 // (m[None] * m[None]) >> bits
            out.append(np.sum(w * e, axis=1) >> bits)
        S = st.M.size
        smax = max(smax, 2 * S)
        new = fedau_update(FedAUState(*(np.concatenate([v, v]) for v in st)),
                           np.arange(2 * S) < S, K)
        w2 = np.concatenate([w * pc, w * qc], axis=1)
        if bits is not None:
            w2 = w2 >> bits
        key = new.M * K + new.Sd
        order = np.argsort(key, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(key[order]) != 0])
        w = np.add.reduceat(w2[:, order], starts, axis=1)  # merge equal states
        st = FedAUState(*(v[order][starts] for v in new))
    res = np.stack(out, axis=1)
    return res if bits is None else (res, smax)


def _fraction_omega(st) -> tuple:
    """``(a, m)`` integer object arrays with omega = a / m exactly for every state: M omega is
    an integer total of interval lengths (read back from the estimator's float,
    ArithmeticError if it is not one); omega = 1 = 1/1 while M = 0."""
    M = np.asarray(st.M, dtype=float)
    tot = np.rint(np.asarray(st.omega) * M)
    if np.any(np.abs(tot - np.asarray(st.omega) * M) > 1e-6):
        raise ArithmeticError("M omega is not an integer total of interval lengths")
    a = np.array([int(x) if m > 0 else 1 for x, m in zip(tot.tolist(), M.tolist())],
                 dtype=object)
    m = np.array([int(x) if x > 0 else 1 for x in M.tolist()], dtype=object)
    return a, m
