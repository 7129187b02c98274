"""Sample-size projections of the reproductions' decisions (:mod:`verify.reproduce.stats`): how
many seeds per arm would *decide* a claim that is inconclusive now.

Why. The 95 % Student-t interval of a mean difference (true mean ``m``, per-seed standard
deviation ``s``) excludes 0 once its half-width t s / sqrt(n) falls below the observed |mean|,
not when the whole interval is narrower than a resolution: projecting the latter overstates the
seeds a direction needs 10-30x. Here:

* :func:`seeds_for_direction`: the n at which the two-sided ``level`` interval excludes 0 with
  probability ``power`` (default 80 %): the smallest n with n >= ((t_{1-a/2, n-1} +
  t_{power, n-1}) s / |m|)^2 (the normal-quantile formula ((z_{.975} + z_{.8}) s / |m|)^2
  with the t correction; the tests check its power by simulation).
* :func:`seeds_for_equivalence`: the n at which the interval lies inside (-margin, margin)
  (the equivalence test, TOST, of an "about equal" claim) with probability ``power``, both
  bounds counted (the same t approximation).

Both return None when no number of seeds decides it (m = 0 for a direction; |m| >= margin for
an equivalence).

Example
-------
>>> seeds_for_direction(1.0, 1.0)
10
>>> seeds_for_direction(0.0, 1.0) is None
True
>>> seeds_for_equivalence(0.0, 1.0, 0.5)
45
"""

from __future__ import annotations

import math

from boundlab.errors import DomainError

__all__ = ["seeds_for_direction", "seeds_for_equivalence"]

_CAP = 10 ** 9


def _check(name, value, ok, domain):
    if not (isinstance(value, (int, float)) and math.isfinite(value) and ok(value)):
        raise DomainError(name, value, domain)


def _smallest(enough, start: int) -> int:
    """The smallest n >= 2 with ``enough(n)`` (monotone in n): doubling from ``start``, then
    bisection."""
    hi = max(2, start)
    while not enough(hi):
        if hi >= _CAP:
            return _CAP
        hi *= 2
    lo = 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid >= 2 and enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _iterate(gap: float, s: float, level: float, power: float, two_sided_beta: bool) -> int:
    """The smallest n >= 2 with n >= ((t_a + t_b) s / gap)^2, t at n - 1 degrees of freedom
    (the right side falls as n grows, so the condition is monotone), from the normal-quantile
    start."""
    from scipy import stats

    a = 0.5 + level / 2
    b = 0.5 + power / 2 if two_sided_beta else power

    def enough(n):
        return n >= ((stats.t.ppf(a, n - 1) + stats.t.ppf(b, n - 1)) * s / gap) ** 2

    return _smallest(enough, math.ceil(((stats.norm.ppf(a) + stats.norm.ppf(b)) * s / gap)
                                       ** 2))


def _common(mean, sd, level, power):
    _check("mean", mean, lambda v: True, "a finite number (the mean difference)")
    _check("sd", sd, lambda v: v >= 0, "a finite number >= 0 (the per-seed spread)")
    _check("level", level, lambda v: 0 < v < 1, "0 < level < 1")
    _check("power", power, lambda v: 0 < v < 1, "0 < power < 1")


def seeds_for_direction(mean: float, sd: float, *, level: float = 0.95,
                        power: float = 0.8) -> int | None:
    """Seeds per arm at which the ``level`` t interval of a difference with true mean ``mean``
    and per-seed spread ``sd`` excludes 0 with probability ``power`` (None when ``mean`` is 0:
    no number of seeds decides a direction; 2 when ``sd`` is 0).

    >>> seeds_for_direction(-0.5, 1.0)
    34
    """
    _common(mean, sd, level, power)
    if mean == 0:
        return None
    if sd == 0:
        return 2
    return _iterate(abs(mean), sd, level, power, False)


def seeds_for_equivalence(mean: float, sd: float, margin: float, *, level: float = 0.95,
                          power: float = 0.8) -> int | None:
    """Seeds per arm at which the ``level`` t interval of a difference with true mean ``mean``
    and spread ``sd`` lies inside (-``margin``, ``margin``) with probability ``power``: the
    smallest n with T((margin - |m|) sqrt(n) / s - t_a) + T((margin + |m|) sqrt(n) / s - t_a)
    - 1 >= power (T, t_a: the t distribution and quantile at n - 1 dof; both bounds count).
    None when |mean| >= margin: the difference is not within the margin, no seeds show it is.

    >>> seeds_for_equivalence(0.9, 1.0, 0.5) is None
    True
    """
    from scipy import stats

    _common(mean, sd, level, power)
    _check("margin", margin, lambda v: v > 0, "a finite number > 0 (the equivalence margin)")
    if abs(mean) >= margin:
        return None
    if sd == 0:
        return 2
    a = 0.5 + level / 2

    def enough(n):
        ta, r = stats.t.ppf(a, n - 1), math.sqrt(n) / sd
        return (stats.t.cdf((margin - abs(mean)) * r - ta, n - 1) +
                stats.t.cdf((margin + abs(mean)) * r - ta, n - 1) - 1) >= power

    return _smallest(enough, _iterate(margin - abs(mean), sd, level, power, mean == 0))
