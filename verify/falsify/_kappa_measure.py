"""The measured side of :mod:`verify.falsify.kappa_route`: kappa of one round on identical
one-dimensional quadratic clients, by ``toys.run`` (:func:`measured`, the main job's
measurement) and by the same E local steps in mpmath (:func:`kappa_mp`, the certificate), and
the theorems' step size (:func:`theorem_step`)."""

from __future__ import annotations

__all__ = ["DPS", "theorem_step", "kappa_mp", "measured"]

#: the digits of the certificate's replay and of the stated side
DPS = 60


def theorem_step(algo: str, hyper, L, E):
    """The step size of eq. (9)'s theorem: 1/(2E(L + alpha)) (FedAvg: alpha = 0, FedProx),
    1/(2LE) (beta).

    >>> theorem_step("fedprox", 1.0, 1.0, 2), theorem_step("beta", 0.5, 1.0, 2)
    (0.125, 0.25)
    """
    if algo == "beta":
        return 1.0 / (2.0 * L * E)
    return 1.0 / (2.0 * E * (L + (hyper if algo == "fedprox" else 0.0)))


def kappa_mp(algo: str, hyper, mu, gamma, E: int, dps: int = DPS):
    """kappa by the E local steps of one round in mpmath at ``dps`` digits (x* = c = 0, x_t =
    1, the values taken exactly): the scalar recursion of the module docstring, not its closed
    form.

    >>> import mpmath
    >>> k = kappa_mp("fedprox", 0.5, 0.5, 0.5, 3)   # (0.5 + 0.5 * 0.5**3) / 1
    >>> float(k)
    0.5625
    """
    import mpmath

    with mpmath.workdps(dps):
        mu_, g, w = mpmath.mpf(mu), mpmath.mpf(gamma), mpmath.mpf(1)
        h = mpmath.mpf(0 if hyper is None else hyper)
        for _ in range(int(E)):
            if algo == "beta":
                w = w - g * mu_ * (h * w + (1 - h))  # the gradient at beta w + (1 - beta) u
            else:
                w = w - g * (mu_ * w + h * (w - 1))  # FedProx (h = alpha; FedAvg h = 0)
        return +w


def measured(algo: str, hyper, mu, gamma, E) -> float:
    """One round of ``toys.run`` (the main job's measurement, homogeneous clients)."""
    from ..checks.contraction_constants import measured_kappa

    if algo == "beta":
        return measured_kappa("beta", {"beta": float(hyper)}, mu, gamma, int(E))
    if algo == "fedprox" and hyper > 0:
        return measured_kappa("fedprox", {"prox": float(hyper)}, mu, gamma, int(E))
    return measured_kappa("fedavg", {}, mu, gamma, int(E))
